//! The cluster snapshot a run schedules on: nodes, pods and PodGroups as
//! dense indices, node resources as columns, names and labels interned.
//!
//! Built from the manifests by the incremental [`Model`] (the one builder;
//! [`Snapshot::build`] reads through it); during a run the
//! cycle assumes pods onto nodes ([`Snapshot::assume`]) and takes them off
//! again ([`Snapshot::remove`]) as kube-scheduler's cache does. Every such
//! change is recorded, so that any attempt can be undone exactly:
//! [`Snapshot::checkpoint`] marks a point, [`Snapshot::rollback`] returns to
//! it, at any depth (placements inside placements, victims removed for a
//! preemption trial), and [`Snapshot::commit`] makes everything so far final.
//!
//! This module knows nothing of filters, scheduling or wasm.

mod build;
pub use build::{BuildOptions, DEFAULT_SCHEDULER_NAME};
pub mod composite;
pub mod disruption;
pub mod identity;
pub mod incremental;
mod labels;
#[cfg(any(test, feature = "oracle"))]
pub mod oracle;
pub mod resources;
mod shared;
mod symbols;
pub mod unmodelled;

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{
    NodeSelectorTerm, PodAffinityTerm, Taint, Toleration, TopologySpreadConstraint,
};

pub use composite::{CompositeId, CompositeInfo, CompositePolicy, CompositeSpec};
pub use disruption::{BudgetId, DisruptionBudget};
pub use incremental::{Model, ModelSize, SharedObject};
pub use labels::{label_selector_matches, taint_text};
pub use shared::{CowVec, SharedVec};
pub use symbols::Symbols;

/// Index of a node; nodes are sorted by name.
pub type NodeId = u32;
/// Index of a pod; pods are sorted by `namespace/name`.
pub type PodId = u32;
/// Index of a PodGroup; groups are sorted by `namespace/name`.
pub type GroupId = u32;

/// A node as the scheduler sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInfo {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`, when the snapshot has it.
    pub uid: Option<String>,
    /// `metadata.labels` (shared by the copies of a snapshot, as the
    /// other fields read from the object and never changed by a cycle).
    pub labels: Arc<BTreeMap<String, String>>,
    /// `spec.taints`.
    pub taints: Arc<Vec<Taint>>,
    /// `spec.unschedulable`.
    pub unschedulable: bool,
    /// For each taint, the id of its rejection text in
    /// [`Snapshot::taint_texts`].
    pub taint_texts: Vec<u32>,
}

/// A pod as the scheduler sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PodInfo {
    /// `namespace/name`.
    pub key: String,
    /// `metadata.uid`, when the snapshot has it.
    pub uid: Option<String>,
    /// `metadata.annotations`.
    pub annotations: Arc<BTreeMap<String, String>>,
    /// Kind of the controlling owner reference, else of the first one.
    pub owner_kind: Option<String>,
    /// `metadata.namespace`.
    pub namespace: String,
    /// The node it is bound to or assumed on.
    pub node: Option<NodeId>,
    /// Whether it waits to be scheduled (no `spec.nodeName` in the snapshot).
    pub pending: bool,
    /// Being deleted (`metadata.deletionTimestamp`): not pending, holds no
    /// resources in this simulation, belongs to no group's members.
    pub terminating: bool,
    /// `status.nominatedNodeName`, when that node is in the snapshot.
    pub nominated_node: Option<NodeId>,
    /// Evicted by preemption in this run.
    pub evicted: bool,
    /// Assumed on its node as a preemptor nominated there
    /// ([`Snapshot::nominate`]): it counts against the node for Filter but
    /// not for the default scores, as kube-scheduler adds nominated pods
    /// to a node only when it filters.
    pub nominated: bool,
    /// Effective priority (the PodGroup's for members).
    pub priority: i32,
    /// Effective `preemptionPolicy` is `Never` (the pod's, else its
    /// PriorityClass's; for members, the PodGroup's).
    pub never_preempt: bool,
    /// The PodGroup it belongs to.
    pub group: Option<GroupId>,
    /// Requests, indexed like [`Snapshot::resource_names`].
    pub requests: Vec<u64>,
    /// The cpu and memory `NodeResourcesFit` scores by: requests, with
    /// containers that request none counted at 100m / 200Mi
    /// ([`resources::pod_scoring_requests`]).
    pub scoring_requests: [u64; 2],
    /// `spec.tolerations`.
    pub tolerations: Arc<Vec<Toleration>>,
    /// `spec.nodeSelector`.
    pub node_selector: Arc<BTreeMap<String, String>>,
    /// `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`.
    pub required_node_affinity: Option<Arc<Vec<NodeSelectorTerm>>>,
    /// `spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution`:
    /// (weight, term).
    pub preferred_node_affinity: Arc<Vec<(i32, NodeSelectorTerm)>>,
    /// `metadata.creationTimestamp`, Unix seconds (0 if absent).
    pub created: i64,
    /// `status.startTime`, else `created`.
    pub started: i64,
    /// `metadata.labels` (shared by the copies of a snapshot, as the
    /// other fields read from the spec and never changed by a cycle).
    pub labels: Arc<BTreeMap<String, String>>,
    /// Hard (`DoNotSchedule`) topology spread constraints: the pod's own,
    /// plus its group's from a dialect that has them.
    pub spread: Arc<Vec<TopologySpreadConstraint>>,
    /// `spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution`:
    /// what a pod placed near this one must not match (checked for the
    /// pods placed while this one runs, as `InterPodAffinity` checks
    /// existing pods' anti-affinity).
    pub required_anti_affinity: Arc<Vec<PodAffinityTerm>>,
    /// [`crate::filters::static_signature`] of the pod, once asked: it
    /// reads only fields that never change after the pod is read, and a
    /// pod is read once and shared by the runs that follow.
    pub signature: SignatureCell,
}

/// A value worked out from a pod's read fields when first asked, then
/// kept; it takes no part in comparing pods (it follows from the fields
/// that do).
#[derive(Clone, Default)]
pub struct SignatureCell(std::sync::OnceLock<Arc<str>>);

impl SignatureCell {
    /// The value, worked out by `make` the first time.
    pub fn get_or_init(&self, make: impl FnOnce() -> String) -> Arc<str> {
        self.0.get_or_init(|| Arc::from(make())).clone()
    }
}

impl PartialEq for SignatureCell {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for SignatureCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SignatureCell")
    }
}

/// `spec.schedulingPolicy` of a PodGroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// `basic: {}`.
    Basic,
    /// `gang: {minCount}`.
    Gang {
        /// `minCount`.
        min_count: u32,
    },
}

/// The scheduling-relevant spec of a PodGroup object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupSpec {
    /// `spec.schedulingPolicy`.
    pub policy: Policy,
    /// `spec.priority`, else the value of `spec.priorityClassName`, else 0.
    pub priority: i32,
    /// `spec.disruptionMode` is `all`.
    pub disrupt_all: bool,
    /// `spec.preemptionPolicy` is `Never`.
    pub never_preempt: bool,
    /// `spec.schedulingConstraints.topology[0].key`.
    pub topology_key: Option<String>,
    /// `spec.parentCompositePodGroupName`.
    pub parent: Option<String>,
    /// `spec.workloadRef.name`.
    pub workload: Option<String>,
}

/// A PodGroup and its member pods.
#[derive(Debug, Clone)]
pub struct GroupInfo {
    /// `namespace/name`.
    pub key: String,
    /// The PodGroup object's spec; `None` when pods name a PodGroup that is
    /// not in the snapshot.
    pub spec: Option<GroupSpec>,
    /// Members, bound and pending, ordered by creation time then name.
    pub members: Vec<PodId>,
    /// `metadata.creationTimestamp` of the PodGroup (else of its oldest member).
    pub created: i64,
    /// Coscheduling/Volcano `minResources` as (resource column, amount): the
    /// group waits unless the cluster's free capacity covers them.
    pub min_resources: Vec<(usize, u64)>,
    /// The parent CompositePodGroup, when it exists.
    pub parent: Option<CompositeId>,
    /// Why its CompositePodGroup tree is invalid, if it is in one.
    pub invalid: Option<String>,
}

impl GroupInfo {
    /// `minCount` for gangs, `None` for basic or missing groups.
    pub fn min_count(&self) -> Option<u32> {
        match self.spec.as_ref()?.policy {
            Policy::Gang { min_count } => Some(min_count),
            Policy::Basic => None,
        }
    }
}

/// The whole cluster, indexed for scheduling.
///
/// Copying a snapshot costs reference counts ([`shared`]): a copy shares
/// every part with its original until one of them changes it. What a
/// placement changes is copied on write apart: pods and pods per node
/// element by element, the requested columns whole; the rest, which only
/// the model changes, whole.
#[derive(Debug, Default, Clone)]
pub struct Snapshot {
    /// Resource column names: `cpu`, `memory`, `pods`, then the rest sorted.
    pub resource_names: Arc<Vec<String>>,
    /// Nodes, sorted by name.
    pub nodes: SharedVec<NodeInfo>,
    /// Pods, sorted by `namespace/name`.
    pub pods: CowVec<PodInfo>,
    /// PodGroups (including ones only named by pods), sorted by key.
    pub groups: SharedVec<GroupInfo>,
    /// CompositePodGroups, sorted by key.
    pub composites: SharedVec<CompositeInfo>,
    /// PodDisruptionBudgets, sorted by key.
    pub budgets: SharedVec<DisruptionBudget>,
    /// Interned node names, namespaces and label keys/values.
    pub symbols: Arc<Symbols>,
    /// Interned rejection texts of node taints (v1.37 words them all
    /// `node(s) had untolerated taint(s)`).
    pub taint_texts: Arc<Symbols>,
    /// Things the user should know about how the snapshot was read.
    pub warnings: Arc<Vec<String>>,
    /// How objects in other dialects were read, one line each.
    pub notes: Arc<Vec<String>>,
    /// Workload objects whose controllers make no pods, and why.
    pub without_pods: Arc<Vec<crate::manifest::WithoutPods>>,
    allocatable: SharedVec<Vec<u64>>,
    requested: SharedVec<Vec<u64>>,
    /// Per node, the sum of its pods' [`PodInfo::scoring_requests`]
    /// (nominated pods left out).
    scoring_requested: Arc<[Vec<u64>; 2]>,
    /// Per node, the cpu and memory requests of its nominated pods.
    nominated_requested: Arc<[Vec<u64>; 2]>,
    pods_on_node: CowVec<Vec<PodId>>,
    /// Budgets matching each pod, ascending.
    pod_budgets: SharedVec<Vec<BudgetId>>,
    /// Per node label key (a symbol), the value symbol on every node.
    label_columns: Arc<std::collections::HashMap<u32, Vec<Option<u32>>>>,
    /// The pods with required anti-affinity terms, ascending.
    anti_affine: Arc<Vec<PodId>>,
    /// Changes since the last [`Snapshot::commit`], oldest first.
    undo: Vec<Change>,
    /// Handles and change values (contract 0.3.0's identity rules).
    identity: Arc<identity::Identity>,
}

/// One recorded change of the snapshot's placements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// A pod was assumed onto a node.
    Assumed(PodId, identity::Before),
    /// A pod was taken off a node (nominated there, or not).
    Removed(PodId, NodeId, bool, identity::Before),
}

/// A point to roll the snapshot back to ([`Snapshot::checkpoint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a checkpoint is only useful to roll back to"]
pub struct Checkpoint(usize);

impl Snapshot {
    /// The node named `name` (nodes are in name order).
    pub fn node_named(&self, name: &str) -> Option<NodeId> {
        self.nodes
            .binary_search_by(|n| n.name.as_str().cmp(name))
            .ok()
            .map(|i| i as NodeId)
    }

    /// The pod `namespace/name` (pods are in key order).
    pub fn pod_named(&self, key: &str) -> Option<PodId> {
        self.pods
            .binary_search_by(|p| p.key.as_str().cmp(key))
            .ok()
            .map(|i| i as PodId)
    }

    /// The PodGroup `namespace/name` (groups are in key order).
    pub fn group_named(&self, key: &str) -> Option<GroupId> {
        self.groups
            .binary_search_by(|g| g.key.as_str().cmp(key))
            .ok()
            .map(|i| i as GroupId)
    }

    /// The CompositePodGroup `namespace/name`.
    pub fn composite_named(&self, key: &str) -> Option<CompositeId> {
        self.composites
            .iter()
            .position(|c| c.key == key)
            .map(|i| i as CompositeId)
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The objects' handles and the change values of nodes.
    pub fn identity(&self) -> &identity::Identity {
        &self.identity
    }

    /// Replaces the identity (a [`identity::Registry`] stamping a rebuilt
    /// snapshot).
    pub fn set_identity(&mut self, identity: identity::Identity) {
        self.identity = Arc::new(identity);
    }

    /// Allocatable amount of resource `r` per node (empty if out of range).
    pub fn allocatable(&self, r: usize) -> &[u64] {
        self.allocatable.get(r).map_or(&[], Vec::as_slice)
    }

    /// Requested amount of resource `r` per node, bound and assumed pods.
    pub fn requested(&self, r: usize) -> &[u64] {
        self.requested.get(r).map_or(&[], |c| c.as_slice())
    }

    /// The cpu and memory requested on `node` as `NodeResourcesFit` scores
    /// them (its pods' [`PodInfo::scoring_requests`]).
    pub fn scoring_requested(&self, node: NodeId) -> [u64; 2] {
        [0, 1].map(|r| {
            self.scoring_requested[r]
                .get(node as usize)
                .copied()
                .unwrap_or(0)
        })
    }

    /// The cpu and memory requested on `node` by its pods that are not
    /// [nominated](PodInfo::nominated): what `NodeResourcesBalancedAllocation`
    /// sees.
    pub fn requested_without_nominated(&self, node: NodeId) -> [u64; 2] {
        [0, 1].map(|r| {
            let all = self.requested(r).get(node as usize).copied().unwrap_or(0);
            let nominated = self.nominated_requested[r]
                .get(node as usize)
                .copied()
                .unwrap_or(0);
            all.saturating_sub(nominated)
        })
    }

    /// Pods bound or assumed on `node`, ascending.
    pub fn pods_on_node(&self, node: NodeId) -> &[PodId] {
        self.pods_on_node
            .get(node as usize)
            .map_or(&[], |p| p.as_slice())
    }

    /// Index of a resource column.
    pub fn resource_index(&self, name: &str) -> Option<usize> {
        self.resource_names.iter().position(|r| r == name)
    }

    /// The value of label `key` (a symbol) on every node, indexed by node;
    /// empty for a symbol that is no node label key.
    pub fn label_column(&self, key: u32) -> &[Option<u32>] {
        self.label_columns.get(&key).map_or(&[], Vec::as_slice)
    }

    /// The pods with required anti-affinity terms
    /// ([`PodInfo::required_anti_affinity`]), ascending, running or not.
    pub fn anti_affine_pods(&self) -> &[PodId] {
        &self.anti_affine
    }

    /// Indexes the pods with required anti-affinity terms (after pods
    /// were added or removed).
    fn index_anti_affinity(&mut self) {
        self.anti_affine = Arc::new(
            (0..self.pods.len() as PodId)
                .filter(|&p| !self.pods[p as usize].required_anti_affinity.is_empty())
                .collect(),
        );
    }

    /// The budgets whose selector matches `pod`, ascending.
    pub fn pod_budgets(&self, pod: PodId) -> &[BudgetId] {
        self.pod_budgets
            .get(pod as usize)
            .map_or(&[], Vec::as_slice)
    }

    /// Every PodGroup under composite `c`, depth first in id order.
    pub fn subtree_groups(&self, c: CompositeId) -> Vec<GroupId> {
        let mut groups = Vec::new();
        let mut stack = vec![c];
        // Valid trees have no cycles; the bound guards invalid ones.
        let mut steps = 0;
        while let Some(c) = stack.pop() {
            steps += 1;
            if steps > self.composites.len() {
                break;
            }
            let composite = &self.composites[c as usize];
            groups.extend(&composite.child_groups);
            stack.extend(composite.child_composites.iter().rev());
        }
        groups
    }

    /// The root of the CompositePodGroup tree `group` belongs to, if any.
    pub fn root_of(&self, group: GroupId) -> Option<CompositeId> {
        let mut current = self.groups.get(group as usize)?.parent?;
        // Valid trees have no cycles; the bound guards invalid ones.
        for _ in 0..=self.composites.len() {
            match self.composites[current as usize].parent {
                Some(parent) => current = parent,
                None => return Some(current),
            }
        }
        None
    }

    /// Whether `pod` runs: bound (not pending), not evicted, not terminating.
    pub fn is_running(&self, pod: PodId) -> bool {
        let info = &self.pods[pod as usize];
        !info.pending && !info.evicted && !info.terminating
    }

    /// Places `pod` on `node`: its requests count against the node.
    pub fn assume(&mut self, pod: PodId, node: NodeId) {
        let before = self.place(pod, node);
        self.undo.push(Change::Assumed(pod, before));
    }

    /// A pod assumed in this run is bound: it no longer waits. A change of
    /// the view, so its node's change value moves.
    pub fn bind(&mut self, pod: PodId) {
        let info = self.pods.get_mut(pod as usize);
        info.pending = false;
        if let Some(node) = info.node {
            Arc::make_mut(&mut self.identity).node_changed(node);
        }
    }

    /// Places `pod` on `node` as a nominated preemptor waiting to be
    /// retried ([`PodInfo::nominated`]); [`Snapshot::confirm`] makes it an
    /// ordinary assumed pod.
    pub fn nominate(&mut self, pod: PodId, node: NodeId) {
        self.pods.get_mut(pod as usize).nominated = true;
        self.assume(pod, node);
    }

    /// A nominated pod's retry placed it on its node: from now on it also
    /// counts for the scores. Nothing for a pod not nominated.
    ///
    /// Not undone by a rollback: only between checkpoints, after a commit
    /// (a rollback across it would put back a node's change value over
    /// requests it no longer has).
    pub fn confirm(&mut self, pod: PodId) {
        debug_assert!(self.undo.is_empty(), "confirm after an uncommitted change");
        let info = &self.pods[pod as usize];
        let Some(node) = info.node.filter(|_| info.nominated) else {
            return;
        };
        let info = self.pods.get_mut(pod as usize);
        info.nominated = false;
        Arc::make_mut(&mut self.identity).node_changed(node);
        let node = node as usize;
        for r in 0..2 {
            if let Some(&request) = info.requests.get(r) {
                let column = &mut Arc::make_mut(&mut self.nominated_requested)[r];
                column[node] = column[node].saturating_sub(request);
            }
            let column = &mut Arc::make_mut(&mut self.scoring_requested)[r];
            column[node] = column[node].saturating_add(info.scoring_requests[r]);
        }
    }

    /// Takes `pod` off its node (an assumption undone, or a victim evicted);
    /// nothing if it is on none.
    pub fn remove(&mut self, pod: PodId) {
        let nominated = self.pods[pod as usize].nominated;
        if let Some((node, before)) = self.unplace(pod) {
            self.undo
                .push(Change::Removed(pod, node, nominated, before));
        }
    }

    /// Marks the current state; [`Snapshot::rollback`] returns to it.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint(self.undo.len())
    }

    /// Undoes every assumption and removal since `checkpoint`, newest
    /// first, restoring requested columns and pods on nodes exactly, and
    /// the change values with them (the view is the one of then, so it
    /// carries the values of then).
    pub fn rollback(&mut self, checkpoint: Checkpoint) {
        assert!(
            checkpoint.0 <= self.undo.len(),
            "rollback to a checkpoint taken before the last commit"
        );
        while self.undo.len() > checkpoint.0 {
            match self.undo.pop().expect("checked above") {
                Change::Assumed(pod, before) => {
                    if let Some((node, _)) = self.unplace(pod) {
                        Arc::make_mut(&mut self.identity).restore(node, before);
                    }
                }
                Change::Removed(pod, node, nominated, before) => {
                    self.pods.get_mut(pod as usize).nominated = nominated;
                    self.place(pod, node);
                    Arc::make_mut(&mut self.identity).restore(node, before);
                }
            }
        }
    }

    /// Makes every change so far final; earlier checkpoints become invalid.
    pub fn commit(&mut self) {
        self.undo.clear();
    }

    fn place(&mut self, pod: PodId, node: NodeId) -> identity::Before {
        let info = self.pods.get_mut(pod as usize);
        debug_assert!(info.node.is_none(), "{} assumed twice", info.key);
        info.node = Some(node);
        let n = node as usize;
        for (column, request) in self.requested.iter_mut().zip(&info.requests) {
            column[n] = column[n].saturating_add(*request);
        }
        if info.nominated {
            let columns = Arc::make_mut(&mut self.nominated_requested);
            for (column, request) in columns.iter_mut().zip(&info.requests) {
                column[n] = column[n].saturating_add(*request);
            }
        } else {
            let columns = Arc::make_mut(&mut self.scoring_requested);
            for (column, request) in columns.iter_mut().zip(info.scoring_requests) {
                column[n] = column[n].saturating_add(request);
            }
        }
        let on_node = self.pods_on_node.get_mut(n);
        let at = on_node.partition_point(|&p| p < pod);
        on_node.insert(at, pod);
        Arc::make_mut(&mut self.identity).node_changed(node)
    }

    fn unplace(&mut self, pod: PodId) -> Option<(NodeId, identity::Before)> {
        self.pods[pod as usize].node?;
        let info = self.pods.get_mut(pod as usize);
        let node = info.node.take()?;
        let n = node as usize;
        for (column, request) in self.requested.iter_mut().zip(&info.requests) {
            column[n] = column[n].saturating_sub(*request);
        }
        if std::mem::take(&mut info.nominated) {
            let columns = Arc::make_mut(&mut self.nominated_requested);
            for (column, request) in columns.iter_mut().zip(&info.requests) {
                column[n] = column[n].saturating_sub(*request);
            }
        } else {
            let columns = Arc::make_mut(&mut self.scoring_requested);
            for (column, request) in columns.iter_mut().zip(info.scoring_requests) {
                column[n] = column[n].saturating_sub(request);
            }
        }
        let on_node = self.pods_on_node.get_mut(n);
        if let Ok(at) = on_node.binary_search(&pod) {
            on_node.remove(at);
        }
        Some((node, Arc::make_mut(&mut self.identity).node_changed(node)))
    }
}
