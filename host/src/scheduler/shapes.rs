//! Pod shapes: per shape, the nodes a search found short of the resources
//! the shape requests, and the parts of each node's default score, each
//! with the state it was in.
//!
//! A walk of every node checks each node's free resources against the
//! pod's requests, and most nodes of a busy cluster fail the same way for
//! every pod of a shape: the next member of a gang, the next gang of the
//! same template, the next lone pod alike. `NodeResourcesFit` decides from
//! the pod's requests and the node's state alone, so a node found short
//! for a shape is short, by the same resources, for as long as its change
//! value
//! ([`Identity::node_changes`](crate::model::identity::Identity::node_changes))
//! is the one it had: a change gives a new value, a rollback puts back the
//! value of the state it returns to. Such a node is counted from what was
//! found, not checked again.
//!
//! A node's resource scores and untolerated `PreferNoSchedule` taints
//! are kept the same way ([`NodeScores`]): the next member of a gang of
//! one template scores anew only the nodes that changed since, such as
//! the one the member before it went to.
//!
//! A shape is the pod's static verdicts (one per
//! [`static_signature`](crate::filters::static_signature)) and its
//! requests; only walks whose checks need nothing else (no spread
//! constraint, no forbidden anti-affinity domain) use the short nodes kept
//! here; the scores hold for any pod of the shape.
//! What is kept is bounded by [`NODES_KEPT`].

use std::hash::{Hash, Hasher};
use std::rc::Rc;

use crate::filters::{NodeChecks, NodeScores, Rejection, StaticVerdicts};
use crate::model::NodeId;

/// Node entries the shapes may hold together, each shape two per node (a
/// change value and the resources short; a change value and the score's
/// parts: 24 bytes each); past it every shape is forgotten at once and
/// keeping starts again (about 24 MiB: as many shapes as 12 MiB kept of
/// short nodes alone).
pub const NODES_KEPT: usize = 1 << 20;

/// The node entries a shape over `nodes` nodes counts for.
fn entries(nodes: usize) -> usize {
    2 * nodes
}

/// What is known of a run's pod shapes (and of the runs that hand it on,
/// [`Kept`](super::Kept)): their short nodes and node scores.
#[derive(Debug, Default)]
pub struct Shapes {
    /// Shapes by a hash of their key (equal hashes told apart by the key).
    by_shape: rustc_hash::FxHashMap<u64, Vec<Shape>>,
    /// Node entries held, at most [`NODES_KEPT`].
    held: usize,
}

/// What is known of one shape's nodes.
#[derive(Debug)]
pub struct Shape {
    /// The shape's static verdicts (by identity: one per signature in a
    /// run).
    statics: Rc<StaticVerdicts>,
    requests: Box<[u64]>,
    /// Per node, the change value it was found short at (0: never; clock
    /// values start at 1).
    at: Vec<u64>,
    /// Per node, the resources it was found short of (its
    /// [`Rejection::Resources`] mask).
    short: Vec<u128>,
    /// Nodes counted from what was known instead of checked.
    known: u64,
    /// The parts of the nodes' default scores, from the shape's first
    /// scoring on.
    scores: Option<NodeScores>,
}

impl Shapes {
    /// What is known of the shape (`statics`, `requests`) over `nodes`
    /// nodes; nothing the first time.
    pub fn shape(
        &mut self,
        statics: &Rc<StaticVerdicts>,
        requests: &[u64],
        nodes: usize,
    ) -> &mut Shape {
        let mut hasher = rustc_hash::FxHasher::default();
        std::ptr::hash(Rc::as_ptr(statics), &mut hasher);
        requests.hash(&mut hasher);
        let hash = hasher.finish();
        let is = |s: &Shape| Rc::ptr_eq(&s.statics, statics) && *s.requests == *requests;
        let known = self
            .by_shape
            .get(&hash)
            .and_then(|same| same.iter().position(is))
            .filter(|&at| self.by_shape[&hash][at].at.len() == nodes);
        let at = match known {
            Some(at) => at,
            None => {
                if self.held + entries(nodes) > NODES_KEPT {
                    self.by_shape.clear();
                    self.held = 0;
                }
                let shape = Shape {
                    statics: statics.clone(),
                    requests: requests.into(),
                    at: vec![0; nodes],
                    short: vec![0; nodes],
                    known: 0,
                    scores: None,
                };
                let same = self.by_shape.entry(hash).or_default();
                self.held += entries(nodes);
                match same.iter().position(is) {
                    Some(at) => {
                        self.held -= entries(same[at].at.len());
                        same[at] = shape;
                        at
                    }
                    None => {
                        same.push(shape);
                        same.len() - 1
                    }
                }
            }
        };
        &mut self.by_shape.get_mut(&hash).expect("known or just kept")[at]
    }
}

impl Shape {
    /// `checks` (of a pod of this shape, with no check that depends on
    /// other pods) of `node`, whose change value is `change`: a node found
    /// short in this state is not checked again; a node found short now is
    /// kept.
    #[inline(always)]
    pub fn check(
        &mut self,
        checks: &NodeChecks,
        node: NodeId,
        change: u64,
    ) -> Result<(), Rejection> {
        let n = node as usize;
        if self.at[n] == change {
            self.known += 1;
            return Err(Rejection::Resources(self.short[n]));
        }
        let verdict = checks.dynamic(node);
        if let Err(Rejection::Resources(short)) = verdict {
            self.at[n] = change;
            self.short[n] = short;
        }
        verdict
    }

    /// How many nodes were counted from what was known instead of checked.
    pub fn known(&self) -> u64 {
        self.known
    }

    /// The parts of the shape's nodes' default scores.
    pub fn scores(&mut self) -> &mut NodeScores {
        let nodes = self.at.len();
        self.scores.get_or_insert_with(|| NodeScores::new(nodes))
    }
}
