//! Misfits: searches for a node that found none for reasons of the nodes
//! alone, remembered while those nodes stay as they were.
//!
//! A gang that does not fit tries every placement the topology plugin
//! generates, and the next gang of the same shape tries them again over an
//! unchanged cluster (the first one's attempts were rolled back). When the
//! host's node checks rejected every node of a search for a node-local
//! reason (`NodeUnschedulable`, `TaintToleration`, `NodeAffinity`,
//! `NodeResourcesFit`), the same search decides the same as long as:
//!
//! - the pod reads the same of its spec: the same static verdicts (one per
//!   [`static_signature`](crate::filters::static_signature)) and the same
//!   requests;
//! - it walks the same nodes;
//! - every one of those nodes is in the state it was in: its change value
//!   ([`Identity::node_changes`](crate::model::identity::Identity::node_changes))
//!   is the one it had. A value names one state of its node: a change gives
//!   a new value, a rollback puts back the value of the state it returns to.
//!
//! Such a search asked no filter plugin (they are asked only about nodes
//! the host's checks let through) and does not move the search's start
//! (a walk of every node ends where it began), so its diagnosis is all
//! there is to remember. A search in which a rejection depended on other
//! nodes (`PodTopologySpread`, `InterPodAffinity`) or a filter plugin was
//! asked is not remembered, nor is a search of fewer than [`FEWEST_NODES`]
//! nodes; what is remembered is bounded by [`NODES_KEPT`].

use std::hash::{Hash, Hasher};
use std::rc::Rc;

use super::pod::Unfit;
use crate::filters::StaticVerdicts;
use crate::model::NodeId;

/// Searches of fewer nodes are not remembered: walking them costs about
/// what looking them up does (a preemption trial's one-node checks).
pub const FEWEST_NODES: usize = 8;

/// Node entries (a node and its change value, 12 bytes) the remembered
/// searches may hold together; past it they are forgotten at once and
/// remembering starts again (about 12 MiB; a run of `shadow` with many pod
/// shapes that fit nowhere stays bounded).
pub const NODES_KEPT: usize = 1 << 20;

/// The remembered misfits of a run (and of the runs that hand them on,
/// [`Kept`](super::Kept)), by the search they answer.
#[derive(Debug, Default)]
pub struct Misfits {
    by_search: rustc_hash::FxHashMap<u64, Vec<Misfit>>,
    /// Node entries held, at most [`NODES_KEPT`].
    held: usize,
}

/// One remembered search and its diagnosis.
#[derive(Debug)]
struct Misfit {
    /// The pod's static verdicts (by identity: one per signature in a run).
    statics: Rc<StaticVerdicts>,
    requests: Box<[u64]>,
    nodes: Box<[NodeId]>,
    /// Each node's change value when the search ran.
    changes: Box<[u64]>,
    /// The view's generation when the search ran: the same generation is
    /// the same state of every node.
    generation: u64,
    /// What the search found.
    unfit: Unfit,
}

/// A search: a pod's static verdicts and requests over some nodes.
#[derive(Debug, Clone, Copy)]
pub struct Search<'a> {
    /// The pod's static verdicts, as the run's cache holds them.
    pub statics: &'a Rc<StaticVerdicts>,
    /// The pod's requests, by resource column.
    pub requests: &'a [u64],
    /// The nodes walked.
    pub nodes: &'a [NodeId],
}

impl Search<'_> {
    /// A hash of the pod and of the nodes' count, first, middle and last
    /// (hashing every node would cost as much as a short walk; equal
    /// hashes are told apart by [`Search::is`]).
    fn hash(&self) -> u64 {
        let mut hasher = rustc_hash::FxHasher::default();
        std::ptr::hash(Rc::as_ptr(self.statics), &mut hasher);
        self.requests.hash(&mut hasher);
        let nodes = self.nodes;
        nodes.len().hash(&mut hasher);
        if let (Some(first), Some(last)) = (nodes.first(), nodes.last()) {
            (first, nodes[nodes.len() / 2], last).hash(&mut hasher);
        }
        hasher.finish()
    }

    fn is(&self, misfit: &Misfit) -> bool {
        Rc::ptr_eq(self.statics, &misfit.statics)
            && *self.requests == *misfit.requests
            && *self.nodes == *misfit.nodes
    }
}

/// The state of a view's nodes a remembered search is checked against.
#[derive(Debug, Clone, Copy)]
pub struct NodesNow<'a> {
    /// Every node's change value
    /// ([`Identity::node_changes`](crate::model::identity::Identity::node_changes)).
    pub changes: &'a [u64],
    /// The view's generation
    /// ([`Identity::generation`](crate::model::identity::Identity::generation)).
    pub generation: u64,
}

impl<'a> NodesNow<'a> {
    /// The nodes of the view `identity` stamps, as they are.
    pub fn of(identity: &'a crate::model::identity::Identity) -> Self {
        Self {
            changes: identity.node_changes(),
            generation: identity.generation(),
        }
    }
}

/// Whether every node of `nodes` still has the change value in `changes`.
fn unchanged(nodes: &[NodeId], changes: &[u64], now: &[u64]) -> bool {
    nodes
        .iter()
        .zip(changes)
        .all(|(&n, &value)| now.get(n as usize) == Some(&value))
}

impl Misfits {
    /// The diagnosis of `search` if it ran before and its nodes are as
    /// they were `now`. A view at the generation the search ran at is in
    /// that state (a change takes a new clock value, a rollback puts the
    /// old one back), so its nodes are not compared one by one.
    pub fn get(&self, search: Search, now: NodesNow) -> Option<&Unfit> {
        self.by_search
            .get(&search.hash())?
            .iter()
            .find(|m| {
                search.is(m)
                    && (m.generation == now.generation
                        || unchanged(&m.nodes, &m.changes, now.changes))
            })
            .map(|m| &m.unfit)
    }

    /// Remembers that `search` found no node, as `unfit` says, with the
    /// nodes as `now` has them; replaces what an earlier state of them
    /// gave.
    pub fn insert(&mut self, search: Search, now: NodesNow, unfit: &Unfit) {
        let size = search.nodes.len();
        if !(FEWEST_NODES..=NODES_KEPT).contains(&size) {
            return;
        }
        if self.held + size > NODES_KEPT {
            self.by_search.clear();
            self.held = 0;
        }
        let changes = search
            .nodes
            .iter()
            .map(|&n| now.changes.get(n as usize).copied().unwrap_or(u64::MAX))
            .collect();
        let misfit = Misfit {
            statics: search.statics.clone(),
            requests: search.requests.into(),
            nodes: search.nodes.into(),
            changes,
            generation: now.generation,
            unfit: unfit.clone(),
        };
        let same = self.by_search.entry(search.hash()).or_default();
        match same.iter_mut().find(|m| search.is(m)) {
            Some(earlier) => *earlier = misfit,
            None => {
                same.push(misfit);
                self.held += size;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view whose nodes have the change values `changes`; as a view's
    /// generation, its generation names that state of every node.
    fn nodes_now(changes: &[u64]) -> NodesNow<'_> {
        let mut hasher = rustc_hash::FxHasher::default();
        changes.hash(&mut hasher);
        let generation = hasher.finish();
        NodesNow {
            changes,
            generation,
        }
    }

    impl Misfits {
        fn reason_of(&self, search: Search, now: &[u64]) -> Option<&str> {
            self.get(search, nodes_now(now)).map(|u| u.reason.as_str())
        }

        fn remember(&mut self, search: Search, now: &[u64], reason: &str) {
            self.insert(search, nodes_now(now), &Unfit::from(reason.to_string()));
        }
    }

    fn statics() -> Rc<StaticVerdicts> {
        Rc::new(StaticVerdicts::from_codes(vec![0; 8]))
    }

    #[test]
    fn a_search_is_answered_while_its_nodes_keep_their_change_values() {
        let (verdicts, mut misfits) = (statics(), Misfits::default());
        let nodes = [0, 1, 2, 3, 4, 5, 6, 8];
        let search = Search {
            statics: &verdicts,
            requests: &[2, 0, 1],
            nodes: &nodes,
        };
        let now = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19];
        assert_eq!(
            misfits.reason_of(search, &now),
            None,
            "nothing remembered yet"
        );
        misfits.remember(search, &now, "0/8 nodes are available: 8 Insufficient cpu.");
        assert_eq!(
            misfits.reason_of(search, &now),
            Some("0/8 nodes are available: 8 Insufficient cpu.")
        );
        // A node outside the search changes: still the same answer.
        let mut other = now;
        other[7] = 99;
        assert!(misfits.reason_of(search, &other).is_some());
        // A node of the search changes (a pod placed, or taken off).
        let mut changed = now;
        changed[4] = 99;
        assert_eq!(misfits.reason_of(search, &changed), None);
        // A value from before the search ran (a rollback to an earlier
        // state) is a change too, though it is smaller.
        let mut earlier = now;
        earlier[6] = 3;
        assert_eq!(misfits.reason_of(search, &earlier), None);
        // Fewer nodes in the view than the search walked.
        assert_eq!(misfits.reason_of(search, &now[..8]), None);
    }

    #[test]
    fn another_pod_or_other_nodes_are_another_search() {
        let (verdicts, other_verdicts) = (statics(), statics());
        let mut misfits = Misfits::default();
        let nodes = [0, 1, 2, 3, 4, 5, 6, 7, 8];
        let now = [1; 10];
        let search = Search {
            statics: &verdicts,
            requests: &[2, 1],
            nodes: &nodes,
        };
        misfits.remember(search, &now, "no");
        let requests = Search {
            requests: &[2, 2],
            ..search
        };
        let signature = Search {
            statics: &other_verdicts,
            ..search
        };
        // Same count, first, middle and last node: the same hash, not
        // the same search.
        let middle = [0, 9, 2, 3, 4, 5, 6, 7, 8];
        let inner = Search {
            nodes: &middle,
            ..search
        };
        for other in [requests, signature, inner] {
            assert_eq!(misfits.reason_of(other, &now), None, "{other:?}");
        }
        assert_eq!(inner.hash(), search.hash());
        // Remembering it anew in another state replaces the old answer.
        let later = [2; 10];
        misfits.remember(search, &later, "still no");
        assert_eq!(misfits.reason_of(search, &now), None);
        assert_eq!(misfits.reason_of(search, &later), Some("still no"));
        assert_eq!(misfits.by_search.values().map(Vec::len).sum::<usize>(), 1);
        assert_eq!(misfits.held, nodes.len());
    }

    #[test]
    fn a_view_at_the_generation_a_search_ran_at_is_answered_without_its_nodes() {
        let (verdicts, mut misfits) = (statics(), Misfits::default());
        let nodes: Vec<NodeId> = (0..8).collect();
        let search = Search {
            statics: &verdicts,
            requests: &[1],
            nodes: &nodes,
        };
        let ran = [5; 8];
        misfits.insert(
            search,
            NodesNow {
                changes: &ran,
                generation: 40,
            },
            &Unfit::from("no".to_string()),
        );
        // Values that cannot be told from the ones it ran with, but the
        // generation it ran at: that state.
        let same = NodesNow {
            changes: &[0; 8],
            generation: 40,
        };
        assert!(misfits.get(search, same).is_some());
        // Another generation: the nodes are compared.
        let moved = NodesNow {
            changes: &[0; 8],
            generation: 41,
        };
        assert!(misfits.get(search, moved).is_none());
        let back = NodesNow {
            changes: &ran,
            generation: 41,
        };
        assert!(misfits.get(search, back).is_some());
    }

    #[test]
    fn short_searches_are_not_remembered_and_the_nodes_held_are_bounded() {
        let (verdicts, mut misfits) = (statics(), Misfits::default());
        let now = vec![1; NODES_KEPT];
        let short: Vec<NodeId> = (0..FEWEST_NODES as NodeId - 1).collect();
        let search = |nodes| Search {
            statics: &verdicts,
            requests: &[1],
            nodes,
        };
        misfits.remember(search(&short), &now, "no");
        assert_eq!(misfits.reason_of(search(&short), &now), None);
        // Two searches of just over half the bound: the second makes the
        // memo forget the first.
        let half = NODES_KEPT / 2 + 1;
        let first: Vec<NodeId> = (0..half as NodeId).collect();
        let second: Vec<NodeId> = (1..=half as NodeId).collect();
        misfits.remember(search(&first), &now, "first");
        assert_eq!(misfits.held, half);
        misfits.remember(search(&second), &now, "second");
        assert_eq!(misfits.held, half);
        assert_eq!(misfits.reason_of(search(&first), &now), None);
        assert_eq!(misfits.reason_of(search(&second), &now), Some("second"));
    }
}
