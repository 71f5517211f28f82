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
use crate::model::{NodeId, Snapshot};

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

/// The candidate victims of one preemption trial, by node.
#[derive(Debug, Clone, Default)]
pub struct VictimCosts {
    per_node: Vec<Cost>,
}

impl VictimCosts {
    /// The costs of `units` (before they are removed: their pods' nodes).
    pub fn of(snapshot: &Snapshot, units: &[VictimUnit]) -> Self {
        let mut per_node = vec![Cost::FREE; snapshot.node_count()];
        for unit in units {
            for &pod in &unit.pods {
                let info = &snapshot.pods[pod as usize];
                if let Some(node) = info.node {
                    per_node[node as usize].add(Cost {
                        pods: 1,
                        priority_sum: i64::from(unit.priority),
                        oldest_start: info.started,
                    });
                }
            }
        }
        Self { per_node }
    }

    /// The victims on `node`.
    pub fn node(&self, node: NodeId) -> Cost {
        self.per_node
            .get(node as usize)
            .copied()
            .unwrap_or(Cost::FREE)
    }

    /// The victims on all of `nodes`.
    pub fn nodes(&self, nodes: &[NodeId]) -> Cost {
        let mut cost = Cost::FREE;
        for &node in nodes {
            cost.add(self.node(node));
        }
        cost
    }
}
