//! Components built against `wasched:scheduler@0.1.0` (frozen in
//! `wit/frozen/v0.1.0`) keep loading: this module links the 0.1.0 imports
//! to the same host state and converts the current host's calls to the
//! 0.1.0 exports (the pattern of Zed's per-version hosts).
//!
//! What 0.1.0 cannot express is answered for it: it knows no
//! CompositePodGroups, so pre-enqueue, permit and the placement points
//! skip composite units; its `pod-group-post-filter` (a `group-trial`
//! callback no host ever served) is not wired.

#![allow(missing_docs)]

use wasmtime::component::Resource;

use wasched_sdk::Cluster;

use super::contract_v0_3::common_snapshot_methods;
use super::state::{HostState, SnapshotHandle};
use crate::framework::native::SnapshotView;
use crate::framework::{ExtensionPoint, LogLevel, Placement, Progress, Status, Unit};
use crate::model::{NodeId, PodId, Snapshot};

mod bindings {
    wasmtime::component::bindgen!({
        world: "extension-host",
        path: "../wit/frozen/v0.1.0",
        with: {
            "wasched:scheduler/cluster.snapshot": crate::runtime::state::SnapshotHandle,
            "wasched:scheduler/cluster.group-trial": crate::runtime::contract_v0_1::GroupTrialHandle,
        },
    });
}

use bindings::exports::wasched::scheduler as guest;
pub use bindings::wasched::scheduler::types;
use bindings::wasched::scheduler::{cluster, log};

/// The contract version this module adapts.
pub const VERSION: &str = "0.1.0";

/// The extension points a 0.1.0 component is wired into.
pub const ADAPTED: [ExtensionPoint; 6] = [
    ExtensionPoint::PreEnqueue,
    ExtensionPoint::Filter,
    ExtensionPoint::Score,
    ExtensionPoint::Permit,
    ExtensionPoint::PlacementGenerate,
    ExtensionPoint::PlacementScore,
];

/// Table entry type of 0.1.0's `group-trial` resource; never handed out.
#[derive(Debug)]
pub struct GroupTrialHandle;

super::exports::version_exports!(guest;
    pre_enqueue: PreEnqueue => pre_enqueue,
    filter: Filter => filter,
    score: Score => score,
    permit: Permit => permit,
    placement_generate: PlacementGenerate => placement_generate,
    placement_score: PlacementScore => placement_score,
);

/// Links the 0.1.0 imports.
pub fn add_to_linker(linker: &mut wasmtime::component::Linker<HostState>) -> wasmtime::Result<()> {
    bindings::ExtensionHost::add_to_linker::<HostState, wasmtime::component::HasSelf<HostState>>(
        linker,
        |state| state,
    )
}

/// The 0.1.0 record of a PodGroup unit (pending members and a count of
/// bound ones); `None` for a composite.
pub fn group_record(snapshot: &Snapshot, unit: Unit) -> Option<types::PodGroup> {
    let Unit::Group(group) = unit else {
        return None;
    };
    let current = super::contract_v0_3::pod_group(snapshot, group);
    Some(types::PodGroup {
        id: current.id,
        name: current.name,
        spec: current.spec.map(|s| types::PodGroupSpec {
            policy: match s.policy {
                super::bindings::types::SchedulingPolicy::Basic => types::SchedulingPolicy::Basic,
                super::bindings::types::SchedulingPolicy::Gang(n) => {
                    types::SchedulingPolicy::Gang(n)
                }
            },
            priority: s.priority,
            disruption_mode: match s.disruption_mode {
                super::bindings::types::DisruptionMode::Single => types::DisruptionMode::Single,
                super::bindings::types::DisruptionMode::All => types::DisruptionMode::All,
            },
            preemption_policy: match s.preemption_policy {
                super::bindings::types::PreemptionPolicy::PreemptLowerPriority => {
                    types::PreemptionPolicy::PreemptLowerPriority
                }
                super::bindings::types::PreemptionPolicy::Never => types::PreemptionPolicy::Never,
            },
            topology_key: s.topology_key,
        }),
        pending: current.pending,
        bound: u32::try_from(current.bound.len()).unwrap_or(u32::MAX),
    })
}

/// A 0.1.0 status as the host's.
pub fn status(status: types::Status) -> Status {
    super::contract_v0_3::status(super::bindings::types::Status {
        code: match status.code {
            types::Code::Success => super::bindings::types::Code::Success,
            types::Code::Error => super::bindings::types::Code::Error,
            types::Code::Unschedulable => super::bindings::types::Code::Unschedulable,
            types::Code::UnschedulableAndUnresolvable => {
                super::bindings::types::Code::UnschedulableAndUnresolvable
            }
            types::Code::Wait => super::bindings::types::Code::Wait,
            types::Code::Skip => super::bindings::types::Code::Skip,
        },
        reason: status.reason,
    })
}

/// Progress as 0.1.0's record.
pub fn progress(progress: Progress) -> types::PlacementProgress {
    types::PlacementProgress {
        scheduled: progress.scheduled,
        remaining: progress.remaining,
    }
}

/// A placement as 0.1.0's record (no domain).
pub fn placement(placement: &Placement) -> types::Placement {
    types::Placement {
        name: placement.name.clone(),
        nodes: placement.nodes.clone(),
    }
}

/// A 0.1.0 placement as the host's.
pub fn placement_from(placement: types::Placement) -> Placement {
    Placement {
        name: placement.name,
        nodes: placement.nodes,
        domain: None,
    }
}

/// Assignments as 0.1.0's records.
pub fn assignments(assignments: &[(PodId, NodeId)]) -> Vec<types::Assignment> {
    assignments
        .iter()
        .map(|&(pod, node)| types::Assignment { pod, node })
        .collect()
}

impl types::Host for HostState {}
impl cluster::Host for HostState {}

impl cluster::HostSnapshot for HostState {
    common_snapshot_methods!();

    fn pod(&mut self, _: Resource<SnapshotHandle>, pod: u32) -> Option<cluster::PodInfo> {
        self.snap()
            .pods
            .get(pod as usize)
            .map(|p| cluster::PodInfo {
                priority: p.priority,
                node: p.node,
                group: p.group,
                start_time: p.started,
            })
    }

    fn pod_group(&mut self, _: Resource<SnapshotHandle>, group: u32) -> Option<types::PodGroup> {
        let snap = self.snap();
        ((group as usize) < snap.groups.len())
            .then(|| group_record(snap, Unit::Group(group)))
            .flatten()
    }

    fn pod_group_spec(
        &mut self,
        _: Resource<SnapshotHandle>,
        group: u32,
    ) -> Option<types::PodGroupSpec> {
        let snap = self.snap();
        if (group as usize) >= snap.groups.len() {
            return None;
        }
        group_record(snap, Unit::Group(group))?.spec
    }
}

impl cluster::HostGroupTrial for HostState {
    fn schedule_without(
        &mut self,
        _: Resource<GroupTrialHandle>,
        _removed: Vec<u32>,
    ) -> Option<Vec<types::Assignment>> {
        // No handle of this type is ever created: 0.1.0 components are not
        // wired into pod-group-post-filter.
        None
    }

    fn drop(&mut self, handle: Resource<GroupTrialHandle>) -> wasmtime::Result<()> {
        self.table.delete(handle)?;
        Ok(())
    }
}

super::contract_v0_3::log_host!(log);
