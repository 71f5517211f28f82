//! A fake, in-memory [`Cluster`] for unit tests of plugin logic (not
//! compiled on wasm32), and the buffer [`log`](crate::log) writes to there.
//!
//! ```
//! use wasched_sdk::fake::FakeCluster;
//! use wasched_sdk::{Cluster, SchedulingPolicy};
//!
//! let mut cluster = FakeCluster::new();
//! let node = cluster.add_node("node-a").label("zone", "a").allocatable("cpu", 4000).id();
//! let group = cluster.add_pod_group("team/pg").gang(2).id();
//! cluster.add_pod("team/pg-0").group(group).request("cpu", 500).on_node(node);
//! cluster.add_pod("team/pg-1").group(group).request("cpu", 500);
//!
//! let pg = cluster.pod_group(group).unwrap();
//! assert_eq!(pg.spec.unwrap().policy, SchedulingPolicy::Gang(2));
//! assert_eq!((pg.pending, pg.bound), (vec![1], vec![0]));
//! assert_eq!(cluster.requested(0), vec![500]);
//! let zone = cluster.lookup("zone").unwrap();
//! assert_eq!(cluster.node_label_column(zone), vec![cluster.lookup("a")]);
//! ```

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::Cluster;
use crate::types::{
    BudgetId, Composite, CompositeId, CompositePolicy, CompositeSpec, DisruptionBudget,
    DisruptionMode, Handle, LabelDomain, Level, LookupError, NodeFacts, NodeId, NodeSelectorTerm,
    ObjectKind, PodFacts, PodGroup, PodGroupId, PodGroupSpec, PodId, PodInfo, PreemptionPolicy,
    ResourceId, SchedulingPolicy, Symbol, Taint, TaintEffect, Toleration,
};

/// The resource columns every cluster has, in this order.
const BASE_RESOURCES: [&str; 3] = ["cpu", "memory", "pods"];

thread_local! {
    static LOG: RefCell<Vec<(Level, String)>> = const { RefCell::new(Vec::new()) };
}

/// Natively, [`crate::log`] appends to a per-thread buffer instead of
/// printing; tests read (and clear) it with this.
pub fn take_logs() -> Vec<(Level, String)> {
    LOG.with(|log| std::mem::take(&mut *log.borrow_mut()))
}

pub(crate) fn log(level: Level, message: &str) {
    LOG.with(|log| log.borrow_mut().push((level, message.to_string())));
}

#[derive(Clone, Debug)]
struct Node {
    name: Symbol,
    labels: BTreeMap<Symbol, Symbol>,
    allocatable: BTreeMap<String, u64>,
    taints: Vec<Taint>,
    unschedulable: bool,
    /// Clock value of the latest change to the node or the pods on it.
    changed: u64,
}

#[derive(Clone, Debug)]
struct Pod {
    name: String,
    namespace: Symbol,
    labels: BTreeMap<Symbol, Symbol>,
    requests: BTreeMap<String, u64>,
    node: Option<NodeId>,
    nominated_node: Option<NodeId>,
    group: Option<PodGroupId>,
    priority: i32,
    preemption_policy: PreemptionPolicy,
    start_time: i64,
    facts: PodFacts,
}

#[derive(Clone, Debug)]
struct Group {
    name: String,
    spec: Option<PodGroupSpec>,
}

#[derive(Clone, Debug)]
struct CompositeEntry {
    name: String,
    spec: CompositeSpec,
}

/// An in-memory cluster implementing [`Cluster`], built with a small
/// builder API.
///
/// - Node names, namespaces, label keys and values and topology keys are
///   interned as they are added, so [`Cluster::lookup`] and
///   [`Cluster::symbol_text`] work as on the host.
/// - Resource columns are `cpu`, `memory`, `pods`, then every other resource
///   name mentioned anywhere, in name order (as on the host). Every pod
///   requests one `pods` unless told otherwise.
/// - A pod is pending until [`PodBuilder::on_node`] binds it; a PodGroup's
///   `pending` members are in the order the pods were added, `bound` ones
///   ascending. A composite's children are those naming it as `parent`, by
///   name.
/// - Priorities are reported as set: a PodGroup member does not inherit its
///   PodGroup's priority here (set both if a test needs it).
/// - Every builder call is a change on the cluster's clock: handles are
///   `(id, 1)`, [`Cluster::generation`] is the latest change and a node's
///   change value moves when the node or a pod bound to it is touched
///   ([`FakeCluster::touch_node`] moves it explicitly).
#[derive(Clone, Debug, Default)]
pub struct FakeCluster {
    clock: u64,
    symbols: Vec<String>,
    symbol_ids: HashMap<String, Symbol>,
    nodes: Vec<Node>,
    pods: Vec<Pod>,
    groups: Vec<Group>,
    composites: Vec<CompositeEntry>,
    budgets: Vec<DisruptionBudget>,
}

fn id(len: usize) -> u32 {
    u32::try_from(len).expect("fewer than 2^32 entities")
}

impl FakeCluster {
    /// An empty cluster.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next clock value.
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Records a change of `node` (as a host does when it or its pods change).
    pub fn touch_node(&mut self, node: NodeId) {
        let now = self.tick();
        if let Some(n) = self.nodes.get_mut(node as usize) {
            n.changed = now;
        }
    }

    /// Interns `text`, returning its symbol.
    pub fn intern(&mut self, text: &str) -> Symbol {
        if let Some(&symbol) = self.symbol_ids.get(text) {
            return symbol;
        }
        let symbol = id(self.symbols.len());
        self.symbols.push(text.to_string());
        self.symbol_ids.insert(text.to_string(), symbol);
        symbol
    }

    /// Adds a node named `name` (no labels, nothing allocatable).
    pub fn add_node(&mut self, name: &str) -> NodeBuilder<'_> {
        let name = self.intern(name);
        let node = id(self.nodes.len());
        self.nodes.push(Node {
            name,
            labels: BTreeMap::new(),
            allocatable: BTreeMap::new(),
            taints: Vec::new(),
            unschedulable: false,
            changed: 0,
        });
        self.touch_node(node);
        NodeBuilder {
            cluster: self,
            node,
        }
    }

    /// Adds a pending pod named `namespace/name` (a name without `/` is in
    /// namespace `default`), with no group, priority 0 and start time 0.
    pub fn add_pod(&mut self, name: &str) -> PodBuilder<'_> {
        let namespace = name.split_once('/').map_or("default", |(ns, _)| ns);
        let namespace = self.intern(namespace);
        let pod = id(self.pods.len());
        self.pods.push(Pod {
            name: name.to_string(),
            namespace,
            labels: BTreeMap::new(),
            requests: BTreeMap::new(),
            node: None,
            nominated_node: None,
            group: None,
            priority: 0,
            preemption_policy: PreemptionPolicy::PreemptLowerPriority,
            start_time: 0,
            facts: PodFacts {
                handle: Handle {
                    slot: pod,
                    generation: 1,
                },
                ..PodFacts::default()
            },
        });
        self.tick();
        PodBuilder { cluster: self, pod }
    }

    /// Adds a PodGroup named `namespace/name` with a `basic` spec, priority
    /// 0 and no parent.
    pub fn add_pod_group(&mut self, name: &str) -> PodGroupBuilder<'_> {
        let group = id(self.groups.len());
        self.groups.push(Group {
            name: name.to_string(),
            spec: Some(PodGroupSpec {
                policy: SchedulingPolicy::Basic,
                priority: 0,
                disruption_mode: DisruptionMode::Single,
                preemption_policy: PreemptionPolicy::PreemptLowerPriority,
                topology_key: None,
                parent: None,
            }),
        });
        PodGroupBuilder {
            cluster: self,
            group,
        }
    }

    /// Adds a CompositePodGroup named `namespace/name` with a `basic` spec,
    /// priority 0 and no parent (a root).
    pub fn add_composite(&mut self, name: &str) -> CompositeBuilder<'_> {
        let composite = id(self.composites.len());
        self.composites.push(CompositeEntry {
            name: name.to_string(),
            spec: CompositeSpec {
                policy: CompositePolicy::Basic,
                priority: 0,
                disruption_mode: DisruptionMode::Single,
                preemption_policy: PreemptionPolicy::PreemptLowerPriority,
                topology_key: None,
                parent: None,
            },
        });
        CompositeBuilder {
            cluster: self,
            composite,
        }
    }

    /// Adds a PodDisruptionBudget over `pods` that allows
    /// `disruptions_allowed` evictions.
    pub fn add_disruption_budget(
        &mut self,
        name: &str,
        pods: &[PodId],
        disruptions_allowed: u32,
    ) -> BudgetId {
        let mut pods = pods.to_vec();
        pods.sort_unstable();
        pods.dedup();
        self.budgets.push(DisruptionBudget {
            name: name.to_string(),
            pods,
            disruptions_allowed,
        });
        id(self.budgets.len() - 1)
    }

    fn symbol(&self, text: &str) -> Option<Symbol> {
        self.symbol_ids.get(text).copied()
    }

    /// Resource names in column order.
    fn resources(&self) -> Vec<String> {
        let extended: BTreeSet<&str> = self
            .nodes
            .iter()
            .flat_map(|n| n.allocatable.keys())
            .chain(self.pods.iter().flat_map(|p| p.requests.keys()))
            .map(String::as_str)
            .filter(|name| !BASE_RESOURCES.contains(name))
            .collect();
        BASE_RESOURCES
            .into_iter()
            .chain(extended)
            .map(str::to_string)
            .collect()
    }

    fn resource_name(&self, resource: ResourceId) -> Option<String> {
        self.resources().into_iter().nth(resource as usize)
    }

    fn request(pod: &Pod, resource: &str) -> u64 {
        match pod.requests.get(resource) {
            Some(&amount) => amount,
            None if resource == "pods" => 1,
            None => 0,
        }
    }

    fn pod_entry(&self, pod: PodId) -> Option<&Pod> {
        self.pods.get(pod as usize)
    }

    fn members(&self, group: PodGroupId) -> impl Iterator<Item = (PodId, &Pod)> {
        self.pods
            .iter()
            .enumerate()
            .filter(move |(_, p)| p.group == Some(group))
            .map(|(i, p)| (id(i), p))
    }
}

/// Sets up a node added by [`FakeCluster::add_node`].
#[derive(Debug)]
pub struct NodeBuilder<'a> {
    cluster: &'a mut FakeCluster,
    node: NodeId,
}

impl NodeBuilder<'_> {
    /// Sets label `key` to `value`.
    pub fn label(self, key: &str, value: &str) -> Self {
        let (key, value) = (self.cluster.intern(key), self.cluster.intern(value));
        self.cluster.nodes[self.node as usize]
            .labels
            .insert(key, value);
        self.cluster.touch_node(self.node);
        self
    }

    /// Sets the allocatable amount of `resource` (`cpu` in millicores,
    /// `memory` in bytes, `pods`, or an extended resource).
    pub fn allocatable(self, resource: &str, amount: u64) -> Self {
        self.cluster.nodes[self.node as usize]
            .allocatable
            .insert(resource.to_string(), amount);
        self.cluster.touch_node(self.node);
        self
    }

    /// Adds taint `key=value:effect`.
    pub fn taint(self, key: &str, value: &str, effect: TaintEffect) -> Self {
        self.cluster.nodes[self.node as usize].taints.push(Taint {
            key: key.to_string(),
            value: value.to_string(),
            effect,
        });
        self.cluster.touch_node(self.node);
        self
    }

    /// Cordons the node (`spec.unschedulable: true`).
    pub fn unschedulable(self) -> Self {
        self.cluster.nodes[self.node as usize].unschedulable = true;
        self.cluster.touch_node(self.node);
        self
    }

    /// The node's id.
    pub fn id(&self) -> NodeId {
        self.node
    }
}

/// Sets up a pod added by [`FakeCluster::add_pod`].
#[derive(Debug)]
pub struct PodBuilder<'a> {
    cluster: &'a mut FakeCluster,
    pod: PodId,
}

impl PodBuilder<'_> {
    fn entry(&mut self) -> &mut Pod {
        &mut self.cluster.pods[self.pod as usize]
    }

    /// Sets label `key` to `value`.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        let (key, value) = (self.cluster.intern(key), self.cluster.intern(value));
        self.entry().labels.insert(key, value);
        self
    }

    /// Sets the pod's request of `resource`.
    pub fn request(mut self, resource: &str, amount: u64) -> Self {
        self.entry().requests.insert(resource.to_string(), amount);
        self
    }

    /// Binds the pod to `node` (it is no longer pending).
    pub fn on_node(mut self, node: NodeId) -> Self {
        self.entry().node = Some(node);
        self.cluster.touch_node(node);
        self
    }

    /// Adds a toleration.
    pub fn toleration(mut self, toleration: Toleration) -> Self {
        self.entry().facts.tolerations.push(toleration);
        self
    }

    /// Sets `spec.nodeSelector[key] = value`.
    pub fn node_selector(mut self, key: &str, value: &str) -> Self {
        let selector = &mut self.entry().facts.node_selector;
        selector.retain(|(k, _)| k != key);
        selector.push((key.to_string(), value.to_string()));
        selector.sort();
        self
    }

    /// Adds a required node affinity term (terms are ORed).
    pub fn required_affinity(mut self, term: NodeSelectorTerm) -> Self {
        self.entry()
            .facts
            .required_node_affinity
            .get_or_insert_with(Vec::new)
            .push(term);
        self
    }

    /// Sets annotation `key` to `value`.
    pub fn annotation(mut self, key: &str, value: &str) -> Self {
        let annotations = &mut self.entry().facts.annotations;
        annotations.retain(|(k, _)| k != key);
        annotations.push((key.to_string(), value.to_string()));
        annotations.sort();
        self
    }

    /// Sets the kind of the pod's controlling owner.
    pub fn owner_kind(mut self, kind: &str) -> Self {
        self.entry().facts.owner_kind = Some(kind.to_string());
        self
    }

    /// Sets `status.nominatedNodeName`.
    pub fn nominated(mut self, node: NodeId) -> Self {
        self.entry().nominated_node = Some(node);
        self
    }

    /// Makes the pod a member of `group`.
    pub fn group(mut self, group: PodGroupId) -> Self {
        self.entry().group = Some(group);
        self
    }

    /// Sets the effective priority.
    pub fn priority(mut self, priority: i32) -> Self {
        self.entry().priority = priority;
        self
    }

    /// Sets the effective preemption policy.
    pub fn preemption_policy(mut self, policy: PreemptionPolicy) -> Self {
        self.entry().preemption_policy = policy;
        self
    }

    /// Sets the start time, Unix seconds.
    pub fn start_time(mut self, seconds: i64) -> Self {
        self.entry().start_time = seconds;
        self
    }

    /// The pod's id.
    pub fn id(&self) -> PodId {
        self.pod
    }
}

/// The setters PodGroup and CompositePodGroup builders share: the specs
/// have the same `priority`, `disruption_mode`, `preemption_policy` and
/// `topology_key` fields.
macro_rules! shared_spec_setters {
    () => {
        /// Sets `spec.priority`.
        pub fn priority(mut self, priority: i32) -> Self {
            self.spec().priority = priority;
            self
        }

        /// Sets `spec.disruptionMode`.
        pub fn disruption_mode(mut self, mode: DisruptionMode) -> Self {
            self.spec().disruption_mode = mode;
            self
        }

        /// Sets `spec.preemptionPolicy`.
        pub fn preemption_policy(mut self, policy: PreemptionPolicy) -> Self {
            self.spec().preemption_policy = policy;
            self
        }

        /// Sets the topology key (a node label).
        pub fn topology_key(mut self, key: &str) -> Self {
            let key = self.cluster.intern(key);
            self.spec().topology_key = Some(key);
            self
        }
    };
}

/// Sets up a PodGroup added by [`FakeCluster::add_pod_group`].
#[derive(Debug)]
pub struct PodGroupBuilder<'a> {
    cluster: &'a mut FakeCluster,
    group: PodGroupId,
}

impl PodGroupBuilder<'_> {
    fn spec(&mut self) -> &mut PodGroupSpec {
        self.cluster.groups[self.group as usize]
            .spec
            .get_or_insert(PodGroupSpec {
                policy: SchedulingPolicy::Basic,
                priority: 0,
                disruption_mode: DisruptionMode::Single,
                preemption_policy: PreemptionPolicy::PreemptLowerPriority,
                topology_key: None,
                parent: None,
            })
    }

    /// `schedulingPolicy: {gang: {minCount}}`.
    pub fn gang(mut self, min_count: u32) -> Self {
        self.spec().policy = SchedulingPolicy::Gang(min_count);
        self
    }

    /// `schedulingPolicy: {basic: {}}` (the default).
    pub fn basic(mut self) -> Self {
        self.spec().policy = SchedulingPolicy::Basic;
        self
    }

    shared_spec_setters!();

    /// Makes the group a child of `composite`.
    pub fn parent(mut self, composite: CompositeId) -> Self {
        self.spec().parent = Some(composite);
        self
    }

    /// Drops the spec: pods name this PodGroup but the object does not
    /// exist.
    pub fn missing(self) -> Self {
        self.cluster.groups[self.group as usize].spec = None;
        self
    }

    /// The PodGroup's id.
    pub fn id(&self) -> PodGroupId {
        self.group
    }
}

/// Sets up a CompositePodGroup added by [`FakeCluster::add_composite`].
#[derive(Debug)]
pub struct CompositeBuilder<'a> {
    cluster: &'a mut FakeCluster,
    composite: CompositeId,
}

impl CompositeBuilder<'_> {
    fn spec(&mut self) -> &mut CompositeSpec {
        &mut self.cluster.composites[self.composite as usize].spec
    }

    /// `schedulingPolicy: {gang: {minGroupCount}}`.
    pub fn gang(mut self, min_group_count: u32) -> Self {
        self.spec().policy = CompositePolicy::Gang(min_group_count);
        self
    }

    /// `schedulingPolicy: {basic: {}}` (the default).
    pub fn basic(mut self) -> Self {
        self.spec().policy = CompositePolicy::Basic;
        self
    }

    shared_spec_setters!();

    /// Makes the composite a child of `parent`.
    pub fn parent(mut self, parent: CompositeId) -> Self {
        self.spec().parent = Some(parent);
        self
    }

    /// The composite's id.
    pub fn id(&self) -> CompositeId {
        self.composite
    }
}

impl Cluster for FakeCluster {
    fn node_count(&self) -> u32 {
        id(self.nodes.len())
    }

    fn pod_count(&self) -> u32 {
        id(self.pods.len())
    }

    fn pod_group_count(&self) -> u32 {
        id(self.groups.len())
    }

    fn composite_count(&self) -> u32 {
        id(self.composites.len())
    }

    fn disruption_budget_count(&self) -> u32 {
        id(self.budgets.len())
    }

    fn resource_names(&self) -> Vec<String> {
        self.resources()
    }

    fn allocatable(&self, resource: ResourceId) -> Vec<u64> {
        let Some(name) = self.resource_name(resource) else {
            return Vec::new();
        };
        self.nodes
            .iter()
            .map(|n| n.allocatable.get(&name).copied().unwrap_or(0))
            .collect()
    }

    fn requested(&self, resource: ResourceId) -> Vec<u64> {
        let Some(name) = self.resource_name(resource) else {
            return Vec::new();
        };
        let mut column = vec![0u64; self.nodes.len()];
        for pod in &self.pods {
            if let Some(slot) = pod.node.and_then(|n| column.get_mut(n as usize)) {
                *slot = slot.saturating_add(Self::request(pod, &name));
            }
        }
        column
    }

    fn lookup(&self, text: &str) -> Option<Symbol> {
        self.symbol(text)
    }

    fn symbol_text(&self, id: Symbol) -> String {
        self.symbols.get(id as usize).cloned().unwrap_or_default()
    }

    fn node_name(&self, node: NodeId) -> String {
        self.nodes
            .get(node as usize)
            .map(|n| self.symbol_text(n.name))
            .unwrap_or_default()
    }

    fn node_label_column(&self, key: Symbol) -> Vec<Option<Symbol>> {
        self.nodes
            .iter()
            .map(|n| n.labels.get(&key).copied())
            .collect()
    }

    fn pod(&self, pod: PodId) -> Option<PodInfo> {
        self.pod_entry(pod).map(|p| PodInfo {
            namespace: p.namespace,
            priority: p.priority,
            preemption_policy: p.preemption_policy,
            node: p.node,
            nominated_node: p.nominated_node,
            group: p.group,
            start_time: p.start_time,
            pending: p.node.is_none(),
        })
    }

    fn pod_name(&self, pod: PodId) -> String {
        self.pod_entry(pod)
            .map(|p| p.name.clone())
            .unwrap_or_default()
    }

    fn pod_labels(&self, pod: PodId) -> Vec<(Symbol, Symbol)> {
        // By key text, as the host orders them.
        let mut labels: Vec<(Symbol, Symbol)> = self
            .pod_entry(pod)
            .map(|p| p.labels.iter().map(|(&k, &v)| (k, v)).collect())
            .unwrap_or_default();
        labels.sort_by(|a, b| self.symbols[a.0 as usize].cmp(&self.symbols[b.0 as usize]));
        labels
    }

    fn pod_requests(&self, pod: PodId) -> Vec<u64> {
        let Some(p) = self.pod_entry(pod) else {
            return Vec::new();
        };
        self.resources()
            .iter()
            .map(|name| Self::request(p, name))
            .collect()
    }

    fn pods_on_node(&self, node: NodeId) -> Vec<PodId> {
        self.pods
            .iter()
            .enumerate()
            .filter(|(_, p)| p.node == Some(node))
            .map(|(i, _)| id(i))
            .collect()
    }

    fn pod_group(&self, group: PodGroupId) -> Option<PodGroup> {
        let entry = self.groups.get(group as usize)?;
        let (mut pending, mut bound) = (Vec::new(), Vec::new());
        for (pod, p) in self.members(group) {
            if p.node.is_some() {
                bound.push(pod);
            } else {
                pending.push(pod);
            }
        }
        Some(PodGroup {
            id: group,
            name: entry.name.clone(),
            spec: entry.spec.clone(),
            pending,
            bound,
        })
    }

    fn pod_group_spec(&self, group: PodGroupId) -> Option<PodGroupSpec> {
        self.groups.get(group as usize)?.spec.clone()
    }

    fn composite(&self, composite: CompositeId) -> Option<Composite> {
        let entry = self.composites.get(composite as usize)?;
        let mut child_groups: Vec<PodGroupId> = (0..self.pod_group_count())
            .filter(|&g| {
                self.groups[g as usize]
                    .spec
                    .as_ref()
                    .is_some_and(|s| s.parent == Some(composite))
            })
            .collect();
        child_groups.sort_by(|&a, &b| {
            self.groups[a as usize]
                .name
                .cmp(&self.groups[b as usize].name)
        });
        let mut child_composites: Vec<CompositeId> = (0..self.composite_count())
            .filter(|&c| self.composites[c as usize].spec.parent == Some(composite))
            .collect();
        child_composites.sort_by(|&a, &b| {
            self.composites[a as usize]
                .name
                .cmp(&self.composites[b as usize].name)
        });
        Some(Composite {
            id: composite,
            name: entry.name.clone(),
            spec: entry.spec.clone(),
            child_groups,
            child_composites,
        })
    }

    fn disruption_budget(&self, id: BudgetId) -> Option<DisruptionBudget> {
        self.budgets.get(id as usize).cloned()
    }

    fn pod_disruption_budgets(&self, pod: PodId) -> Vec<BudgetId> {
        self.budgets
            .iter()
            .enumerate()
            .filter(|(_, b)| b.pods.binary_search(&pod).is_ok())
            .map(|(i, _)| id(i))
            .collect()
    }

    fn generation(&self) -> u64 {
        self.clock
    }

    fn node_changes(&self) -> Vec<u64> {
        self.nodes.iter().map(|n| n.changed).collect()
    }

    fn changed_nodes(&self, since: u64) -> Vec<NodeId> {
        (0..id(self.nodes.len()))
            .filter(|&n| self.nodes[n as usize].changed > since)
            .collect()
    }

    fn node_handles(&self) -> Vec<Handle> {
        (0..id(self.nodes.len()))
            .map(|slot| Handle {
                slot,
                generation: 1,
            })
            .collect()
    }

    fn handle_of(&self, kind: ObjectKind, id: u32) -> Result<Handle, LookupError> {
        let count = match kind {
            ObjectKind::Node => self.nodes.len(),
            ObjectKind::Pod => self.pods.len(),
            ObjectKind::PodGroup => self.groups.len(),
            ObjectKind::Composite => self.composites.len(),
            ObjectKind::DisruptionBudget => self.budgets.len(),
        };
        if (id as usize) < count {
            Ok(Handle {
                slot: id,
                generation: 1,
            })
        } else {
            Err(LookupError::Unknown)
        }
    }

    fn resolve(&self, kind: ObjectKind, handle: Handle) -> Result<u32, LookupError> {
        let current = self.handle_of(kind, handle.slot)?;
        if current == handle {
            Ok(handle.slot)
        } else {
            Err(LookupError::Stale)
        }
    }

    fn nodes_facts(&self, nodes: &[NodeId]) -> Result<Vec<NodeFacts>, LookupError> {
        if nodes.len() > self.nodes.len() {
            return Err(LookupError::Unknown);
        }
        nodes
            .iter()
            .map(|&node| {
                let n = self.nodes.get(node as usize).ok_or(LookupError::Unknown)?;
                Ok(NodeFacts {
                    handle: Handle {
                        slot: node,
                        generation: 1,
                    },
                    taints: n.taints.clone(),
                    unschedulable: n.unschedulable,
                    labels: n.labels.iter().map(|(&k, &v)| (k, v)).collect(),
                })
            })
            .collect()
    }

    fn pod_facts(&self, pod: PodId) -> Result<PodFacts, LookupError> {
        self.pod_entry(pod)
            .map(|p| p.facts.clone())
            .ok_or(LookupError::Unknown)
    }

    fn group_nodes_by_label(
        &self,
        key: Symbol,
        nodes: &[NodeId],
    ) -> Result<Vec<LabelDomain>, LookupError> {
        if nodes.len() > self.nodes.len() {
            return Err(LookupError::Unknown);
        }
        let mut domains: BTreeMap<String, (Symbol, Vec<NodeId>)> = BTreeMap::new();
        for &node in nodes {
            let n = self.nodes.get(node as usize).ok_or(LookupError::Unknown)?;
            if let Some(&value) = n.labels.get(&key) {
                domains
                    .entry(self.symbol_text(value))
                    .or_insert_with(|| (value, Vec::new()))
                    .1
                    .push(node);
            }
        }
        Ok(domains
            .into_iter()
            .map(|(value_text, (value, mut nodes))| {
                nodes.sort_unstable();
                nodes.dedup();
                LabelDomain {
                    value,
                    value_text,
                    nodes,
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_symbols_and_members() {
        let mut c = FakeCluster::new();
        let a = c
            .add_node("a")
            .label("zone", "z1")
            .allocatable("cpu", 4000)
            .allocatable("nvidia.com/gpu", 2)
            .id();
        let b = c.add_node("b").allocatable("cpu", 2000).id();
        let root = c.add_composite("ns/root").gang(2).id();
        let inner = c.add_composite("ns/inner").parent(root).id();
        let g2 = c.add_pod_group("ns/z").gang(1).parent(root).id();
        let g1 = c.add_pod_group("ns/a").parent(root).id();
        let missing = c.add_pod_group("ns/gone").missing().id();
        let p0 = c
            .add_pod("ns/p0")
            .group(g1)
            .request("cpu", 100)
            .on_node(b)
            .id();
        let p1 = c
            .add_pod("ns/p1")
            .group(g1)
            .request("nvidia.com/gpu", 1)
            .id();
        let p2 = c
            .add_pod("p2")
            .label("b", "1")
            .label("a", "2")
            .on_node(a)
            .id();
        let pdb = c.add_disruption_budget("ns/pdb", &[p2, p0], 1);

        assert_eq!(
            c.resource_names(),
            ["cpu", "memory", "pods", "nvidia.com/gpu"]
        );
        assert_eq!(c.allocatable(0), [4000, 2000]);
        assert_eq!(c.allocatable(3), [2, 0]);
        assert!(c.allocatable(4).is_empty());
        assert_eq!(c.requested(0), [0, 100]);
        assert_eq!(c.requested(2), [1, 1]);
        assert_eq!(c.pod_requests(p1), [0, 0, 1, 1]);
        assert_eq!(c.pods_on_node(a), [p2]);
        assert_eq!(c.node_name(b), "b");
        assert_eq!(c.symbol_text(c.lookup("z1").unwrap()), "z1");
        assert_eq!(c.lookup("nope"), None);
        let default = c.lookup("default").unwrap();
        assert_eq!(c.pod(p2).unwrap().namespace, default);
        assert!(c.pod(p1).unwrap().pending && !c.pod(p0).unwrap().pending);
        let labels = c.pod_labels(p2);
        assert_eq!(c.symbol_text(labels[0].0), "a");

        let group = c.pod_group(g1).unwrap();
        assert_eq!((group.pending, group.bound), (vec![p1], vec![p0]));
        assert_eq!(c.pod_group_spec(missing), None);
        assert_eq!(c.pod_group(missing).unwrap().name, "ns/gone");
        let composite = c.composite(root).unwrap();
        assert_eq!(composite.child_groups, [g1, g2]);
        assert_eq!(composite.child_composites, [inner]);
        assert_eq!(c.pod_disruption_budgets(p0), [pdb]);
        assert_eq!(c.disruption_budget(pdb).unwrap().pods, [p0, p2]);
    }

    #[test]
    fn log_buffer() {
        crate::log(Level::Info, "hello");
        assert_eq!(take_logs(), [(Level::Info, "hello".to_string())]);
        assert!(take_logs().is_empty());
    }
}
