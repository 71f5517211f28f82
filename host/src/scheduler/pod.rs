//! One pod inside a set of nodes: the native node checks, `filter` and
//! `score` plugins, and the best node.

use std::collections::HashMap;
use std::rc::Rc;

use super::Cycle;
use crate::filters::{self, Diagnosis};
use crate::framework::ExtensionPoint;
use crate::model::{NodeId, PodId};

impl Cycle<'_> {
    /// The static node checks of `pod` on every node, computed once per
    /// pod signature in a run (nodes and pod specs do not change).
    fn static_verdicts(&mut self, pod: PodId) -> Rc<filters::StaticVerdicts> {
        if let Some(Some(known)) = self.statics.by_pod.get(pod as usize) {
            return known.clone();
        }
        let signature = filters::static_signature(&self.snapshot.pods[pod as usize]);
        let verdicts = self
            .statics
            .by_signature
            .entry(signature)
            .or_insert_with(|| Rc::new(filters::StaticVerdicts::of(self.snapshot, pod)))
            .clone();
        let by_pod = &mut self.statics.by_pod;
        if by_pod.len() <= pod as usize {
            by_pod.resize(self.snapshot.pods.len().max(pod as usize + 1), None);
        }
        by_pod[pod as usize] = Some(verdicts.clone());
        verdicts
    }

    /// Filters and scores `pod` over `nodes`: the best node, or the
    /// diagnosis of why none fits (or a failed plugin's error).
    ///
    /// Live ([`Cycle::nominated_first`]), a pod nominated to one of `nodes`
    /// (`status.nominatedNodeName`) goes there if it fits, unscored, as
    /// kube-scheduler's `evaluateNominatedNode` does; otherwise it is
    /// placed as any pod.
    pub fn place_pod(&mut self, pod: PodId, nodes: &[NodeId]) -> Result<NodeId, String> {
        let nominated = self.snapshot.pods[pod as usize]
            .nominated_node
            .filter(|n| self.nominated_first && nodes.contains(n));
        if let Some(node) = nominated
            && self.feasible_nodes(pod, &[node]).is_ok()
        {
            return Ok(node);
        }
        let feasible = self.feasible_nodes(pod, nodes)?;
        self.best_node(pod, feasible)
    }

    /// The nodes among `nodes` that pass the host's node checks and the
    /// filter plugins, or the diagnosis of why none does (or a failed
    /// plugin's error).
    pub fn feasible_nodes(&mut self, pod: PodId, nodes: &[NodeId]) -> Result<Vec<NodeId>, String> {
        let mut diagnosis = Diagnosis::over(nodes.len());
        let mut feasible = Vec::with_capacity(nodes.len());
        let start = self.plugins.timing().then(std::time::Instant::now);
        let state = filters::PreFilter::for_pod(self.snapshot, pod);
        let statics = self.static_verdicts(pod);
        for &node in nodes {
            let verdict = statics
                .get(node)
                .and_then(|()| filters::dynamic_check(self.snapshot, pod, node, &state));
            match verdict {
                Ok(()) => feasible.push(node),
                Err(rejection) => diagnosis.reject(rejection),
            }
        }
        if let Some(start) = start {
            self.node_check_time += start.elapsed();
        }
        for mut plugin in self.plugins.at(ExtensionPoint::Filter) {
            if feasible.is_empty() {
                break;
            }
            let answer = plugin.filter(self.snapshot, pod, &feasible);
            let Some(rejections) = self.failures.settle(answer)? else {
                continue;
            };
            let mut rejected: Vec<NodeId> = Vec::new();
            for rejection in rejections {
                diagnosis.add_many(rejection.reason, rejection.nodes.len());
                rejected.extend(rejection.nodes);
            }
            rejected.sort_unstable();
            feasible.retain(|n| rejected.binary_search(n).is_err());
        }
        if feasible.is_empty() {
            return Err(diagnosis.render(self.snapshot));
        }
        Ok(feasible)
    }

    /// Scores `pod` on `feasible` (not empty): the highest total.
    fn best_node(&mut self, pod: PodId, feasible: Vec<NodeId>) -> Result<NodeId, String> {
        let mut totals = filters::default_scores(self.snapshot, pod, &feasible);
        for mut plugin in self.plugins.at(ExtensionPoint::Score) {
            let answer = plugin.score(self.snapshot, pod, &feasible);
            match self.failures.settle(answer)? {
                None => {}
                Some(Ok(scores)) => {
                    let weight = plugin.weight();
                    totals
                        .iter_mut()
                        .zip(scores)
                        .for_each(|(t, s)| *t += s * weight);
                }
                Some(Err(status)) => {
                    // A score plugin's error status is an Error, not "does
                    // not fit" (upstream's RunScorePlugins fails the cycle).
                    self.failures.failed += 1;
                    return Err(format!("plugin {}: {}", plugin.name(), status.reason));
                }
            }
        }
        // Highest total; ties go to the node whose freed room costs least
        // in a preemption trial, then to the lowest node id (= name order).
        let top = *totals.iter().max().expect("feasible is not empty");
        let tied = feasible
            .iter()
            .zip(&totals)
            .filter(|(_, t)| **t == top)
            .map(|(&n, _)| n);
        let best = match &self.victim_costs {
            None => tied.min(),
            Some(costs) => tied
                .map(|n| (costs.for_pod(self.snapshot, pod, n), n))
                .min_by(|(a, an), (b, bn)| a.cmp_cost(b).then_with(|| an.cmp(bn)))
                .map(|(_, n)| n),
        };
        Ok(best.expect("feasible is not empty"))
    }
}

/// Static node-check verdicts of a run, by pod signature and by pod.
#[derive(Debug, Default)]
pub struct StaticCache {
    by_signature: HashMap<String, Rc<filters::StaticVerdicts>>,
    by_pod: Vec<Option<Rc<filters::StaticVerdicts>>>,
}
