//! One pod inside a set of nodes: the native node checks, `filter` and
//! `score` plugins, and the best node.

use std::cmp::Reverse;

use super::Cycle;
use crate::filters::{self, Diagnosis};
use crate::framework::ExtensionPoint;
use crate::model::{NodeId, PodId};

impl Cycle<'_> {
    /// Filters and scores `pod` over `nodes`: the best node, or the
    /// diagnosis of why none fits (or a failed plugin's error).
    pub fn place_pod(&mut self, pod: PodId, nodes: &[NodeId]) -> Result<NodeId, String> {
        let mut diagnosis = Diagnosis::over(nodes.len());
        let mut feasible = Vec::with_capacity(nodes.len());
        let spread = filters::SpreadState::for_pod(self.snapshot, pod);
        for &node in nodes {
            match filters::check(self.snapshot, pod, node, &spread) {
                Ok(()) => feasible.push(node),
                Err(rejection) => diagnosis.reject(rejection),
            }
        }
        for mut plugin in self.plugins.at(ExtensionPoint::Filter) {
            if feasible.is_empty() {
                break;
            }
            let answer = plugin.filter(self.snapshot, pod, &feasible);
            let Some(rejections) = self.failures.settle(answer)? else {
                continue;
            };
            for rejection in rejections {
                diagnosis.add(rejection.reason);
                feasible.retain(|&n| n != rejection.node);
            }
        }
        if feasible.is_empty() {
            return Err(diagnosis.render(self.snapshot));
        }
        let mut totals: Vec<i64> = feasible
            .iter()
            .map(|&n| filters::least_allocated_score(self.snapshot, pod, n))
            .collect();
        for mut plugin in self.plugins.at(ExtensionPoint::Score) {
            let answer = plugin.score(self.snapshot, pod, &feasible);
            match self.failures.settle(answer)? {
                None => {}
                Some(Ok(scores)) => totals.iter_mut().zip(scores).for_each(|(t, s)| *t += s),
                Some(Err(status)) => {
                    return Err(format!("plugin {}: {}", plugin.name(), status.reason));
                }
            }
        }
        // Highest total; ties go to the lowest node id (= node name order).
        let best = (0..feasible.len())
            .max_by_key(|&i| (totals[i], Reverse(feasible[i])))
            .expect("feasible is not empty");
        Ok(feasible[best])
    }
}
