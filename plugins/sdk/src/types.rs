//! Plain-Rust mirrors of the records of `wasched:scheduler@0.3.0`
//! (`wit/types.wit`, `wit/cluster.wit`).
//!
//! Plugin code sees only these types, on wasm and natively alike; the SDK
//! converts to and from the WIT bindings at the boundary. Field meanings are
//! those of the WIT documentation, repeated briefly here.

use alloc::string::String;
use alloc::vec::Vec;

use crate::Status;

/// Index of a node in the snapshot, `0 .. node_count()`.
pub type NodeId = u32;
/// Index of a pod in the snapshot, `0 .. pod_count()`.
pub type PodId = u32;
/// Index of a PodGroup in the snapshot, `0 .. pod_group_count()`.
pub type PodGroupId = u32;
/// Index of a CompositePodGroup in the snapshot, `0 .. composite_count()`.
pub type CompositeId = u32;
/// Index of a PodDisruptionBudget, `0 .. disruption_budget_count()`.
pub type BudgetId = u32;
/// An interned string (node name, namespace, label key or value), stable
/// for one snapshot only.
pub type Symbol = u32;
/// Index of a resource column (`cpu`, `memory`, `pods`, extended resources).
pub type ResourceId = u32;

/// `PodGroup.spec.schedulingPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchedulingPolicy {
    /// `basic: {}`: every pod is scheduled on its own.
    Basic,
    /// `gang: {minCount}`: all-or-nothing admission of at least this many pods.
    Gang(u32),
}

/// `CompositePodGroup.spec.schedulingPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompositePolicy {
    /// `basic: {}`: children are admitted independently.
    Basic,
    /// `gang: {minGroupCount}`: at least this many children are admitted
    /// together, or none.
    Gang(u32),
}

/// `spec.disruptionMode`: the unit a preemptor evicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DisruptionMode {
    /// Pods are evicted one by one (default).
    #[default]
    Single,
    /// The whole group (or composite tree) is evicted together, or not at all.
    All,
}

/// `spec.preemptionPolicy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PreemptionPolicy {
    /// `PreemptLowerPriority` (default).
    #[default]
    PreemptLowerPriority,
    /// `Never`: never preempts.
    Never,
}

/// The scheduling-relevant part of a PodGroup's spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodGroupSpec {
    /// `spec.schedulingPolicy`.
    pub policy: SchedulingPolicy,
    /// `spec.priority`, resolved from its PriorityClass.
    pub priority: i32,
    /// `spec.disruptionMode`.
    pub disruption_mode: DisruptionMode,
    /// `spec.preemptionPolicy`.
    pub preemption_policy: PreemptionPolicy,
    /// The topology label all pods must share a value of, interned.
    pub topology_key: Option<Symbol>,
    /// The parent CompositePodGroup, when it exists.
    pub parent: Option<CompositeId>,
}

/// A PodGroup with its members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodGroup {
    /// Index of this group in the snapshot.
    pub id: PodGroupId,
    /// `namespace/name`, for messages.
    pub name: String,
    /// The PodGroup object's spec; `None` when pods name a PodGroup that
    /// does not exist.
    pub spec: Option<PodGroupSpec>,
    /// Member pods waiting to be scheduled, in queue order.
    pub pending: Vec<PodId>,
    /// Member pods bound to a node (running), ascending.
    pub bound: Vec<PodId>,
}

/// The scheduling-relevant part of a CompositePodGroup's spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompositeSpec {
    /// `spec.schedulingPolicy`.
    pub policy: CompositePolicy,
    /// `spec.priority`, resolved from its PriorityClass.
    pub priority: i32,
    /// `spec.disruptionMode`.
    pub disruption_mode: DisruptionMode,
    /// `spec.preemptionPolicy`.
    pub preemption_policy: PreemptionPolicy,
    /// The topology label the whole subtree shares a value of, interned.
    pub topology_key: Option<Symbol>,
    /// The parent composite; `None` for a root.
    pub parent: Option<CompositeId>,
}

/// A CompositePodGroup: an inner node of a tree whose leaves are PodGroups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Composite {
    /// Index in the snapshot.
    pub id: CompositeId,
    /// `namespace/name`, for messages.
    pub name: String,
    /// Its spec.
    pub spec: CompositeSpec,
    /// Child PodGroups, by name.
    pub child_groups: Vec<PodGroupId>,
    /// Child CompositePodGroups, by name.
    pub child_composites: Vec<CompositeId>,
}

/// What pre-enqueue, permit and the placement points are asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    /// A PodGroup.
    PodGroup(PodGroupId),
    /// A CompositePodGroup.
    Composite(CompositeId),
}

/// What a plugin may know about one pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodInfo {
    /// `metadata.namespace`, interned.
    pub namespace: Symbol,
    /// Effective priority (a PodGroup member's is its PodGroup's).
    pub priority: i32,
    /// Effective preemption policy.
    pub preemption_policy: PreemptionPolicy,
    /// The node the pod is bound or assumed to; `None` while pending.
    pub node: Option<NodeId>,
    /// `status.nominatedNodeName`, when that node is in the snapshot.
    pub nominated_node: Option<NodeId>,
    /// The PodGroup the pod belongs to.
    pub group: Option<PodGroupId>,
    /// Start (else creation) time in Unix seconds; 0 when unknown.
    pub start_time: i64,
    /// Whether the pod waits to be scheduled.
    pub pending: bool,
}

/// A PodDisruptionBudget as eviction sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisruptionBudget {
    /// `namespace/name`, for messages.
    pub name: String,
    /// The pods its selector matches, ascending.
    pub pods: Vec<PodId>,
    /// How many of them may be evicted now.
    pub disruptions_allowed: u32,
}

/// A set of nodes a unit may be placed on as a whole, e.g. one rack.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// Human-readable name, unique within one generation.
    pub name: String,
    /// The nodes of this placement, ascending.
    pub nodes: Vec<NodeId>,
    /// The topology domain as (label key, value); `None` for the whole
    /// cluster or a domain that is not a label value.
    pub domain: Option<(Symbol, Symbol)>,
}

/// What placement generation returns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placements {
    /// Candidate placements, preferred first.
    pub candidates: Vec<Placement>,
    /// For a composite: how many placements the host may try for the tree
    /// in total; `None` for the host's default.
    pub search_budget: Option<u32>,
    /// The answer depends only on the unit's kind, its topology key, the
    /// parent's nodes and the nodes' labels while no pod of the unit runs:
    /// the host may hand it to another such unit without asking (see the
    /// WIT's `generated-placements.reusable`). `false` (the default): asked
    /// every time.
    pub reusable: bool,
}

/// One pod assumed onto one node during a cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Assignment {
    /// The pod.
    pub pod: PodId,
    /// The node it was assumed onto.
    pub node: NodeId,
}

/// How far placing a unit within one placement has got (WIT
/// `placement-progress`): pods for a PodGroup, children for a composite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Progress {
    /// Members placed so far: already bound plus assumed in this cycle.
    pub scheduled: u32,
    /// Pending members not yet tried in this cycle.
    pub remaining: u32,
}

/// Nodes a filter rejected for one reason: the filter answers one group
/// per distinct status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RejectionGroup {
    /// Why (unschedulable or unschedulable-and-unresolvable).
    pub status: Status,
    /// The rejected nodes; each node in at most one group of an answer.
    pub nodes: Vec<NodeId>,
}

/// Bounds within which the host may reuse a permit verdict without asking
/// again (the same unit, within its scheduling cycle):
/// `min_scheduled <= scheduled <= max_scheduled` and
/// `min_possible <= scheduled + remaining <= max_possible`. A reused
/// verdict keeps its reason: bound a reason that names the progress to the
/// progress it is true of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProgressBounds {
    /// Lowest `scheduled` the verdict holds for.
    pub min_scheduled: u32,
    /// Highest `scheduled` the verdict holds for.
    pub max_scheduled: u32,
    /// Lowest `scheduled + remaining` the verdict holds for.
    pub min_possible: u32,
    /// Highest `scheduled + remaining` the verdict holds for.
    pub max_possible: u32,
}

impl ProgressBounds {
    /// Any progress: a verdict that holds for the whole attempt.
    pub const ALWAYS: Self = Self {
        min_scheduled: 0,
        max_scheduled: u32::MAX,
        min_possible: 0,
        max_possible: u32::MAX,
    };

    /// Exactly `progress`: for a verdict whose reason names it.
    pub fn exactly(progress: Progress) -> Self {
        let possible = progress.scheduled.saturating_add(progress.remaining);
        Self {
            min_scheduled: progress.scheduled,
            max_scheduled: progress.scheduled,
            min_possible: possible,
            max_possible: possible,
        }
    }

    /// Whether `progress` lies within the bounds.
    pub fn contain(&self, progress: Progress) -> bool {
        (self.min_scheduled..=self.max_scheduled).contains(&progress.scheduled)
            && (self.min_possible..=self.max_possible)
                .contains(&progress.scheduled.saturating_add(progress.remaining))
    }
}

/// A permit answer: the status and how long the host may reuse it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermitVerdict {
    /// The verdict.
    pub status: Status,
    /// `None`: ask again after the next member.
    pub reuse: Option<ProgressBounds>,
}

impl PermitVerdict {
    /// A verdict for this progress only.
    pub fn once(status: Status) -> Self {
        Self {
            status,
            reuse: None,
        }
    }

    /// A verdict the host may reuse while progress stays within `bounds`.
    pub fn reusable(status: Status, bounds: ProgressBounds) -> Self {
        Self {
            status,
            reuse: Some(bounds),
        }
    }
}

impl From<Status> for PermitVerdict {
    fn from(status: Status) -> Self {
        Self::once(status)
    }
}

/// A stable reference to one object for as long as it lives (see the WIT
/// `types` docs, "Identity and lifecycle").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Handle {
    /// The object's slot, kept while it lives.
    pub slot: u32,
    /// Distinguishes the objects that held the slot; never reused.
    pub generation: u64,
}

/// The kinds of object a [`Handle`] can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    /// A Node.
    Node,
    /// A Pod.
    Pod,
    /// A PodGroup.
    PodGroup,
    /// A CompositePodGroup.
    Composite,
    /// A PodDisruptionBudget.
    DisruptionBudget,
}

/// Why an id or handle was not answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LookupError {
    /// Outside the snapshot.
    Unknown,
    /// The handle's object no longer exists.
    Stale,
}

/// `spec.taints[].effect`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaintEffect {
    /// `NoSchedule`.
    NoSchedule,
    /// `PreferNoSchedule`.
    PreferNoSchedule,
    /// `NoExecute`.
    NoExecute,
}

/// One node taint.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Taint {
    /// `key`.
    pub key: String,
    /// `value` (empty when unset).
    pub value: String,
    /// `effect`.
    pub effect: TaintEffect,
}

/// `spec.tolerations[].operator`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TolerationOperator {
    /// `Equal` (the default).
    Equal,
    /// `Exists`.
    Exists,
}

/// One pod toleration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Toleration {
    /// `key` (empty: every key, with `Exists`).
    pub key: String,
    /// `operator`.
    pub operator: TolerationOperator,
    /// `value`.
    pub value: String,
    /// `effect`; `None` tolerates every effect.
    pub effect: Option<TaintEffect>,
}

/// `NodeSelectorRequirement.operator`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SelectorOperator {
    /// `In`.
    In,
    /// `NotIn`.
    NotIn,
    /// `Exists`.
    Exists,
    /// `DoesNotExist`.
    DoesNotExist,
    /// `Gt`.
    Gt,
    /// `Lt`.
    Lt,
}

/// One `NodeSelectorRequirement`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SelectorRequirement {
    /// The label key (or field, for match fields).
    pub key: String,
    /// The operator.
    pub operator: SelectorOperator,
    /// The values.
    pub values: Vec<String>,
}

/// One `NodeSelectorTerm` (requirements ANDed).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeSelectorTerm {
    /// `matchExpressions`.
    pub match_expressions: Vec<SelectorRequirement>,
    /// `matchFields`.
    pub match_fields: Vec<SelectorRequirement>,
}

/// What kube-scheduler's per-node checks read from a Node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeFacts {
    /// The node's handle.
    pub handle: Handle,
    /// `spec.taints`.
    pub taints: Vec<Taint>,
    /// `spec.unschedulable`.
    pub unschedulable: bool,
    /// `metadata.labels` as symbols, by key.
    pub labels: Vec<(Symbol, Symbol)>,
}

/// What kube-scheduler's per-node checks read from a Pod beyond [`PodInfo`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodFacts {
    /// The pod's handle.
    pub handle: Handle,
    /// `spec.tolerations`.
    pub tolerations: Vec<Toleration>,
    /// `spec.nodeSelector`, by key.
    pub node_selector: Vec<(String, String)>,
    /// Required node affinity terms (ORed); `None` without one.
    pub required_node_affinity: Option<Vec<NodeSelectorTerm>>,
    /// `metadata.annotations`, by key.
    pub annotations: Vec<(String, String)>,
    /// Kind of the controlling (else first) owner reference.
    pub owner_kind: Option<String>,
}

/// The nodes of a list that carry one value of a label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelDomain {
    /// The label value.
    pub value: Symbol,
    /// The value's text (what [`Cluster::symbol_text`](crate::Cluster::symbol_text)
    /// answers for `value`).
    pub value_text: String,
    /// Those nodes, ascending.
    pub nodes: Vec<NodeId>,
}

/// Who preempts: the unit (or lone pod) that could not be placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Preemptor {
    /// A PodGroup or a composite root.
    Unit(Unit),
    /// A pod that belongs to no group.
    Pod(PodId),
}

/// A victim unit: what one eviction decision covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VictimUnit {
    /// The unit's index in the list given to the plugin.
    pub index: u32,
    /// The pods evicted together, ascending.
    pub pods: Vec<PodId>,
    /// The group whose `all` disruption mode made the unit; `None` for a
    /// single pod.
    pub group: Option<PodGroupId>,
    /// The unit's priority.
    pub priority: i32,
    /// The earliest start time of its pods, Unix seconds.
    pub start_time: i64,
    /// Whether evicting it would violate a PodDisruptionBudget.
    pub violates_budget: bool,
}

/// One way to make room for a preemptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreemptionCandidate {
    /// The index of this candidate in the list given to the plugin.
    pub index: u32,
    /// The domain: a placement name, or a node name for a lone pod.
    pub domain: String,
    /// The units that would be evicted.
    pub victims: Vec<VictimUnit>,
    /// Where the preemptor's pods would go once the victims are gone.
    pub assignments: Vec<Assignment>,
}

/// Severity of a log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Verbose detail, shown with `--verbose`.
    Debug,
    /// Normal operation.
    Info,
    /// Something looks wrong but scheduling goes on.
    Warn,
    /// Something failed.
    Error,
}
