//! What a plugin's store holds, and the host side of the `cluster` and `log`
//! imports.
//!
//! The snapshot is moved into the store for the duration of one call
//! ([`HostState::snapshot`]) and moved back afterwards, so host functions read
//! it without copying or locking; the guest sees it through a
//! `borrow<snapshot>` handle that is removed from the table after the call.

use wasmtime::component::{Resource, ResourceTable};

use super::bindings::{cluster, log, types};
use crate::snapshot::{GroupInfo, Snapshot};

/// Table entry behind a guest's `borrow<snapshot>`; the data is
/// [`HostState::snapshot`].
#[derive(Debug)]
pub struct SnapshotHandle;

/// Table entry behind a guest's `borrow<group-trial>`. The host hands one out
/// only to `pod-group-post-filter`, which it does not invoke yet, so no guest
/// can hold one today.
#[derive(Debug)]
pub struct GroupTrialHandle;

/// One line a plugin logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// Severity.
    pub level: log::Level,
    /// The text.
    pub message: String,
}

/// A plugin store's state.
#[derive(Default)]
pub struct HostState {
    /// Handles given to the guest during a call.
    pub table: ResourceTable,
    /// The snapshot, present only while a call runs.
    pub snapshot: Option<Snapshot>,
    /// Lines the plugin logged, drained by the host after each call.
    pub logs: Vec<LogLine>,
    /// Cap on the instance's linear memory, in bytes (0: no instance may
    /// have memory).
    pub memory_limit: u64,
    /// Set when the guest tried to grow its memory past `memory_limit`; the
    /// growth then traps, and this tells the host why.
    pub memory_exceeded: bool,
}

/// Most table elements an instance may have (function tables of Rust guests
/// hold a few hundred).
const MAX_TABLE_ELEMENTS: usize = 100_000;

impl wasmtime::ResourceLimiter for HostState {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired as u64 > self.memory_limit {
            self.memory_exceeded = true;
            return Err(wasmtime::format_err!(
                "memory limit of {} bytes exceeded",
                self.memory_limit
            ));
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }

    fn instances(&self) -> usize {
        // A component instantiates a handful of core instances (module,
        // adapters, shims); more means something unexpected.
        32
    }

    fn memories(&self) -> usize {
        4
    }

    fn tables(&self) -> usize {
        8
    }
}

impl HostState {
    fn snap(&self) -> &Snapshot {
        self.snapshot
            .as_ref()
            .expect("the snapshot is lent to the store during every call")
    }
}

/// Converts a host group into its WIT record.
pub fn pod_group_record(snapshot: &Snapshot, id: u32, group: &GroupInfo) -> types::PodGroup {
    let pods = &snapshot.pods;
    let pending: Vec<u32> = group
        .members
        .iter()
        .copied()
        .filter(|&p| pods[p as usize].pending && pods[p as usize].node.is_none())
        .collect();
    let bound = group
        .members
        .iter()
        .filter(|&&p| !pods[p as usize].pending)
        .count() as u32;
    types::PodGroup {
        id,
        name: group.key.clone(),
        spec: group
            .spec
            .as_ref()
            .map(|spec| pod_group_spec_record(snapshot, spec)),
        pending,
        bound,
    }
}

fn pod_group_spec_record(
    snapshot: &Snapshot,
    spec: &crate::snapshot::GroupSpec,
) -> types::PodGroupSpec {
    use crate::snapshot::Policy;
    types::PodGroupSpec {
        policy: match spec.policy {
            Policy::Basic => types::SchedulingPolicy::Basic,
            Policy::Gang { min_count } => types::SchedulingPolicy::Gang(min_count),
        },
        priority: spec.priority,
        disruption_mode: if spec.disrupt_all {
            types::DisruptionMode::All
        } else {
            types::DisruptionMode::Single
        },
        preemption_policy: if spec.never_preempt {
            types::PreemptionPolicy::Never
        } else {
            types::PreemptionPolicy::PreemptLowerPriority
        },
        topology_key: spec
            .topology_key
            .as_deref()
            .and_then(|k| snapshot.symbols.lookup(k)),
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl types::Host for HostState {}
impl cluster::Host for HostState {}

impl cluster::HostSnapshot for HostState {
    fn node_count(&mut self, _: Resource<SnapshotHandle>) -> u32 {
        count(self.snap().nodes.len())
    }

    fn pod_count(&mut self, _: Resource<SnapshotHandle>) -> u32 {
        count(self.snap().pods.len())
    }

    fn pod_group_count(&mut self, _: Resource<SnapshotHandle>) -> u32 {
        count(self.snap().groups.len())
    }

    fn resource_names(&mut self, _: Resource<SnapshotHandle>) -> Vec<String> {
        self.snap().resource_names.clone()
    }

    fn allocatable(&mut self, _: Resource<SnapshotHandle>, resource: u32) -> Vec<u64> {
        self.snap().allocatable(resource as usize).to_vec()
    }

    fn requested(&mut self, _: Resource<SnapshotHandle>, resource: u32) -> Vec<u64> {
        self.snap().requested(resource as usize).to_vec()
    }

    fn lookup(&mut self, _: Resource<SnapshotHandle>, text: String) -> Option<u32> {
        self.snap().symbols.lookup(&text)
    }

    fn symbol_text(&mut self, _: Resource<SnapshotHandle>, id: u32) -> String {
        self.snap().symbols.text(id).unwrap_or_default().to_string()
    }

    fn node_name(&mut self, _: Resource<SnapshotHandle>, node: u32) -> String {
        self.snap()
            .nodes
            .get(node as usize)
            .map(|n| n.name.clone())
            .unwrap_or_default()
    }

    fn node_label_column(&mut self, _: Resource<SnapshotHandle>, key: u32) -> Vec<Option<u32>> {
        let snap = self.snap();
        let Some(key) = snap.symbols.text(key) else {
            return vec![None; snap.nodes.len()];
        };
        snap.nodes
            .iter()
            .map(|n| n.labels.get(key).and_then(|v| snap.symbols.lookup(v)))
            .collect()
    }

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

    fn pod_requests(&mut self, _: Resource<SnapshotHandle>, pod: u32) -> Vec<u64> {
        self.snap()
            .pods
            .get(pod as usize)
            .map(|p| p.requests.clone())
            .unwrap_or_default()
    }

    fn pods_on_node(&mut self, _: Resource<SnapshotHandle>, node: u32) -> Vec<u32> {
        self.snap().pods_on_node(node).to_vec()
    }

    fn pod_group(&mut self, _: Resource<SnapshotHandle>, group: u32) -> Option<types::PodGroup> {
        let snap = self.snap();
        snap.groups
            .get(group as usize)
            .map(|g| pod_group_record(snap, group, g))
    }

    fn pod_group_spec(
        &mut self,
        _: Resource<SnapshotHandle>,
        group: u32,
    ) -> Option<types::PodGroupSpec> {
        let snap = self.snap();
        snap.groups
            .get(group as usize)?
            .spec
            .as_ref()
            .map(|s| pod_group_spec_record(snap, s))
    }

    fn drop(&mut self, handle: Resource<SnapshotHandle>) -> wasmtime::Result<()> {
        self.table.delete(handle)?;
        Ok(())
    }
}

impl cluster::HostGroupTrial for HostState {
    fn schedule_without(
        &mut self,
        _: Resource<GroupTrialHandle>,
        _removed: Vec<u32>,
    ) -> Option<Vec<types::Assignment>> {
        // Unreachable until the host invokes `pod-group-post-filter` (see
        // `GroupTrialHandle`): no guest can obtain a handle to call this on.
        None
    }

    fn drop(&mut self, handle: Resource<GroupTrialHandle>) -> wasmtime::Result<()> {
        self.table.delete(handle)?;
        Ok(())
    }
}

impl log::Host for HostState {
    fn log(&mut self, level: log::Level, message: String) {
        self.logs.push(LogLine { level, message });
    }
}
