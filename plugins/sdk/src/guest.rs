//! The wasm32 half of the SDK: WIT bindings, the adapters between them and
//! [`Plugin`], the plugin instance, allocator, `cabi_realloc`, panics.
//!
//! # How a plugin exports exactly its points
//!
//! wit-bindgen embeds a custom section describing each generated world, and
//! wit-component makes the component's world the union of all of them; an
//! export in that union needs an implementation. So the SDK generates one
//! single-export world per extension point (`export-plugin`,
//! `export-pre-enqueue`, ... in `wit/worlds.wit`) with `pub_export_macro`:
//! wit-bindgen then embeds only the world's *imports* here, and the
//! exports' section only where the world's `export!` macro is invoked. The
//! plugin crate invokes (through [`register_plugin!`](crate::register_plugin))
//! the `export!` of `export-plugin` and of each point it names, so its
//! component exports exactly those. All worlds share the import types of
//! [`bindings`] (`with`), so there is one `Status`, one `Snapshot`, ...

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::alloc::Layout;
use core::any::Any;
use core::cell::UnsafeCell;
use core::marker::PhantomData;

use crate::{Cluster, Plugin, types as plain};

/// Bindings for the imports every plugin shares: `types`, `cluster`, `log`.
#[allow(missing_docs, clippy::all)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "imports",
        path: "../../wit",
        generate_all,
    });
}

use bindings::wasched::scheduler::cluster::{self, Snapshot};
use bindings::wasched::scheduler::log as wit_log;
use bindings::wasched::scheduler::types;

/// Generates the bindings of one single-export world, sharing the import
/// types of [`bindings`], with a public `export!` macro.
macro_rules! export_world {
    ($module:ident, $world:literal) => {
        #[doc = concat!("Bindings of the `", $world, "` world (used by `register_plugin!`).")]
        #[allow(missing_docs, clippy::all)]
        pub mod $module {
            wit_bindgen::generate!({
                world: $world,
                path: "../../wit",
                with: {
                    "wasched:scheduler/types@0.3.0": crate::guest::bindings::wasched::scheduler::types,
                    "wasched:scheduler/cluster@0.3.0": crate::guest::bindings::wasched::scheduler::cluster,
                    "wasched:scheduler/log@0.3.0": crate::guest::bindings::wasched::scheduler::log,
                },
                pub_export_macro: true,
            });
        }
    };
}

export_world!(export_plugin, "export-plugin");
export_world!(export_pre_enqueue, "export-pre-enqueue");
export_world!(export_filter, "export-filter");
export_world!(export_score, "export-score");
export_world!(export_permit, "export-permit");
export_world!(export_placement_generate, "export-placement-generate");
export_world!(export_placement_score, "export-placement-score");
export_world!(export_pod_group_post_filter, "export-pod-group-post-filter");

pub(crate) fn log(level: plain::Level, message: &str) {
    let level = match level {
        plain::Level::Debug => wit_log::Level::Debug,
        plain::Level::Info => wit_log::Level::Info,
        plain::Level::Warn => wit_log::Level::Warn,
        plain::Level::Error => wit_log::Level::Error,
    };
    wit_log::log(level, message);
}

// ---------------------------------------------------------------------------
// The plugin instance.

/// The configured plugin, type-erased because statics cannot be generic.
struct Instance(UnsafeCell<Option<Box<dyn Any>>>);

// SAFETY: wasm32 components are single-threaded (no threads, no shared
// memory), so the cell is never accessed concurrently.
unsafe impl Sync for Instance {}

static INSTANCE: Instance = Instance(UnsafeCell::new(None));

fn swap_instance(new: Option<Box<dyn Any>>) -> Option<Box<dyn Any>> {
    // SAFETY: single-threaded (see `Instance`), and no reference into the
    // cell outlives this statement: the value is moved in and out whole.
    unsafe { core::mem::replace(&mut *INSTANCE.0.get(), new) }
}

/// Runs `f` on the configured plugin. The instance is moved out of the cell
/// for the call, so no reference into the static is ever held across plugin
/// code (a re-entrant call would find the cell empty and trap).
fn with_plugin<P: Plugin, R>(f: impl FnOnce(&mut P) -> R) -> R {
    let Some(mut instance) = swap_instance(None) else {
        panic!("wasched-sdk: {} called before configure", P::NAME);
    };
    let Some(plugin) = instance.downcast_mut::<P>() else {
        panic!("wasched-sdk: the configured instance is not a {}", P::NAME);
    };
    let result = f(plugin);
    swap_instance(Some(instance));
    result
}

// ---------------------------------------------------------------------------
// The cluster view over the host's snapshot.

/// The host's snapshot as a [`Cluster`]: what extension-point methods get on
/// wasm32. Each method is one call into the host.
pub struct HostCluster<'a>(&'a Snapshot);

impl<'a> HostCluster<'a> {
    /// Wraps a borrowed snapshot handle.
    pub fn new(snapshot: &'a Snapshot) -> Self {
        Self(snapshot)
    }
}

impl Cluster for HostCluster<'_> {
    fn node_count(&self) -> u32 {
        self.0.node_count()
    }

    fn pod_count(&self) -> u32 {
        self.0.pod_count()
    }

    fn pod_group_count(&self) -> u32 {
        self.0.pod_group_count()
    }

    fn composite_count(&self) -> u32 {
        self.0.composite_count()
    }

    fn disruption_budget_count(&self) -> u32 {
        self.0.disruption_budget_count()
    }

    fn resource_names(&self) -> Vec<String> {
        self.0.resource_names()
    }

    fn allocatable(&self, resource: plain::ResourceId) -> Vec<u64> {
        self.0.allocatable(resource)
    }

    fn requested(&self, resource: plain::ResourceId) -> Vec<u64> {
        self.0.requested(resource)
    }

    fn lookup(&self, text: &str) -> Option<plain::Symbol> {
        self.0.lookup(text)
    }

    fn symbol_text(&self, id: plain::Symbol) -> String {
        self.0.symbol_text(id)
    }

    fn node_name(&self, node: plain::NodeId) -> String {
        self.0.node_name(node)
    }

    fn node_label_column(&self, key: plain::Symbol) -> Vec<Option<plain::Symbol>> {
        self.0.node_label_column(key)
    }

    fn pod(&self, pod: plain::PodId) -> Option<plain::PodInfo> {
        self.0.pod(pod).map(Into::into)
    }

    fn pod_name(&self, pod: plain::PodId) -> String {
        self.0.pod_name(pod)
    }

    fn pod_labels(&self, pod: plain::PodId) -> Vec<(plain::Symbol, plain::Symbol)> {
        self.0.pod_labels(pod)
    }

    fn pod_requests(&self, pod: plain::PodId) -> Vec<u64> {
        self.0.pod_requests(pod)
    }

    fn pods_on_node(&self, node: plain::NodeId) -> Vec<plain::PodId> {
        self.0.pods_on_node(node)
    }

    fn pod_group(&self, group: plain::PodGroupId) -> Option<plain::PodGroup> {
        self.0.pod_group(group).map(Into::into)
    }

    fn pod_group_spec(&self, group: plain::PodGroupId) -> Option<plain::PodGroupSpec> {
        self.0.pod_group_spec(group).map(Into::into)
    }

    fn composite(&self, id: plain::CompositeId) -> Option<plain::Composite> {
        self.0.composite(id).map(Into::into)
    }

    fn disruption_budget(&self, id: plain::BudgetId) -> Option<plain::DisruptionBudget> {
        self.0.disruption_budget(id).map(Into::into)
    }

    fn pod_disruption_budgets(&self, pod: plain::PodId) -> Vec<plain::BudgetId> {
        self.0.pod_disruption_budgets(pod)
    }

    fn generation(&self) -> u64 {
        self.0.generation()
    }

    fn node_changes(&self) -> Vec<u64> {
        self.0.node_changes()
    }

    fn changed_nodes(&self, since: u64) -> Vec<plain::NodeId> {
        self.0.changed_nodes(since)
    }

    fn node_handles(&self) -> Vec<plain::Handle> {
        map(self.0.node_handles())
    }

    fn handle_of(
        &self,
        kind: plain::ObjectKind,
        id: u32,
    ) -> Result<plain::Handle, plain::LookupError> {
        self.0
            .handle_of(kind.into(), id)
            .map(Into::into)
            .map_err(Into::into)
    }

    fn resolve(
        &self,
        kind: plain::ObjectKind,
        handle: plain::Handle,
    ) -> Result<u32, plain::LookupError> {
        self.0
            .resolve(kind.into(), handle.into())
            .map_err(Into::into)
    }

    fn nodes_facts(
        &self,
        nodes: &[plain::NodeId],
    ) -> Result<Vec<plain::NodeFacts>, plain::LookupError> {
        self.0.nodes_facts(nodes).map(map).map_err(Into::into)
    }

    fn pod_facts(&self, pod: plain::PodId) -> Result<plain::PodFacts, plain::LookupError> {
        self.0.pod_facts(pod).map(Into::into).map_err(Into::into)
    }

    fn group_nodes_by_label(
        &self,
        key: plain::Symbol,
        nodes: &[plain::NodeId],
    ) -> Result<Vec<plain::LabelDomain>, plain::LookupError> {
        self.0
            .group_nodes_by_label(key, nodes)
            .map(map)
            .map_err(Into::into)
    }

    fn node_resources(
        &self,
        resources: &[plain::ResourceId],
        nodes: &[plain::NodeId],
    ) -> Result<crate::cluster::NodeResources, plain::LookupError> {
        self.0
            .node_resources(resources, nodes)
            .map(|amounts| crate::cluster::NodeResources::new(amounts, nodes.len()))
            .map_err(Into::into)
    }
}

// ---------------------------------------------------------------------------
// Conversions between the WIT bindings and the plain types.

fn map<T, U: From<T>>(items: Vec<T>) -> Vec<U> {
    items.into_iter().map(U::from).collect()
}

impl From<crate::Code> for types::Code {
    fn from(code: crate::Code) -> Self {
        match code {
            crate::Code::Success => Self::Success,
            crate::Code::Error => Self::Error,
            crate::Code::Unschedulable => Self::Unschedulable,
            crate::Code::UnschedulableAndUnresolvable => Self::UnschedulableAndUnresolvable,
            crate::Code::Wait => Self::Wait,
            crate::Code::Skip => Self::Skip,
        }
    }
}

impl From<crate::Status> for types::Status {
    fn from(status: crate::Status) -> Self {
        Self {
            code: status.code.into(),
            reason: status.reason,
        }
    }
}

impl From<types::SchedulingPolicy> for plain::SchedulingPolicy {
    fn from(policy: types::SchedulingPolicy) -> Self {
        match policy {
            types::SchedulingPolicy::Basic => Self::Basic,
            types::SchedulingPolicy::Gang(min_count) => Self::Gang(min_count),
        }
    }
}

impl From<types::CompositePolicy> for plain::CompositePolicy {
    fn from(policy: types::CompositePolicy) -> Self {
        match policy {
            types::CompositePolicy::Basic => Self::Basic,
            types::CompositePolicy::Gang(min_group_count) => Self::Gang(min_group_count),
        }
    }
}

impl From<types::DisruptionMode> for plain::DisruptionMode {
    fn from(mode: types::DisruptionMode) -> Self {
        match mode {
            types::DisruptionMode::Single => Self::Single,
            types::DisruptionMode::All => Self::All,
        }
    }
}

impl From<types::PreemptionPolicy> for plain::PreemptionPolicy {
    fn from(policy: types::PreemptionPolicy) -> Self {
        match policy {
            types::PreemptionPolicy::PreemptLowerPriority => Self::PreemptLowerPriority,
            types::PreemptionPolicy::Never => Self::Never,
        }
    }
}

impl From<types::PodGroupSpec> for plain::PodGroupSpec {
    fn from(spec: types::PodGroupSpec) -> Self {
        Self {
            policy: spec.policy.into(),
            priority: spec.priority,
            disruption_mode: spec.disruption_mode.into(),
            preemption_policy: spec.preemption_policy.into(),
            topology_key: spec.topology_key,
            parent: spec.parent,
        }
    }
}

impl From<types::PodGroup> for plain::PodGroup {
    fn from(group: types::PodGroup) -> Self {
        Self {
            id: group.id,
            name: group.name,
            spec: group.spec.map(Into::into),
            pending: group.pending,
            bound: group.bound,
        }
    }
}

impl From<types::CompositeSpec> for plain::CompositeSpec {
    fn from(spec: types::CompositeSpec) -> Self {
        Self {
            policy: spec.policy.into(),
            priority: spec.priority,
            disruption_mode: spec.disruption_mode.into(),
            preemption_policy: spec.preemption_policy.into(),
            topology_key: spec.topology_key,
            parent: spec.parent,
        }
    }
}

impl From<types::Composite> for plain::Composite {
    fn from(composite: types::Composite) -> Self {
        Self {
            id: composite.id,
            name: composite.name,
            spec: composite.spec.into(),
            child_groups: composite.child_groups,
            child_composites: composite.child_composites,
        }
    }
}

impl From<cluster::PodInfo> for plain::PodInfo {
    fn from(pod: cluster::PodInfo) -> Self {
        Self {
            namespace: pod.namespace,
            priority: pod.priority,
            preemption_policy: pod.preemption_policy.into(),
            node: pod.node,
            nominated_node: pod.nominated_node,
            group: pod.group,
            start_time: pod.start_time,
            pending: pod.pending,
        }
    }
}

impl From<cluster::DisruptionBudget> for plain::DisruptionBudget {
    fn from(budget: cluster::DisruptionBudget) -> Self {
        Self {
            name: budget.name,
            pods: budget.pods,
            disruptions_allowed: budget.disruptions_allowed,
        }
    }
}

impl From<types::Unit> for plain::Unit {
    fn from(unit: types::Unit) -> Self {
        match unit {
            types::Unit::PodGroup(group) => Self::PodGroup(group),
            types::Unit::Composite(composite) => Self::Composite(composite),
        }
    }
}

impl From<types::Placement> for plain::Placement {
    fn from(placement: types::Placement) -> Self {
        Self {
            name: placement.name,
            nodes: placement.nodes,
            domain: placement.domain,
        }
    }
}

impl From<plain::Placement> for types::Placement {
    fn from(placement: plain::Placement) -> Self {
        Self {
            name: placement.name,
            nodes: placement.nodes,
            domain: placement.domain,
        }
    }
}

impl From<plain::Placements> for types::GeneratedPlacements {
    fn from(placements: plain::Placements) -> Self {
        Self {
            placements: types::Placements {
                candidates: map(placements.candidates),
                search_budget: placements.search_budget,
            },
            reusable: placements.reusable,
        }
    }
}

impl From<types::Assignment> for plain::Assignment {
    fn from(assignment: types::Assignment) -> Self {
        Self {
            pod: assignment.pod,
            node: assignment.node,
        }
    }
}

impl From<types::PlacementProgress> for plain::Progress {
    fn from(progress: types::PlacementProgress) -> Self {
        Self {
            scheduled: progress.scheduled,
            remaining: progress.remaining,
        }
    }
}

impl From<plain::RejectionGroup> for types::RejectionGroup {
    fn from(group: plain::RejectionGroup) -> Self {
        Self {
            status: group.status.into(),
            nodes: group.nodes,
        }
    }
}

impl From<plain::ProgressBounds> for types::ProgressBounds {
    fn from(bounds: plain::ProgressBounds) -> Self {
        Self {
            min_scheduled: bounds.min_scheduled,
            max_scheduled: bounds.max_scheduled,
            min_possible: bounds.min_possible,
            max_possible: bounds.max_possible,
        }
    }
}

impl From<plain::PermitVerdict> for types::PermitVerdict {
    fn from(verdict: plain::PermitVerdict) -> Self {
        Self {
            status: verdict.status.into(),
            reuse: verdict.reuse.map(Into::into),
        }
    }
}

impl From<types::Handle> for plain::Handle {
    fn from(handle: types::Handle) -> Self {
        Self {
            slot: handle.slot,
            generation: handle.generation,
        }
    }
}

impl From<plain::Handle> for types::Handle {
    fn from(handle: plain::Handle) -> Self {
        Self {
            slot: handle.slot,
            generation: handle.generation,
        }
    }
}

impl From<plain::ObjectKind> for types::ObjectKind {
    fn from(kind: plain::ObjectKind) -> Self {
        match kind {
            plain::ObjectKind::Node => Self::Node,
            plain::ObjectKind::Pod => Self::Pod,
            plain::ObjectKind::PodGroup => Self::PodGroup,
            plain::ObjectKind::Composite => Self::Composite,
            plain::ObjectKind::DisruptionBudget => Self::DisruptionBudget,
        }
    }
}

impl From<types::LookupError> for plain::LookupError {
    fn from(error: types::LookupError) -> Self {
        match error {
            types::LookupError::Unknown => Self::Unknown,
            types::LookupError::Stale => Self::Stale,
        }
    }
}

impl From<types::TaintEffect> for plain::TaintEffect {
    fn from(effect: types::TaintEffect) -> Self {
        match effect {
            types::TaintEffect::NoSchedule => Self::NoSchedule,
            types::TaintEffect::PreferNoSchedule => Self::PreferNoSchedule,
            types::TaintEffect::NoExecute => Self::NoExecute,
        }
    }
}

impl From<types::Taint> for plain::Taint {
    fn from(taint: types::Taint) -> Self {
        Self {
            key: taint.key,
            value: taint.value,
            effect: taint.effect.into(),
        }
    }
}

impl From<types::Toleration> for plain::Toleration {
    fn from(toleration: types::Toleration) -> Self {
        Self {
            key: toleration.key,
            operator: match toleration.operator {
                types::TolerationOperator::Equal => plain::TolerationOperator::Equal,
                types::TolerationOperator::Exists => plain::TolerationOperator::Exists,
            },
            value: toleration.value,
            effect: toleration.effect.map(Into::into),
        }
    }
}

impl From<types::SelectorRequirement> for plain::SelectorRequirement {
    fn from(requirement: types::SelectorRequirement) -> Self {
        Self {
            key: requirement.key,
            operator: match requirement.operator {
                types::SelectorOperator::In => plain::SelectorOperator::In,
                types::SelectorOperator::NotIn => plain::SelectorOperator::NotIn,
                types::SelectorOperator::Exists => plain::SelectorOperator::Exists,
                types::SelectorOperator::DoesNotExist => plain::SelectorOperator::DoesNotExist,
                types::SelectorOperator::Gt => plain::SelectorOperator::Gt,
                types::SelectorOperator::Lt => plain::SelectorOperator::Lt,
            },
            values: requirement.values,
        }
    }
}

impl From<types::NodeSelectorTerm> for plain::NodeSelectorTerm {
    fn from(term: types::NodeSelectorTerm) -> Self {
        Self {
            match_expressions: map(term.match_expressions),
            match_fields: map(term.match_fields),
        }
    }
}

impl From<types::NodeFacts> for plain::NodeFacts {
    fn from(facts: types::NodeFacts) -> Self {
        Self {
            handle: facts.handle.into(),
            taints: map(facts.taints),
            unschedulable: facts.unschedulable,
            labels: facts.labels,
        }
    }
}

impl From<types::PodFacts> for plain::PodFacts {
    fn from(facts: types::PodFacts) -> Self {
        Self {
            handle: facts.handle.into(),
            tolerations: map(facts.tolerations),
            node_selector: facts.node_selector,
            required_node_affinity: facts.required_node_affinity.map(map),
            annotations: facts.annotations,
            owner_kind: facts.owner_kind,
        }
    }
}

impl From<types::LabelDomain> for plain::LabelDomain {
    fn from(domain: types::LabelDomain) -> Self {
        Self {
            value: domain.value,
            value_text: domain.value_text,
            nodes: domain.nodes,
        }
    }
}

impl From<types::Preemptor> for plain::Preemptor {
    fn from(preemptor: types::Preemptor) -> Self {
        match preemptor {
            types::Preemptor::Unit(unit) => Self::Unit(unit.into()),
            types::Preemptor::Pod(pod) => Self::Pod(pod),
        }
    }
}

impl From<types::VictimUnit> for plain::VictimUnit {
    fn from(unit: types::VictimUnit) -> Self {
        Self {
            index: unit.index,
            pods: unit.pods,
            group: unit.group,
            priority: unit.priority,
            start_time: unit.start_time,
            violates_budget: unit.violates_budget,
        }
    }
}

impl From<types::PreemptionCandidate> for plain::PreemptionCandidate {
    fn from(candidate: types::PreemptionCandidate) -> Self {
        Self {
            index: candidate.index,
            domain: candidate.domain,
            victims: map(candidate.victims),
            assignments: map(candidate.assignments),
        }
    }
}

// ---------------------------------------------------------------------------
// The exports: `Guest` impls forwarding to the plugin.

/// Implements every export world's `Guest` trait for plugin `P`;
/// [`register_plugin!`](crate::register_plugin) passes it to the `export!`
/// macros of the points the plugin names.
pub struct Exports<P>(PhantomData<P>);

impl<P: Plugin> export_plugin::exports::wasched::scheduler::plugin::Guest for Exports<P> {
    fn name() -> String {
        P::NAME.into()
    }

    fn configure(args: String) -> Result<(), String> {
        let plugin = crate::configure::<P>(&args)?;
        swap_instance(Some(Box::new(plugin)));
        Ok(())
    }
}

impl<P: Plugin> export_pre_enqueue::exports::wasched::scheduler::pre_enqueue::Guest for Exports<P> {
    fn pre_enqueue(snapshot: &Snapshot, unit: types::Unit) -> types::Status {
        with_plugin(|p: &mut P| p.pre_enqueue(&HostCluster(snapshot), unit.into())).into()
    }
}

impl<P: Plugin> export_filter::exports::wasched::scheduler::filter::Guest for Exports<P> {
    fn filter(
        snapshot: &Snapshot,
        pod: plain::PodId,
        nodes: Vec<plain::NodeId>,
    ) -> Vec<types::RejectionGroup> {
        map(with_plugin(|p: &mut P| {
            p.filter(&HostCluster(snapshot), pod, &nodes)
        }))
    }
}

impl<P: Plugin> export_score::exports::wasched::scheduler::score::Guest for Exports<P> {
    fn score(
        snapshot: &Snapshot,
        pod: plain::PodId,
        nodes: Vec<plain::NodeId>,
    ) -> Result<Vec<i64>, types::Status> {
        with_plugin(|p: &mut P| p.score(&HostCluster(snapshot), pod, &nodes)).map_err(Into::into)
    }
}

impl<P: Plugin> export_permit::exports::wasched::scheduler::permit::Guest for Exports<P> {
    fn permit(
        snapshot: &Snapshot,
        unit: types::Unit,
        progress: types::PlacementProgress,
    ) -> types::PermitVerdict {
        with_plugin(|p: &mut P| p.permit(&HostCluster(snapshot), unit.into(), progress.into()))
            .into()
    }
}

impl<P: Plugin> export_placement_generate::exports::wasched::scheduler::placement_generate::Guest
    for Exports<P>
{
    fn generate_placements(
        snapshot: &Snapshot,
        unit: types::Unit,
        parent: types::Placement,
    ) -> Result<types::GeneratedPlacements, types::Status> {
        let parent = parent.into();
        with_plugin(|p: &mut P| p.generate_placements(&HostCluster(snapshot), unit.into(), &parent))
            .map(Into::into)
            .map_err(Into::into)
    }
}

impl<P: Plugin> export_placement_score::exports::wasched::scheduler::placement_score::Guest
    for Exports<P>
{
    fn score_placement(
        snapshot: &Snapshot,
        unit: types::Unit,
        placement: types::Placement,
        assignments: Vec<types::Assignment>,
    ) -> Result<i64, types::Status> {
        let placement = placement.into();
        let assignments: Vec<plain::Assignment> = map(assignments);
        with_plugin(|p: &mut P| {
            p.score_placement(
                &HostCluster(snapshot),
                unit.into(),
                &placement,
                &assignments,
            )
        })
        .map_err(Into::into)
    }
}

impl<P: Plugin>
    export_pod_group_post_filter::exports::wasched::scheduler::pod_group_post_filter::Guest
    for Exports<P>
{
    fn order_victims(
        snapshot: &Snapshot,
        preemptor: types::Preemptor,
        units: Vec<types::VictimUnit>,
    ) -> Result<Vec<u32>, types::Status> {
        let units: Vec<plain::VictimUnit> = map(units);
        with_plugin(|p: &mut P| p.order_victims(&HostCluster(snapshot), preemptor.into(), &units))
            .map_err(Into::into)
    }

    fn select_candidate(
        snapshot: &Snapshot,
        preemptor: types::Preemptor,
        candidates: Vec<types::PreemptionCandidate>,
    ) -> Result<u32, types::Status> {
        let candidates: Vec<plain::PreemptionCandidate> = map(candidates);
        with_plugin(|p: &mut P| {
            p.select_candidate(&HostCluster(snapshot), preemptor.into(), &candidates)
        })
        .map_err(Into::into)
    }
}

// ---------------------------------------------------------------------------
// Runtime support for `no_std` components.

#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

/// The canonical ABI's allocation hook. wit-bindgen provides it only for
/// std targets, so `no_std` components on `wasm32-wasip2` export it here.
///
/// # Safety
/// Called by the component model with a layout it obtained from this
/// function (or zero-sized for a fresh allocation).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cabi_realloc(
    old_ptr: *mut u8,
    old_len: usize,
    align: usize,
    new_len: usize,
) -> *mut u8 {
    let ptr = if old_len == 0 {
        if new_len == 0 {
            return align as *mut u8;
        }
        // SAFETY: the canonical ABI passes a valid, power-of-two alignment.
        unsafe { alloc::alloc::alloc(Layout::from_size_align_unchecked(new_len, align)) }
    } else {
        // SAFETY: `old_ptr` was returned by this function with this layout.
        unsafe {
            alloc::alloc::realloc(
                old_ptr,
                Layout::from_size_align_unchecked(old_len, align),
                new_len,
            )
        }
    };
    if ptr.is_null() {
        core::arch::wasm32::unreachable();
    }
    ptr
}

/// `memcmp` for `no_std` guests: without libc, slice comparisons would
/// otherwise import it from `env`, which the host does not provide.
/// Volatile reads keep the compiler from turning the loop back into a call
/// to itself.
///
/// # Safety
/// `a` and `b` must be valid for reads of `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    for i in 0..n {
        // SAFETY: the caller guarantees `n` readable bytes behind both.
        let (x, y) = unsafe { (a.add(i).read_volatile(), b.add(i).read_volatile()) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
    }
    0
}

/// `bcmp` (equality-only `memcmp`), for the same reason.
///
/// # Safety
/// `a` and `b` must be valid for reads of `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { memcmp(a, b, n) }
}

/// A panic logs its message at `error` level, then traps; the host reports
/// the trap with the plugin's name and discards the instance.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    let message = match info.location() {
        Some(at) => format!("panic: {} at {}:{}", info.message(), at.file(), at.line()),
        None => format!("panic: {}", info.message()),
    };
    wit_log::log(wit_log::Level::Error, &message);
    core::arch::wasm32::unreachable()
}
