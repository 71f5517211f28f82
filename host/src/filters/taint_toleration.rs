//! `TaintToleration` (filter): a node's `NoSchedule` and `NoExecute`
//! taints each need a toleration of the pod, as upstream's
//! `pkg/scheduler/framework/plugins/tainttoleration` and
//! `v1.Toleration.ToleratesTaint`.

use k8s_openapi::api::core::v1::{Taint, Toleration};

use super::Rejection;
use crate::model::{NodeId, PodId, Snapshot};

/// Upstream's `Filter`: the first taint of `node` that `pod` does not
/// tolerate, as its rejection.
pub fn filter(snapshot: &Snapshot, pod: PodId, node: NodeId) -> Result<(), Rejection> {
    let n = &snapshot.nodes[node as usize];
    match untolerated_taint(&n.taints, &snapshot.pods[pod as usize].tolerations) {
        Some(i) => Err(Rejection::Taint(n.taint_texts[i])),
        None => Ok(()),
    }
}

/// The index of the first `NoSchedule`/`NoExecute` taint no toleration
/// tolerates.
pub(super) fn untolerated_taint(taints: &[Taint], tolerations: &[Toleration]) -> Option<usize> {
    taints.iter().position(|taint| {
        (taint.effect == "NoSchedule" || taint.effect == "NoExecute")
            && !tolerations.iter().any(|t| {
                tolerates(
                    t,
                    &taint.key,
                    taint.value.as_deref().unwrap_or_default(),
                    &taint.effect,
                )
            })
    })
}

/// `Toleration.ToleratesTaint`.
pub(super) fn tolerates(toleration: &Toleration, key: &str, value: &str, effect: &str) -> bool {
    let toleration_effect = toleration.effect.as_deref().unwrap_or_default();
    if !toleration_effect.is_empty() && toleration_effect != effect {
        return false;
    }
    let toleration_key = toleration.key.as_deref().unwrap_or_default();
    if !toleration_key.is_empty() && toleration_key != key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("Equal") {
        "Exists" => true,
        "Equal" | "" => toleration.value.as_deref().unwrap_or_default() == value,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn toleration(value: serde_json::Value) -> Toleration {
        serde_json::from_value(value).unwrap()
    }

    fn taint(key: &str, value: &str, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: Some(value.into()),
            effect: effect.into(),
            ..Default::default()
        }
    }

    #[test]
    fn tolerations_follow_kubernetes_rules() {
        let gpu = taint("nvidia.com/gpu", "present", "NoSchedule");
        let cases = [
            (json!({"key": "nvidia.com/gpu", "operator": "Exists"}), true),
            (
                json!({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present"}),
                true,
            ),
            (
                json!({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}),
                true,
            ),
            (json!({"key": "nvidia.com/gpu", "value": "absent"}), false),
            (
                json!({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}),
                false,
            ),
            (json!({"operator": "Exists"}), true),
            (json!({"key": "other", "operator": "Exists"}), false),
        ];
        for (t, expected) in cases {
            let tolerations = [toleration(t.clone())];
            let tolerated = untolerated_taint(std::slice::from_ref(&gpu), &tolerations).is_none();
            assert_eq!(tolerated, expected, "{t}");
        }
        let soft = [taint("a", "b", "PreferNoSchedule")];
        assert!(
            untolerated_taint(&soft, &[]).is_none(),
            "PreferNoSchedule does not filter"
        );
    }

    use crate::filters::table::{Cluster, rejected};

    /// One node `nodeA` with these taints (YAML flow list) and one pod
    /// `default/pod1` with these tolerations, as upstream's
    /// `nodeWithTaints` and `podWithTolerations` make them.
    fn case(taints: &str, tolerations: &str) -> Cluster {
        Cluster::new(&format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: nodeA}}\nspec: {{taints: {taints}}}\nstatus: {{allocatable: {{cpu: '1', pods: '10'}}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: pod1, namespace: default}}\nspec: {{containers: [{{name: c, image: x}}], tolerations: {tolerations}}}\n"
        ))
    }

    /// Upstream's `TestTaintTolerationFilter`
    /// (`tainttoleration/taint_toleration_test.go`, v1.37.2), and the cases
    /// of `TestTaintTolerationFilterWithFeatureGate` with the gate off (its
    /// default in v1.37). Every rejection reads `node(s) had untolerated
    /// taint(s)`.
    ///
    /// Not expressible here: the cases with
    /// `TaintTolerationComparisonOperators` on ("Pod with Gt toleration
    /// cannot be scheduled on node when taint value is lower than
    /// threshold", "... Gt ... can be scheduled ... higher ...", "... Lt
    /// ... cannot ... higher ...", "... Lt ... can ... lower ...", "Pod
    /// with Gt toleration cannot be scheduled on node with non-numeric
    /// taint value", and the gate-on cases of the feature-gate table):
    /// the gate is alpha and off by default in v1.37, and wasched follows
    /// the default (a `Gt`/`Lt` toleration tolerates nothing).
    #[test]
    fn test_taint_toleration_filter() {
        let untolerated = || rejected(&["node(s) had untolerated taint(s)"]);
        let dedicated_user1 = "[{key: dedicated, value: user1, effect: NoSchedule}]";
        let cases = [
            (
                "A pod having no tolerations can't be scheduled onto a node with nonempty taints",
                dedicated_user1,
                "[]",
                untolerated(),
            ),
            (
                "A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
                dedicated_user1,
                "[{key: dedicated, value: user1, effect: NoSchedule}]",
                Ok(()),
            ),
            (
                "A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
                dedicated_user1,
                "[{key: dedicated, operator: Equal, value: user2, effect: NoSchedule}]",
                untolerated(),
            ),
            (
                "A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the node",
                "[{key: foo, value: bar, effect: NoSchedule}]",
                "[{key: foo, operator: Exists, effect: NoSchedule}]",
                Ok(()),
            ),
            (
                "A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be scheduled onto the node",
                "[{key: dedicated, value: user2, effect: NoSchedule}, {key: foo, value: bar, effect: NoSchedule}]",
                "[{key: dedicated, operator: Equal, value: user2, effect: NoSchedule}, {key: foo, operator: Exists, effect: NoSchedule}]",
                Ok(()),
            ),
            (
                "A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match, can't be scheduled onto the node",
                "[{key: foo, value: bar, effect: NoSchedule}]",
                "[{key: foo, operator: Equal, value: bar, effect: PreferNoSchedule}]",
                untolerated(),
            ),
            (
                "The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
                "[{key: foo, value: bar, effect: NoSchedule}]",
                "[{key: foo, operator: Equal, value: bar}]",
                Ok(()),
            ),
            (
                "The pod has a toleration that key and value don't match the taint on the node, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
                "[{key: dedicated, value: user1, effect: PreferNoSchedule}]",
                "[{key: dedicated, operator: Equal, value: user2, effect: NoSchedule}]",
                Ok(()),
            ),
            (
                "The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
                "[{key: dedicated, value: user1, effect: PreferNoSchedule}]",
                "[]",
                Ok(()),
            ),
            // TestTaintTolerationFilterWithFeatureGate, gate off.
            (
                "Pod with Gt toleration cannot be scheduled when feature gate is disabled",
                "[{key: node.kubernetes.io/sla, value: '950', effect: NoSchedule}]",
                "[{key: node.kubernetes.io/sla, operator: Gt, value: '750', effect: NoSchedule}]",
                untolerated(),
            ),
            (
                "Pod with Lt toleration cannot be scheduled when feature gate is disabled",
                "[{key: node.kubernetes.io/sla, value: '800', effect: NoSchedule}]",
                "[{key: node.kubernetes.io/sla, operator: Lt, value: '950', effect: NoSchedule}]",
                untolerated(),
            ),
            (
                "Pod with mixed tolerations (Equal and Gt) when feature gate is disabled - only Equal is honored",
                dedicated_user1,
                "[{key: dedicated, operator: Equal, value: user1, effect: NoSchedule}, {key: node.kubernetes.io/sla, operator: Gt, value: '750', effect: NoSchedule}]",
                Ok(()),
            ),
            (
                "Pod with mixed tolerations, Gt toleration needed but filtered out when feature gate is disabled",
                "[{key: dedicated, value: user1, effect: NoSchedule}, {key: node.kubernetes.io/sla, value: '950', effect: NoSchedule}]",
                "[{key: dedicated, operator: Equal, value: user1, effect: NoSchedule}, {key: node.kubernetes.io/sla, operator: Gt, value: '750', effect: NoSchedule}]",
                untolerated(),
            ),
        ];
        for (name, taints, tolerations, expected) in cases {
            let cluster = case(taints, tolerations);
            assert_eq!(
                cluster.verdict(filter, "default/pod1", "nodeA"),
                expected,
                "{name}"
            );
        }
    }
}
