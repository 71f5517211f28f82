//! `NodeUnschedulable` (filter): a node with `spec.unschedulable` takes only
//! pods that tolerate the `node.kubernetes.io/unschedulable:NoSchedule`
//! taint, as upstream's `pkg/scheduler/framework/plugins/nodeunschedulable`.

use super::{Rejection, taint_toleration};
use crate::model::{NodeId, PodId, Snapshot};

/// The taint an unschedulable node is treated as having.
pub const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// Upstream's `Filter`.
pub fn filter(snapshot: &Snapshot, pod: PodId, node: NodeId) -> Result<(), Rejection> {
    let tolerated = snapshot.pods[pod as usize]
        .tolerations
        .iter()
        .any(|t| taint_toleration::tolerates(t, UNSCHEDULABLE_TAINT, "", "NoSchedule"));
    match snapshot.nodes[node as usize].unschedulable && !tolerated {
        true => Err(Rejection::Unschedulable),
        false => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::filter;
    use crate::filters::table::{Cluster, rejected};

    /// Upstream's `TestNodeUnschedulable`
    /// (`nodeunschedulable/node_unschedulable_test.go`): every case.
    #[test]
    fn test_node_unschedulable() {
        let node = |unschedulable: bool| {
            format!(
                "apiVersion: v1\nkind: Node\nmetadata: {{name: n}}\nspec: {{unschedulable: {unschedulable}}}\nstatus: {{allocatable: {{cpu: '1', pods: '10'}}}}\n"
            )
        };
        let pod = |tolerations: &str| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: default}}\nspec: {{containers: [{{name: c, image: x}}], tolerations: {tolerations}}}\n"
            )
        };
        let tolerating =
            "[{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}]";
        let cases = [
            (
                "Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
                true,
                "[]",
                false,
            ),
            ("Schedule pod to normal node", false, "[]", true),
            (
                "Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
                true,
                tolerating,
                true,
            ),
        ];
        for (name, unschedulable, tolerations, fits) in cases {
            let cluster =
                Cluster::new(&format!("{}---\n{}", node(unschedulable), pod(tolerations)));
            let expected = if fits {
                Ok(())
            } else {
                rejected(&["node(s) were unschedulable"])
            };
            assert_eq!(
                cluster.verdict(filter, "default/p", "n"),
                expected,
                "{name}"
            );
        }
    }
}
