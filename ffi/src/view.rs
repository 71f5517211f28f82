//! A cluster view kept current by change, from what kube-scheduler holds.
//!
//! Two sources feed it, as kube-scheduler is fed:
//!
//! - the informers: Nodes, Pods, PodGroups, Workloads,
//!   CompositePodGroups, PriorityClasses, PodDisruptionBudgets, upserted
//!   and deleted one by one ([`View::upsert`], [`View::delete`]);
//! - the scheduler's own snapshot: the pods on a node as its `NodeInfo`
//!   holds them, assumed pods included, sent again whenever the node
//!   changed ([`View::set_node`]).
//!
//! Once a node's pods have been set, they come from the second source
//! only: a pod on a node's list is placed there (kube-scheduler's assumed
//! copy wins over the informer's pending one), and a pod the informer has
//! bound there but the list lacks is not in the view (kube-scheduler does
//! not see it either). Until then (a gang's PreEnqueue runs before any
//! cycle lists its members' nodes) the informer's bound pods stand for
//! the node's. A pod no list holds is what the informer says: pending, or
//! bound to a node not set yet.
//!
//! A pod a node lists while the informer still has it pending is one
//! kube-scheduler *assumed* there (in this cycle, or on its way to being
//! bound): the view holds it pending and assumes it on that node in the
//! snapshot each in-cycle call gets ([`View::snapshot`]), as wasched's own
//! cycle assumes the pods it places, so that a plugin tells a group's
//! assumed members from its running ones.
//!
//! Underneath is wasched's incremental [`Model`]: each change touches only
//! what depends on it. A plugin call takes a copy of the model's snapshot
//! (reference counts: the copy shares every part until one side changes
//! it) and runs without the view's lock, so calls run in parallel and an
//! update never waits for a plugin.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};
use serde::Deserialize;
use serde_json::value::RawValue;
use wasched::Snapshot;
use wasched::manifest::Object;
use wasched::model::{BuildOptions, Model, SharedObject};

use crate::objects;

/// The pods on one node, as last set.
#[derive(Debug, Default)]
struct NodePods {
    /// Pod key → the object read from what the node listed.
    pods: HashMap<String, SharedObject>,
}

/// See the module documentation.
#[derive(Debug)]
pub struct View {
    model: Model,
    /// Pods as the informer has them (pending, or bound: then with their
    /// node), by key.
    informed: HashMap<String, (Option<String>, SharedObject)>,
    /// The pods each node lists, by node name.
    nodes: HashMap<String, NodePods>,
    /// Pod key → the node listing it.
    placed: HashMap<String, String>,
    /// Pods held pending and assumed on a node for each call: key → node.
    assumed: HashMap<String, String>,
    /// The snapshots handed to calls since the view last changed, without
    /// and with the pods kube-scheduler assumed ([`View::snapshot`]).
    published: [Option<Snapshot>; 2],
    /// Pods no source lists any longer that the model still holds: taken
    /// out together before the model is next read ([`View::settle`]), so
    /// that a dry run taking many victims off their nodes moves the ids
    /// of the pods after them once, and a pod that comes back before
    /// then never left.
    doomed: BTreeSet<String>,
    /// Pods a node's listing dropped that no listing holds since, as
    /// they were read there (naming that node), while the informer has
    /// them: a victim a dry run took off its node comes back to it by key
    /// ([`View::set_node`]'s `kept`), not read again.
    left: HashMap<String, SharedObject>,
}

/// What [`View::set_node`] takes: the node's object when it changed, and
/// the pods its `NodeInfo` holds: each new or changed one whole, each
/// listed as it was last time by key only.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeState {
    #[serde(default)]
    node: Option<Box<RawValue>>,
    #[serde(default)]
    pods: Vec<Box<RawValue>>,
    #[serde(default)]
    kept: Vec<String>,
}

/// A pod listed on node `name`, placed there whatever its `spec.nodeName`
/// says (an assumed pod's copy names the node).
fn read_placed(name: &str, json: &[u8]) -> Result<SharedObject> {
    let (origin, mut object) = objects::read("Pod", json)?;
    if let Object::Pod(pod) = &mut object {
        pod.spec.get_or_insert_with(Default::default).node_name = Some(name.to_string());
    }
    Ok(Arc::new((origin, object)))
}

/// The node a pod's object names.
fn node_of(object: &SharedObject) -> Option<&str> {
    match &object.1 {
        Object::Pod(pod) => pod.spec.as_ref()?.node_name.as_deref(),
        _ => None,
    }
}

impl View {
    /// An empty view. With `scheduler_name`, only pending pods of that
    /// scheduler are this view's to place (others' bound pods still count).
    pub fn new(scheduler_name: Option<String>) -> Result<View> {
        let options = BuildOptions {
            schedulers: scheduler_name.into_iter().collect(),
            live: true,
        };
        Ok(View {
            model: Model::new(&Default::default(), &options)?,
            informed: HashMap::new(),
            nodes: HashMap::new(),
            placed: HashMap::new(),
            assumed: HashMap::new(),
            published: [None, None],
            doomed: BTreeSet::new(),
            left: HashMap::new(),
        })
    }

    /// Adds or replaces one object of `kind` from its JSON (a pod as the
    /// informer has it; see the module documentation for where a pod's
    /// place comes from). An object the model refuses is held as refused
    /// (left out), and the error says why.
    pub fn upsert(&mut self, kind: &str, json: &[u8]) -> Result<()> {
        let (origin, object) = objects::read(kind, json)?;
        self.changing();
        if let Object::Pod(pod) = &object {
            let key = origin.name.clone();
            let node = pod
                .spec
                .as_ref()
                .and_then(|s| s.node_name.clone())
                .filter(|n| !n.is_empty());
            self.informed
                .insert(key.clone(), (node, Arc::new((origin, object))));
            return self.refresh(&key);
        }
        self.model.upsert(Arc::new((origin, object)))
    }

    /// Removes the object `kind` `key` (`namespace/name`, or `name`).
    pub fn delete(&mut self, kind: &str, key: &str) -> Result<()> {
        if !objects::KINDS.contains(&kind) {
            bail!(
                "unknown kind {kind:?} (a view takes {})",
                objects::KINDS.join(", ")
            );
        }
        self.changing();
        match kind {
            "Pod" => {
                self.informed.remove(key);
                self.left.remove(key);
                // Whoever listed it keeps it until its node says otherwise.
                self.refresh(key)?;
            }
            "Node" => {
                self.model.delete("Node", key);
                if let Some(gone) = self.nodes.remove(key) {
                    for pod in gone.pods.keys() {
                        // A pod another node listed since stays there.
                        if self.placed.get(pod).is_some_and(|n| n == key) {
                            self.placed.remove(pod);
                        }
                        self.refresh(pod)?;
                    }
                }
            }
            _ => self.model.delete(kind, key),
        }
        Ok(())
    }

    /// Sets what node `name` holds: its object (when `node` is given) and
    /// the pods its `NodeInfo` lists, as JSON `{"node": {...}, "pods":
    /// [...], "kept": ["namespace/name", ...]}`: `kept` names pods listed
    /// last time, or dropped by the last listing that held them and
    /// listed by none since, unchanged; `pods` gives the others whole. Pods
    /// listed before and not now leave the node; a kept pod is not read
    /// again, and only the pods that came, went or were sent whole are put
    /// in the model again (an unchanged one sent whole is read again and
    /// leaves the model as it was).
    ///
    /// An error when the view's listing of the node is not what was sent
    /// (a kept pod it did not list, a pod it could not read; the rest is
    /// applied), so the caller sends the node whole next time; `Some` with
    /// what the model refused when the listing is whole but the model
    /// leaves objects out (a pod naming an unknown PriorityClass, say),
    /// which sending again would not change.
    pub fn set_node(&mut self, name: &str, state: &[u8]) -> Result<Option<String>> {
        let state: NodeState = serde_json::from_slice(state)
            .map_err(|e| anyhow!("node {name}: the node state is not valid: {e}"))?;
        self.changing();
        // What the listing lacks, and what the model refused.
        let mut unlisted = Vec::new();
        let mut refused = Vec::new();
        if let Some(node) = state.node {
            let read = objects::read("Node", node.get().as_bytes())
                .and_then(|(origin, object)| self.model.upsert(Arc::new((origin, object))));
            if let Err(e) = read {
                refused.push(format!("{e:#}"));
            }
        }
        let first = !self.nodes.contains_key(name);
        let mut before = self.nodes.remove(name).unwrap_or_default();
        let mut now = NodePods::default();
        // The pods that came, went or changed: the others' place in the
        // model stands.
        let mut changed = BTreeSet::new();
        for key in state.kept {
            // A pod a node dropped comes back to that node only.
            let dropped = || {
                self.left
                    .remove(&key)
                    .filter(|object| node_of(object) == Some(name))
            };
            match before.pods.remove(&key).or_else(dropped) {
                Some(listed) => {
                    now.pods.insert(key, listed);
                }
                None => unlisted.push(format!(
                    "node {name}: pod {key} is kept but was not listed there"
                )),
            }
        }
        for json in state.pods {
            let json = json.get().as_bytes();
            let (key, read) = match read_placed(name, json) {
                Ok(object) => (object.0.name.clone(), Ok(object)),
                Err(e) => (objects::key_of(json), Err(e)),
            };
            before.pods.remove(&key);
            changed.insert(key.clone());
            match read {
                Ok(object) => {
                    now.pods.insert(key, object);
                }
                Err(e) => unlisted.push(format!("{e:#}")),
            }
        }
        changed.extend(before.pods.keys().cloned());
        if first {
            // The informer's pods bound here no longer stand for the node's.
            changed.extend(
                self.informed
                    .iter()
                    .filter(|(_, (node, _))| node.as_deref() == Some(name))
                    .map(|(key, _)| key.clone()),
            );
        }
        for (key, object) in &before.pods {
            if self.placed.get(key).is_some_and(|n| n == name) {
                self.placed.remove(key);
            }
            // Only while the pod is there: a deleted one never comes back.
            if self.informed.contains_key(key) {
                self.left.insert(key.clone(), object.clone());
            }
        }
        for key in now.pods.keys() {
            self.left.remove(key);
            // A pod another node listed since moves back here.
            if self.placed.insert(key.clone(), name.to_string()).as_deref() != Some(name) {
                changed.insert(key.clone());
            }
        }
        // The pods that left first: what only they hold in the model is
        // then free for the pods that came.
        let (came, left): (Vec<_>, Vec<_>) =
            changed.iter().partition(|key| now.pods.contains_key(*key));
        self.nodes.insert(name.to_string(), now);
        for key in left.into_iter().chain(came) {
            if let Err(e) = self.refresh(key) {
                refused.push(format!("{e:#}"));
            }
        }
        if !unlisted.is_empty() {
            unlisted.extend(refused);
            bail!("{}", unlisted.join("; "));
        }
        Ok((!refused.is_empty()).then(|| refused.join("; ")))
    }

    /// Puts pod `key` in the model as the sources say now.
    fn refresh(&mut self, key: &str) -> Result<()> {
        let listed = self
            .placed
            .get(key)
            .and_then(|node| Some((node, self.nodes.get(node)?.pods.get(key)?)))
            .map(|(node, object)| (node.clone(), object.clone()));
        let informed = self.informed.get(key);
        self.assumed.remove(key);
        self.doomed.remove(key);
        let wanted = match (listed, informed) {
            // Listed on a node, pending for the informer: assumed there.
            (Some((node, _)), Some((None, pending))) => {
                self.assumed.insert(key.to_string(), node);
                Some(pending.clone())
            }
            (Some((_, object)), _) => Some(object),
            (None, Some((node, object))) => {
                let listed_elsewhere = node.as_ref().is_some_and(|n| self.nodes.contains_key(n));
                (!listed_elsewhere).then(|| object.clone())
            }
            (None, None) => None,
        };
        match wanted {
            Some(object) => {
                let held = self.model.object("Pod", key);
                if held.is_some_and(|h| Arc::ptr_eq(h, &object)) {
                    return Ok(());
                }
                let upserted = self.model.upsert(object.clone());
                if upserted.is_err() && !self.doomed.is_empty() {
                    // A refusal may come of what the doomed pods still
                    // hold (the resource columns only they name): take
                    // them out and ask again.
                    self.settle();
                    return self.model.upsert(object);
                }
                upserted
            }
            None => {
                if self.model.object("Pod", key).is_some() {
                    self.doomed.insert(key.to_string());
                }
                Ok(())
            }
        }
    }

    /// The view as a snapshot for one call, to run without the view's
    /// lock. With `assumed`, the pods kube-scheduler assumed on nodes are
    /// assumed there (a point inside a scheduling cycle; pre-enqueue, asked
    /// at queue time, sees none, as in wasched's own cycle). A copy costs
    /// reference counts: it shares everything with the view until one of
    /// them changes, and what the call assumes is its own. Both kinds are
    /// kept until the view next changes, so the calls in between share
    /// them.
    pub fn snapshot(&mut self, assumed: bool) -> Snapshot {
        self.settle();
        if let Some(kept) = &self.published[assumed as usize] {
            return kept.clone();
        }
        let mut snapshot = self.model.lend().clone();
        if assumed {
            let mut assumed: Vec<(&String, &String)> = self.assumed.iter().collect();
            assumed.sort();
            for (pod, node) in assumed {
                if let (Some(pod), Some(node)) =
                    (snapshot.pod_named(pod), snapshot.node_named(node))
                    && snapshot.pods[pod as usize].node.is_none()
                {
                    snapshot.assume(pod, node);
                }
            }
            snapshot.commit();
        }
        self.published[assumed as usize] = Some(snapshot.clone());
        snapshot
    }

    /// Takes the doomed pods out of the model, all at once.
    fn settle(&mut self) {
        if !self.doomed.is_empty() {
            let doomed = std::mem::take(&mut self.doomed);
            self.model.delete_pods(doomed.iter().map(String::as_str));
        }
    }

    /// Forgets the snapshots handed out, before the view changes: the
    /// model then changes its own in place, unless a call still holds a
    /// copy (which keeps what it has).
    fn changing(&mut self) {
        self.published = [None, None];
    }

    /// What the view holds, for tests and diagnostics: nodes, pods, the
    /// pods it holds on a node (bound ones), and the pods kube-scheduler
    /// assumed (held pending here, assumed only in the snapshots in-cycle
    /// calls take).
    pub fn counts(&mut self) -> serde_json::Value {
        self.settle();
        let snapshot = self.model.lend();
        let placed = snapshot.pods.iter().filter(|p| p.node.is_some()).count();
        serde_json::json!({
            "nodes": snapshot.nodes.len(),
            "pods": snapshot.pods.len(),
            "placed": placed,
            "assumedByScheduler": self.assumed.len(),
        })
    }
}
