//! Contract 0.3.0's view additions over the host's snapshot: identity
//! (handles, the change clock) and the node and pod facts kube-scheduler's
//! per-node checks read, as the SDK's plain types.

use k8s_openapi::api::core::v1 as core;
use wasched_sdk::types as sdk;

use crate::model::identity::{Handle, Kind, LookupError};
use crate::model::{NodeId, PodId, Snapshot};

/// A host handle as the SDK's.
pub fn handle(handle: Handle) -> sdk::Handle {
    sdk::Handle {
        slot: handle.slot,
        generation: handle.generation,
    }
}

/// The SDK's object kind as the host's.
pub fn kind(kind: sdk::ObjectKind) -> Kind {
    match kind {
        sdk::ObjectKind::Node => Kind::Node,
        sdk::ObjectKind::Pod => Kind::Pod,
        sdk::ObjectKind::PodGroup => Kind::PodGroup,
        sdk::ObjectKind::Composite => Kind::Composite,
        sdk::ObjectKind::DisruptionBudget => Kind::Budget,
    }
}

/// A host lookup error as the SDK's.
pub fn lookup_error(error: LookupError) -> sdk::LookupError {
    match error {
        LookupError::Unknown => sdk::LookupError::Unknown,
        LookupError::Stale => sdk::LookupError::Stale,
    }
}

fn effect(effect: &str) -> sdk::TaintEffect {
    match effect {
        "NoExecute" => sdk::TaintEffect::NoExecute,
        "PreferNoSchedule" => sdk::TaintEffect::PreferNoSchedule,
        // The API server accepts only the three effects.
        _ => sdk::TaintEffect::NoSchedule,
    }
}

fn taint(taint: &core::Taint) -> sdk::Taint {
    sdk::Taint {
        key: taint.key.clone(),
        value: taint.value.clone().unwrap_or_default(),
        effect: effect(&taint.effect),
    }
}

fn toleration(toleration: &core::Toleration) -> sdk::Toleration {
    sdk::Toleration {
        key: toleration.key.clone().unwrap_or_default(),
        operator: match toleration.operator.as_deref() {
            Some("Exists") => sdk::TolerationOperator::Exists,
            _ => sdk::TolerationOperator::Equal,
        },
        value: toleration.value.clone().unwrap_or_default(),
        effect: toleration
            .effect
            .as_deref()
            .filter(|e| !e.is_empty())
            .map(effect),
    }
}

fn requirement(r: &core::NodeSelectorRequirement) -> sdk::SelectorRequirement {
    sdk::SelectorRequirement {
        key: r.key.clone(),
        operator: match r.operator.as_str() {
            "NotIn" => sdk::SelectorOperator::NotIn,
            "Exists" => sdk::SelectorOperator::Exists,
            "DoesNotExist" => sdk::SelectorOperator::DoesNotExist,
            "Gt" => sdk::SelectorOperator::Gt,
            "Lt" => sdk::SelectorOperator::Lt,
            _ => sdk::SelectorOperator::In,
        },
        values: r.values.clone().unwrap_or_default(),
    }
}

fn term(term: &core::NodeSelectorTerm) -> sdk::NodeSelectorTerm {
    let list = |r: &Option<Vec<core::NodeSelectorRequirement>>| {
        r.iter().flatten().map(requirement).collect()
    };
    sdk::NodeSelectorTerm {
        match_expressions: list(&term.match_expressions),
        match_fields: list(&term.match_fields),
    }
}

/// Taints, `unschedulable` and labels of each of `nodes`.
pub fn nodes_facts(
    snapshot: &Snapshot,
    nodes: &[NodeId],
) -> Result<Vec<sdk::NodeFacts>, sdk::LookupError> {
    // A longer list cannot name distinct nodes: refused before any work.
    if nodes.len() > snapshot.nodes.len() {
        return Err(sdk::LookupError::Unknown);
    }
    let identity = snapshot.identity();
    nodes
        .iter()
        .map(|&node| {
            let info = snapshot
                .nodes
                .get(node as usize)
                .ok_or(sdk::LookupError::Unknown)?;
            let symbol = |text: &str| snapshot.symbols.lookup(text);
            Ok(sdk::NodeFacts {
                handle: handle(identity.handle(Kind::Node, node).map_err(lookup_error)?),
                taints: info.taints.iter().map(taint).collect(),
                unschedulable: info.unschedulable,
                labels: info
                    .labels
                    .iter()
                    .filter_map(|(k, v)| Some((symbol(k)?, symbol(v)?)))
                    .collect(),
            })
        })
        .collect()
}

/// Tolerations, node selector, required node affinity, annotations and
/// owner kind of `pod`.
pub fn pod_facts(snapshot: &Snapshot, pod: PodId) -> Result<sdk::PodFacts, sdk::LookupError> {
    let info = snapshot
        .pods
        .get(pod as usize)
        .ok_or(sdk::LookupError::Unknown)?;
    let pairs = |map: &std::collections::BTreeMap<String, String>| {
        map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    };
    Ok(sdk::PodFacts {
        handle: handle(
            snapshot
                .identity()
                .handle(Kind::Pod, pod)
                .map_err(lookup_error)?,
        ),
        tolerations: info.tolerations.iter().map(toleration).collect(),
        node_selector: pairs(&info.node_selector),
        required_node_affinity: info
            .required_node_affinity
            .as_ref()
            .map(|terms| terms.iter().map(term).collect()),
        annotations: pairs(&info.annotations),
        owner_kind: info.owner_kind.clone(),
    })
}

/// `nodes` grouped by their value of label `key` (a symbol), by value text
/// ascending; nodes without the label left out.
pub fn group_nodes_by_label(
    snapshot: &Snapshot,
    key: u32,
    nodes: &[NodeId],
) -> Result<Vec<sdk::LabelDomain>, sdk::LookupError> {
    if nodes.len() > snapshot.nodes.len() {
        return Err(sdk::LookupError::Unknown);
    }
    let column = snapshot.label_column(key);
    let mut domains: rustc_hash::FxHashMap<u32, Vec<NodeId>> = Default::default();
    for &node in nodes {
        if node as usize >= snapshot.nodes.len() {
            return Err(sdk::LookupError::Unknown);
        }
        if let Some(&Some(value)) = column.get(node as usize) {
            domains.entry(value).or_default().push(node);
        }
    }
    let mut domains: Vec<sdk::LabelDomain> = domains
        .into_iter()
        .map(|(value, mut nodes)| {
            nodes.sort_unstable();
            nodes.dedup();
            let value_text = snapshot.symbols.text(value).unwrap_or_default().to_owned();
            sdk::LabelDomain {
                value,
                value_text,
                nodes,
            }
        })
        .collect();
    domains.sort_unstable_by(|a, b| (&a.value_text, a.value).cmp(&(&b.value_text, b.value)));
    Ok(domains)
}

/// The amounts of `resources` on `nodes` only, in one block (the WIT's
/// `node-resources`): per resource, the allocatable amounts of `nodes`,
/// then their requested amounts.
pub fn node_resources(
    snapshot: &Snapshot,
    resources: &[u32],
    nodes: &[NodeId],
) -> Result<Vec<u64>, sdk::LookupError> {
    let count = snapshot.resource_names.len();
    // One past the highest node asked: every column must reach it.
    let reach = nodes.iter().max().map_or(0, |&n| n as usize + 1);
    if resources.len() > count || nodes.len() > snapshot.nodes.len() {
        return Err(sdk::LookupError::Unknown);
    }
    if reach > snapshot.nodes.len() || resources.iter().any(|&r| r as usize >= count) {
        return Err(sdk::LookupError::Unknown);
    }
    // Every node in order (a batched call over the whole cluster) copies
    // whole columns.
    let in_order = nodes.iter().enumerate().all(|(i, &n)| n as usize == i);
    let mut amounts = Vec::with_capacity(2 * resources.len() * nodes.len());
    for &resource in resources {
        for column in [
            snapshot.allocatable(resource as usize),
            snapshot.requested(resource as usize),
        ] {
            if column.len() < reach {
                return Err(sdk::LookupError::Unknown);
            }
            if in_order {
                amounts.extend_from_slice(&column[..nodes.len()]);
            } else {
                amounts.extend(nodes.iter().map(|&node| column[node as usize]));
            }
        }
    }
    Ok(amounts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> Snapshot {
        let text = r#"
apiVersion: v1
kind: Node
metadata: {name: a}
status: {allocatable: {cpu: "4", memory: 8Gi, nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: b}
status: {allocatable: {cpu: "2", memory: 4Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: t}
spec:
  nodeName: a
  containers: [{name: c, image: x, resources: {requests: {cpu: "1", nvidia.com/gpu: "2"}, limits: {nvidia.com/gpu: "2"}}}]
"#;
        let mut manifests = crate::manifest::Manifests::default();
        crate::manifest::load_str(&mut manifests, "test.yaml", text).unwrap();
        Snapshot::build(&manifests).unwrap()
    }

    #[test]
    fn node_resources_hands_just_the_nodes_asked_and_refuses_unknown_ids() {
        let snapshot = snapshot();
        let gpu = snapshot.resource_index("nvidia.com/gpu").unwrap() as u32;
        // cpu, then the GPUs, on b then a: allocatable, then requested.
        assert_eq!(
            node_resources(&snapshot, &[0, gpu], &[1, 0]),
            Ok(vec![2_000, 4_000, 0, 1_000, 0, 8, 0, 2])
        );
        // In order, whole columns; a prefix of them for the first nodes.
        assert_eq!(
            node_resources(&snapshot, &[gpu, 0], &[0, 1]),
            Ok(vec![8, 0, 2, 0, 4_000, 2_000, 1_000, 0])
        );
        assert_eq!(
            node_resources(&snapshot, &[0], &[0]),
            Ok(vec![4_000, 1_000])
        );
        assert_eq!(node_resources(&snapshot, &[0], &[]), Ok(vec![]));
        let unknown = Err(sdk::LookupError::Unknown);
        assert_eq!(node_resources(&snapshot, &[0], &[2]), unknown);
        assert_eq!(node_resources(&snapshot, &[gpu + 1], &[0]), unknown);
        // No list longer than the snapshot holds, repeats or not.
        assert_eq!(node_resources(&snapshot, &[0], &[0, 0, 0]), unknown);
        let resources = vec![0; snapshot.resource_names.len() + 1];
        assert_eq!(node_resources(&snapshot, &resources, &[0]), unknown);
    }

    #[test]
    fn group_nodes_by_label_names_each_domain_and_orders_them_by_text() {
        let node = |name: &str, rack: Option<&str>| {
            let labels = rack.map_or(String::new(), |r| format!(", labels: {{rack: {r}}}"));
            format!(
                "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}{labels}}}\nstatus: {{allocatable: {{cpu: \"1\"}}}}\n---\n"
            )
        };
        let text: String = [
            node("n0", Some("r2")),
            node("n1", Some("r10")),
            node("n2", None),
            node("n3", Some("r2")),
            node("n4", Some("r1")),
        ]
        .concat();
        let mut manifests = crate::manifest::Manifests::default();
        crate::manifest::load_str(&mut manifests, "racks.yaml", &text).unwrap();
        let snapshot = Snapshot::build(&manifests).unwrap();
        let rack = snapshot.symbols.lookup("rack").unwrap();
        let domains = group_nodes_by_label(&snapshot, rack, &[4, 2, 1, 0, 0]).unwrap();
        let seen: Vec<(&str, &[NodeId])> = domains
            .iter()
            .map(|d| (d.value_text.as_str(), d.nodes.as_slice()))
            .collect();
        // By text (byte order), the unlabelled node left out, repeats once.
        assert_eq!(
            seen,
            [("r1", &[4][..]), ("r10", &[1][..]), ("r2", &[0][..])]
        );
        for d in &domains {
            assert_eq!(snapshot.symbols.text(d.value), Some(d.value_text.as_str()));
        }
        assert_eq!(
            group_nodes_by_label(&snapshot, rack, &[0, 5]),
            Err(sdk::LookupError::Unknown)
        );
        // Longer than the snapshot's nodes: refused, repeats or not.
        assert_eq!(
            group_nodes_by_label(&snapshot, rack, &[0; 6]),
            Err(sdk::LookupError::Unknown)
        );
        assert_eq!(
            nodes_facts(&snapshot, &[0; 6]).map(|f| f.len()),
            Err(sdk::LookupError::Unknown)
        );
        assert_eq!(nodes_facts(&snapshot, &[0; 5]).map(|f| f.len()), Ok(5));
    }
}
