//! Adapts the plain-Rust gang logic to the WIT `gang-admission` world.

use alloc::string::{String, ToString};
use wasched_sdk::cluster::Snapshot;
use wasched_sdk::gang_admission::exports::wasched::scheduler::{permit, plugin, pre_enqueue};
use wasched_sdk::types::{self, PlacementProgress, PodGroup, PodGroupId, SchedulingPolicy};

use crate::{GroupFacts, Policy, Progress};

struct GangScheduling;

fn policy(spec: Option<&types::PodGroupSpec>) -> Option<Policy> {
    spec.map(|spec| match spec.policy {
        SchedulingPolicy::Basic => Policy::Basic,
        SchedulingPolicy::Gang(min_count) => Policy::Gang { min_count },
    })
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl plugin::Guest for GangScheduling {
    fn name() -> String {
        crate::NAME.to_string()
    }

    fn configure(args: String) -> Result<(), String> {
        crate::configure(&args)
    }
}

impl pre_enqueue::Guest for GangScheduling {
    fn pre_enqueue(_snapshot: &Snapshot, group: PodGroup) -> types::Status {
        crate::pre_enqueue(&GroupFacts {
            name: &group.name,
            policy: policy(group.spec.as_ref()),
            pending: count(group.pending.len()),
            bound: group.bound,
        })
        .into()
    }
}

impl permit::Guest for GangScheduling {
    fn permit(
        snapshot: &Snapshot,
        group: PodGroupId,
        progress: PlacementProgress,
    ) -> types::Status {
        let spec = snapshot.pod_group_spec(group);
        crate::permit(
            policy(spec.as_ref()),
            Progress {
                scheduled: progress.scheduled,
                remaining: progress.remaining,
            },
        )
        .into()
    }
}

wasched_sdk::gang_admission::export!(GangScheduling);
