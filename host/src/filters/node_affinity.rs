//! `NodeAffinity` (filter): `nodeSelector` and the required node affinity
//! terms, as upstream's `pkg/scheduler/framework/plugins/nodeaffinity` and
//! `component-helpers/scheduling/corev1/nodeaffinity`.

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm};

use super::Rejection;
use crate::model::{NodeId, NodeInfo, PodId, PodInfo, Snapshot};

/// Upstream's `Filter`: whether `node` matches the pod's `nodeSelector`
/// and required node affinity.
pub fn filter(snapshot: &Snapshot, pod: PodId, node: NodeId) -> Result<(), Rejection> {
    match matches(&snapshot.pods[pod as usize], &snapshot.nodes[node as usize]) {
        true => Ok(()),
        false => Err(Rejection::NodeAffinity),
    }
}

/// `nodeSelector` (every label must match) and required node affinity (any
/// term matches; within a term every requirement matches).
pub(super) fn matches(pod: &PodInfo, node: &NodeInfo) -> bool {
    let selector_ok = pod
        .node_selector
        .iter()
        .all(|(k, v)| node.labels.get(k) == Some(v));
    let affinity_ok = pod
        .required_node_affinity
        .as_ref()
        .is_none_or(|terms| terms.iter().any(|term| term_matches(term, node)));
    selector_ok && affinity_ok
}

/// Whether a node selector term matches `node`: it has requirements and all
/// of them match (a term without requirements matches nothing).
pub(super) fn term_matches(term: &NodeSelectorTerm, node: &NodeInfo) -> bool {
    let expressions = term.match_expressions.iter().flatten();
    let fields = term.match_fields.iter().flatten();
    let has_requirements = term
        .match_expressions
        .as_ref()
        .is_some_and(|e| !e.is_empty())
        || term.match_fields.as_ref().is_some_and(|f| !f.is_empty());
    has_requirements
        && expressions
            .into_iter()
            .all(|r| requirement_matches(r, node.labels.get(&r.key).map(String::as_str)))
        && fields
            .into_iter()
            .all(|r| r.key == "metadata.name" && requirement_matches(r, Some(node.name.as_str())))
}

fn requirement_matches(requirement: &NodeSelectorRequirement, value: Option<&str>) -> bool {
    let values = requirement.values.as_deref().unwrap_or_default();
    let as_int = |s: &str| s.parse::<i64>().ok();
    match requirement.operator.as_str() {
        "In" => value.is_some_and(|v| values.iter().any(|x| x == v)),
        "NotIn" => value.is_none_or(|v| !values.iter().any(|x| x == v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(v), Some(bound)) = (
                value.and_then(as_int),
                values.first().and_then(|b| as_int(b)),
            ) else {
                return false;
            };
            if requirement.operator == "Gt" {
                v > bound
            } else {
                v < bound
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_selector_requirements() {
        let req = |op: &str, values: &[&str]| NodeSelectorRequirement {
            key: "k".into(),
            operator: op.into(),
            values: Some(values.iter().map(|s| s.to_string()).collect()),
        };
        assert!(requirement_matches(&req("In", &["a", "b"]), Some("b")));
        assert!(!requirement_matches(&req("In", &["a"]), None));
        assert!(requirement_matches(&req("NotIn", &["a"]), None));
        assert!(!requirement_matches(&req("NotIn", &["a"]), Some("a")));
        assert!(requirement_matches(&req("Exists", &[]), Some("x")));
        assert!(requirement_matches(&req("DoesNotExist", &[]), None));
        assert!(requirement_matches(&req("Gt", &["4"]), Some("8")));
        assert!(!requirement_matches(&req("Lt", &["4"]), Some("8")));
        assert!(!requirement_matches(&req("Gt", &["4"]), Some("eight")));
    }
}
