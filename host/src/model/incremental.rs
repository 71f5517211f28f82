//! The incremental model: a [`Snapshot`] kept current object by object, as
//! kube-scheduler's cache is, instead of rebuilt from every object.
//!
//! [`Model::upsert`] and [`Model::delete`] take one object of any modelled
//! kind (Node, Pod, PodGroup, Workload, CompositePodGroup, PriorityClass,
//! PodDisruptionBudget) and change only what depends on it: a node's
//! columns, label columns and the pods bound to it by name; a pod's place on
//! its node, its PodGroup's members and the budgets that match it; a
//! PodGroup's members' priorities; the CompositePodGroup trees (linked and
//! validated again, without reading any object); the objects naming a
//! PriorityClass. Reading an object (quantities, priorities, selectors)
//! happens once per change of that object.
//!
//! What it keeps is what the at-once builder (`model::oracle`, the property
//! test's oracle) would build from the objects it holds now, whatever order they came in: ids are positions in name order
//! (contract 0.3.0: ids are per call, handles are what lasts), group members
//! are ordered by creation time then name, and tie-breaks never depend on
//! arrival. Handles follow contract 0.3.0's identity rules: an object keeps
//! its handle while it lives (a pod or node recreated under its name with a
//! new `metadata.uid` is a new object), a freed slot is reused with a new
//! generation, and a node's change value moves exactly when it changes.
//! Interned names and labels no longer referenced are reclaimed: the symbol
//! table is compacted once it holds twice what it held at the last
//! compaction (symbol ids are valid for one snapshot only).
//!
//! An object the model cannot read (the error names its file, object and
//! field) is refused: it is left out, and the model holds what it would
//! hold without it; a pod or group refused for a PriorityClass not seen yet
//! is read again when PriorityClasses change.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use anyhow::{Result, bail};
use rustc_hash::FxHashMap;

use super::build::{self, BudgetRead, ClassRead, ModelledPod, PodRead, PriorityClasses};
use super::identity::{Handle, Kind, SlotTable, Slots};
use super::resources::{Amounts, PODS};
use super::{
    CompositeInfo, DisruptionBudget, GroupId, GroupInfo, GroupSpec, NodeId, NodeInfo, PodId,
    PodInfo, Snapshot, taint_text,
};
use crate::manifest::{Manifests, Object, ObjectRef};
use crate::model::BuildOptions;

/// One object as the model is given it, shared with whoever holds it
/// (`wasched shadow`'s store): `sync` tells changes by pointer.
pub type SharedObject = Arc<(ObjectRef, Object)>;

/// The most resource columns a snapshot may have.
const MAX_RESOURCES: usize = 128;

/// `(kind, namespace/name)` of an object.
type ObjectKey = (String, String);

/// How much the model holds (`wasched shadow` reports it as metrics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModelSize {
    /// Objects given and held (accepted or refused).
    pub objects: usize,
    /// Objects refused.
    pub refused: usize,
    /// Nodes, pods, PodGroups, CompositePodGroups and budgets modelled.
    pub modelled: [usize; 5],
    /// Interned strings (names, namespaces, label keys and values).
    pub symbols: usize,
    /// Interned taint texts.
    pub taint_texts: usize,
    /// Resource columns.
    pub resources: usize,
    /// Slots freed by deletions and not given again.
    pub free_slots: usize,
}

/// What the model counts for the snapshot's warnings.
#[derive(Debug, Default, Clone)]
struct Tally {
    /// Terminal pods, and terminating ones in a snapshot that is not live.
    ignored: usize,
    /// Pending pods held by scheduling gates.
    gated: usize,
    /// Pending pods asking for what wasched does not model: key → `key (needs)`.
    unmodelled: BTreeMap<String, String>,
    /// Nodes bound pods name that are not modelled, with how many pods.
    unknown_nodes: BTreeMap<String, usize>,
}

/// The incremental model (see the module documentation).
#[derive(Debug)]
pub struct Model {
    options: BuildOptions,
    /// How the objects were read (notes, warnings, kinds skipped); holds
    /// no objects.
    read: Manifests,
    /// The model as a snapshot, between cycles: nothing assumed.
    snapshot: Snapshot,
    /// Every object given and not deleted, accepted or refused: kind →
    /// name → object.
    objects: BTreeMap<String, BTreeMap<String, SharedObject>>,
    /// The objects refused, with why.
    refused: BTreeMap<ObjectKey, String>,
    /// PriorityClasses accepted, by name.
    classes: BTreeMap<String, ClassRead>,
    priorities: PriorityClasses,
    /// Pod objects accepted, by key (modelled or not).
    pods: HashMap<String, PodRead>,
    /// PodGroup objects accepted: key → (spec, creation time, minimum
    /// free resources).
    group_objects: BTreeMap<String, GroupObject>,
    /// CompositePodGroups accepted, unlinked.
    composite_objects: BTreeMap<String, CompositeInfo>,
    /// Budgets as read, by budget id.
    budget_reads: Vec<BudgetRead>,
    /// Allocatable of each node modelled, by name.
    node_amounts: HashMap<String, Amounts>,
    /// Per resource name, how many nodes, pods and groups' minimums name it.
    resource_uses: BTreeMap<String, usize>,
    /// Node name → the pods whose `nodeName` or `nominatedNodeName` it is,
    /// whether the node is modelled or not.
    by_node_name: HashMap<String, BTreeSet<String>>,
    /// Per node label key (a symbol), how many nodes carry it.
    label_keys: HashMap<u32, usize>,
    tally: Tally,
    /// Handles of nodes, pods, PodGroups and budgets.
    slots: [Slots; 5],
    /// Handles of CompositePodGroups (given again on every relink).
    composite_slots: SlotTable,
    /// Warnings about irregular CompositePodGroup trees, from the last link.
    tree_warnings: Vec<String>,
    /// Groups or composites changed since trees were last linked.
    trees_stale: bool,
    /// Symbols at the last compaction.
    symbols_compacted: usize,
    /// Objects were upserted or deleted since the snapshot's indexes were
    /// last brought up to date ([`Model::reindex`]).
    stale_indexes: bool,
    /// Pods accepted and new to the snapshot, with the handles they were
    /// given, in the order they came: put in together by
    /// [`Model::settle_arrivals`] before anything else changes or reads the
    /// model, so that many pods coming at once (a dry run's victims put
    /// back) move the ids of the pods after them once.
    arrivals: Vec<(String, Handle)>,
    /// How many of the snapshot's pods have required anti-affinity terms:
    /// while none has, the index of them needs no pass over the pods.
    anti_affine_pods: usize,
}

/// Whether `pod` has required anti-affinity terms
/// ([`Snapshot::anti_affine_pods`] lists it).
fn anti_affine(pod: &PodInfo) -> bool {
    !pod.required_anti_affinity.is_empty()
}

impl Model {
    /// An empty model; `read` says how its objects were read (notes,
    /// warnings; its objects are not looked at).
    pub fn new(read: &Manifests, options: &BuildOptions) -> Result<Model> {
        let snapshot = Snapshot {
            resource_names: Arc::new(["cpu", "memory", PODS].map(String::from).to_vec()),
            allocatable: vec![Vec::new(); 3].into(),
            requested: vec![Vec::new(); 3].into(),
            ..Snapshot::default()
        };
        let model = Model {
            options: options.clone(),
            read: read.without_objects(),
            snapshot,
            objects: BTreeMap::new(),
            refused: BTreeMap::new(),
            classes: BTreeMap::new(),
            priorities: PriorityClasses::default(),
            pods: HashMap::new(),
            group_objects: BTreeMap::new(),
            composite_objects: BTreeMap::new(),
            budget_reads: Vec::new(),
            node_amounts: HashMap::new(),
            resource_uses: BTreeMap::new(),
            by_node_name: HashMap::new(),
            label_keys: HashMap::new(),
            tally: Tally::default(),
            slots: Default::default(),
            composite_slots: SlotTable::default(),
            tree_warnings: Vec::new(),
            trees_stale: true,
            symbols_compacted: 0,
            stale_indexes: true,
            arrivals: Vec::new(),
            anti_affine_pods: 0,
        };
        Ok(model)
    }

    /// The model of `manifests`, read at once. Fails on the first object
    /// refused, or on one defined twice, naming file, object and field.
    pub fn build(manifests: Manifests, options: &BuildOptions) -> Result<Model> {
        Self::read_all(manifests, options, Hold::Everything)
    }

    /// The snapshot of `manifests`: what `wasched simulate` and `compare`
    /// schedule. As [`Model::build`], except that each pod's object is let
    /// go once it is read (only a change of PriorityClasses reads pods
    /// again, and classes are read first), so a dump's pods are never held
    /// both as objects and as the snapshot's pods.
    pub fn snapshot_of(manifests: Manifests, options: &BuildOptions) -> Result<Snapshot> {
        let mut model = Self::read_all(manifests, options, Hold::AllButPods)?;
        let snapshot = model.take_snapshot();
        // What is left (the nodes' and other objects, the indexes) is let
        // go on a worker thread while the caller goes on with the snapshot.
        rayon::spawn(move || drop(model));
        Ok(snapshot)
    }

    fn read_all(mut manifests: Manifests, options: &BuildOptions, hold: Hold) -> Result<Model> {
        // The objects move into the model.
        let mut objects = std::mem::take(&mut manifests.objects);
        let mut model = Model::new(&manifests, options)?;
        let mut seen: FxHashMap<(&str, &str), &ObjectRef> = FxHashMap::default();
        for (origin, _) in &objects {
            if let Some(first) = seen.insert((&origin.kind, &origin.name), origin) {
                bail!("{origin}: defined twice (first in {})", first.file);
            }
        }
        // In name order per kind, classes first: every object is added at
        // the end of its kind and read once.
        objects.sort_by(|(a, x), (b, y)| (rank(x), &a.name).cmp(&(rank(y), &b.name)));
        // Pods' objects let go once read are freed on a worker thread.
        let (read, freed) = std::sync::mpsc::channel::<SharedObject>();
        if hold == Hold::AllButPods {
            rayon::spawn(move || freed.into_iter().for_each(drop));
        }
        for object in objects {
            let pod = matches!(object.1, Object::Pod(_));
            let (kind, name) = (object.0.kind.clone(), object.0.name.clone());
            model.upsert(Arc::new(object))?;
            if pod
                && hold == Hold::AllButPods
                && let Some(names) = model.objects.get_mut(&kind)
                && let Some(object) = names.remove(&name)
            {
                // The receiver lives until the sender is dropped.
                let _ = read.send(object);
            }
        }
        drop(read);
        model.reindex_compacted();
        Ok(model)
    }

    /// Adds or replaces one object; fails when the model refuses it (the
    /// error names file, object and field), and then holds what it would
    /// hold without it.
    pub fn upsert(&mut self, object: SharedObject) -> Result<()> {
        if !matches!(object.1, Object::Pod(_)) {
            self.settle_arrivals();
        }
        self.stale_indexes = true;
        let key = (object.0.kind.clone(), object.0.name.clone());
        let previous = self
            .objects
            .entry(key.0.clone())
            .or_default()
            .insert(key.1.clone(), object.clone());
        let result = self.accept_or_refuse(key, &object, previous.as_ref());
        if matches!(object.1, Object::PriorityClass(_)) {
            self.read_again_after_classes();
        }
        result
    }

    /// Removes the object `kind` `name` (`namespace/name`, or `name` for
    /// cluster-scoped kinds); nothing if the model does not hold it.
    pub fn delete(&mut self, kind: &str, name: &str) {
        self.settle_arrivals();
        self.stale_indexes = true;
        self.refused.remove(&(kind.to_string(), name.to_string()));
        let Some(names) = self.objects.get_mut(kind) else {
            return;
        };
        let Some(object) = names.remove(name) else {
            return;
        };
        if names.is_empty() {
            self.objects.remove(kind);
        }
        self.withdraw(&object.1, name);
        if matches!(object.1, Object::PriorityClass(_)) {
            self.read_again_after_classes();
        }
    }

    /// Removes the pods `keys` (`namespace/name`; nothing for one the
    /// model does not hold), as [`Model::delete`] one by one would, but
    /// moves the ids of the pods after them once for all of them.
    pub fn delete_pods<'a>(&mut self, keys: impl IntoIterator<Item = &'a str>) {
        self.settle_arrivals();
        let mut gone = Vec::new();
        for key in keys {
            self.stale_indexes = true;
            self.refused.remove(&("Pod".to_string(), key.to_string()));
            let Some(names) = self.objects.get_mut("Pod") else {
                break;
            };
            if names.remove(key).is_none() {
                continue;
            }
            if names.is_empty() {
                self.objects.remove("Pod");
            }
            gone.extend(self.detach_pod_entry(key));
        }
        self.remove_pods(gone);
    }

    /// Makes the model hold exactly `objects` (each kind and name once):
    /// objects not given since the last call are upserted, objects no
    /// longer there deleted. Returns how many changes were applied;
    /// [`Model::refused`] says which objects were refused.
    pub fn sync<'a>(&mut self, objects: impl IntoIterator<Item = &'a SharedObject>) -> usize {
        use std::collections::HashSet;
        // Unchanged objects are the same allocations: compare pointers,
        // and names only for what changed.
        let address = |o: &SharedObject| Arc::as_ptr(o) as usize;
        let objects: Vec<&SharedObject> = objects.into_iter().collect();
        let given: HashSet<usize> = objects.iter().map(|o| address(o)).collect();
        let held: HashSet<usize> = self
            .objects
            .values()
            .flat_map(BTreeMap::values)
            .map(address)
            .collect();
        let mut changed: Vec<&SharedObject> = objects
            .into_iter()
            .filter(|o| !held.contains(&address(o)))
            .collect();
        let renewed: HashSet<(&str, &str)> = changed
            .iter()
            .map(|o| (o.0.kind.as_str(), o.0.name.as_str()))
            .collect();
        let gone: Vec<ObjectKey> = self
            .objects
            .values()
            .flat_map(BTreeMap::values)
            .filter(|o| !given.contains(&address(o)))
            .filter(|o| !renewed.contains(&(o.0.kind.as_str(), o.0.name.as_str())))
            .map(|o| (o.0.kind.clone(), o.0.name.clone()))
            .collect();
        let mut changes = gone.len();
        for (kind, name) in &gone {
            self.delete(kind, name);
        }
        // What others refer to first, each kind in name order.
        changed.sort_by(|a, b| (rank(&a.1), &a.0.name).cmp(&(rank(&b.1), &b.0.name)));
        changes += changed.len();
        for object in changed {
            // Refusals are kept in `refused`.
            let _ = self.upsert(object.clone());
        }
        changes
    }

    /// The objects refused now, with why (the error names file, object and
    /// field), by kind and name.
    pub fn refused(&self) -> impl Iterator<Item = (&ObjectRef, &str)> {
        self.refused
            .iter()
            .filter_map(|(key, why)| Some((&self.object(&key.0, &key.1)?.0, why.as_str())))
    }

    /// The object `kind` `name` as last given, accepted or refused.
    pub fn object(&self, kind: &str, name: &str) -> Option<&SharedObject> {
        self.objects.get(kind)?.get(name)
    }

    /// How much the model holds.
    pub fn size(&mut self) -> ModelSize {
        self.settle_arrivals();
        let s = &self.snapshot;
        ModelSize {
            objects: self.objects.values().map(BTreeMap::len).sum(),
            refused: self.refused.len(),
            modelled: [
                s.nodes.len(),
                s.pods.len(),
                s.groups.len(),
                s.composites.len(),
                s.budgets.len(),
            ],
            symbols: s.symbols.len(),
            taint_texts: s.taint_texts.len(),
            resources: s.resource_names.len(),
            free_slots: self.slots.iter().map(Slots::free_count).sum(),
        }
    }

    /// The model as a snapshot to run a cycle on: a copy, with the
    /// warnings and notes a build of the same objects gives.
    pub fn snapshot(&mut self) -> Snapshot {
        self.reindex();
        let mut snapshot = self.snapshot.clone();
        snapshot.warnings = Arc::new(self.warnings());
        let mut notes = self.read.notes.clone();
        notes.extend(self.read.pod_marker_notes());
        snapshot.notes = Arc::new(notes);
        snapshot.without_pods = Arc::new(self.read.without_pods.clone());
        snapshot
    }

    /// The model's own snapshot, reindexed, lent to a caller that hands it
    /// back unchanged (a replay's cycle, which rolls back what it assumed):
    /// no copy. Nothing is assumed in it. Cloning it costs reference counts
    /// (a plugin call through the C ABI works on such a copy).
    pub fn lend(&mut self) -> &mut Snapshot {
        self.reindex();
        &mut self.snapshot
    }

    /// The model as a snapshot, consumed (`wasched simulate`).
    pub fn into_snapshot(mut self) -> Snapshot {
        self.take_snapshot()
    }

    /// The snapshot, taken out of the model (which holds an empty one
    /// after).
    fn take_snapshot(&mut self) -> Snapshot {
        self.reindex();
        let warnings = self.warnings();
        let mut snapshot = std::mem::take(&mut self.snapshot);
        snapshot.warnings = Arc::new(warnings);
        let mut notes = std::mem::take(&mut self.read.notes);
        notes.extend(self.read.pod_marker_notes());
        snapshot.notes = Arc::new(notes);
        snapshot.without_pods = Arc::new(std::mem::take(&mut self.read.without_pods));
        snapshot
    }

    // -- Objects ----------------------------------------------------------

    /// Reads `object` (replacing `previous`, if the model read that) and
    /// puts what it says in the model.
    fn accept(
        &mut self,
        origin: &ObjectRef,
        object: &Object,
        previous: Option<&SharedObject>,
    ) -> Result<()> {
        match object {
            Object::Node(node) => {
                let (info, amounts) = build::read_node(origin, node)?;
                self.put_node(origin, info, amounts)
            }
            Object::Pod(pod) => {
                let key = build::key(&pod.metadata);
                // What the model read of the pod's last version: a binding,
                // a nomination or a deletion leaves its requests as they
                // were, and they are not worked out again.
                let known = match (previous.map(|p| &p.1), self.pods.get(&key)) {
                    (Some(Object::Pod(old)), Some(PodRead::Modelled(read))) => {
                        old.spec.as_ref().map(|spec| build::KnownRequests {
                            spec,
                            amounts: &read.amounts,
                            scoring: read.info.scoring_requests,
                        })
                    }
                    _ => None,
                };
                let read = build::read_pod(origin, pod, &self.priorities, &self.options, known)?;
                self.put_pod(origin, key, read)
            }
            Object::PodGroup(group) => {
                let spec = build::group_spec(origin, group, &self.priorities)?;
                let minimum = build::group_minimum(origin, group)?;
                let key = build::key(&group.metadata);
                let created = build::seconds(group.metadata.creation_timestamp.as_ref());
                self.check_resources(origin, &minimum)?;
                self.put_group_object(&key, Some((spec, created, minimum)));
                Ok(())
            }
            Object::CompositePodGroup(composite) => {
                let info = build::composite_info(origin, composite, &self.priorities)?;
                if self.composite_objects.get(&info.key) != Some(&info) {
                    if let Some(key) = &info.spec.topology_key {
                        Arc::make_mut(&mut self.snapshot.symbols).intern(key);
                    }
                    self.composite_objects.insert(info.key.clone(), info);
                    self.trees_stale = true;
                }
                Ok(())
            }
            Object::PriorityClass(class) => {
                let read = build::read_class(origin, class)?;
                self.classes.insert(origin.name.clone(), read);
                self.priorities = classes(&self.classes);
                Ok(())
            }
            Object::PodDisruptionBudget(budget) => {
                let read = build::read_budget(origin, budget)?;
                self.put_budget(read);
                Ok(())
            }
            // Workloads are the objects PodGroups point to; what the
            // scheduler needs of them is on the PodGroups. Jobs were
            // expanded before.
            Object::Workload(_) | Object::Job(_) | Object::Controller(_) => Ok(()),
        }
    }

    /// Takes out what `object` (named `name`) put in the model.
    fn withdraw(&mut self, object: &Object, name: &str) {
        match object {
            Object::Node(_) => {
                if let Ok(id) = self.node_id(name) {
                    self.remove_node(id);
                }
            }
            Object::Pod(_) => self.remove_pod_entry(name),
            Object::PodGroup(_) => self.put_group_object(name, None),
            Object::CompositePodGroup(_) => {
                if self.composite_objects.remove(name).is_some() {
                    self.trees_stale = true;
                }
            }
            Object::PriorityClass(_) => {
                if self.classes.remove(name).is_some() {
                    self.priorities = classes(&self.classes);
                }
            }
            Object::PodDisruptionBudget(_) => {
                if let Ok(id) = self.budget_id(name) {
                    self.remove_budget(id);
                }
            }
            Object::Workload(_) | Object::Job(_) | Object::Controller(_) => {}
        }
    }

    /// Reads again every object that resolves priorities (pods, PodGroups,
    /// CompositePodGroups), accepted or refused: PriorityClasses changed.
    fn read_again_after_classes(&mut self) {
        let dependent: Vec<SharedObject> = self
            .objects
            .values()
            .flat_map(BTreeMap::values)
            .filter(|o| {
                matches!(
                    o.1,
                    Object::Pod(_) | Object::PodGroup(_) | Object::CompositePodGroup(_)
                )
            })
            .cloned()
            .collect();
        for object in dependent {
            let key = (object.0.kind.clone(), object.0.name.clone());
            // Refusals are kept in `refused`.
            let _ = self.accept_or_refuse(key, &object, None);
        }
    }

    /// [`Model::accept`]s `object` (named `key`, replacing `previous`);
    /// when it is refused, takes out what an earlier version put in and
    /// records why.
    fn accept_or_refuse(
        &mut self,
        key: ObjectKey,
        object: &SharedObject,
        previous: Option<&SharedObject>,
    ) -> Result<()> {
        self.refused.remove(&key);
        let result = self.accept(&object.0, &object.1, previous);
        if let Err(e) = &result {
            self.withdraw(&object.1, &key.1);
            self.refused.insert(key, format!("{e:#}"));
        }
        result
    }

    // -- Nodes ------------------------------------------------------------

    fn node_id(&self, name: &str) -> Result<NodeId, NodeId> {
        position(&self.snapshot.nodes, |n| &n.name, name)
    }

    fn put_node(&mut self, origin: &ObjectRef, info: NodeInfo, amounts: Amounts) -> Result<()> {
        let handle = match self.node_id(&info.name) {
            Ok(id) => {
                let old = &self.snapshot.nodes[id as usize];
                let same = old.labels == info.labels
                    && old.taints == info.taints
                    && old.unschedulable == info.unschedulable
                    && old.uid == info.uid
                    && self.node_amounts.get(&info.name) == Some(&amounts);
                if same {
                    return Ok(());
                }
                let kept = (old.uid == info.uid)
                    .then(|| self.snapshot.identity.handles(Kind::Node)[id as usize]);
                self.check_resources(origin, &amounts)?;
                self.remove_node(id);
                kept
            }
            Err(_) => {
                self.check_resources(origin, &amounts)?;
                None
            }
        };
        let handle = handle.unwrap_or_else(|| self.slots[Kind::Node as usize].take());
        self.insert_node(info, amounts, handle);
        Ok(())
    }

    fn insert_node(&mut self, mut info: NodeInfo, amounts: Amounts, handle: Handle) {
        self.use_resources(&amounts);
        let id = self.node_id(&info.name).expect_err("not modelled");
        let at = id as usize;
        let s = &mut self.snapshot;
        if at < s.nodes.len() {
            shift_nodes(s, id, 1);
        }
        for (r, name) in s.resource_names.iter().enumerate() {
            s.allocatable
                .get_mut(r)
                .insert(at, amounts.get(name).copied().unwrap_or(0));
            s.requested.get_mut(r).insert(at, 0);
        }
        for column in Arc::make_mut(&mut s.scoring_requested)
            .iter_mut()
            .chain(Arc::make_mut(&mut s.nominated_requested).iter_mut())
        {
            column.insert(at, 0);
        }
        s.pods_on_node.insert(at, Vec::new());
        for column in Arc::make_mut(&mut s.label_columns).values_mut() {
            column.insert(at, None);
        }
        let texts = Arc::make_mut(&mut s.taint_texts);
        info.taint_texts = info
            .taints
            .iter()
            .map(|t| texts.intern(&taint_text(t)))
            .collect();
        let symbols = Arc::make_mut(&mut s.symbols);
        symbols.intern(&info.name);
        let nodes = s.nodes.len() + 1;
        let columns = Arc::make_mut(&mut s.label_columns);
        for (k, v) in info.labels.iter() {
            let (key, value) = (symbols.intern(k), symbols.intern(v));
            columns.entry(key).or_insert_with(|| vec![None; nodes])[at] = Some(value);
            *self.label_keys.entry(key).or_default() += 1;
        }
        let name = info.name.clone();
        s.nodes.insert(at, info);
        Arc::make_mut(&mut s.identity).insert(Kind::Node, id, handle);
        self.node_amounts.insert(name.clone(), amounts);
        // The pods bound or nominated to it by name.
        let waiting: Vec<String> = self
            .by_node_name
            .get(&name)
            .map(|keys| keys.iter().cloned().collect())
            .unwrap_or_default();
        for key in waiting {
            let Some(PodRead::Modelled(read)) = self.pods.get(&key) else {
                continue;
            };
            let pod = self.pod_id(&key).expect("a modelled pod");
            let terminating = read.info.terminating;
            let bound = read.node_name.as_deref() == Some(name.as_str());
            if read.nominated_name.as_deref() == Some(name.as_str()) {
                self.snapshot.pods.get_mut(pod as usize).nominated_node = Some(id);
            }
            if bound && !terminating {
                self.unknown_node(&name, -1);
            }
            if bound && (!terminating || self.options.live) {
                self.snapshot.place(pod, id);
                self.refresh_budgets_of(pod);
            }
        }
    }

    fn remove_node(&mut self, id: NodeId) {
        let at = id as usize;
        let name = self.snapshot.nodes[at].name.clone();
        for pod in (*self.snapshot.pods_on_node[at]).clone() {
            self.snapshot.unplace(pod);
            self.refresh_budgets_of(pod);
        }
        let waiting: Vec<String> = self
            .by_node_name
            .get(&name)
            .map(|keys| keys.iter().cloned().collect())
            .unwrap_or_default();
        for key in waiting {
            let Some(PodRead::Modelled(read)) = self.pods.get(&key) else {
                continue;
            };
            let bound = read.node_name.as_deref() == Some(name.as_str());
            let terminating = read.info.terminating;
            let pod = self.pod_id(&key).expect("a modelled pod");
            if self.snapshot.pods[pod as usize].nominated_node == Some(id) {
                self.snapshot.pods.get_mut(pod as usize).nominated_node = None;
            }
            if bound && !terminating {
                self.unknown_node(&name, 1);
            }
        }
        let s = &mut self.snapshot;
        let labels = s.nodes[at].labels.clone();
        for column in Arc::make_mut(&mut s.label_columns).values_mut() {
            column.remove(at);
        }
        for k in labels.keys() {
            let key = s.symbols.lookup(k).expect("interned when the node came");
            let count = self.label_keys.get_mut(&key).expect("counted");
            *count -= 1;
            if *count == 0 {
                self.label_keys.remove(&key);
                Arc::make_mut(&mut s.label_columns).remove(&key);
            }
        }
        for r in 0..s.resource_names.len() {
            s.allocatable.get_mut(r).remove(at);
            s.requested.get_mut(r).remove(at);
        }
        for column in Arc::make_mut(&mut s.scoring_requested)
            .iter_mut()
            .chain(Arc::make_mut(&mut s.nominated_requested).iter_mut())
        {
            column.remove(at);
        }
        s.pods_on_node.remove(at);
        s.nodes.remove(at);
        let handle = Arc::make_mut(&mut s.identity).remove(Kind::Node, id);
        self.slots[Kind::Node as usize].free(handle);
        if at < s.nodes.len() {
            shift_nodes(s, id + 1, -1);
        }
        if let Some(amounts) = self.node_amounts.remove(&name) {
            self.release_resources(&amounts);
        }
    }

    fn unknown_node(&mut self, name: &str, by: isize) {
        let count = self
            .tally
            .unknown_nodes
            .entry(name.to_string())
            .or_default();
        *count = count.saturating_add_signed(by);
        if *count == 0 {
            self.tally.unknown_nodes.remove(name);
        }
    }

    // -- Pods -------------------------------------------------------------

    fn pod_id(&self, key: &str) -> Result<PodId, PodId> {
        position(&self.snapshot.pods, |p| &p.key, key)
    }

    fn put_pod(&mut self, origin: &ObjectRef, key: String, read: PodRead) -> Result<()> {
        if self.pods.get(&key) == Some(&read) {
            return Ok(());
        }
        if let PodRead::Modelled(new) = &read {
            self.check_resources(origin, &new.amounts)?;
        }
        let arriving = matches!(read, PodRead::Modelled(_))
            && !matches!(self.pods.get(&key), Some(PodRead::Modelled(_)));
        if !arriving {
            self.settle_arrivals();
        }
        let old = self.pods.remove(&key);
        self.tally_pod(old.as_ref(), -1);
        self.tally_pod(Some(&read), 1);
        match (old, read) {
            (Some(PodRead::Modelled(old)), PodRead::Modelled(new)) => {
                let id = self.pod_id(&key).expect("modelled");
                self.detach_pod(id, &old);
                if old.info.uid != new.info.uid {
                    let slots = &mut self.slots[Kind::Pod as usize];
                    let s = &mut self.snapshot;
                    let gone = Arc::make_mut(&mut s.identity).remove(Kind::Pod, id);
                    slots.free(gone);
                    Arc::make_mut(&mut s.identity).insert(Kind::Pod, id, slots.take());
                } else {
                    Arc::make_mut(&mut self.snapshot.identity).changed(Kind::Pod, id);
                }
                self.use_resources(&new.amounts);
                self.release_resources(&old.amounts);
                let info = self.pod_info(&new);
                self.anti_affine_pods += usize::from(anti_affine(&info));
                self.anti_affine_pods -= usize::from(anti_affine(&self.snapshot.pods[id as usize]));
                self.snapshot.pods.vec_mut()[id as usize] = Arc::new(info);
                self.attach_pod(id, &new);
                self.pods.insert(key, PodRead::Modelled(new));
            }
            (Some(PodRead::Modelled(old)), read) => {
                let id = self.pod_id(&key).expect("modelled");
                self.detach_pod(id, &old);
                self.remove_pod(id);
                self.release_resources(&old.amounts);
                self.pods.insert(key, read);
            }
            (_, PodRead::Modelled(new)) => {
                self.use_resources(&new.amounts);
                let handle = self.slots[Kind::Pod as usize].take();
                self.arrivals.push((key.clone(), handle));
                self.pods.insert(key, PodRead::Modelled(new));
            }
            (_, read) => {
                self.pods.insert(key, read);
            }
        }
        Ok(())
    }

    fn remove_pod_entry(&mut self, key: &str) {
        if let Some(id) = self.detach_pod_entry(key) {
            self.remove_pod(id);
        }
    }

    /// Forgets pod `key` and detaches it from its node, group and budgets;
    /// its id when the snapshot holds it, to be taken out by
    /// [`Model::remove_pod`] or [`Model::remove_pods`].
    fn detach_pod_entry(&mut self, key: &str) -> Option<PodId> {
        // An arrival is detached from its place (a refused next version).
        self.settle_arrivals();
        let old = self.pods.remove(key)?;
        self.tally_pod(Some(&old), -1);
        let PodRead::Modelled(old) = old else {
            return None;
        };
        let id = self.pod_id(key).expect("modelled");
        self.detach_pod(id, &old);
        self.release_resources(&old.amounts);
        Some(id)
    }

    fn tally_pod(&mut self, read: Option<&PodRead>, by: isize) {
        let tally = &mut self.tally;
        match read {
            None | Some(PodRead::Foreign) => {}
            Some(PodRead::Terminal) => tally.ignored = tally.ignored.saturating_add_signed(by),
            Some(PodRead::Gated) => tally.gated = tally.gated.saturating_add_signed(by),
            Some(PodRead::Modelled(pod)) => {
                if pod.ignored {
                    tally.ignored = tally.ignored.saturating_add_signed(by);
                }
                if let Some(needs) = &pod.unmodelled {
                    if by > 0 {
                        tally.unmodelled.insert(pod.info.key.clone(), needs.clone());
                    } else {
                        tally.unmodelled.remove(&pod.info.key);
                    }
                }
            }
        }
    }

    /// Puts the pods accepted since the last call in the snapshot, each
    /// in its place by key, and attaches them in the order they came:
    /// what inserting and attaching them one by one gives, with the ids
    /// of the pods after them moved once.
    fn settle_arrivals(&mut self) {
        if self.arrivals.is_empty() {
            return;
        }
        let mut arrivals = std::mem::take(&mut self.arrivals);
        let came: Vec<String> = arrivals.iter().map(|(key, _)| key.clone()).collect();
        arrivals.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        // Where each goes: its place among the pods held, moved up by
        // the arrivals before it.
        let ids: Vec<PodId> = arrivals
            .iter()
            .enumerate()
            .map(|(i, (key, _))| self.pod_id(key).expect_err("arriving") + i as PodId)
            .collect();
        let infos: Vec<PodInfo> = arrivals
            .iter()
            .map(|(key, _)| match &self.pods[key] {
                PodRead::Modelled(read) => self.pod_info(read),
                _ => unreachable!("an arrival is modelled"),
            })
            .collect();
        self.anti_affine_pods += infos.iter().filter(|i| anti_affine(i)).count();
        let s = &mut self.snapshot;
        if let Some(&first) = ids.first()
            && (first as usize) < s.pods.len()
        {
            // An old id moves up by the arrivals placed before it.
            let before: Vec<PodId> = ids
                .iter()
                .enumerate()
                .map(|(i, &id)| id - i as PodId)
                .collect();
            renumber_pods(s, first, |id| {
                id + before.partition_point(|&b| b <= id) as PodId
            });
        }
        insert_at(s.pods.vec_mut(), &ids, infos.into_iter().map(Arc::new));
        insert_at(
            s.pod_budgets.vec_mut(),
            &ids,
            ids.iter().map(|_| Vec::new()),
        );
        let identity = Arc::make_mut(&mut s.identity);
        for (&id, (_, handle)) in ids.iter().zip(&arrivals) {
            identity.insert(Kind::Pod, id, *handle);
        }
        for key in came {
            let id = self.pod_id(&key).expect("arrived");
            let PodRead::Modelled(read) = self.pods.remove(&key).expect("arrived") else {
                unreachable!("an arrival is modelled");
            };
            self.attach_pod(id, &read);
            self.pods.insert(key, PodRead::Modelled(read));
        }
    }

    /// Takes the pod at `id` out (later pods move down by one); it was
    /// detached.
    fn remove_pod(&mut self, id: PodId) {
        let s = &mut self.snapshot;
        self.anti_affine_pods -= usize::from(anti_affine(&s.pods[id as usize]));
        s.pods.remove(id as usize);
        s.pod_budgets.remove(id as usize);
        let handle = Arc::make_mut(&mut s.identity).remove(Kind::Pod, id);
        self.slots[Kind::Pod as usize].free(handle);
        if (id as usize) < s.pods.len() {
            shift_pods(s, id + 1, -1);
        }
    }

    /// Takes the pods at `ids` out (each detached), moving the ids of the
    /// pods after them once.
    fn remove_pods(&mut self, mut ids: Vec<PodId>) {
        ids.sort_unstable();
        ids.dedup();
        if let [id] = ids[..] {
            return self.remove_pod(id);
        }
        let Some(&first) = ids.first() else {
            return;
        };
        let s = &mut self.snapshot;
        for &id in ids.iter().rev() {
            self.anti_affine_pods -= usize::from(anti_affine(&s.pods[id as usize]));
            let handle = Arc::make_mut(&mut s.identity).remove(Kind::Pod, id);
            self.slots[Kind::Pod as usize].free(handle);
        }
        retain_except(s.pods.vec_mut(), &ids);
        retain_except(s.pod_budgets.vec_mut(), &ids);
        renumber_pods(s, first + 1, |id| {
            id - ids.partition_point(|&gone| gone < id) as PodId
        });
    }

    /// The pod as the snapshot holds it before it is placed: its requests
    /// in the current resource columns.
    fn pod_info(&self, read: &ModelledPod) -> PodInfo {
        let mut info = read.info.clone();
        info.requests = self
            .snapshot
            .resource_names
            .iter()
            .map(|r| read.amounts.get(r).copied().unwrap_or(0))
            .collect();
        info
    }

    /// Puts the pod at `id` (its [`Model::pod_info`] there) in its place:
    /// its node, its PodGroup, the budgets that match it.
    fn attach_pod(&mut self, id: PodId, read: &ModelledPod) {
        let s = &mut self.snapshot;
        let info = &s.pods[id as usize];
        Arc::make_mut(&mut s.symbols).intern(&info.namespace);
        for (k, v) in info.labels.iter() {
            Arc::make_mut(&mut s.symbols).intern(k);
            Arc::make_mut(&mut s.symbols).intern(v);
        }
        let key = read.info.key.clone();
        for name in [&read.node_name, &read.nominated_name]
            .into_iter()
            .flatten()
        {
            self.by_node_name
                .entry(name.clone())
                .or_default()
                .insert(key.clone());
        }
        if let Some(group) = &read.group {
            let g = self.ensure_group(group);
            self.add_member(g, id);
        }
        let terminating = read.info.terminating;
        if let Some(name) = &read.node_name {
            match self.node_id(name) {
                Ok(node) if !terminating || self.options.live => {
                    self.snapshot.place(id, node);
                }
                Ok(_) => {}
                Err(_) if !terminating => self.unknown_node(name, 1),
                Err(_) => {}
            }
        }
        if let Some(name) = &read.nominated_name {
            let node = self.node_id(name).ok();
            self.snapshot.pods.get_mut(id as usize).nominated_node = node;
        }
        let matching: Vec<u32> = (0..self.budget_reads.len() as u32)
            .filter(|&b| self.budget_reads[b as usize].matches(&self.snapshot.pods[id as usize]))
            .collect();
        for &b in &matching {
            let pods = &mut self.snapshot.budgets.get_mut(b as usize).pods;
            let at = pods.partition_point(|&p| p < id);
            pods.insert(at, id);
        }
        *self.snapshot.pod_budgets.get_mut(id as usize) = matching;
        self.refresh_budgets_of(id);
    }

    /// Takes the pod at `id` out of its place (the reverse of
    /// [`Model::attach_pod`]).
    fn detach_pod(&mut self, id: PodId, read: &ModelledPod) {
        if self.snapshot.pods[id as usize].node.is_some() {
            self.snapshot.unplace(id);
        } else if let Some(name) = &read.node_name
            && !read.info.terminating
            && self.node_id(name).is_err()
        {
            self.unknown_node(name, -1);
        }
        for name in [&read.node_name, &read.nominated_name]
            .into_iter()
            .flatten()
        {
            if let Some(keys) = self.by_node_name.get_mut(name) {
                keys.remove(&read.info.key);
                if keys.is_empty() {
                    self.by_node_name.remove(name);
                }
            }
        }
        if let Some(g) = self.snapshot.pods.get_mut(id as usize).group.take() {
            let members = &mut self.snapshot.groups.get_mut(g as usize).members;
            members.retain(|&m| m != id);
            self.refresh_group(g);
            self.drop_group_if_empty(g);
        }
        let budgets = std::mem::take(self.snapshot.pod_budgets.get_mut(id as usize));
        for b in budgets {
            self.snapshot
                .budgets
                .get_mut(b as usize)
                .pods
                .retain(|&p| p != id);
            self.refresh_budget(b);
        }
    }

    // -- PodGroups --------------------------------------------------------

    fn group_id(&self, key: &str) -> Result<GroupId, GroupId> {
        position(&self.snapshot.groups, |g| &g.key, key)
    }

    /// The group `key`, added (a PodGroup only pods name, or one whose
    /// object came) if it is not modelled.
    fn ensure_group(&mut self, key: &str) -> GroupId {
        let id = match self.group_id(key) {
            Ok(id) => return id,
            Err(id) => id,
        };
        let s = &mut self.snapshot;
        if (id as usize) < s.groups.len() {
            s.pods.update_where(
                |pod| pod.group.is_some_and(|g| g >= id),
                |pod| {
                    if let Some(g) = pod.group.as_mut() {
                        *g += 1;
                    }
                },
            );
        }
        let (spec, created, min_resources) = match self.group_objects.get(key) {
            Some((spec, created, minimum)) => (
                Some(spec.clone()),
                *created,
                columns(&s.resource_names, minimum),
            ),
            None => (None, 0, Vec::new()),
        };
        s.groups.insert(
            id as usize,
            GroupInfo {
                key: key.to_string(),
                spec,
                members: Vec::new(),
                created,
                min_resources,
                parent: None,
                invalid: None,
            },
        );
        let handle = self.slots[Kind::PodGroup as usize].take();
        Arc::make_mut(&mut s.identity).insert(Kind::PodGroup, id, handle);
        self.trees_stale = true;
        id
    }

    fn drop_group_if_empty(&mut self, g: GroupId) {
        let s = &mut self.snapshot;
        let group = &s.groups[g as usize];
        if group.spec.is_some() || !group.members.is_empty() {
            return;
        }
        s.groups.remove(g as usize);
        let handle = Arc::make_mut(&mut s.identity).remove(Kind::PodGroup, g);
        self.slots[Kind::PodGroup as usize].free(handle);
        s.pods.update_where(
            |pod| pod.group.is_some_and(|other| other > g),
            |pod| {
                if let Some(other) = pod.group.as_mut() {
                    *other -= 1;
                }
            },
        );
        self.trees_stale = true;
    }

    /// Adds pod `id` to group `g`'s members (by creation time, then key).
    fn add_member(&mut self, g: GroupId, id: PodId) {
        let s = &mut self.snapshot;
        let pods = &s.pods;
        let at = {
            let me = &pods[id as usize];
            s.groups[g as usize].members.partition_point(|&m| {
                let other = &pods[m as usize];
                (other.created, &other.key) < (me.created, &me.key)
            })
        };
        let group = s.groups.get_mut(g as usize);
        group.members.insert(at, id);
        let pod = s.pods.get_mut(id as usize);
        pod.group = Some(g);
        match &group.spec {
            Some(spec) => {
                pod.priority = spec.priority;
                pod.never_preempt = spec.never_preempt;
            }
            // A PodGroup only pods name is as old as its oldest member.
            None if group.members.len() == 1 => group.created = pod.created,
            None => group.created = group.created.min(pod.created),
        }
    }

    /// Group `g`'s creation time and its members' priorities, from its spec
    /// (or, for a PodGroup only pods name, its oldest member and their own).
    fn refresh_group(&mut self, g: GroupId) {
        let s = &mut self.snapshot;
        let group = &s.groups[g as usize];
        match &group.spec {
            Some(spec) => {
                let (priority, never) = (spec.priority, spec.never_preempt);
                for &m in &group.members {
                    let pod = s.pods.get_mut(m as usize);
                    pod.priority = priority;
                    pod.never_preempt = never;
                }
            }
            None => {
                let created = group
                    .members
                    .iter()
                    .map(|&m| s.pods[m as usize].created)
                    .min()
                    .unwrap_or(0);
                for &m in &group.members {
                    let pod = s.pods.get_mut(m as usize);
                    if let Some(PodRead::Modelled(read)) = self.pods.get(&pod.key) {
                        pod.priority = read.info.priority;
                        pod.never_preempt = read.info.never_preempt;
                    }
                }
                s.groups.get_mut(g as usize).created = created;
            }
        }
    }

    /// A PodGroup object came, changed (`Some`) or went (`None`).
    fn put_group_object(&mut self, key: &str, object: Option<GroupObject>) {
        if self.group_objects.get(key) == object.as_ref() {
            return;
        }
        match object {
            Some((spec, created, minimum)) => {
                if let Some(topology) = &spec.topology_key {
                    Arc::make_mut(&mut self.snapshot.symbols).intern(topology);
                }
                self.use_resources(&minimum);
                let before = self
                    .group_objects
                    .insert(key.to_string(), (spec.clone(), created, minimum.clone()));
                let g = self.ensure_group(key);
                let min_resources = columns(&self.snapshot.resource_names, &minimum);
                let group = self.snapshot.groups.get_mut(g as usize);
                group.spec = Some(spec);
                group.created = created;
                group.min_resources = min_resources;
                if let Some((_, _, before)) = before {
                    self.release_resources(&before);
                }
                self.refresh_group(g);
                Arc::make_mut(&mut self.snapshot.identity).changed(Kind::PodGroup, g);
            }
            None => {
                if let Some((_, _, before)) = self.group_objects.remove(key) {
                    self.release_resources(&before);
                }
                if let Ok(g) = self.group_id(key) {
                    let group = self.snapshot.groups.get_mut(g as usize);
                    group.min_resources = Vec::new();
                    group.spec = None;
                    self.refresh_group(g);
                    Arc::make_mut(&mut self.snapshot.identity).changed(Kind::PodGroup, g);
                    self.drop_group_if_empty(g);
                }
            }
        }
        self.trees_stale = true;
    }

    // -- Budgets ----------------------------------------------------------

    fn budget_id(&self, key: &str) -> Result<u32, u32> {
        position(&self.snapshot.budgets, |b| &b.key, key)
    }

    fn put_budget(&mut self, read: BudgetRead) {
        let handle = match self.budget_id(&read.key) {
            Ok(id) if self.budget_reads[id as usize] == read => return,
            Ok(id) => {
                let handle = self.snapshot.identity.handles(Kind::Budget)[id as usize];
                self.remove_budget_keeping(id);
                handle
            }
            Err(_) => self.slots[Kind::Budget as usize].take(),
        };
        let id = self.budget_id(&read.key).expect_err("removed above");
        let s = &mut self.snapshot;
        if (id as usize) < s.budgets.len() {
            for budgets in &mut s.pod_budgets {
                for b in budgets.iter_mut().filter(|b| **b >= id) {
                    *b += 1;
                }
            }
        }
        let pods: Vec<PodId> = (0..s.pods.len() as PodId)
            .filter(|&p| read.matches(&s.pods[p as usize]))
            .collect();
        for &p in &pods {
            let budgets = s.pod_budgets.get_mut(p as usize);
            let at = budgets.partition_point(|&b| b < id);
            budgets.insert(at, id);
        }
        s.budgets.insert(
            id as usize,
            DisruptionBudget {
                key: read.key.clone(),
                pods,
                disruptions_allowed: 0,
            },
        );
        self.budget_reads.insert(id as usize, read);
        Arc::make_mut(&mut s.identity).insert(Kind::Budget, id, handle);
        self.refresh_budget(id);
    }

    fn remove_budget(&mut self, id: u32) {
        let handle = self.remove_budget_keeping(id);
        self.slots[Kind::Budget as usize].free(handle);
    }

    /// Takes budget `id` out; returns its handle.
    fn remove_budget_keeping(&mut self, id: u32) -> Handle {
        let s = &mut self.snapshot;
        let budget = s.budgets.vec_mut().remove(id as usize);
        self.budget_reads.remove(id as usize);
        for &p in &budget.pods {
            s.pod_budgets.get_mut(p as usize).retain(|&b| b != id);
        }
        for budgets in &mut s.pod_budgets {
            for b in budgets.iter_mut().filter(|b| **b > id) {
                *b -= 1;
            }
        }
        Arc::make_mut(&mut s.identity).remove(Kind::Budget, id)
    }

    fn refresh_budget(&mut self, b: u32) {
        let allowed = self.budget_reads[b as usize].allowed(&self.snapshot, b);
        self.snapshot
            .budgets
            .get_mut(b as usize)
            .disruptions_allowed = allowed;
    }

    /// The budgets matching `pod`, whose healthy count its place changed.
    fn refresh_budgets_of(&mut self, pod: PodId) {
        for b in self.snapshot.pod_budgets[pod as usize].clone() {
            self.refresh_budget(b);
        }
    }

    // -- Resources --------------------------------------------------------

    /// Fails if `amounts` would take the snapshot past [`MAX_RESOURCES`].
    fn check_resources(&self, origin: &ObjectRef, amounts: &Amounts) -> Result<()> {
        let new = amounts
            .keys()
            .filter(|name| !self.snapshot.resource_names.contains(name))
            .count();
        let total = self.snapshot.resource_names.len() + new;
        if total > MAX_RESOURCES {
            bail!(
                "{origin}: it would make the snapshot name {total} distinct resources; wasched handles at most {MAX_RESOURCES}"
            );
        }
        Ok(())
    }

    /// Counts the resources `amounts` names; a new name gets its column
    /// ([`Model::check_resources`] said there is room).
    fn use_resources(&mut self, amounts: &Amounts) {
        for name in amounts.keys() {
            let uses = self.resource_uses.entry(name.clone()).or_default();
            *uses += 1;
            if self.snapshot.resource_names.contains(name) {
                continue;
            }
            let s = &mut self.snapshot;
            let at = 3 + s.resource_names[3..].partition_point(|r| r < name);
            Arc::make_mut(&mut s.resource_names).insert(at, name.clone());
            s.allocatable.insert(at, vec![0; s.nodes.len()]);
            s.requested.insert(at, vec![0; s.nodes.len()]);
            for pod in &mut s.pods {
                if !pod.requests.is_empty() {
                    pod.requests.insert(at, 0);
                }
            }
            for group in &mut s.groups {
                for (column, _) in group.min_resources.iter_mut().filter(|(c, _)| *c >= at) {
                    *column += 1;
                }
            }
        }
    }

    /// Uncounts the resources `amounts` names; a name no object names any
    /// more loses its column (cpu, memory and pods are always there).
    fn release_resources(&mut self, amounts: &Amounts) {
        for name in amounts.keys() {
            let Some(uses) = self.resource_uses.get_mut(name) else {
                continue;
            };
            *uses -= 1;
            if *uses > 0 {
                continue;
            }
            self.resource_uses.remove(name);
            let s = &mut self.snapshot;
            let Some(at) = s.resource_names.iter().position(|r| r == name) else {
                continue;
            };
            if at < 3 {
                continue;
            }
            Arc::make_mut(&mut s.resource_names).remove(at);
            s.allocatable.remove(at);
            s.requested.remove(at);
            for pod in &mut s.pods {
                if pod.requests.len() > at {
                    pod.requests.remove(at);
                }
            }
            for group in &mut s.groups {
                group.min_resources.retain(|(c, _)| *c != at);
                for (column, _) in group.min_resources.iter_mut().filter(|(c, _)| *c > at) {
                    *column -= 1;
                }
            }
        }
    }

    // -- Indexes ---------------------------------------------------------

    /// Links and validates the CompositePodGroup trees if groups changed,
    /// compacts the symbols if they doubled, and indexes handles.
    fn reindex(&mut self) {
        self.reindex_with(false)
    }

    /// As [`Model::reindex`], with names and labels interned again in the
    /// order a build interns them, whatever their number.
    fn reindex_compacted(&mut self) {
        self.stale_indexes = true;
        self.reindex_with(true)
    }

    fn reindex_with(&mut self, compact: bool) {
        self.settle_arrivals();
        // Between changes the indexes stand: a lent snapshot comes back as
        // it went (callers roll back what they assume).
        if !self.stale_indexes {
            return;
        }
        self.stale_indexes = false;
        if self.trees_stale {
            let composites: Vec<CompositeInfo> = self.composite_objects.values().cloned().collect();
            let keys: Vec<String> = composites.iter().map(|c| c.key.clone()).collect();
            self.tree_warnings = self.snapshot.link_trees(composites);
            let handles = self.composite_slots.assign(&keys);
            Arc::make_mut(&mut self.snapshot.identity).set_handles(Kind::Composite, handles);
            self.trees_stale = false;
        }
        if compact || self.snapshot.symbols.len() > 2 * self.symbols_compacted.max(512) {
            self.compact();
        }
        debug_assert_eq!(
            self.anti_affine_pods,
            self.snapshot.pods.iter().filter(|p| anti_affine(p)).count(),
            "the count of pods with anti-affinity follows the pods"
        );
        if self.anti_affine_pods > 0 || !self.snapshot.anti_affine_pods().is_empty() {
            self.snapshot.index_anti_affinity();
        }
    }

    /// Interns names and labels again, only those still referenced, in
    /// the order a build interns them.
    fn compact(&mut self) {
        let s = &mut self.snapshot;
        s.symbols = Default::default();
        s.taint_texts = Default::default();
        Arc::make_mut(&mut s.label_columns).clear();
        for node in &mut s.nodes {
            node.taint_texts = node
                .taints
                .iter()
                .map(|t| Arc::make_mut(&mut s.taint_texts).intern(&taint_text(t)))
                .collect();
        }
        s.index_symbols();
        for composite in self.composite_objects.values() {
            if let Some(key) = &composite.spec.topology_key {
                Arc::make_mut(&mut s.symbols).intern(key);
            }
        }
        self.label_keys = s
            .label_columns
            .iter()
            .map(|(&key, column)| (key, column.iter().flatten().count()))
            .collect();
        self.symbols_compacted = s.symbols.len();
        Arc::make_mut(&mut s.identity).reinterned();
    }

    /// The warnings a build of the same objects gives, in its order.
    fn warnings(&self) -> Vec<String> {
        let tally = &self.tally;
        let mut warnings: Vec<String> = self.read.skipped_warning().into_iter().collect();
        warnings.extend(self.read.warnings.iter().cloned());
        if tally.ignored > 0 {
            warnings.push(format!(
                "ignored {} terminal or terminating pod(s): they hold no resources",
                tally.ignored
            ));
        }
        if !tally.unmodelled.is_empty() {
            let shown: Vec<&str> = tally
                .unmodelled
                .values()
                .take(3)
                .map(String::as_str)
                .collect();
            let more = tally.unmodelled.len().saturating_sub(shown.len());
            warnings.push(format!(
                "{} pending pod(s) ask for what wasched does not model, which is not checked for them: {}{}",
                tally.unmodelled.len(),
                shown.join(", "),
                if more > 0 { format!(" and {more} more") } else { String::new() }
            ));
        }
        if tally.gated > 0 {
            warnings.push(format!(
                "{} pending pod(s) held by scheduling gates are not scheduled until their gates are removed",
                tally.gated
            ));
        }
        if !tally.unknown_nodes.is_empty() {
            let names: Vec<&str> = tally.unknown_nodes.keys().map(String::as_str).collect();
            warnings.push(format!(
                "pods are bound to node(s) not in the snapshot, their resources are not counted: {}",
                names.join(", ")
            ));
        }
        warnings.extend(self.tree_warnings.iter().cloned());
        warnings
    }
}

/// What the model holds of a PodGroup object: its spec, creation time and
/// minimum free resources.
type GroupObject = (GroupSpec, i64, Amounts);

/// `amounts` as (resource column, amount) over `names`, zeros left out.
fn columns(names: &[String], amounts: &Amounts) -> Vec<(usize, u64)> {
    names
        .iter()
        .enumerate()
        .filter_map(|(r, name)| Some((r, *amounts.get(name)?)))
        .filter(|&(_, v)| v > 0)
        .collect()
}

/// The id of the object named `name` in `items` (sorted by name), or the
/// id it would take.
fn position<T>(items: &[T], name_of: impl Fn(&T) -> &String, name: &str) -> Result<u32, u32> {
    items
        .binary_search_by(|item| name_of(item).as_str().cmp(name))
        .map(|i| i as u32)
        .map_err(|i| i as u32)
}

/// Which objects [`Model::read_all`] keeps once read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// Every object, for changes to come ([`Model::build`]).
    Everything,
    /// All but pods, for a snapshot taken at once ([`Model::snapshot_of`]).
    AllButPods,
}

/// The order [`Model::build`] and [`Model::sync`] add kinds in: what others
/// refer to first.
fn rank(object: &Object) -> u8 {
    match object {
        Object::PriorityClass(_) => 0,
        Object::Node(_) => 1,
        Object::Workload(_) | Object::Job(_) | Object::Controller(_) => 2,
        Object::PodGroup(_) => 3,
        Object::CompositePodGroup(_) => 4,
        Object::Pod(_) => 5,
        Object::PodDisruptionBudget(_) => 6,
    }
}

/// The PriorityClasses table of the classes accepted, in name order.
fn classes(reads: &BTreeMap<String, ClassRead>) -> PriorityClasses {
    let mut classes = PriorityClasses::default();
    for read in reads.values() {
        classes.add(read);
    }
    classes
}

/// Moves every node id at or above `from` by `by` (±1).
fn shift_nodes(s: &mut Snapshot, from: NodeId, by: i32) {
    let shift = |id: &mut NodeId| {
        if *id >= from {
            *id = id.wrapping_add_signed(by);
        }
    };
    let moves = |id: Option<NodeId>| id.is_some_and(|id| id >= from);
    s.pods.update_where(
        |pod| moves(pod.node) || moves(pod.nominated_node),
        |pod| {
            for id in pod.node.iter_mut().chain(pod.nominated_node.iter_mut()) {
                shift(id);
            }
        },
    );
}

/// Moves every pod id at or above `from` by `by` (±1).
/// Drops the items at the positions `gone` (ascending).
fn retain_except<T>(items: &mut Vec<T>, gone: &[PodId]) {
    let mut at = 0;
    let mut next = 0;
    items.retain(|_| {
        let keep = gone.get(next) != Some(&at);
        next += usize::from(!keep);
        at += 1;
        keep
    });
}

/// Puts `new` at the positions `ids` (ascending; each an item's place in
/// the result), the items there and after moving up.
fn insert_at<T>(items: &mut Vec<T>, ids: &[PodId], new: impl IntoIterator<Item = T>) {
    let mut old = std::mem::take(items).into_iter();
    let mut merged = Vec::with_capacity(old.len() + ids.len());
    for (&id, item) in ids.iter().zip(new) {
        merged.extend(old.by_ref().take(id as usize - merged.len()));
        merged.push(item);
    }
    merged.extend(old);
    *items = merged;
}

fn shift_pods(s: &mut Snapshot, from: PodId, by: i32) {
    renumber_pods(s, from, |id| id.wrapping_add_signed(by));
}

/// Gives every pod id from `from` on that the snapshot's nodes, groups and
/// budgets hold its new id, `to(id)`.
fn renumber_pods(s: &mut Snapshot, from: PodId, to: impl Fn(PodId) -> PodId) {
    let renumber = |id: &mut PodId| {
        if *id >= from {
            *id = to(*id);
        }
    };
    let moves = |ids: &[PodId]| ids.iter().any(|&id| id >= from);
    s.pods_on_node
        .update_where(|ids| moves(ids), |ids| ids.iter_mut().for_each(renumber));
    s.groups.update_where(
        |g| moves(&g.members),
        |g| g.members.iter_mut().for_each(renumber),
    );
    s.budgets
        .update_where(|b| moves(&b.pods), |b| b.pods.iter_mut().for_each(renumber));
}
