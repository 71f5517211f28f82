//! Feasibility trials for preemption: "would this unit fit if these pods
//! were gone?" The host runs them, not the preemption plugin: a trial
//! removes pods inside a checkpoint, runs the whole group algorithm
//! (placements, native node checks, filter/score/permit plugins) and rolls
//! everything back, outside any plugin call — so no plugin's wall-clock
//! budget pays for it, and every plugin called during it runs under its own
//! bounds. A [`TrialBudget`] caps how many trials one preemption may run.

use super::Cycle;
use super::group::GroupResult;
use crate::framework::Placement;
use crate::model::{GroupId, NodeId, PodId};

/// How many trials one preemption attempt may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrialBudget {
    /// Trials left.
    pub remaining: u32,
}

impl TrialBudget {
    /// The default per preemption attempt: one trial with every candidate
    /// removed, then one per reprieved unit, for a few hundred units.
    pub const DEFAULT: TrialBudget = TrialBudget { remaining: 1_000 };
}

/// Why a trial did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetExhausted;

impl Cycle<'_> {
    /// Runs the group algorithm for `pending` members of `group` over
    /// `placements` with `removed` pods taken off their nodes. Returns the
    /// assignments if the group would be admitted; the snapshot is exactly
    /// as before either way.
    pub fn trial(
        &mut self,
        budget: &mut TrialBudget,
        group: GroupId,
        pending: &[PodId],
        placements: &[Placement],
        removed: &[PodId],
    ) -> Result<Option<Vec<(PodId, NodeId)>>, BudgetExhausted> {
        budget.remaining = budget.remaining.checked_sub(1).ok_or(BudgetExhausted)?;
        let checkpoint = self.snapshot.checkpoint();
        for &pod in removed {
            self.snapshot.remove(pod);
        }
        let result = self.place_group(group, pending, placements.to_vec());
        self.snapshot.rollback(checkpoint);
        Ok(match result {
            GroupResult::Admitted(attempt) => Some(attempt.assigned),
            GroupResult::Rejected(_) => None,
        })
    }
}
