//! The read-only cluster view every extension point is called with.

use alloc::string::String;
use alloc::vec::Vec;

use crate::types::{
    BudgetId, Composite, CompositeId, DisruptionBudget, Handle, LabelDomain, LookupError,
    NodeFacts, NodeId, ObjectKind, PodFacts, PodGroup, PodGroupId, PodGroupSpec, PodId, PodInfo,
    ResourceId, Symbol,
};

/// A consistent, read-only snapshot of nodes, pods and groups: one method
/// per method of the WIT `cluster.snapshot` resource.
///
/// On wasm32 the SDK implements it over the host's snapshot (each call is
/// one guest-to-host call; fetch columns once per call, not per node);
/// natively [`FakeCluster`](crate::fake::FakeCluster) implements it in
/// memory, so that plugin logic can be unit-tested without wasm.
///
/// The view reflects the cycle in progress: pods assumed earlier in the
/// cycle count in [`requested`](Cluster::requested) and
/// [`pods_on_node`](Cluster::pods_on_node).
pub trait Cluster {
    /// Number of nodes; node ids are `0 .. node_count()`.
    fn node_count(&self) -> u32;
    /// Number of pods (running and pending); pod ids are `0 .. pod_count()`.
    fn pod_count(&self) -> u32;
    /// Number of PodGroups; ids are `0 .. pod_group_count()`.
    fn pod_group_count(&self) -> u32;
    /// Number of CompositePodGroups; ids are `0 .. composite_count()`.
    fn composite_count(&self) -> u32;
    /// Number of PodDisruptionBudgets.
    fn disruption_budget_count(&self) -> u32;

    /// Resource column names, indexed by [`ResourceId`]: `cpu` (millicores),
    /// `memory` (bytes), `pods` (count), then extended resources by name.
    fn resource_names(&self) -> Vec<String>;
    /// Allocatable amount of one resource on every node, indexed by node id;
    /// empty if `resource` is out of range.
    fn allocatable(&self, resource: ResourceId) -> Vec<u64>;
    /// Requests of the pods bound or assumed on every node for one resource,
    /// indexed by node id; empty if `resource` is out of range.
    fn requested(&self, resource: ResourceId) -> Vec<u64>;

    /// The symbol of `text`, if it occurs in the snapshot (node names,
    /// namespaces, label keys and values).
    fn lookup(&self, text: &str) -> Option<Symbol>;
    /// The text of a symbol; empty for an unknown id.
    fn symbol_text(&self, id: Symbol) -> String;
    /// `metadata.name` of a node; empty for an unknown id.
    fn node_name(&self, node: NodeId) -> String;
    /// The value of label `key` on every node, indexed by node id; `None`
    /// where the node does not carry the label.
    fn node_label_column(&self, key: Symbol) -> Vec<Option<Symbol>>;

    /// One pod; `None` for an unknown id.
    fn pod(&self, pod: PodId) -> Option<PodInfo>;
    /// `namespace/name` of a pod; empty for an unknown id.
    fn pod_name(&self, pod: PodId) -> String;
    /// `metadata.labels` of a pod as (key, value) symbols, by key.
    fn pod_labels(&self, pod: PodId) -> Vec<(Symbol, Symbol)>;
    /// Requests of one pod, indexed by [`ResourceId`].
    fn pod_requests(&self, pod: PodId) -> Vec<u64>;
    /// Pods bound or assumed on a node, ascending.
    fn pods_on_node(&self, node: NodeId) -> Vec<PodId>;

    /// A PodGroup with its members; `None` for an unknown id.
    fn pod_group(&self, group: PodGroupId) -> Option<PodGroup>;
    /// Just the spec of a PodGroup (cheap: no member lists); `None` for an
    /// unknown id or a PodGroup object that does not exist.
    fn pod_group_spec(&self, group: PodGroupId) -> Option<PodGroupSpec>;
    /// A CompositePodGroup with its children; `None` for an unknown id.
    fn composite(&self, id: CompositeId) -> Option<Composite>;

    /// A PodDisruptionBudget; `None` for an unknown id.
    fn disruption_budget(&self, id: BudgetId) -> Option<DisruptionBudget>;
    /// The budgets whose selector matches `pod`, ascending.
    fn pod_disruption_budgets(&self, pod: PodId) -> Vec<BudgetId>;

    /// The host clock's value at the latest change in this view (equal
    /// values: identical views).
    fn generation(&self) -> u64;
    /// Per node, the clock value of the latest change a per-node check can
    /// see (the Node object, the pods on it), indexed by node id.
    fn node_changes(&self) -> Vec<u64>;
    /// The nodes whose change value is greater than `since`, ascending.
    fn changed_nodes(&self, since: u64) -> Vec<NodeId>;
    /// Every node's [`Handle`], indexed by node id.
    fn node_handles(&self) -> Vec<Handle>;
    /// The handle of one object of this snapshot.
    fn handle_of(&self, kind: ObjectKind, id: u32) -> Result<Handle, LookupError>;
    /// The id in this snapshot of the object `handle` names; `Stale` once
    /// it is gone.
    fn resolve(&self, kind: ObjectKind, handle: Handle) -> Result<u32, LookupError>;
    /// Taints, `unschedulable` and labels of each of `nodes`, in order;
    /// `Unknown` if an id is outside the snapshot or the list is longer
    /// than the snapshot's nodes.
    fn nodes_facts(&self, nodes: &[NodeId]) -> Result<Vec<NodeFacts>, LookupError>;
    /// Tolerations, node selector, required node affinity, annotations and
    /// owner kind of one pod.
    fn pod_facts(&self, pod: PodId) -> Result<PodFacts, LookupError>;
    /// `nodes` grouped by their value of label `key`, by value text
    /// ascending; nodes without the label left out; `Unknown` as for
    /// [`Cluster::nodes_facts`].
    fn group_nodes_by_label(
        &self,
        key: Symbol,
        nodes: &[NodeId],
    ) -> Result<Vec<LabelDomain>, LookupError>;
    /// The amounts of `resources` on `nodes` only ([`NodeResources`]);
    /// `Unknown` if an id is outside the snapshot or a list is longer than
    /// the snapshot's resources or nodes.
    ///
    /// The default reads whole columns; the wasm32 SDK and the host ask
    /// for just these amounts.
    fn node_resources(
        &self,
        resources: &[ResourceId],
        nodes: &[NodeId],
    ) -> Result<NodeResources, LookupError> {
        let count = self.resource_names().len();
        let node_count = self.node_count() as usize;
        if resources.len() > count || nodes.len() > node_count {
            return Err(LookupError::Unknown);
        }
        if nodes.iter().any(|&n| n as usize >= node_count) {
            return Err(LookupError::Unknown);
        }
        let mut amounts = Vec::with_capacity(2 * resources.len() * nodes.len());
        for &resource in resources {
            if resource as usize >= count {
                return Err(LookupError::Unknown);
            }
            for column in [self.allocatable(resource), self.requested(resource)] {
                for &node in nodes {
                    let amount = column.get(node as usize).ok_or(LookupError::Unknown)?;
                    amounts.push(*amount);
                }
            }
        }
        Ok(NodeResources::new(amounts, nodes.len()))
    }
}

/// [`Cluster::node_resources`]'s answer: per resource asked, the
/// allocatable and requested amounts on the nodes asked, in their order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeResources {
    amounts: Vec<u64>,
    nodes: usize,
}

impl NodeResources {
    /// Wraps the host's block: per resource, `nodes` allocatable amounts
    /// then `nodes` requested amounts.
    pub fn new(amounts: Vec<u64>, nodes: usize) -> Self {
        Self { amounts, nodes }
    }

    /// The allocatable amounts of the `i`-th resource asked, one per node
    /// asked (empty past the end).
    pub fn allocatable(&self, i: usize) -> &[u64] {
        self.slice(2 * i)
    }

    /// The requested amounts of the `i`-th resource asked, one per node
    /// asked (empty past the end).
    pub fn requested(&self, i: usize) -> &[u64] {
        self.slice(2 * i + 1)
    }

    fn slice(&self, block: usize) -> &[u64] {
        let start = block.saturating_mul(self.nodes);
        self.amounts
            .get(start..start.saturating_add(self.nodes))
            .unwrap_or(&[])
    }
}
