//! A cluster view kept current by change, from what kube-scheduler holds.
//!
//! Two sources feed it, as kube-scheduler is fed:
//!
//! - the informers: Nodes, PodGroups, Workloads, CompositePodGroups,
//!   PriorityClasses, PodDisruptionBudgets and *pending* Pods, upserted and
//!   deleted one by one ([`View::upsert`], [`View::delete`]);
//! - the scheduler's own snapshot: the pods on a node as its `NodeInfo`
//!   holds them, assumed pods included, sent again whenever the node's
//!   generation moved ([`View::set_node`]).
//!
//! A pod's place comes from the second source only: a pod on a node's list
//! is placed there (kube-scheduler's assumed copy wins over the informer's
//! pending one); once no node lists it, the informer's pending version is
//! what the view holds again, and a pod the informer has bound but no node
//! lists yet is not in the view (kube-scheduler does not see it either).
//! Underneath is wasched's incremental [`Model`]: each change touches only
//! what depends on it, and a plugin call borrows the model's own snapshot.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};
use serde::Deserialize;
use serde_json::Value;
use wasched::Snapshot;
use wasched::manifest::Object;
use wasched::model::{BuildOptions, Model, SharedObject};

use crate::objects;

/// The pods on one node, as last set.
#[derive(Debug, Default)]
struct NodePods {
    /// Pod key → (the JSON it came as, the object read from it).
    pods: HashMap<String, (Value, SharedObject)>,
}

/// See the module documentation.
#[derive(Debug)]
pub struct View {
    model: Model,
    /// Pending pods as the informer has them, by key.
    pending: HashMap<String, SharedObject>,
    /// The pods each node lists, by node name.
    nodes: HashMap<String, NodePods>,
    /// Pod key → the node listing it.
    placed: HashMap<String, String>,
    /// Objects read so far (each JSON document parsed counts once).
    reads: u64,
}

/// What [`View::set_node`] takes: the node's object when it changed, and
/// every pod its `NodeInfo` holds.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeState {
    #[serde(default)]
    node: Option<Value>,
    #[serde(default)]
    pods: Vec<Value>,
}

impl View {
    /// An empty view. With `scheduler_name`, only pending pods of that
    /// scheduler are this view's to place (others' bound pods still count).
    pub fn new(scheduler_name: Option<String>) -> Result<View> {
        let options = BuildOptions {
            scheduler_name,
            live: true,
        };
        Ok(View {
            model: Model::new(&Default::default(), &options)?,
            pending: HashMap::new(),
            nodes: HashMap::new(),
            placed: HashMap::new(),
            reads: 0,
        })
    }

    /// Adds or replaces one object of `kind` from its JSON. A pod with
    /// `spec.nodeName` set is left to [`View::set_node`]. An object the
    /// model refuses is held as refused (left out), and the error says why.
    pub fn upsert(&mut self, kind: &str, json: &[u8]) -> Result<()> {
        let (origin, object) = objects::read(kind, json)?;
        self.reads += 1;
        if let Object::Pod(pod) = &object {
            let key = origin.name.clone();
            let bound = pod
                .spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .is_some_and(|n| !n.is_empty());
            if bound {
                self.pending.remove(&key);
            } else {
                self.pending.insert(key.clone(), Arc::new((origin, object)));
            }
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
        match kind {
            "Pod" => {
                self.pending.remove(key);
                // Whoever listed it keeps it until its node says otherwise.
                self.refresh(key)?;
            }
            "Node" => {
                self.model.delete("Node", key);
                if let Some(gone) = self.nodes.remove(key) {
                    for pod in gone.pods.keys() {
                        self.placed.remove(pod);
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
    /// [...]}`. Pods listed before and not now leave the node; a pod whose
    /// JSON is what it was last time is not read again.
    pub fn set_node(&mut self, name: &str, state: &[u8]) -> Result<()> {
        let state: NodeState = serde_json::from_slice(state)
            .map_err(|e| anyhow!("node {name}: the node state is not valid: {e}"))?;
        let mut refused = Vec::new();
        if let Some(node) = state.node {
            let read = objects::read_value("Node", node)
                .and_then(|(origin, object)| self.model.upsert(Arc::new((origin, object))));
            self.reads += 1;
            if let Err(e) = read {
                refused.push(format!("{e:#}"));
            }
        }
        let mut before = self.nodes.remove(name).unwrap_or_default();
        let mut now = NodePods::default();
        for json in state.pods {
            let key = json
                .as_object()
                .map(objects::key)
                .unwrap_or_else(|| "(unnamed)".into());
            let object = match before.pods.remove(&key) {
                Some((old, object)) if old == json => object,
                _ => match self.read_placed(name, json.clone()) {
                    Ok(object) => object,
                    Err(e) => {
                        refused.push(format!("{e:#}"));
                        continue;
                    }
                },
            };
            now.pods.insert(key, (json, object));
        }
        let changed: BTreeSet<String> =
            before.pods.keys().chain(now.pods.keys()).cloned().collect();
        for key in before.pods.keys() {
            if self.placed.get(key).is_some_and(|n| n == name) {
                self.placed.remove(key);
            }
        }
        for key in now.pods.keys() {
            self.placed.insert(key.clone(), name.to_string());
        }
        self.nodes.insert(name.to_string(), now);
        for key in &changed {
            if let Err(e) = self.refresh(key) {
                refused.push(format!("{e:#}"));
            }
        }
        if refused.is_empty() {
            Ok(())
        } else {
            bail!("{}", refused.join("; "))
        }
    }

    /// A pod listed on node `name`, placed there whatever its
    /// `spec.nodeName` says (an assumed pod's copy names the node).
    fn read_placed(&mut self, name: &str, json: Value) -> Result<SharedObject> {
        let (origin, mut object) = objects::read_value("Pod", json)?;
        self.reads += 1;
        if let Object::Pod(pod) = &mut object {
            pod.spec.get_or_insert_with(Default::default).node_name = Some(name.to_string());
        }
        Ok(Arc::new((origin, object)))
    }

    /// Puts pod `key` in the model as the sources say now.
    fn refresh(&mut self, key: &str) -> Result<()> {
        let placed = self
            .placed
            .get(key)
            .and_then(|node| self.nodes.get(node))
            .and_then(|node| node.pods.get(key))
            .map(|(_, object)| object.clone());
        let wanted = placed.or_else(|| self.pending.get(key).cloned());
        match wanted {
            Some(object) => {
                let held = self.model.object("Pod", key);
                if held.is_some_and(|h| Arc::ptr_eq(h, &object)) {
                    return Ok(());
                }
                self.model.upsert(object)
            }
            None => {
                self.model.delete("Pod", key);
                Ok(())
            }
        }
    }

    /// The view as a snapshot, lent for one call that hands it back unchanged.
    pub fn lend(&mut self) -> &mut Snapshot {
        self.model.lend()
    }

    /// How many JSON objects were parsed since the view was made.
    pub fn reads(&self) -> u64 {
        self.reads
    }
}
