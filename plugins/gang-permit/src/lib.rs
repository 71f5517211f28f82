//! `GangScheduling`: all-or-nothing admission of PodGroups and
//! CompositePodGroups (Kubernetes v1.37).
//!
//! Extension points:
//!
//! - **PreEnqueue**: a PodGroup is held back until its PodGroup object exists
//!   and at least `minCount` member pods exist (pending + bound); a
//!   composite root until at least `minGroupCount` of its children are
//!   ready (a basic root: one). A child PodGroup is ready when its object
//!   exists and it has `minCount` pods (basic: one pod); a child composite
//!   when it has `minGroupCount` ready children (basic: one).
//! - **Permit** (merged with upstream's `PlacementFeasible`): abort a
//!   placement early once `scheduled + remaining < minCount` (for a
//!   composite: children and `minGroupCount`), wait while `scheduled <
//!   minCount`, admit from `minCount` on. `basic` groups and composites pass.
//!
//! The decisions are plain functions ([`pre_enqueue`], [`permit`],
//! [`composite_pre_enqueue`], [`composite_permit`]); [`GangScheduling`]
//! gathers their inputs from the [`Cluster`] view.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::format;
use alloc::string::String;
use wasched_sdk::{
    Cluster, Code, Composite, CompositeId, CompositePolicy, NoArgs, PermitVerdict, Plugin,
    PodGroup, PodGroupId, ProgressBounds, SchedulingPolicy, Status, Unit,
};

pub use wasched_sdk::Progress;

/// The name this plugin registers under: `Wasched`-prefixed, so that it
/// cannot collide with kube-scheduler's in-tree `GangScheduling` in one
/// configuration (`wasched config migrate` renames the old name).
pub const NAME: &str = "WaschedGangScheduling";

/// Composite trees are at most 4 levels deep; deeper (or cyclic) input is
/// treated as not ready rather than recursed into.
const MAX_DEPTH: u32 = 8;

/// `PodGroup.spec.schedulingPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// `basic: {}`: no gang semantics.
    Basic,
    /// `gang: {minCount}`.
    Gang {
        /// `minCount`: the fewest pods that may be admitted.
        min_count: u32,
    },
}

impl From<SchedulingPolicy> for Policy {
    fn from(policy: SchedulingPolicy) -> Self {
        match policy {
            SchedulingPolicy::Basic => Self::Basic,
            SchedulingPolicy::Gang(min_count) => Self::Gang { min_count },
        }
    }
}

/// What PreEnqueue knows about a PodGroup.
#[derive(Clone, Copy, Debug)]
pub struct GroupFacts<'a> {
    /// `namespace/name` of the PodGroup, for messages.
    pub name: &'a str,
    /// The policy, or `None` if the PodGroup object does not exist.
    pub policy: Option<Policy>,
    /// Member pods waiting to be scheduled.
    pub pending: u32,
    /// Member pods already bound.
    pub bound: u32,
}

impl<'a> GroupFacts<'a> {
    /// The facts of a PodGroup as the cluster view returns it.
    pub fn of(group: &'a PodGroup) -> Self {
        Self {
            name: &group.name,
            policy: group.spec.as_ref().map(|spec| spec.policy.into()),
            pending: count(group.pending.len()),
            bound: count(group.bound.len()),
        }
    }

    /// Pending plus bound members.
    pub fn present(&self) -> u32 {
        self.pending.saturating_add(self.bound)
    }

    /// Whether the group counts as a ready child of a composite: its object
    /// exists and it has `minCount` pods (basic: at least one).
    pub fn ready(&self) -> bool {
        match self.policy {
            None => false,
            Some(Policy::Basic) => self.present() >= 1,
            Some(Policy::Gang { min_count }) => self.present() >= min_count,
        }
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// PreEnqueue of a PodGroup: may it enter the active queue?
///
/// `UnschedulableAndUnresolvable` when the PodGroup object is missing, or when
/// fewer than `minCount` member pods exist (pending + bound); success otherwise.
pub fn pre_enqueue(group: &GroupFacts<'_>) -> Status {
    match group.policy {
        None => Status::new(
            Code::UnschedulableAndUnresolvable,
            format!("PodGroup {} not found", group.name),
        ),
        Some(Policy::Basic) => Status::success(),
        Some(Policy::Gang { min_count }) => {
            let present = group.present();
            if present < min_count {
                Status::new(
                    Code::UnschedulableAndUnresolvable,
                    format!(
                        "waiting for {min_count} pods of PodGroup {} (minCount {min_count}), {present} present",
                        group.name
                    ),
                )
            } else {
                Status::success()
            }
        }
    }
}

/// PreEnqueue of a composite root that has `ready` ready children.
///
/// `UnschedulableAndUnresolvable` while fewer than `minGroupCount` children
/// (basic: one) are ready; success otherwise.
pub fn composite_pre_enqueue(name: &str, policy: CompositePolicy, ready: u32) -> Status {
    match policy {
        CompositePolicy::Basic if ready == 0 => Status::new(
            Code::UnschedulableAndUnresolvable,
            format!("waiting for a ready child of CompositePodGroup {name}, none ready"),
        ),
        CompositePolicy::Gang(min) if ready < min => Status::new(
            Code::UnschedulableAndUnresolvable,
            format!(
                "waiting for {min} ready children of CompositePodGroup {name} (minGroupCount {min}), {ready} ready"
            ),
        ),
        _ => Status::success(),
    }
}

/// Permit / PlacementFeasible of a PodGroup: is the placement admissible so far?
///
/// `Unschedulable` once `scheduled + remaining < minCount` (nothing left can
/// reach `minCount`), `Wait` while `scheduled < minCount`, success from
/// `minCount` on. Basic groups always succeed; a missing PodGroup is
/// `UnschedulableAndUnresolvable`.
pub fn permit(policy: Option<Policy>, progress: Progress) -> Status {
    match policy {
        None => Status::new(Code::UnschedulableAndUnresolvable, "PodGroup not found"),
        Some(Policy::Basic) => Status::success(),
        Some(Policy::Gang { min_count }) => gang_permit("minCount", min_count, progress),
    }
}

/// Permit of a composite, over its children: as [`permit`] with
/// `minGroupCount`. Basic composites always succeed; a missing one is
/// `UnschedulableAndUnresolvable`.
pub fn composite_permit(policy: Option<CompositePolicy>, progress: Progress) -> Status {
    match policy {
        None => Status::new(
            Code::UnschedulableAndUnresolvable,
            "CompositePodGroup not found",
        ),
        Some(CompositePolicy::Basic) => Status::success(),
        Some(CompositePolicy::Gang(min)) => gang_permit("minGroupCount", min, progress),
    }
}

/// How far the host may reuse a permit `status` given at `progress` for a
/// unit whose policy needs `min` members (`None`: basic): a gang's `wait`
/// holds while `scheduled < min <= scheduled + remaining` (its reason does
/// not name the progress), its success while `scheduled >= min`, a basic
/// unit's success for the whole cycle; an early abort, whose reason names
/// the progress, holds for exactly that progress (so the host need not ask
/// again in every placement where the first member does not fit). A
/// missing group is asked again.
pub fn verdict(status: Status, min: Option<u32>, progress: Progress) -> PermitVerdict {
    let bounds = match (status.code, min) {
        (Code::Success, None) => ProgressBounds::ALWAYS,
        (Code::Success, Some(min)) => ProgressBounds {
            min_scheduled: min,
            ..ProgressBounds::ALWAYS
        },
        (Code::Wait, Some(min)) if min > 0 => ProgressBounds {
            min_scheduled: 0,
            max_scheduled: min - 1,
            min_possible: min,
            max_possible: u32::MAX,
        },
        (Code::Unschedulable, Some(_)) => ProgressBounds::exactly(progress),
        _ => return PermitVerdict::once(status),
    };
    PermitVerdict::reusable(status, bounds)
}

fn gang_permit(field: &str, min: u32, progress: Progress) -> Status {
    let Progress {
        scheduled,
        remaining,
    } = progress;
    if scheduled.saturating_add(remaining) < min {
        Status::new(
            Code::Unschedulable,
            // kube-scheduler's GangScheduling wording.
            format!(
                "{field} ({min}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"
            ),
        )
    } else if scheduled < min {
        // No count in the reason: the host reuses this verdict while
        // `scheduled` grows towards `min`.
        Status::new(Code::Wait, format!("waiting for {field} {min}"))
    } else {
        Status::success()
    }
}

/// How many children of `composite` are ready (see the crate docs).
pub fn ready_children(cluster: &impl Cluster, composite: &Composite) -> u32 {
    ready_children_at(cluster, composite, 0)
}

fn ready_children_at(cluster: &impl Cluster, composite: &Composite, depth: u32) -> u32 {
    let groups = composite
        .child_groups
        .iter()
        .filter_map(|&g| cluster.pod_group(g))
        .filter(|g| GroupFacts::of(g).ready())
        .count();
    let composites = composite
        .child_composites
        .iter()
        .filter(|&&c| composite_ready(cluster, c, depth + 1))
        .count();
    count(groups + composites)
}

fn composite_ready(cluster: &impl Cluster, id: CompositeId, depth: u32) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let Some(composite) = cluster.composite(id) else {
        return false;
    };
    let ready = ready_children_at(cluster, &composite, depth);
    match composite.spec.policy {
        CompositePolicy::Basic => ready >= 1,
        CompositePolicy::Gang(min) => ready >= min,
    }
}

/// The plugin: stateless, no args.
#[derive(Debug, Default)]
pub struct GangScheduling;

impl GangScheduling {
    fn pre_enqueue_group(cluster: &impl Cluster, group: PodGroupId) -> Status {
        match cluster.pod_group(group) {
            Some(group) => pre_enqueue(&GroupFacts::of(&group)),
            None => Status::new(
                Code::UnschedulableAndUnresolvable,
                format!("PodGroup #{group} not found"),
            ),
        }
    }

    fn pre_enqueue_composite(cluster: &impl Cluster, id: CompositeId) -> Status {
        match cluster.composite(id) {
            Some(composite) => composite_pre_enqueue(
                &composite.name,
                composite.spec.policy,
                ready_children(cluster, &composite),
            ),
            None => Status::new(
                Code::UnschedulableAndUnresolvable,
                format!("CompositePodGroup #{id} not found"),
            ),
        }
    }
}

impl Plugin for GangScheduling {
    type Args = NoArgs;
    const NAME: &'static str = NAME;

    fn new(_args: NoArgs) -> Result<Self, String> {
        Ok(Self)
    }

    fn pre_enqueue(&mut self, cluster: &impl Cluster, unit: Unit) -> Status {
        match unit {
            Unit::PodGroup(group) => Self::pre_enqueue_group(cluster, group),
            Unit::Composite(id) => Self::pre_enqueue_composite(cluster, id),
        }
    }

    fn permit(&mut self, cluster: &impl Cluster, unit: Unit, progress: Progress) -> PermitVerdict {
        match unit {
            Unit::PodGroup(group) => {
                let policy = cluster.pod_group_spec(group).map(|spec| spec.policy.into());
                let min = match policy {
                    Some(Policy::Gang { min_count }) => Some(min_count),
                    _ => None,
                };
                verdict(permit(policy, progress), min, progress)
            }
            Unit::Composite(id) => {
                let policy = cluster.composite(id).map(|c| c.spec.policy);
                let min = match policy {
                    Some(CompositePolicy::Gang(min)) => Some(min),
                    _ => None,
                };
                verdict(composite_permit(policy, progress), min, progress)
            }
        }
    }
}

wasched_sdk::register_plugin!(GangScheduling: pre_enqueue, permit);

#[cfg(test)]
mod tests;
