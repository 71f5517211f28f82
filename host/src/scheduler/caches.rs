//! What a cycle keeps between attempts to avoid asking again, and what it
//! may reuse. Every cache here answers exactly what asking again would
//! (`tests/reuse.rs` holds each one off against on); [`Reuse`] turns them
//! off one by one so a benchmark can price each.

use rustc_hash::FxHashMap;

use super::{group, misfits, placement_memo, pod, preemption, shapes};
use crate::framework::Unit;

/// What a run may reuse between attempts. Every option decides the same;
/// off, the cycle asks again. Public only with the `reuse-ablation`
/// feature (benchmarks and the test that holds each off against on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reuse {
    /// The running victim units of preemption, kept while the snapshot's
    /// generation does not move (a rollback puts it back, so the
    /// preemption attempts that follow failed placements share them).
    pub running_units: bool,
    /// Every permit verdict a plugin gave a unit in its cycle (up to
    /// [`group::PERMIT_VERDICTS_KEPT`]), not only its latest: a verdict for
    /// one progress stays reusable after a verdict for another (a gang's
    /// `wait` across the placements it tries, after one placement's early
    /// abort).
    pub permit_verdicts: bool,
    /// Searches for a node that found none for reasons of the nodes alone,
    /// answered again while those nodes stay as they were ([`misfits`]):
    /// the next gang of a shape that fits nowhere does not walk the
    /// placements the last one walked.
    pub misfits: bool,
    /// The nodes a walk of every node found short of a pod shape's
    /// requests, counted again without a check while they stay as they
    /// were ([`shapes`]).
    pub short_nodes: bool,
    /// The parts of a node's default score for a pod shape, taken again
    /// without working them out while the node stays as it was
    /// ([`shapes`], [`NodeScores`](crate::filters::NodeScores)).
    pub node_scores: bool,
    /// Placement-generate answers a plugin marked reusable, handed to the
    /// next unit of the same kind and topology key with no running pod,
    /// over the same parent nodes ([`placement_memo`]).
    pub placements: bool,
    /// The caches one run hands the next over the same nodes ([`Kept`]);
    /// off, every run starts with empty caches.
    pub across_runs: bool,
}

impl Default for Reuse {
    fn default() -> Self {
        Self {
            running_units: true,
            permit_verdicts: true,
            misfits: true,
            short_nodes: true,
            node_scores: true,
            placements: true,
            across_runs: true,
        }
    }
}

/// A cycle's caches, and what it may reuse of them.
#[derive(Default)]
pub(crate) struct Caches {
    /// What may be reused.
    pub(super) reuse: Reuse,
    /// Static node-check verdicts, by pod signature.
    pub(super) statics: pod::StaticCache,
    /// Searches that found no node, while their nodes stay as they were.
    pub(super) misfits: misfits::Misfits,
    /// Nodes found short of a pod shape's requests, and the parts of
    /// their default scores, while they stay as they were.
    pub(super) shapes: shapes::Shapes,
    /// The diagnoses of searches that found no node, worded.
    pub(super) wordings: crate::filters::Wordings,
    /// Placement answers the plugins marked reusable.
    pub(super) placement_memo: placement_memo::PlacementMemo,
    /// Permit verdicts of the units of the cycle in progress
    /// ([`super::Cycle::permit`]); cleared when a group's or tree's cycle
    /// starts.
    pub(super) permits: FxHashMap<Unit, group::PermitMemo>,
    /// The running units at a generation of the snapshot (preemption).
    pub(super) running: Option<(u64, std::rc::Rc<preemption::RunningUnits>)>,
}

impl Caches {
    /// Empty caches reusing as `reuse` says.
    pub(super) fn new(reuse: Reuse) -> Self {
        Self {
            reuse,
            ..Self::default()
        }
    }
}

/// What a run hands the next ([`RunOptions::kept`](super::RunOptions::kept)):
/// its caches, for a run over the same nodes' objects and interned names
/// (the snapshot's [`Identity::layout`](crate::model::identity::Identity::layout)
/// and resource columns unchanged) — `wasched replay` runs the cycle once
/// per pop of its queue over a cluster whose nodes never change. What is
/// indexed by pod or PodGroup id (ids move as pods come and go) is
/// dropped between runs; the rest is keyed by what it depends on (a pod's
/// spec, node change values, the snapshot's generation). Past a change of
/// nodes or names, the next run starts with empty caches.
#[derive(Default)]
pub struct Kept {
    caches: Caches,
    /// The layout and resource columns the caches were filled over.
    over: Option<(u64, Vec<String>)>,
}

impl Kept {
    /// The caches for a run over `snapshot`, reusing as `reuse` says.
    pub(super) fn take(&mut self, snapshot: &crate::model::Snapshot, reuse: Reuse) -> Caches {
        let layout = snapshot.identity().layout();
        let same = self
            .over
            .as_ref()
            .is_some_and(|(at, resources)| *at == layout && *resources == *snapshot.resource_names);
        let mut caches = std::mem::take(&mut self.caches);
        if !same || !reuse.across_runs {
            caches = Caches::default();
            self.over = Some((layout, snapshot.resource_names.to_vec()));
        }
        caches.reuse = reuse;
        caches.statics.forget_pods();
        caches.permits.clear();
        caches
    }

    /// Keeps a run's caches for the next.
    pub(super) fn keep(&mut self, caches: Caches) {
        self.caches = caches;
    }
}
