//! The host side of `wasched:scheduler@0.3.0`'s imports: the `snapshot`
//! resource over the lent [`Snapshot`], and `log`. Also the conversions
//! between host types and the WIT records (0.2.0 shares them: its `types`
//! interface is 0.3.0's without the additions).

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, WasmList};

use super::bindings::{PACKAGE, PACKAGE_VERSION, cluster, log, types};
use super::state::{HostState, SnapshotHandle};
use wasched_sdk::Cluster;
use wasched_sdk::types as sdk;

use crate::framework::native::SnapshotView;
use crate::framework::{LogLevel, Placement, PreemptionCandidate, Preemptor, Unit, VictimUnit};
use crate::model::{GroupId, Snapshot};

/// The snapshot accessors whose WIT signatures are the same in every
/// contract version: one body for all of them, answered by the SDK's view.
macro_rules! common_snapshot_methods {
    () => {
        fn node_count(&mut self, _: Resource<SnapshotHandle>) -> u32 {
            SnapshotView(self.snap()).node_count()
        }

        fn pod_count(&mut self, _: Resource<SnapshotHandle>) -> u32 {
            SnapshotView(self.snap()).pod_count()
        }

        fn pod_group_count(&mut self, _: Resource<SnapshotHandle>) -> u32 {
            SnapshotView(self.snap()).pod_group_count()
        }

        fn resource_names(&mut self, _: Resource<SnapshotHandle>) -> Vec<String> {
            let list = SnapshotView(self.snap()).resource_names();
            self.charged(list)
        }

        fn allocatable(&mut self, _: Resource<SnapshotHandle>, resource: u32) -> Vec<u64> {
            let list = SnapshotView(self.snap()).allocatable(resource);
            self.charged(list)
        }

        fn requested(&mut self, _: Resource<SnapshotHandle>, resource: u32) -> Vec<u64> {
            let list = SnapshotView(self.snap()).requested(resource);
            self.charged(list)
        }

        fn lookup(&mut self, _: Resource<SnapshotHandle>, text: String) -> Option<u32> {
            SnapshotView(self.snap()).lookup(&text)
        }

        fn symbol_text(&mut self, _: Resource<SnapshotHandle>, id: u32) -> String {
            SnapshotView(self.snap()).symbol_text(id)
        }

        fn node_name(&mut self, _: Resource<SnapshotHandle>, node: u32) -> String {
            SnapshotView(self.snap()).node_name(node)
        }

        fn node_label_column(&mut self, _: Resource<SnapshotHandle>, key: u32) -> Vec<Option<u32>> {
            let list = SnapshotView(self.snap()).node_label_column(key);
            self.charged(list)
        }

        fn pod_requests(&mut self, _: Resource<SnapshotHandle>, pod: u32) -> Vec<u64> {
            let list = SnapshotView(self.snap()).pod_requests(pod);
            self.charged(list)
        }

        fn pods_on_node(&mut self, _: Resource<SnapshotHandle>, node: u32) -> Vec<u32> {
            let list = SnapshotView(self.snap()).pods_on_node(node);
            self.charged(list)
        }

        fn drop(&mut self, handle: Resource<SnapshotHandle>) -> wasmtime::Result<()> {
            self.table.delete(handle)?;
            Ok(())
        }
    };
}
pub(super) use common_snapshot_methods;

// What a plugin sees is answered once, by the SDK's view of the snapshot
// (`framework::native::SnapshotView`, which native plugins read too); this
// module only converts its plain types into this contract's records.

pub(super) fn wit_preemption(policy: sdk::PreemptionPolicy) -> types::PreemptionPolicy {
    match policy {
        sdk::PreemptionPolicy::PreemptLowerPriority => {
            types::PreemptionPolicy::PreemptLowerPriority
        }
        sdk::PreemptionPolicy::Never => types::PreemptionPolicy::Never,
    }
}

pub(super) fn wit_disruption(mode: sdk::DisruptionMode) -> types::DisruptionMode {
    match mode {
        sdk::DisruptionMode::Single => types::DisruptionMode::Single,
        sdk::DisruptionMode::All => types::DisruptionMode::All,
    }
}

pub(super) fn wit_spec(spec: sdk::PodGroupSpec) -> types::PodGroupSpec {
    types::PodGroupSpec {
        policy: match spec.policy {
            sdk::SchedulingPolicy::Basic => types::SchedulingPolicy::Basic,
            sdk::SchedulingPolicy::Gang(n) => types::SchedulingPolicy::Gang(n),
        },
        priority: spec.priority,
        disruption_mode: wit_disruption(spec.disruption_mode),
        preemption_policy: wit_preemption(spec.preemption_policy),
        topology_key: spec.topology_key,
        parent: spec.parent,
    }
}

pub(super) fn wit_group(group: sdk::PodGroup) -> types::PodGroup {
    types::PodGroup {
        id: group.id,
        name: group.name,
        spec: group.spec.map(wit_spec),
        pending: group.pending,
        bound: group.bound,
    }
}

/// A host group as its WIT record (`group` must exist).
pub fn pod_group(snapshot: &Snapshot, group: GroupId) -> types::PodGroup {
    wit_group(
        SnapshotView(snapshot)
            .pod_group(group)
            .expect("callers pass a group of the snapshot"),
    )
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
    let placement = SnapshotView(snapshot).placement(placement);
    types::Placement {
        name: placement.name,
        nodes: placement.nodes,
        domain: placement.domain,
    }
}

/// A WIT placement as the host's (domain symbols resolved).
pub fn placement_from(snapshot: &Snapshot, placement: types::Placement) -> Placement {
    SnapshotView(snapshot).placement_from(sdk::Placement {
        name: placement.name,
        nodes: placement.nodes,
        domain: placement.domain,
    })
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

/// A 0.3.0 permit verdict as the host's.
pub fn verdict(verdict: types::PermitVerdict) -> crate::framework::PermitVerdict {
    crate::framework::PermitVerdict {
        status: status(verdict.status),
        reuse: verdict.reuse.map(|b| crate::framework::ProgressBounds {
            min_scheduled: b.min_scheduled,
            max_scheduled: b.max_scheduled,
            min_possible: b.min_possible,
            max_possible: b.max_possible,
        }),
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

/// The `snapshot` methods of 0.2.0, in every version since (0.2.0 through
/// its adapter, 0.3.0 here): one body, over that version's `cluster` module.
macro_rules! snapshot_methods_since_v0_2 {
    ($cluster:ident) => {
        common_snapshot_methods!();

        fn composite_count(&mut self, _: Resource<SnapshotHandle>) -> u32 {
            SnapshotView(self.snap()).composite_count()
        }

        fn disruption_budget_count(&mut self, _: Resource<SnapshotHandle>) -> u32 {
            SnapshotView(self.snap()).disruption_budget_count()
        }

        fn pod(&mut self, _: Resource<SnapshotHandle>, pod: u32) -> Option<$cluster::PodInfo> {
            let p = SnapshotView(self.snap()).pod(pod)?;
            Some($cluster::PodInfo {
                namespace: p.namespace,
                priority: p.priority,
                preemption_policy: super::contract_v0_3::wit_preemption(p.preemption_policy),
                node: p.node,
                nominated_node: p.nominated_node,
                group: p.group,
                start_time: p.start_time,
                pending: p.pending,
            })
        }

        fn pod_name(&mut self, _: Resource<SnapshotHandle>, pod: u32) -> String {
            SnapshotView(self.snap()).pod_name(pod)
        }

        fn pod_labels(&mut self, _: Resource<SnapshotHandle>, pod: u32) -> Vec<(u32, u32)> {
            let list = SnapshotView(self.snap()).pod_labels(pod);
            self.charged(list)
        }

        fn pod_group(
            &mut self,
            _: Resource<SnapshotHandle>,
            group: u32,
        ) -> Option<types::PodGroup> {
            let group = SnapshotView(self.snap()).pod_group(group)?;
            self.charge(1 + group.pending.len() + group.bound.len());
            Some(super::contract_v0_3::wit_group(group))
        }

        fn pod_group_spec(
            &mut self,
            _: Resource<SnapshotHandle>,
            group: u32,
        ) -> Option<types::PodGroupSpec> {
            SnapshotView(self.snap())
                .pod_group_spec(group)
                .map(super::contract_v0_3::wit_spec)
        }

        fn composite(&mut self, _: Resource<SnapshotHandle>, id: u32) -> Option<types::Composite> {
            let c = SnapshotView(self.snap()).composite(id)?;
            self.charge(1 + c.child_groups.len() + c.child_composites.len());
            Some(types::Composite {
                id: c.id,
                name: c.name,
                spec: types::CompositeSpec {
                    policy: match c.spec.policy {
                        sdk::CompositePolicy::Basic => types::CompositePolicy::Basic,
                        sdk::CompositePolicy::Gang(n) => types::CompositePolicy::Gang(n),
                    },
                    priority: c.spec.priority,
                    disruption_mode: super::contract_v0_3::wit_disruption(c.spec.disruption_mode),
                    preemption_policy: super::contract_v0_3::wit_preemption(
                        c.spec.preemption_policy,
                    ),
                    topology_key: c.spec.topology_key,
                    parent: c.spec.parent,
                },
                child_groups: c.child_groups,
                child_composites: c.child_composites,
            })
        }

        fn disruption_budget(
            &mut self,
            _: Resource<SnapshotHandle>,
            id: u32,
        ) -> Option<$cluster::DisruptionBudget> {
            let b = SnapshotView(self.snap()).disruption_budget(id)?;
            self.charge(1 + b.pods.len());
            Some($cluster::DisruptionBudget {
                name: b.name,
                pods: b.pods,
                disruptions_allowed: b.disruptions_allowed,
            })
        }

        fn pod_disruption_budgets(&mut self, _: Resource<SnapshotHandle>, pod: u32) -> Vec<u32> {
            let list = SnapshotView(self.snap()).pod_disruption_budgets(pod);
            self.charged(list)
        }
    };
}
pub(super) use snapshot_methods_since_v0_2;

impl types::Host for HostState {}
impl cluster::Host for HostState {}

fn lookup_error(error: sdk::LookupError) -> types::LookupError {
    match error {
        sdk::LookupError::Unknown => types::LookupError::Unknown,
        sdk::LookupError::Stale => types::LookupError::Stale,
    }
}

fn wit_handle(handle: sdk::Handle) -> types::Handle {
    types::Handle {
        slot: handle.slot,
        generation: handle.generation,
    }
}

fn sdk_kind(kind: types::ObjectKind) -> sdk::ObjectKind {
    match kind {
        types::ObjectKind::Node => sdk::ObjectKind::Node,
        types::ObjectKind::Pod => sdk::ObjectKind::Pod,
        types::ObjectKind::PodGroup => sdk::ObjectKind::PodGroup,
        types::ObjectKind::Composite => sdk::ObjectKind::Composite,
        types::ObjectKind::DisruptionBudget => sdk::ObjectKind::DisruptionBudget,
    }
}

fn wit_effect(effect: sdk::TaintEffect) -> types::TaintEffect {
    match effect {
        sdk::TaintEffect::NoSchedule => types::TaintEffect::NoSchedule,
        sdk::TaintEffect::PreferNoSchedule => types::TaintEffect::PreferNoSchedule,
        sdk::TaintEffect::NoExecute => types::TaintEffect::NoExecute,
    }
}

fn wit_requirement(r: sdk::SelectorRequirement) -> types::SelectorRequirement {
    types::SelectorRequirement {
        key: r.key,
        operator: match r.operator {
            sdk::SelectorOperator::In => types::SelectorOperator::In,
            sdk::SelectorOperator::NotIn => types::SelectorOperator::NotIn,
            sdk::SelectorOperator::Exists => types::SelectorOperator::Exists,
            sdk::SelectorOperator::DoesNotExist => types::SelectorOperator::DoesNotExist,
            sdk::SelectorOperator::Gt => types::SelectorOperator::Gt,
            sdk::SelectorOperator::Lt => types::SelectorOperator::Lt,
        },
        values: r.values,
    }
}

fn wit_term(term: sdk::NodeSelectorTerm) -> types::NodeSelectorTerm {
    types::NodeSelectorTerm {
        match_expressions: term
            .match_expressions
            .into_iter()
            .map(wit_requirement)
            .collect(),
        match_fields: term.match_fields.into_iter().map(wit_requirement).collect(),
    }
}

impl cluster::HostSnapshot for HostState {
    snapshot_methods_since_v0_2!(cluster);

    fn generation(&mut self, _: Resource<SnapshotHandle>) -> u64 {
        SnapshotView(self.snap()).generation()
    }

    fn node_changes(&mut self, _: Resource<SnapshotHandle>) -> Vec<u64> {
        let list = SnapshotView(self.snap()).node_changes();
        self.charged(list)
    }

    fn changed_nodes(&mut self, _: Resource<SnapshotHandle>, since: u64) -> Vec<u32> {
        let list = SnapshotView(self.snap()).changed_nodes(since);
        self.charged(list)
    }

    fn node_handles(&mut self, _: Resource<SnapshotHandle>) -> Vec<types::Handle> {
        let handles = SnapshotView(self.snap()).node_handles();
        let handles = self.charged(handles);
        handles.into_iter().map(wit_handle).collect()
    }

    fn handle_of(
        &mut self,
        _: Resource<SnapshotHandle>,
        kind: types::ObjectKind,
        id: u32,
    ) -> Result<types::Handle, types::LookupError> {
        let handle = SnapshotView(self.snap()).handle_of(sdk_kind(kind), id);
        handle.map(wit_handle).map_err(lookup_error)
    }

    fn resolve(
        &mut self,
        _: Resource<SnapshotHandle>,
        kind: types::ObjectKind,
        handle: types::Handle,
    ) -> Result<u32, types::LookupError> {
        let handle = sdk::Handle {
            slot: handle.slot,
            generation: handle.generation,
        };
        let id = SnapshotView(self.snap()).resolve(sdk_kind(kind), handle);
        id.map_err(lookup_error)
    }

    fn nodes_facts(
        &mut self,
        _: Resource<SnapshotHandle>,
        nodes: Vec<u32>,
    ) -> Result<Vec<types::NodeFacts>, types::LookupError> {
        nodes_facts(self, &nodes)
    }

    fn pod_facts(
        &mut self,
        _: Resource<SnapshotHandle>,
        pod: u32,
    ) -> Result<types::PodFacts, types::LookupError> {
        let f = SnapshotView(self.snap()).pod_facts(pod);
        let f = f.map_err(lookup_error)?;
        let terms = f.required_node_affinity.as_ref().map_or(0, Vec::len);
        self.charge(1 + f.tolerations.len() + f.node_selector.len() + f.annotations.len() + terms);
        Ok(types::PodFacts {
            handle: wit_handle(f.handle),
            tolerations: f
                .tolerations
                .into_iter()
                .map(|t| types::Toleration {
                    key: t.key,
                    operator: match t.operator {
                        sdk::TolerationOperator::Equal => types::TolerationOperator::Equal,
                        sdk::TolerationOperator::Exists => types::TolerationOperator::Exists,
                    },
                    value: t.value,
                    effect: t.effect.map(wit_effect),
                })
                .collect(),
            node_selector: f.node_selector,
            required_node_affinity: f
                .required_node_affinity
                .map(|terms| terms.into_iter().map(wit_term).collect()),
            annotations: f.annotations,
            owner_kind: f.owner_kind,
        })
    }

    fn group_nodes_by_label(
        &mut self,
        _: Resource<SnapshotHandle>,
        key: u32,
        nodes: Vec<u32>,
    ) -> Result<Vec<types::LabelDomain>, types::LookupError> {
        group_nodes_by_label(self, key, &nodes)
    }

    fn node_resources(
        &mut self,
        _: Resource<SnapshotHandle>,
        resources: Vec<u32>,
        nodes: Vec<u32>,
    ) -> Result<Vec<u64>, types::LookupError> {
        node_resources(self, &resources, &nodes)
    }
}

// The calls that take lists of ids. The linker defines them twice: through
// the bindings above, and again over the guest's memory
// ([`add_bounded_list_calls`]), which is what components get. A list is
// read from the guest only once its length is known to be within the
// snapshot; a longer one cannot name distinct objects and is refused as
// `unknown` before the host allocates anything for it.

fn nodes_facts(
    state: &mut HostState,
    nodes: &[u32],
) -> Result<Vec<types::NodeFacts>, types::LookupError> {
    state.charge(nodes.len());
    let facts = SnapshotView(state.snap()).nodes_facts(nodes);
    let facts = facts.map_err(lookup_error)?;
    let elements: usize = facts.iter().map(|f| f.labels.len() + f.taints.len()).sum();
    state.charge(elements);
    Ok(facts
        .into_iter()
        .map(|f| types::NodeFacts {
            handle: wit_handle(f.handle),
            taints: f
                .taints
                .into_iter()
                .map(|t| types::Taint {
                    key: t.key,
                    value: t.value,
                    effect: wit_effect(t.effect),
                })
                .collect(),
            unschedulable: f.unschedulable,
            labels: f.labels,
        })
        .collect())
}

fn group_nodes_by_label(
    state: &mut HostState,
    key: u32,
    nodes: &[u32],
) -> Result<Vec<types::LabelDomain>, types::LookupError> {
    state.charge(nodes.len());
    let domains = SnapshotView(state.snap()).group_nodes_by_label(key, nodes);
    Ok(domains
        .map_err(lookup_error)?
        .into_iter()
        .map(|d| types::LabelDomain {
            value: d.value,
            value_text: d.value_text,
            nodes: d.nodes,
        })
        .collect())
}

fn node_resources(
    state: &mut HostState,
    resources: &[u32],
    nodes: &[u32],
) -> Result<Vec<u64>, types::LookupError> {
    state.charge(resources.len() + nodes.len());
    let amounts = crate::framework::facts::node_resources(state.snap(), resources, nodes)
        .map_err(lookup_error)?;
    Ok(state.charged(amounts))
}

/// A list of ids from the guest's memory, if it is no longer than `limit`
/// (else `unknown`, with nothing read or allocated).
fn ids_within(
    store: &StoreContextMut<'_, HostState>,
    list: &WasmList<u32>,
    limit: usize,
) -> Result<Vec<u32>, types::LookupError> {
    if list.len() > limit {
        return Err(types::LookupError::Unknown);
    }
    Ok(list
        .as_le_slice(store)
        .iter()
        .map(|&id| u32::from_le(id))
        .collect())
}

/// Defines the calls of `cluster` that take id lists over the guest's memory
/// (see above), in place of the bindings' definitions.
pub(super) fn add_bounded_list_calls(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    type Snap = Resource<SnapshotHandle>;
    linker.allow_shadowing(true);
    let mut cluster = linker.instance(&format!("{PACKAGE}/cluster@{PACKAGE_VERSION}"))?;
    cluster.func_wrap(
        "[method]snapshot.nodes-facts",
        |mut store: StoreContextMut<'_, HostState>, (_, nodes): (Snap, WasmList<u32>)| {
            let limit = store.data().snap().nodes.len();
            let answer = ids_within(&store, &nodes, limit)
                .and_then(|nodes| nodes_facts(store.data_mut(), &nodes));
            Ok((answer,))
        },
    )?;
    cluster.func_wrap(
        "[method]snapshot.group-nodes-by-label",
        |mut store: StoreContextMut<'_, HostState>, (_, key, nodes): (Snap, u32, WasmList<u32>)| {
            let limit = store.data().snap().nodes.len();
            let answer = ids_within(&store, &nodes, limit)
                .and_then(|nodes| group_nodes_by_label(store.data_mut(), key, &nodes));
            Ok((answer,))
        },
    )?;
    cluster.func_wrap(
        "[method]snapshot.node-resources",
        |mut store: StoreContextMut<'_, HostState>,
         (_, resources, nodes): (Snap, WasmList<u32>, WasmList<u32>)| {
            let snapshot = store.data().snap();
            let (resource_limit, node_limit) =
                (snapshot.resource_names.len(), snapshot.nodes.len());
            let answer = ids_within(&store, &resources, resource_limit).and_then(|resources| {
                let nodes = ids_within(&store, &nodes, node_limit)?;
                node_resources(store.data_mut(), &resources, &nodes)
            });
            Ok((answer,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// The `log` import of a contract version: its `level` enum has the same
/// cases in every version.
macro_rules! log_host {
    ($log:ident) => {
        impl $log::Host for HostState {
            fn log(&mut self, level: $log::Level, message: String) {
                let level = match level {
                    $log::Level::Debug => LogLevel::Debug,
                    $log::Level::Info => LogLevel::Info,
                    $log::Level::Warn => LogLevel::Warn,
                    $log::Level::Error => LogLevel::Error,
                };
                HostState::log(self, level, message);
            }
        }
    };
}
pub(super) use log_host;

log_host!(log);
