//! What a cycle keeps between attempts to avoid asking again, and what it
//! may reuse. Every cache here answers exactly what asking again would
//! (`tests/reuse.rs` holds each one off against on); [`Reuse`] turns them
//! off one by one so a benchmark can price each.

use rustc_hash::FxHashMap;

use super::{group, misfits, placement_memo, pod, preemption};
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
    /// Placement-generate answers a plugin marked reusable, handed to the
    /// next unit of the same kind and topology key with no running pod,
    /// over the same parent nodes ([`placement_memo`]).
    pub placements: bool,
}

impl Default for Reuse {
    fn default() -> Self {
        Self {
            running_units: true,
            permit_verdicts: true,
            misfits: true,
            placements: true,
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
