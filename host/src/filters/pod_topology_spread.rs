//! `PodTopologySpread` (filter): a pod's hard constraints
//! (`whenUnsatisfiable: DoNotSchedule`) over the domains of their topology
//! keys, counted over the nodes the pod's node affinity allows, as
//! upstream's `pkg/scheduler/framework/plugins/podtopologyspread`.

use std::collections::HashMap;

use super::{Rejection, node_affinity};
use crate::model::{NodeId, NodeInfo, PodId, PodInfo, Snapshot, label_selector_matches};

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
    /// Whether the pod has no hard constraint.
    pub fn is_empty(&self) -> bool {
        self.constraints.is_empty()
    }

    /// Per constraint, the matching pods per domain, sorted by domain
    /// (what the constraint checks against; for tests and diagnostics).
    pub fn domain_counts(&self) -> Vec<Vec<(String, i64)>> {
        self.constraints
            .iter()
            .map(|c| {
                let mut counts: Vec<(String, i64)> =
                    c.counts.iter().map(|(d, n)| (d.clone(), *n)).collect();
                counts.sort();
                counts
            })
            .collect()
    }

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
                    if !node_affinity::matches(info, node) {
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

    pub(super) fn check(&self, node: &NodeInfo) -> Result<(), Rejection> {
        for c in &self.constraints {
            let Some(domain) = node.labels.get(&c.key) else {
                return Err(Rejection::SpreadMissingLabel);
            };
            let count = c.counts.get(domain).copied().unwrap_or(0);
            if count + c.self_match - c.min > c.max_skew {
                return Err(Rejection::Spread);
            }
        }
        Ok(())
    }
}

/// Upstream's `Filter`: the constraints of `pod` against `node`, in the
/// snapshot as it is.
pub fn filter(snapshot: &Snapshot, pod: PodId, node: NodeId) -> Result<(), Rejection> {
    SpreadState::for_pod(snapshot, pod).check(&snapshot.nodes[node as usize])
}
