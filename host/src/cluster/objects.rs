//! A snapshot as a real cluster holds it: the objects to create on a
//! v1.37 API server, in creation order, with what the server would refuse
//! or drop translated, each translation said in a note.
//!
//! - **Namespaces** the objects use are created (except the built-in ones).
//! - **Priorities.** The Priority admission plugin refuses a bare
//!   `spec.priority` without a class that computes it, and a
//!   `preemptionPolicy` that differs from the class's. Every pod, PodGroup
//!   and CompositePodGroup gets a class whose value and policy are the ones
//!   wasched resolved for it: its own when it matches, else a generated
//!   `wasched-priority-<value>[-never]`. Pods of a PodGroup take their
//!   group's (the root CompositePodGroup's in a tree): kube-scheduler
//!   refuses a group whose pods' priority differs from it.
//! - **Metadata** the server owns is dropped (`uid`, `resourceVersion`,
//!   `creationTimestamp`, `managedFields`, `generation`), and so are
//!   finalizers and owner references without a `uid`: no controller runs
//!   to honour them.
//! - **Status** that create drops is kept in the objects, and written back
//!   by the loader through the status subresources: running pods' phase and
//!   `startTime` (the start wasched assumed when the snapshot has none),
//!   PodDisruptionBudgets' `disruptionsAllowed` (computed as the disruption
//!   controller would when absent), PodGroup conditions. Nodes keep their
//!   status (the server accepts it on create) and are made `Ready=True`,
//!   with `allocatable`/`capacity` completed as wasched reads them.
//! - Terminal and terminating pods are not created: the API server cannot
//!   hold a pod that is already going away, and they hold no resources.
//! - **Order.** Pending pods come last, in the order they entered the
//!   queue (creation time, then `namespace/name`); the harness creates them
//!   one by one in that order once kube-scheduler watches, so its queue
//!   orders them as wasched's does.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};
use serde_json::{Map, Value, json};

use crate::manifest::{Manifests, Object};
use crate::model::Snapshot;

/// Namespaces every API server has.
const BUILT_IN_NAMESPACES: [&str; 4] = ["default", "kube-system", "kube-public", "kube-node-lease"];

/// PriorityClasses every v1.37 API server creates itself, with their values.
const SYSTEM_CLASSES: [(&str, i32); 2] = [
    ("system-cluster-critical", 2_000_000_000),
    ("system-node-critical", 2_000_001_000),
];

/// The highest value a user-defined PriorityClass may have.
const HIGHEST_USER_PRIORITY: i32 = 1_000_000_000;

/// kubelet's default `maxPods`, which wasched assumes for a node that
/// declares no `pods` capacity.
const DEFAULT_MAX_PODS: &str = "110";

/// The objects to create, in creation order, and how they were translated.
#[derive(Debug, Default)]
pub struct ClusterObjects {
    /// JSON objects (`apiVersion`, `kind`, `metadata`, `spec`, `status`).
    pub items: Vec<Value>,
    /// One line per kind of translation made.
    pub notes: Vec<String>,
    /// What the real cluster cannot hold of the snapshot.
    pub warnings: Vec<String>,
}

impl ClusterObjects {
    /// A JSON List of the items.
    pub fn to_list(&self) -> Value {
        json!({"apiVersion": "v1", "kind": "List", "items": self.items})
    }
}

/// A class as the Priority admission plugin resolves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Resolved {
    value: i32,
    never: bool,
}

/// The snapshot's PriorityClasses and the ones generated for it.
#[derive(Default)]
struct Classes {
    known: BTreeMap<String, Resolved>,
    global_default: Option<Resolved>,
    generated: BTreeMap<String, (Resolved, usize)>,
}

impl Classes {
    fn of(manifests: &Manifests) -> Self {
        let mut classes = Classes::default();
        for (name, value) in SYSTEM_CLASSES {
            classes.known.insert(
                name.into(),
                Resolved {
                    value,
                    never: false,
                },
            );
        }
        for (_, object) in &manifests.objects {
            if let Object::PriorityClass(class) = object {
                let resolved = Resolved {
                    value: class.value.unwrap_or_default(),
                    never: class.preemption_policy.as_deref() == Some("Never"),
                };
                let name = class.metadata.name.clone().unwrap_or_default();
                if class.global_default == Some(true) {
                    classes.global_default = Some(resolved);
                }
                classes.known.insert(name, resolved);
            }
        }
        classes
    }

    /// The `priorityClassName` to give an object whose priority and policy
    /// must be `want`, its own class being `own`: `None` leaves it empty
    /// (admission then gives it the global default, or 0 and
    /// `PreemptLowerPriority`).
    fn class_for(
        &mut self,
        want: Resolved,
        own: Option<&str>,
        what: &str,
    ) -> Result<Option<String>> {
        if let Some(own) = own.filter(|c| !c.is_empty())
            && self.known.get(own) == Some(&want)
        {
            return Ok(Some(own.to_string()));
        }
        let fallback = self.global_default.unwrap_or(Resolved {
            value: 0,
            never: false,
        });
        if own.is_none_or(str::is_empty) && fallback == want {
            return Ok(None);
        }
        if let Some((name, _)) = self.known.iter().find(|(name, r)| {
            **r == want && SYSTEM_CLASSES.iter().any(|(system, _)| system == name)
        }) {
            return Ok(Some(name.clone()));
        }
        if want.value > HIGHEST_USER_PRIORITY {
            bail!(
                "{what}: priority {} is above what a PriorityClass other than the system ones may carry ({HIGHEST_USER_PRIORITY})",
                want.value
            );
        }
        let value = if want.value < 0 {
            format!("minus-{}", want.value.unsigned_abs())
        } else {
            want.value.to_string()
        };
        let name = format!(
            "wasched-priority-{value}{}",
            if want.never { "-never" } else { "" }
        );
        self.generated.entry(name.clone()).or_insert((want, 0)).1 += 1;
        Ok(Some(name))
    }
}

/// Translates `manifests` (read, dialects mapped, Jobs expanded) for a real
/// cluster; `snapshot` is the model built from them, whose resolved
/// priorities and budgets the translation keeps.
pub fn translate(manifests: &Manifests, snapshot: &Snapshot) -> Result<ClusterObjects> {
    let mut out = ClusterObjects::default();
    let mut classes = Classes::of(manifests);
    let mut namespaces = BTreeSet::new();
    let mut skipped_pods = 0;
    let mut members_retargeted = 0;
    let mut dropped_owners = 0;
    let mut dropped_finalizers = 0;
    let mut completed_nodes = 0;
    let mut computed_budgets = 0;
    let mut started_pods = 0;
    let mut items = Vec::new();
    // Pending pods last, in the order they entered the queue (creation
    // time, then namespace/name), which is the order the harness creates
    // them in.
    let mut pending: Vec<(i64, String, Value)> = Vec::new();
    for (origin, object) in &manifests.objects {
        let mut value = serde_json::to_value(object_value(object))?;
        let meta = value
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
            .ok_or_else(|| anyhow::anyhow!("{origin}: field metadata: required"))?;
        let (owners, finalizers) = strip_metadata(meta);
        dropped_owners += owners;
        dropped_finalizers += finalizers;
        let what = origin.to_string();
        match object {
            Object::Node(_) => {
                completed_nodes += usize::from(complete_node(&mut value));
            }
            Object::PriorityClass(class) => {
                let name = class.metadata.name.as_deref().unwrap_or_default();
                if SYSTEM_CLASSES.iter().any(|(system, _)| *system == name) {
                    continue; // the server has it already
                }
            }
            Object::Pod(pod) => {
                let key = pod_key(&pod.metadata);
                let Some(info) = snapshot.pods.iter().find(|p| p.key == key) else {
                    skipped_pods += 1; // terminal: not in the model
                    continue;
                };
                if info.terminating {
                    skipped_pods += 1;
                    continue;
                }
                let spec = pod.spec.as_ref();
                let want = match info.group {
                    Some(group) => {
                        members_retargeted += 1;
                        group_priority(snapshot, group)
                    }
                    None => Resolved {
                        value: info.priority,
                        never: info.never_preempt,
                    },
                };
                let own = spec.and_then(|s| s.priority_class_name.as_deref());
                let class = classes.class_for(want, own, &what)?;
                set_class(&mut value, class, want);
                if !info.pending {
                    started_pods += usize::from(start_running(&mut value, info.started));
                } else {
                    namespaces.insert(info.namespace.clone());
                    pending.push((info.created, info.key.clone(), value));
                    continue;
                }
            }
            Object::PodGroup(group) => {
                let key = pod_key(&group.metadata);
                let id = snapshot.groups.iter().position(|g| g.key == key);
                if let Some(spec) = id.and_then(|g| snapshot.groups[g].spec.as_ref()) {
                    let want = Resolved {
                        value: spec.priority,
                        never: spec.never_preempt,
                    };
                    let class = classes.class_for(
                        want,
                        group.spec.priority_class_name.as_deref(),
                        &what,
                    )?;
                    set_class(&mut value, class, want);
                }
            }
            Object::CompositePodGroup(composite) => {
                let key = pod_key(&composite.metadata);
                if let Some(info) = snapshot.composites.iter().find(|c| c.key == key) {
                    let want = Resolved {
                        value: info.spec.priority,
                        never: info.spec.never_preempt,
                    };
                    let own = composite.spec.priority_class_name.as_deref();
                    let class = classes.class_for(want, own, &what)?;
                    set_class(&mut value, class, want);
                }
            }
            Object::PodDisruptionBudget(budget) => {
                let key = pod_key(&budget.metadata);
                if let Some(model) = snapshot.budgets.iter().find(|b| b.key == key)
                    && budget.status.is_none()
                {
                    let healthy = model
                        .pods
                        .iter()
                        .filter(|&&p| snapshot.pods[p as usize].node.is_some())
                        .count() as i64;
                    let allowed = i64::from(model.disruptions_allowed);
                    value["status"] = json!({
                        "currentHealthy": healthy,
                        "desiredHealthy": (healthy - allowed).max(0),
                        "disruptionsAllowed": allowed,
                        "expectedPods": model.pods.len(),
                        "observedGeneration": 1,
                    });
                    computed_budgets += 1;
                }
            }
            Object::Workload(_) => {}
            Object::Job(_) | Object::Controller(_) => continue, // expanded before
        }
        if let Some(ns) = value
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .filter(|ns| !ns.is_empty())
        {
            namespaces.insert(ns.to_string());
        }
        items.push(value);
    }

    for ns in namespaces
        .iter()
        .filter(|ns| !BUILT_IN_NAMESPACES.contains(&ns.as_str()))
    {
        out.items
            .push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}));
    }
    for (name, (resolved, users)) in &classes.generated {
        let mut class = json!({
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name, "labels": {"wasched.io/generated": "true"}},
            "value": resolved.value,
            "description": "generated by wasched for objects of the snapshot with this priority and no class that computes it",
        });
        if resolved.never {
            class["preemptionPolicy"] = json!("Never");
        }
        out.items.push(class);
        out.notes.push(format!(
            "PriorityClass {name} (value {}{}) generated for {users} object(s) whose priority no class of the snapshot computes (the Priority admission plugin refuses a bare spec.priority)",
            resolved.value,
            if resolved.never { ", preemptionPolicy Never" } else { "" }
        ));
    }
    out.items.extend(items);
    pending.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    out.items
        .extend(pending.into_iter().map(|(.., value)| value));

    let mut note = |count: usize, text: &str| {
        if count > 0 {
            out.notes.push(format!("{count} {text}"));
        }
    };
    note(
        members_retargeted,
        "pod(s) of PodGroups take their group's priority class (kube-scheduler refuses a group whose pods' priority differs from the group's)",
    );
    note(
        started_pods,
        "running pod(s) without status.startTime get the start wasched assumed (their creationTimestamp, else 1970-01-01T00:00:00Z)",
    );
    note(
        completed_nodes,
        "node(s) completed: Ready=True, and allocatable/capacity filled in from each other (pods: 110 when neither says)",
    );
    note(
        computed_budgets,
        "PodDisruptionBudget(s) without status get the disruptionsAllowed wasched computed (no disruption controller runs)",
    );
    note(dropped_owners, "owner reference(s) without a uid dropped");
    note(
        dropped_finalizers,
        "object(s) without their finalizers (no controller runs to remove them)",
    );
    if skipped_pods > 0 {
        out.warnings.push(format!(
            "{skipped_pods} terminal or terminating pod(s) are not created in the cluster (a pod cannot be created already going away)"
        ));
    }
    out.warnings.extend(dialect_warnings(snapshot));
    Ok(out)
}

/// The k8s-openapi object inside an [`Object`], serialized with its
/// `apiVersion` and `kind`.
fn object_value(object: &Object) -> Value {
    let value = match object {
        Object::Node(o) => serde_json::to_value(o.as_ref()),
        Object::Pod(o) => serde_json::to_value(o.as_ref()),
        Object::PodGroup(o) => serde_json::to_value(o.as_ref()),
        Object::Workload(o) => serde_json::to_value(o.as_ref()),
        Object::CompositePodGroup(o) => serde_json::to_value(o.as_ref()),
        Object::PriorityClass(o) => serde_json::to_value(o.as_ref()),
        Object::PodDisruptionBudget(o) => serde_json::to_value(o.as_ref()),
        Object::Job(o) => serde_json::to_value(o.as_ref()),
        Object::Controller(c) => Ok(c.value.clone()),
    };
    value.expect("k8s-openapi objects serialize")
}

fn pod_key(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace
            .as_deref()
            .filter(|ns| !ns.is_empty())
            .unwrap_or("default"),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// The priority and policy a member of `group` must carry: its tree
/// root's, else its PodGroup's.
fn group_priority(snapshot: &Snapshot, group: u32) -> Resolved {
    if let Some(root) = snapshot.root_of(group) {
        let spec = &snapshot.composites[root as usize].spec;
        return Resolved {
            value: spec.priority,
            never: spec.never_preempt,
        };
    }
    match &snapshot.groups[group as usize].spec {
        Some(spec) => Resolved {
            value: spec.priority,
            never: spec.never_preempt,
        },
        // A pod naming a PodGroup that does not exist keeps what it has.
        None => Resolved {
            value: 0,
            never: false,
        },
    }
}

/// Drops what the server owns; returns the owner references and
/// finalizers dropped.
fn strip_metadata(meta: &mut Map<String, Value>) -> (usize, usize) {
    for field in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "managedFields",
        "generation",
        "selfLink",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ] {
        meta.remove(field);
    }
    let mut owners = 0;
    if let Some(Value::Array(refs)) = meta.get_mut("ownerReferences") {
        let before = refs.len();
        refs.retain(|r| {
            r.get("uid")
                .and_then(Value::as_str)
                .is_some_and(|u| !u.is_empty())
        });
        owners = before - refs.len();
        if refs.is_empty() {
            meta.remove("ownerReferences");
        }
    }
    let finalizers = usize::from(
        meta.remove("finalizers")
            .is_some_and(|f| f.as_array().is_some_and(|a| !a.is_empty())),
    );
    (owners, finalizers)
}

/// Sets `spec.priorityClassName` (or clears it) and `spec.preemptionPolicy`
/// to what the class computes, and drops `spec.priority`, which admission
/// computes from the class. The policy is written out because API
/// defaulting fills an absent one with `PreemptLowerPriority` before
/// admission compares it with the class's.
fn set_class(value: &mut Value, class: Option<String>, want: Resolved) {
    let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    spec.remove("priority");
    let policy = if want.never {
        "Never"
    } else {
        "PreemptLowerPriority"
    };
    spec.insert("preemptionPolicy".into(), json!(policy));
    match class {
        Some(class) => {
            spec.insert("priorityClassName".into(), json!(class));
        }
        None => {
            spec.remove("priorityClassName");
        }
    }
}

/// An object's `status` (added empty if missing), unless it is no map.
fn status_of(value: &mut Value) -> Option<&mut serde_json::Map<String, Value>> {
    value
        .as_object_mut()
        .expect("objects are JSON objects")
        .entry("status")
        .or_insert_with(|| json!({}))
        .as_object_mut()
}

/// A running pod's status: phase Running and the start wasched assumed;
/// true if something had to be filled in.
fn start_running(value: &mut Value, started: i64) -> bool {
    let Some(status) = status_of(value) else {
        return false;
    };
    status.entry("phase").or_insert_with(|| json!("Running"));
    if status.contains_key("startTime") {
        return false;
    }
    let time = k8s_openapi::jiff::Timestamp::from_second(started)
        .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
    status.insert("startTime".into(), json!(time.to_string()));
    true
}

/// Makes a node Ready and completes its resources as wasched reads them;
/// true if something changed.
fn complete_node(value: &mut Value) -> bool {
    let Some(status) = status_of(value) else {
        return false;
    };
    let mut changed = false;
    let allocatable = status.get("allocatable").cloned();
    let capacity = status.get("capacity").cloned();
    let mut resources = allocatable
        .clone()
        .or(capacity.clone())
        .unwrap_or_else(|| json!({}));
    if let Some(map) = resources.as_object_mut()
        && !map.contains_key("pods")
    {
        map.insert("pods".into(), json!(DEFAULT_MAX_PODS));
        changed = true;
    }
    if allocatable.as_ref() != Some(&resources) {
        status.insert("allocatable".into(), resources.clone());
        changed = true;
    }
    if capacity.is_none() {
        status.insert("capacity".into(), resources);
        changed = true;
    }
    let conditions = status.entry("conditions").or_insert_with(|| json!([]));
    if let Some(list) = conditions.as_array_mut() {
        let ready = list
            .iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        if !ready {
            list.retain(|c| c["type"] != "Ready");
            list.push(json!({"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "wasched: Ready, as the snapshot's scheduler saw it"}));
            changed = true;
        }
    }
    changed
}

/// What the early and foreign dialects carry that kube-scheduler v1.37 has
/// no field for: a group's minimum free resources.
fn dialect_warnings(snapshot: &Snapshot) -> Vec<String> {
    snapshot
        .groups
        .iter()
        .filter(|g| !g.min_resources.is_empty())
        .map(|g| {
            format!(
                "PodGroup {}: minResources ({}) has no field in v1.37; kube-scheduler schedules the group without it",
                g.key,
                crate::manifest::dialect::MIN_RESOURCES_ANNOTATION
            )
        })
        .collect()
}
