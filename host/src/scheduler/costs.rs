//! What the room a preemptor is placed in would cost: while a preemption
//! trial runs (every candidate victim removed), kube-scheduler places the
//! preemptor by its ordinary scores; where several nodes (or placements)
//! share the top score, it takes any of them — whichever its parallel
//! filter listed first, or at random for placements — so it may place the
//! preemptor where it evicts more than it needs. wasched breaks exactly
//! those ties by the victims the choice rests on: fewest victim pods, then
//! the lowest sum of their priorities, then the newest victims (the latest
//! start), then the node or placement name. Ties only: a better-scored
//! choice is never given up for a cheaper one.

use std::cmp::{Ordering, Reverse};

use crate::framework::VictimUnit;
use crate::model::{NodeId, PodId, Snapshot};

/// The victims standing on one node, or on a set of nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    /// Victim pods.
    pub pods: u32,
    /// Sum of their priorities.
    pub priority_sum: i64,
    /// The earliest start among them (`i64::MAX` without victims).
    pub oldest_start: i64,
}

impl Cost {
    /// No victims.
    pub const FREE: Cost = Cost {
        pods: 0,
        priority_sum: 0,
        oldest_start: i64::MAX,
    };

    fn add(&mut self, other: Cost) {
        self.pods += other.pods;
        self.priority_sum += other.priority_sum;
        self.oldest_start = self.oldest_start.min(other.oldest_start);
    }

    /// `Less` when `self` is the cheaper choice: fewer pods, lower
    /// priority sum, newer victims.
    pub fn cmp_cost(&self, other: &Cost) -> Ordering {
        (self.pods, self.priority_sum, Reverse(self.oldest_start)).cmp(&(
            other.pods,
            other.priority_sum,
            Reverse(other.oldest_start),
        ))
    }
}

/// The candidate victims of one preemption trial, by node. A unit costs
/// all its pods wherever they run (a `disruptionMode: all` group goes
/// whole, so one of its pods on a node costs the group), and counts once
/// however many of the chosen nodes it stands on.
#[derive(Debug, Clone, Default)]
pub struct VictimCosts {
    /// Each candidate unit's cost: its pods, their priorities, its oldest
    /// start.
    units: Vec<Cost>,
    /// Per node: the units with pods there, and those pods' requests by
    /// resource; dearest unit first.
    per_node: Vec<Vec<(usize, Vec<u64>)>>,
}

impl VictimCosts {
    /// The costs of `units` (before they are removed: their pods' nodes).
    pub fn of(snapshot: &Snapshot, units: &[VictimUnit]) -> Self {
        let mut per_node: Vec<Vec<(usize, Vec<u64>)>> = vec![Vec::new(); snapshot.node_count()];
        let mut costs = Vec::with_capacity(units.len());
        for (u, unit) in units.iter().enumerate() {
            let mut cost = Cost::FREE;
            for &pod in &unit.pods {
                let info = &snapshot.pods[pod as usize];
                cost.add(Cost {
                    pods: 1,
                    priority_sum: i64::from(unit.priority),
                    oldest_start: info.started,
                });
                let Some(node) = info.node else { continue };
                let on_node = &mut per_node[node as usize];
                let at = match on_node.iter().position(|(v, _)| *v == u) {
                    Some(at) => at,
                    None => {
                        on_node.push((u, vec![0; info.requests.len()]));
                        on_node.len() - 1
                    }
                };
                let requests = &mut on_node[at].1;
                if requests.len() < info.requests.len() {
                    requests.resize(info.requests.len(), 0);
                }
                for (sum, &r) in requests.iter_mut().zip(&info.requests) {
                    *sum += r;
                }
            }
            costs.push(cost);
        }
        // Dearest first, the order `for_pod` puts units back in.
        for on_node in &mut per_node {
            on_node.sort_by(|a, b| costs[b.0].cmp_cost(&costs[a.0]).then(a.0.cmp(&b.0)));
        }
        Self {
            units: costs,
            per_node,
        }
    }

    /// What placing `pod` on `node` costs while the trial has every
    /// candidate removed: the units on `node` that would have to stay out
    /// for it to fit there and could go back without it — found by putting
    /// them back on the node, the dearest first, while what is left still
    /// holds the pod (and, the second time, without the pod), in the
    /// resources the pod requests. Units that earlier members of the trial
    /// already keep out are not charged again. An estimate for breaking
    /// ties; the reprieve that follows decides the victims.
    pub fn for_pod(&self, snapshot: &Snapshot, pod: PodId, node: NodeId) -> Cost {
        let on_node = match self.per_node.get(node as usize) {
            Some(on_node) if !on_node.is_empty() => on_node,
            // No candidate stands there: nothing to leave out.
            _ => return Cost::FREE,
        };
        let requests = &snapshot.pods[pod as usize].requests;
        let used: Vec<usize> = (0..requests.len()).filter(|&r| requests[r] > 0).collect();
        // The units left out when `room` must stay free of the pod's
        // resources.
        let left_out = |room: &dyn Fn(usize) -> u64| -> Vec<usize> {
            let mut free: Vec<u64> = used
                .iter()
                .map(|&r| {
                    snapshot.allocatable(r)[node as usize]
                        .saturating_sub(snapshot.requested(r)[node as usize])
                        .saturating_sub(room(r))
                })
                .collect();
            let mut out = Vec::new();
            for (unit, on) in on_node {
                let need = |i: usize| on.get(used[i]).copied().unwrap_or(0);
                if (0..used.len()).all(|i| need(i) <= free[i]) {
                    for (i, f) in free.iter_mut().enumerate() {
                        *f -= need(i);
                    }
                } else {
                    out.push(*unit);
                }
            }
            out
        };
        let with_pod = left_out(&|r| requests[r]);
        let without = left_out(&|_| 0);
        let mut needed = Cost::FREE;
        for unit in with_pod.into_iter().filter(|u| !without.contains(u)) {
            needed.add(self.units[unit]);
        }
        needed
    }

    /// The units standing on any of `nodes`, each counted once and whole.
    pub fn nodes(&self, nodes: &[NodeId]) -> Cost {
        let mut seen = vec![false; self.units.len()];
        let mut cost = Cost::FREE;
        for &node in nodes {
            for &(unit, _) in self.per_node.get(node as usize).into_iter().flatten() {
                if !std::mem::replace(&mut seen[unit], true) {
                    cost.add(self.units[unit]);
                }
            }
        }
        cost
    }
}
