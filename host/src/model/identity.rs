//! Identity and lifecycle (contract 0.3.0): the [`Handle`] of every object,
//! the host's change clock, and the per-node change values a plugin keys its
//! caches by.
//!
//! - Ids ([`NodeId`], [`PodId`], ...) are positions in one snapshot; a
//!   [`Handle`] names an object for as long as it lives, across rebuilt
//!   snapshots, when the snapshots are stamped by one [`Registry`].
//! - One clock per process ([`tick`]): every change takes the next value,
//!   so equal values mean equal states, even across snapshots and clones.
//!   A snapshot built on its own ([`Identity::fresh`]) gets fresh handles
//!   and fresh change values: nothing a plugin cached elsewhere matches it.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::{NodeId, SharedVec, Snapshot};

/// A free slot in [`Identity`]'s slot → id maps.
const NO_ID: u32 = u32::MAX;

/// The host's change clock (process-wide, like kube-scheduler's
/// `NodeInfo` generation counter).
static CLOCK: AtomicU64 = AtomicU64::new(0);

/// The next value of the change clock.
pub fn tick() -> u64 {
    CLOCK.fetch_add(1, Ordering::Relaxed) + 1
}

/// `count` consecutive clock values; returns the first.
fn ticks(count: usize) -> u64 {
    CLOCK.fetch_add(count as u64, Ordering::Relaxed) + 1
}

/// A stable reference to one object: `slot` is kept while it lives,
/// `generation` is new whenever the slot is given to another object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Handle {
    /// The object's slot.
    pub slot: u32,
    /// Which object held the slot; never reused in a process.
    pub generation: u64,
}

/// The change values a change replaced: a rollback puts them back, since
/// it restores the view they described.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Before {
    node: u64,
    generation: u64,
}

/// The kinds of object a handle can name, in [`Identity::handles`] order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Nodes.
    Node = 0,
    /// Pods.
    Pod = 1,
    /// PodGroups.
    PodGroup = 2,
    /// CompositePodGroups.
    Composite = 3,
    /// PodDisruptionBudgets.
    Budget = 4,
}

/// Why an id or handle is not answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupError {
    /// Outside the snapshot.
    Unknown,
    /// The handle's object is gone.
    Stale,
}

/// The handles and change values of one snapshot.
#[derive(Debug, Clone, Default)]
pub struct Identity {
    /// Per [`Kind`], the handle of every object, indexed by its id.
    handles: [SharedVec<Handle>; 5],
    /// Per [`Kind`], slot → id (`NO_ID` for a free slot), built at the
    /// first lookup after a change ([`Identity::resolve`]): the ids of a
    /// replay's pods move with every pod created or deleted, and most
    /// changes are never followed by a lookup.
    by_slot: OnceLock<Arc<[Vec<u32>; 5]>>,
    /// Per node, the clock value of its latest change.
    node_changes: Vec<u64>,
    /// The clock value of the latest change in the view.
    generation: u64,
    /// The clock value when the nodes' objects or the interned names
    /// (symbols, taint texts) last changed ([`Identity::layout`]).
    layout: u64,
}

impl Identity {
    /// Fresh handles (slot = id) and fresh change values for a snapshot
    /// built on its own.
    pub fn fresh(snapshot: &Snapshot) -> Self {
        let counts = counts(snapshot);
        let first = ticks(counts.iter().sum::<usize>() + 1);
        let mut next = first;
        let handles = counts.map(|count| {
            (0..count as u32)
                .map(|slot| {
                    let handle = Handle {
                        slot,
                        generation: next,
                    };
                    next += 1;
                    handle
                })
                .collect::<Vec<_>>()
        });
        let generation = next;
        Self::new(
            handles,
            vec![generation; counts[Kind::Node as usize]],
            generation,
        )
    }

    fn new(handles: [Vec<Handle>; 5], node_changes: Vec<u64>, generation: u64) -> Self {
        Self {
            handles: handles.map(SharedVec::from),
            by_slot: OnceLock::new(),
            node_changes,
            generation,
            layout: tick(),
        }
    }

    /// Forgets the slot → id maps after ids moved; the next lookup builds
    /// them again.
    fn ids_moved(&mut self) {
        self.by_slot = OnceLock::new();
    }

    /// The slot → id maps, built if a change forgot them.
    fn by_slot(&self) -> &[Vec<u32>; 5] {
        self.by_slot.get_or_init(|| {
            Arc::new(self.handles.each_ref().map(|kind| {
                let slots = kind.iter().map(|h| h.slot as usize + 1).max().unwrap_or(0);
                let mut ids = vec![NO_ID; slots];
                for (id, h) in kind.iter().enumerate() {
                    ids[h.slot as usize] = id as u32;
                }
                ids
            }))
        })
    }

    /// An object of `kind` comes in at `id` (later ids move up by one); a
    /// node gets a new change value.
    pub(super) fn insert(&mut self, kind: Kind, id: u32, handle: Handle) {
        self.handles[kind as usize].insert(id as usize, handle);
        self.ids_moved();
        self.generation = tick();
        if kind == Kind::Node {
            self.layout = self.generation;
            self.node_changes.insert(id as usize, self.generation);
        }
    }

    /// The object of `kind` at `id` goes (later ids move down by one);
    /// returns its handle.
    pub(super) fn remove(&mut self, kind: Kind, id: u32) -> Handle {
        self.generation = tick();
        self.ids_moved();
        if kind == Kind::Node {
            self.layout = self.generation;
            self.node_changes.remove(id as usize);
        }
        self.handles[kind as usize].remove(id as usize)
    }

    /// The object of `kind` at `id` changed without moving: a change of
    /// the view (of its node, for a node).
    pub(super) fn changed(&mut self, kind: Kind, id: u32) {
        if kind == Kind::Node {
            self.node_changed(id);
        } else {
            self.generation = tick();
        }
    }

    /// Gives every object of `kind` its handle, by id.
    pub(super) fn set_handles(&mut self, kind: Kind, handles: Vec<Handle>) {
        self.handles[kind as usize] = handles.into();
        self.ids_moved();
        self.generation = tick();
        if kind == Kind::Node {
            self.layout = self.generation;
        }
    }

    /// The clock value of the latest change in this view.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The clock value when a node object last came or went (an update is
    /// both) or names were interned anew ([`Identity::reinterned`]): what
    /// is known of the nodes' labels and taints by their ids, and of names
    /// by their symbols, holds while it stays.
    pub fn layout(&self) -> u64 {
        self.layout
    }

    /// Names and taints were interned anew: symbols and taint ids changed.
    pub(super) fn reinterned(&mut self) {
        self.layout = tick();
    }

    /// Per node, the clock value of its latest change.
    pub fn node_changes(&self) -> &[u64] {
        &self.node_changes
    }

    /// Every handle of one kind, indexed by id.
    pub fn handles(&self, kind: Kind) -> &[Handle] {
        &self.handles[kind as usize]
    }

    /// The handle of object `id` of `kind`.
    pub fn handle(&self, kind: Kind, id: u32) -> Result<Handle, LookupError> {
        self.handles[kind as usize]
            .get(id as usize)
            .copied()
            .ok_or(LookupError::Unknown)
    }

    /// The id of the object `handle` names: `Stale` when its slot is free
    /// or held by another object.
    pub fn resolve(&self, kind: Kind, handle: Handle) -> Result<u32, LookupError> {
        let handles = &self.handles[kind as usize];
        let id = self.by_slot()[kind as usize]
            .get(handle.slot as usize)
            .copied()
            .unwrap_or(NO_ID);
        match handles.get(id as usize) {
            Some(&current) if current == handle => Ok(id),
            _ => Err(LookupError::Stale),
        }
    }

    /// Records a change of `node` (a pod assumed onto it or taken off);
    /// returns the values it replaced, for [`Identity::restore`].
    pub fn node_changed(&mut self, node: NodeId) -> Before {
        let now = tick();
        let before = Before {
            node: self.node_changes.get(node as usize).copied().unwrap_or(0),
            generation: self.generation,
        };
        if let Some(change) = self.node_changes.get_mut(node as usize) {
            *change = now;
        }
        self.generation = now;
        before
    }

    /// Puts back the values a change of `node` replaced (its rollback).
    pub fn restore(&mut self, node: NodeId, before: Before) {
        if let Some(change) = self.node_changes.get_mut(node as usize) {
            *change = before.node;
        }
        self.generation = before.generation;
    }
}

fn counts(snapshot: &Snapshot) -> [usize; 5] {
    [
        snapshot.nodes.len(),
        snapshot.pods.len(),
        snapshot.groups.len(),
        snapshot.composites.len(),
        snapshot.budgets.len(),
    ]
}

/// The slots of one kind: freed slots are reused lowest first, every
/// handle given out has a new generation.
#[derive(Debug, Default, Clone)]
pub(super) struct Slots {
    /// Slots freed, highest first (the next one to give is last).
    free: Vec<u32>,
    next: u32,
}

impl Slots {
    /// A handle for a new object.
    pub(super) fn take(&mut self) -> Handle {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.next += 1;
            self.next - 1
        });
        Handle {
            slot,
            generation: tick(),
        }
    }

    /// Frees the slot of an object gone.
    pub(super) fn free(&mut self, handle: Handle) {
        let at = self.free.partition_point(|&s| s > handle.slot);
        self.free.insert(at, handle.slot);
    }

    /// Slots freed and not given again.
    pub(super) fn free_count(&self) -> usize {
        self.free.len()
    }
}

/// Slots of one kind across rebuilt snapshots, by object key.
#[derive(Debug, Default, Clone)]
pub(super) struct SlotTable {
    /// Object key → its handle.
    live: HashMap<String, Handle>,
    slots: Slots,
}

impl SlotTable {
    /// The handles of `keys` (this build's objects, in id order): kept for
    /// keys seen before, new for the others; the slots of keys gone are
    /// freed first.
    pub(super) fn assign(&mut self, keys: &[String]) -> Vec<Handle> {
        let present: std::collections::HashSet<&String> = keys.iter().collect();
        let gone: Vec<String> = self
            .live
            .keys()
            .filter(|k| !present.contains(k))
            .cloned()
            .collect();
        for key in gone {
            let handle = self.live.remove(&key).expect("listed above");
            self.slots.free(handle);
        }
        keys.iter()
            .map(|key| {
                if let Some(&handle) = self.live.get(key) {
                    return handle;
                }
                let handle = self.slots.take();
                self.live.insert(key.clone(), handle);
                handle
            })
            .collect()
    }
}

/// Keeps identities across snapshots rebuilt from a changing cluster
/// (`wasched shadow` keeps one model instead; the semantics are the same):
/// the same object keeps its handle, a new one (a new name, or the same
/// name with a new `metadata.uid`) gets a new one, and a node whose
/// scheduling-relevant state is unchanged keeps its change value.
#[derive(Debug, Default)]
pub struct Registry {
    tables: [SlotTable; 5],
    /// Per node slot: a fingerprint of what per-node checks see, and the
    /// clock value it was first seen at.
    nodes: HashMap<u32, (u64, u64)>,
}

impl Registry {
    /// A registry that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// What it holds: handles of live objects, and slots freed for reuse
    /// (bounded by the most objects of a kind alive at once).
    pub fn entries(&self) -> (usize, usize) {
        let live = self.tables.iter().map(|t| t.live.len()).sum::<usize>() + self.nodes.len();
        let free = self.tables.iter().map(|t| t.slots.free_count()).sum();
        (live, free)
    }

    /// Gives `snapshot` (built afresh) the handles and node
    /// change values this registry carries over from earlier snapshots.
    pub fn stamp(&mut self, snapshot: &mut Snapshot) {
        let keys: [Vec<String>; 5] = [
            snapshot
                .nodes
                .iter()
                .map(|n| object_key(&n.name, n.uid.as_deref()))
                .collect(),
            snapshot
                .pods
                .iter()
                .map(|p| object_key(&p.key, p.uid.as_deref()))
                .collect(),
            snapshot.groups.iter().map(|g| g.key.clone()).collect(),
            snapshot.composites.iter().map(|c| c.key.clone()).collect(),
            snapshot.budgets.iter().map(|b| b.key.clone()).collect(),
        ];
        let handles: [Vec<Handle>; 5] =
            std::array::from_fn(|kind| self.tables[kind].assign(&keys[kind]));
        let mut generation = 0;
        let mut seen = HashMap::new();
        let node_changes: Vec<u64> = handles[Kind::Node as usize]
            .iter()
            .enumerate()
            .map(|(node, handle)| {
                let print = fingerprint(snapshot, node as NodeId);
                let changed = match self.nodes.get(&handle.slot) {
                    Some(&(old, changed)) if old == print => changed,
                    _ => tick(),
                };
                seen.insert(handle.slot, (print, changed));
                generation = generation.max(changed);
                changed
            })
            .collect();
        self.nodes = seen;
        let generation = generation.max(tick());
        snapshot.set_identity(Identity::new(handles, node_changes, generation));
    }
}

fn object_key(name: &str, uid: Option<&str>) -> String {
    match uid {
        Some(uid) => format!("{name}\u{0}{uid}"),
        None => name.to_string(),
    }
}

/// What a per-node check can see of `node`: its labels, taints,
/// `unschedulable`, allocatable, and its pods with their requests.
fn fingerprint(snapshot: &Snapshot, node: NodeId) -> u64 {
    let info = &snapshot.nodes[node as usize];
    let mut hasher = DefaultHasher::new();
    info.name.hash(&mut hasher);
    info.labels.hash(&mut hasher);
    for taint in info.taints.iter() {
        (&taint.key, &taint.value, &taint.effect).hash(&mut hasher);
    }
    info.unschedulable.hash(&mut hasher);
    for r in 0..snapshot.resource_names.len() {
        snapshot.resource_names[r].hash(&mut hasher);
        snapshot.allocatable(r).get(node as usize).hash(&mut hasher);
    }
    for &pod in snapshot.pods_on_node(node) {
        let pod = &snapshot.pods[pod as usize];
        (&pod.key, &pod.requests, &pod.labels).hash(&mut hasher);
    }
    hasher.finish()
}
