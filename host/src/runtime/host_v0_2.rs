//! The host side of `wasched:scheduler@0.2.0`'s imports: the `snapshot`
//! resource over the lent [`Snapshot`], and `log`. Also the conversions
//! between host types and the WIT records.

use wasmtime::component::Resource;

use super::bindings::{cluster, log, types};
use super::state::{HostState, SnapshotHandle};
use crate::framework::{LogLevel, Placement, PreemptionCandidate, Preemptor, Unit, VictimUnit};
use crate::model::{CompositePolicy, GroupId, GroupSpec, Policy, Snapshot};

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The snapshot accessors whose WIT signatures are the same in every
/// contract version: one body for all of them.
macro_rules! common_snapshot_methods {
    () => {
        fn node_count(&mut self, _: Resource<SnapshotHandle>) -> u32 {
            u32::try_from(self.snap().nodes.len()).unwrap_or(u32::MAX)
        }

        fn pod_count(&mut self, _: Resource<SnapshotHandle>) -> u32 {
            u32::try_from(self.snap().pods.len()).unwrap_or(u32::MAX)
        }

        fn pod_group_count(&mut self, _: Resource<SnapshotHandle>) -> u32 {
            u32::try_from(self.snap().groups.len()).unwrap_or(u32::MAX)
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

        fn drop(&mut self, handle: Resource<SnapshotHandle>) -> wasmtime::Result<()> {
            self.table.delete(handle)?;
            Ok(())
        }
    };
}
pub(super) use common_snapshot_methods;

fn preemption_policy(never: bool) -> types::PreemptionPolicy {
    if never {
        types::PreemptionPolicy::Never
    } else {
        types::PreemptionPolicy::PreemptLowerPriority
    }
}

fn disruption_mode(all: bool) -> types::DisruptionMode {
    if all {
        types::DisruptionMode::All
    } else {
        types::DisruptionMode::Single
    }
}

/// A group's pending members (in queue order) and bound members.
pub fn members(snapshot: &Snapshot, group: GroupId) -> (Vec<u32>, Vec<u32>) {
    let pods = &snapshot.pods;
    let info = &snapshot.groups[group as usize];
    let pending = info
        .members
        .iter()
        .copied()
        .filter(|&p| pods[p as usize].pending && pods[p as usize].node.is_none())
        .collect();
    let mut bound: Vec<u32> = info
        .members
        .iter()
        .copied()
        .filter(|&p| snapshot.is_running(p))
        .collect();
    bound.sort_unstable();
    (pending, bound)
}

fn pod_group_spec(snapshot: &Snapshot, group: GroupId, spec: &GroupSpec) -> types::PodGroupSpec {
    types::PodGroupSpec {
        policy: match spec.policy {
            Policy::Basic => types::SchedulingPolicy::Basic,
            Policy::Gang { min_count } => types::SchedulingPolicy::Gang(min_count),
        },
        priority: spec.priority,
        disruption_mode: disruption_mode(spec.disrupt_all),
        preemption_policy: preemption_policy(spec.never_preempt),
        topology_key: spec
            .topology_key
            .as_deref()
            .and_then(|k| snapshot.symbols.lookup(k)),
        parent: snapshot.groups[group as usize].parent,
    }
}

/// A host group as its WIT record.
pub fn pod_group(snapshot: &Snapshot, group: GroupId) -> types::PodGroup {
    let info = &snapshot.groups[group as usize];
    let (pending, bound) = members(snapshot, group);
    types::PodGroup {
        id: group,
        name: info.key.clone(),
        spec: info
            .spec
            .as_ref()
            .map(|spec| pod_group_spec(snapshot, group, spec)),
        pending,
        bound,
    }
}

/// A unit as its WIT variant.
pub fn unit(unit: Unit) -> types::Unit {
    match unit {
        Unit::Group(g) => types::Unit::PodGroup(g),
        Unit::Composite(c) => types::Unit::Composite(c),
    }
}

/// A placement as its WIT record (domain texts interned).
pub fn placement(snapshot: &Snapshot, placement: &Placement) -> types::Placement {
    types::Placement {
        name: placement.name.clone(),
        nodes: placement.nodes.clone(),
        domain: placement
            .domain
            .as_ref()
            .and_then(|(k, v)| Some((snapshot.symbols.lookup(k)?, snapshot.symbols.lookup(v)?))),
    }
}

/// A WIT placement as the host's (domain symbols resolved).
pub fn placement_from(snapshot: &Snapshot, placement: types::Placement) -> Placement {
    let text = |s: u32| snapshot.symbols.text(s).map(str::to_string);
    Placement {
        name: placement.name,
        nodes: placement.nodes,
        domain: placement
            .domain
            .and_then(|(k, v)| Some((text(k)?, text(v)?))),
    }
}

/// A preemptor as its WIT variant.
pub fn preemptor(preemptor: Preemptor) -> types::Preemptor {
    match preemptor {
        Preemptor::Unit(u) => types::Preemptor::Unit(unit(u)),
        Preemptor::Pod(p) => types::Preemptor::Pod(p),
    }
}

/// A victim unit as its WIT record.
pub fn victim(victim: &VictimUnit) -> types::VictimUnit {
    types::VictimUnit {
        index: victim.index,
        pods: victim.pods.clone(),
        group: victim.group,
        priority: victim.priority,
        start_time: victim.start_time,
        violates_budget: victim.violates_budget,
    }
}

/// A preemption candidate as its WIT record.
pub fn candidate(candidate: &PreemptionCandidate) -> types::PreemptionCandidate {
    types::PreemptionCandidate {
        index: candidate.index,
        domain: candidate.domain.clone(),
        victims: candidate.victims.iter().map(victim).collect(),
        assignments: candidate
            .assignments
            .iter()
            .map(|&(pod, node)| types::Assignment { pod, node })
            .collect(),
    }
}

/// A WIT status as the host's.
pub fn status(status: types::Status) -> crate::framework::Status {
    use crate::framework::Code;
    let code = match status.code {
        types::Code::Success => Code::Success,
        types::Code::Error => Code::Error,
        types::Code::Unschedulable => Code::Unschedulable,
        types::Code::UnschedulableAndUnresolvable => Code::UnschedulableAndUnresolvable,
        types::Code::Wait => Code::Wait,
        types::Code::Skip => Code::Skip,
    };
    crate::framework::Status::new(code, status.reason)
}

impl types::Host for HostState {}
impl cluster::Host for HostState {}

impl cluster::HostSnapshot for HostState {
    common_snapshot_methods!();

    fn composite_count(&mut self, _: Resource<SnapshotHandle>) -> u32 {
        count(self.snap().composites.len())
    }

    fn disruption_budget_count(&mut self, _: Resource<SnapshotHandle>) -> u32 {
        count(self.snap().budgets.len())
    }

    fn pod(&mut self, _: Resource<SnapshotHandle>, pod: u32) -> Option<cluster::PodInfo> {
        let snap = self.snap();
        snap.pods.get(pod as usize).map(|p| cluster::PodInfo {
            namespace: snap.symbols.lookup(&p.namespace).unwrap_or(u32::MAX),
            priority: p.priority,
            preemption_policy: preemption_policy(p.never_preempt),
            node: p.node,
            nominated_node: p.nominated_node,
            group: p.group,
            start_time: p.started,
            pending: p.pending,
        })
    }

    fn pod_name(&mut self, _: Resource<SnapshotHandle>, pod: u32) -> String {
        self.snap()
            .pods
            .get(pod as usize)
            .map(|p| p.key.clone())
            .unwrap_or_default()
    }

    fn pod_labels(&mut self, _: Resource<SnapshotHandle>, pod: u32) -> Vec<(u32, u32)> {
        let snap = self.snap();
        snap.pods
            .get(pod as usize)
            .into_iter()
            .flat_map(|p| &p.labels)
            .filter_map(|(k, v)| Some((snap.symbols.lookup(k)?, snap.symbols.lookup(v)?)))
            .collect()
    }

    fn pod_group(&mut self, _: Resource<SnapshotHandle>, group: u32) -> Option<types::PodGroup> {
        let snap = self.snap();
        ((group as usize) < snap.groups.len()).then(|| pod_group(snap, group))
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
            .map(|s| pod_group_spec(snap, group, s))
    }

    fn composite(&mut self, _: Resource<SnapshotHandle>, id: u32) -> Option<types::Composite> {
        let snap = self.snap();
        let c = snap.composites.get(id as usize)?;
        Some(types::Composite {
            id,
            name: c.key.clone(),
            spec: types::CompositeSpec {
                policy: match c.spec.policy {
                    CompositePolicy::Basic => types::CompositePolicy::Basic,
                    CompositePolicy::Gang { min_group_count } => {
                        types::CompositePolicy::Gang(min_group_count)
                    }
                },
                priority: c.spec.priority,
                disruption_mode: disruption_mode(c.spec.disrupt_all),
                preemption_policy: preemption_policy(c.spec.never_preempt),
                topology_key: c
                    .spec
                    .topology_key
                    .as_deref()
                    .and_then(|k| snap.symbols.lookup(k)),
                parent: c.parent,
            },
            child_groups: c.child_groups.clone(),
            child_composites: c.child_composites.clone(),
        })
    }

    fn disruption_budget(
        &mut self,
        _: Resource<SnapshotHandle>,
        id: u32,
    ) -> Option<cluster::DisruptionBudget> {
        self.snap()
            .budgets
            .get(id as usize)
            .map(|b| cluster::DisruptionBudget {
                name: b.key.clone(),
                pods: b.pods.clone(),
                disruptions_allowed: b.disruptions_allowed,
            })
    }

    fn pod_disruption_budgets(&mut self, _: Resource<SnapshotHandle>, pod: u32) -> Vec<u32> {
        self.snap().pod_budgets(pod).to_vec()
    }
}

impl log::Host for HostState {
    fn log(&mut self, level: log::Level, message: String) {
        let level = match level {
            log::Level::Debug => LogLevel::Debug,
            log::Level::Info => LogLevel::Info,
            log::Level::Warn => LogLevel::Warn,
            log::Level::Error => LogLevel::Error,
        };
        HostState::log(self, level, message);
    }
}
