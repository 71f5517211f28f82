//! `GangScheduling`: all-or-nothing admission of PodGroups (Kubernetes v1.37).
//!
//! Extension points: **PreEnqueue** (hold a group back until its PodGroup
//! exists and at least `minCount` member pods exist) and **Permit** (merged
//! with upstream's `PlacementFeasible`: abort a placement early once
//! `scheduled + remaining < minCount`, wait while `scheduled < minCount`,
//! admit from `minCount` on). `basic` groups pass both.
//!
//! The decision logic ([`pre_enqueue`], [`permit`]) is plain Rust; the
//! `component` module only adapts it to the WIT `gang-admission` world.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::format;
use wasched_sdk::{Code, Status};

/// The name this plugin registers under (upstream's plugin name).
pub const NAME: &str = "GangScheduling";

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

/// What PreEnqueue knows about a group.
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

/// How far placing a group within one placement has got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Members bound before the cycle plus members assumed in it.
    pub scheduled: u32,
    /// Pending members not tried yet.
    pub remaining: u32,
}

/// PreEnqueue: may the group enter the active queue?
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
            let present = group.pending.saturating_add(group.bound);
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

/// Permit / PlacementFeasible: is the placement admissible so far?
///
/// `Unschedulable` once `scheduled + remaining < minCount` (nothing left can
/// reach `minCount`), `Wait` while `scheduled < minCount`, success from
/// `minCount` on. Basic groups always succeed; a missing PodGroup is
/// `UnschedulableAndUnresolvable`.
pub fn permit(policy: Option<Policy>, progress: Progress) -> Status {
    match policy {
        None => Status::new(Code::UnschedulableAndUnresolvable, "PodGroup not found"),
        Some(Policy::Basic) => Status::success(),
        Some(Policy::Gang { min_count }) => {
            let reachable = progress.scheduled.saturating_add(progress.remaining);
            if reachable < min_count {
                Status::new(
                    Code::Unschedulable,
                    format!(
                        "gang cannot reach minCount {min_count}: {} placed + {} left to try < {min_count}",
                        progress.scheduled, progress.remaining
                    ),
                )
            } else if progress.scheduled < min_count {
                Status::new(
                    Code::Wait,
                    format!(
                        "waiting for minCount {min_count}: {} placed",
                        progress.scheduled
                    ),
                )
            } else {
                Status::success()
            }
        }
    }
}

/// Validates the plugin's `args`: `GangScheduling` takes none, so only an
/// empty object (or nothing) is accepted.
pub fn configure(args: &str) -> Result<(), alloc::string::String> {
    let trimmed = args.trim();
    let empty = trimmed.is_empty()
        || trimmed == "null"
        || (trimmed.starts_with('{')
            && trimmed.ends_with('}')
            && trimmed[1..trimmed.len() - 1].trim().is_empty());
    if empty {
        Ok(())
    } else {
        Err(format!("{NAME} takes no args, got {trimmed}"))
    }
}

#[cfg(target_arch = "wasm32")]
mod component;

#[cfg(test)]
mod tests;
