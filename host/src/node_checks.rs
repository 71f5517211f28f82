//! The per-node checks every kube-scheduler runs, as native host code, in
//! the default profile's filter order: `NodeUnschedulable`,
//! `TaintToleration`, `NodeAffinity` (nodeSelector + required node affinity),
//! `NodeResourcesFit`, `PodTopologySpread` (hard constraints). A node fails at its first failing check, and the
//! reasons use upstream's wording so that diagnoses read like
//! `0/12 nodes are available: 8 Insufficient cpu, ...`.

use std::collections::BTreeMap;
use std::fmt;

use std::collections::HashMap;

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, Taint, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::snapshot::{NodeId, NodeInfo, PodId, PodInfo, Snapshot};

const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// Why nodes were rejected: reason → number of nodes, over `total` nodes
/// (kube-scheduler's `FitError`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnosis {
    /// Nodes considered.
    pub total: usize,
    /// Rejection reason → how many nodes gave it.
    pub reasons: BTreeMap<String, usize>,
}

impl Diagnosis {
    /// An empty diagnosis over `total` nodes.
    pub fn over(total: usize) -> Self {
        Self {
            total,
            reasons: BTreeMap::new(),
        }
    }

    /// Counts one node rejected for `reason`.
    pub fn add(&mut self, reason: impl Into<String>) {
        *self.reasons.entry(reason.into()).or_default() += 1;
    }
}

impl fmt::Display for Diagnosis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = self
            .reasons
            .iter()
            .map(|(r, n)| format!("{n} {r}"))
            .collect();
        parts.sort();
        write!(f, "0/{} nodes are available", self.total)?;
        if !parts.is_empty() {
            write!(f, ": {}", parts.join(", "))?;
        }
        write!(f, ".")
    }
}

/// Per-domain counts of the pods a pod's hard topology spread constraints
/// select, taken once per placement of that pod (`PodTopologySpread`'s
/// PreFilter state).
#[derive(Debug, Default)]
pub struct SpreadState {
    constraints: Vec<SpreadCounts>,
}

#[derive(Debug)]
struct SpreadCounts {
    key: String,
    max_skew: i64,
    counts: HashMap<String, i64>,
    min: i64,
    self_match: i64,
}

impl SpreadState {
    /// Counts, for each constraint of `pod`, the matching pods (same
    /// namespace, selected by the constraint's label selector) in every domain
    /// of its topology key over the nodes the pod's node affinity allows.
    pub fn for_pod(snapshot: &Snapshot, pod: PodId) -> Self {
        let info = &snapshot.pods[pod as usize];
        let constraints = info
            .spread
            .iter()
            .map(|c| {
                let selects = |p: &PodInfo| {
                    p.namespace == info.namespace
                        && c.label_selector
                            .as_ref()
                            .is_some_and(|s| label_selector_matches(s, &p.labels))
                };
                let mut counts: HashMap<String, i64> = HashMap::new();
                for (n, node) in snapshot.nodes.iter().enumerate() {
                    let Some(domain) = node.labels.get(&c.topology_key) else {
                        continue;
                    };
                    if !matches_node_affinity(info, node) {
                        continue;
                    }
                    let matching = snapshot
                        .pods_on_node(n as NodeId)
                        .iter()
                        .filter(|&&p| p != pod && selects(&snapshot.pods[p as usize]))
                        .count() as i64;
                    *counts.entry(domain.clone()).or_default() += matching;
                }
                let too_few_domains = (counts.len() as i64) < i64::from(c.min_domains.unwrap_or(1));
                let min = if too_few_domains {
                    0
                } else {
                    counts.values().copied().min().unwrap_or(0)
                };
                SpreadCounts {
                    key: c.topology_key.clone(),
                    max_skew: i64::from(c.max_skew),
                    counts,
                    min,
                    self_match: i64::from(selects(info)),
                }
            })
            .collect();
        Self { constraints }
    }

    fn check(&self, node: &NodeInfo) -> Result<(), String> {
        for c in &self.constraints {
            let Some(domain) = node.labels.get(&c.key) else {
                return Err(
                    "node(s) didn't match pod topology spread constraints (missing required label)"
                        .into(),
                );
            };
            let count = c.counts.get(domain).copied().unwrap_or(0);
            if count + c.self_match - c.min > c.max_skew {
                return Err("node(s) didn't match pod topology spread constraints".into());
            }
        }
        Ok(())
    }
}

/// `metav1.LabelSelector` semantics: every `matchLabels` pair and every
/// `matchExpressions` requirement must hold; an empty selector matches all.
pub fn label_selector_matches(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let pairs = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let expressions = selector.match_expressions.iter().flatten().all(|e| {
        let value = labels.get(&e.key);
        let values = e.values.as_deref().unwrap_or_default();
        match e.operator.as_str() {
            "In" => value.is_some_and(|v| values.contains(v)),
            "NotIn" => value.is_none_or(|v| !values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    });
    pairs && expressions
}

/// Runs all checks of `pod` against `node`; `Err` holds the reasons of the
/// first failing check (resource fit can give several). `spread` is
/// [`SpreadState::for_pod`] of the same pod and snapshot state.
pub fn check(
    snapshot: &Snapshot,
    pod: PodId,
    node: NodeId,
    spread: &SpreadState,
) -> Result<(), Vec<String>> {
    let info = &snapshot.pods[pod as usize];
    let n = &snapshot.nodes[node as usize];
    if n.unschedulable && !tolerates_unschedulable(&info.tolerations) {
        return Err(vec!["node(s) were unschedulable".into()]);
    }
    if let Some(taint) = untolerated_taint(&n.taints, &info.tolerations) {
        return Err(vec![format!(
            "node(s) had untolerated taint {{{}: {}}}",
            taint.key,
            taint.value.as_deref().unwrap_or_default()
        )]);
    }
    if !matches_node_affinity(info, n) {
        return Err(vec![
            "node(s) didn't match Pod's node affinity/selector".into(),
        ]);
    }
    fits_resources(snapshot, info, node)?;
    spread.check(n).map_err(|reason| vec![reason])
}

fn tolerates_unschedulable(tolerations: &[Toleration]) -> bool {
    let taint = Taint {
        key: UNSCHEDULABLE_TAINT.into(),
        effect: "NoSchedule".into(),
        ..Default::default()
    };
    tolerations.iter().any(|t| tolerates(t, &taint))
}

/// The first `NoSchedule`/`NoExecute` taint no toleration tolerates.
fn untolerated_taint<'a>(taints: &'a [Taint], tolerations: &[Toleration]) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .find(|taint| !tolerations.iter().any(|t| tolerates(t, taint)))
}

/// `Toleration.ToleratesTaint`.
fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or_default();
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or_default();
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("Equal") {
        "Exists" => true,
        "Equal" | "" => {
            toleration.value.as_deref().unwrap_or_default()
                == taint.value.as_deref().unwrap_or_default()
        }
        _ => false,
    }
}

/// `nodeSelector` (every label must match) and required node affinity (any
/// term matches; within a term every requirement matches).
fn matches_node_affinity(pod: &PodInfo, node: &NodeInfo) -> bool {
    let selector_ok = pod
        .node_selector
        .iter()
        .all(|(k, v)| node.labels.get(k) == Some(v));
    let affinity_ok = pod.required_node_affinity.as_ref().is_none_or(|terms| {
        terms.iter().any(|term| {
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
                && fields.into_iter().all(|r| {
                    r.key == "metadata.name" && requirement_matches(r, Some(node.name.as_str()))
                })
        })
    });
    selector_ok && affinity_ok
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

/// `NodeResourcesFit`: every requested resource must fit in what is left.
fn fits_resources(snapshot: &Snapshot, pod: &PodInfo, node: NodeId) -> Result<(), Vec<String>> {
    let mut reasons = Vec::new();
    for (r, &request) in pod.requests.iter().enumerate() {
        if request == 0 {
            continue;
        }
        let free = snapshot.allocatable(r)[node as usize]
            .saturating_sub(snapshot.requested(r)[node as usize]);
        if request > free {
            let name = &snapshot.resource_names[r];
            reasons.push(if name == "pods" {
                "Too many pods".to_string()
            } else {
                format!("Insufficient {name}")
            });
        }
    }
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(reasons)
    }
}

/// kube-scheduler's default scoring (`NodeResourcesFit`, `LeastAllocated`,
/// cpu and memory weighted equally): the share of cpu and memory left free
/// once `pod` is placed, 0..=100.
pub fn least_allocated_score(snapshot: &Snapshot, pod: PodId, node: NodeId) -> i64 {
    let info = &snapshot.pods[pod as usize];
    let mut total = 0i64;
    for r in 0..2 {
        let allocatable = snapshot.allocatable(r)[node as usize];
        if allocatable == 0 {
            continue;
        }
        let used = snapshot.requested(r)[node as usize].saturating_add(info.requests[r]);
        let free = allocatable.saturating_sub(used);
        total += (free as u128 * 100 / allocatable as u128) as i64;
    }
    total / 2
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
            assert_eq!(tolerates(&toleration(t.clone()), &gpu), expected, "{t}");
        }
        let soft = [taint("a", "b", "PreferNoSchedule")];
        assert!(
            untolerated_taint(&soft, &[]).is_none(),
            "PreferNoSchedule does not filter"
        );
    }

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

    #[test]
    fn diagnosis_reads_like_kube_scheduler() {
        let mut d = Diagnosis::over(12);
        for _ in 0..8 {
            d.add("Insufficient cpu");
        }
        for _ in 0..4 {
            d.add("node(s) had untolerated taint {gpu: true}");
        }
        assert_eq!(
            d.to_string(),
            "0/12 nodes are available: 4 node(s) had untolerated taint {gpu: true}, 8 Insufficient cpu."
        );
    }
}
