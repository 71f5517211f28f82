//! Feasibility trials for preemption: "would this unit fit if these pods
//! were gone?" The host runs them, not the preemption plugin: a trial
//! removes pods inside a checkpoint, runs the whole group algorithm
//! (placements, in-tree node checks, filter/score/permit plugins) and rolls
//! everything back, outside any plugin call — so no plugin's wall-clock
//! budget pays for it, and every plugin called during it runs under its own
//! bounds. A PodGroup's or tree's preemption runs one trial (every
//! candidate removed); a lone pod's runs one per node, and a [`TrialBudget`]
//! caps how many.

use super::Cycle;
use super::costs::VictimCosts;
use super::group::{Attempt, GroupResult};
use crate::framework::Placement;
use crate::model::{GroupId, PodId};

/// How many trials one preemption attempt may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrialBudget {
    /// Trials left.
    pub remaining: u32,
}

impl TrialBudget {
    /// The default per preemption attempt of a lone pod: one trial per
    /// node that evictions could open.
    pub const DEFAULT: TrialBudget = TrialBudget { remaining: 1_000 };
}

impl Cycle<'_> {
    /// Runs the group algorithm for `pending` members of `group` over
    /// `placements` with `removed` pods taken off their nodes, ties between
    /// equally scored choices broken by what `costs` says they rest on.
    /// Returns the admitted attempt (where the pods would go), else why the
    /// trial did not finish (`Some`: a plugin error under `failurePolicy:
    /// Fail`, or an Error status) or `None` when the unit does not fit; the snapshot is exactly
    /// as before either way.
    pub fn trial(
        &mut self,
        group: GroupId,
        pending: &[PodId],
        placements: &[Placement],
        removed: &[PodId],
        costs: VictimCosts,
    ) -> Result<Attempt, Option<String>> {
        self.while_costing(costs, |cycle| {
            let checkpoint = cycle.snapshot.checkpoint();
            for &pod in removed {
                cycle.snapshot.remove(pod);
            }
            let result = cycle.place_group(group, pending, placements.to_vec());
            cycle.snapshot.rollback(checkpoint);
            match result {
                GroupResult::Admitted(attempt) => Ok(attempt),
                GroupResult::Rejected(attempt) if attempt.errored => Err(Some(attempt.reason)),
                GroupResult::Rejected(_) => Err(None),
            }
        })
    }

    /// Runs `f` as a preemption trial: with `costs` breaking ties, its
    /// evaluations counted apart.
    pub(super) fn while_costing<T>(
        &mut self,
        costs: VictimCosts,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let outer = self.victim_costs.replace(costs);
        let result = f(self);
        self.victim_costs = outer;
        result
    }
}
