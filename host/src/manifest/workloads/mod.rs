//! Workload objects expanded into the pods (and the v1.37 Workloads and
//! PodGroups) their controllers would create, when their pods are not in
//! the snapshot yet: what a user pastes in to ask "will this fit, and
//! where?" before submitting.
//!
//! One module per controller, each saying which controller's code or KEP
//! its mapping follows: [`job`] (`batch/v1` Job), [`apps`] (Deployment,
//! ReplicaSet, StatefulSet), [`jobset`], [`lws`] (LeaderWorkerSet),
//! [`ray`] (RayCluster, RayJob), [`kubeflow`] (PyTorchJob, TrainJob and
//! its runtimes), [`volcano`] (Volcano `batch.volcano.sh` Job), and
//! [`kueue`] (Kueue's plain-pod groups, read as what they are: quota
//! admission, not a placement gang).
//!
//! Objects are read in two steps: at load a controller object is kept as
//! it was written ([`Controller`]); [`expand`] then turns each into the
//! objects its controller makes, which are read as any object of the
//! snapshot is ([`super::load::add_value`]: names, dialect markers,
//! fields), so a Coscheduling label or a Volcano annotation on a template
//! joins its pods to their group as it does on a pod. Controllers that make
//! controllers (a Deployment its ReplicaSet, a JobSet its Jobs, a TrainJob
//! its JobSet, a RayJob its RayCluster) are expanded level by level.
//!
//! A controller object whose pods (or whose next level's objects) are
//! already in the snapshot is not expanded again: the snapshot's pods are
//! used as they are. One that makes no pods (suspended, zero replicas, a
//! missing runtime) is kept in [`Manifests::without_pods`] with the reason,
//! so it appears in the output.

pub mod apps;
pub mod job;
pub mod jobset;
pub mod kubeflow;
pub mod kueue;
pub mod lws;
pub mod pods;
pub mod ray;
pub mod volcano;

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, anyhow, bail};
use serde::Serialize;
use serde_json::Value;

use super::load::{Manifests, Object, ObjectRef};

/// The controller kinds wasched expands, each with the API version it
/// reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ControllerKind {
    /// `apps/v1` Deployment.
    Deployment,
    /// `apps/v1` ReplicaSet.
    ReplicaSet,
    /// `apps/v1` StatefulSet.
    StatefulSet,
    /// `jobset.x-k8s.io/v1alpha2` JobSet.
    JobSet,
    /// `leaderworkerset.x-k8s.io/v1` LeaderWorkerSet.
    LeaderWorkerSet,
    /// `ray.io/v1` RayCluster.
    RayCluster,
    /// `ray.io/v1` RayJob.
    RayJob,
    /// `kubeflow.org/v1` PyTorchJob (training-operator).
    PyTorchJob,
    /// `trainer.kubeflow.org/v1alpha1` TrainJob (Kubeflow Trainer).
    TrainJob,
    /// `trainer.kubeflow.org/v1alpha1` TrainingRuntime.
    TrainingRuntime,
    /// `trainer.kubeflow.org/v1alpha1` ClusterTrainingRuntime.
    ClusterTrainingRuntime,
    /// `batch.volcano.sh/v1alpha1` Job.
    VolcanoJob,
}

impl ControllerKind {
    /// Every kind, in the order of [`expand`]'s levels: what makes other
    /// controllers first.
    pub const ALL: [ControllerKind; 12] = [
        Self::TrainJob,
        Self::RayJob,
        Self::Deployment,
        Self::JobSet,
        Self::ReplicaSet,
        Self::StatefulSet,
        Self::LeaderWorkerSet,
        Self::RayCluster,
        Self::PyTorchJob,
        Self::VolcanoJob,
        Self::TrainingRuntime,
        Self::ClusterTrainingRuntime,
    ];

    /// The `apiVersion` read and the `kind`.
    pub fn api(self) -> (&'static str, &'static str) {
        match self {
            Self::Deployment => ("apps/v1", "Deployment"),
            Self::ReplicaSet => ("apps/v1", "ReplicaSet"),
            Self::StatefulSet => ("apps/v1", "StatefulSet"),
            Self::JobSet => ("jobset.x-k8s.io/v1alpha2", "JobSet"),
            Self::LeaderWorkerSet => ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"),
            Self::RayCluster => ("ray.io/v1", "RayCluster"),
            Self::RayJob => ("ray.io/v1", "RayJob"),
            Self::PyTorchJob => ("kubeflow.org/v1", "PyTorchJob"),
            Self::TrainJob => ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
            Self::TrainingRuntime => ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"),
            Self::ClusterTrainingRuntime => {
                ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime")
            }
            Self::VolcanoJob => ("batch.volcano.sh/v1alpha1", "Job"),
        }
    }

    /// The kind of `apiVersion`/`kind`, if wasched expands it.
    pub fn of(api_version: &str, kind: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.api() == (api_version, kind))
    }

    /// The kind written with another version of its group (`ray.io/v1alpha1`
    /// RayCluster), which wasched does not read.
    pub fn in_other_version(api_version: &str, kind: &str) -> Option<Self> {
        let group = api_version.rsplit_once('/').map(|(g, _)| g);
        Self::ALL.into_iter().find(|k| {
            let (read, name) = k.api();
            name == kind && read.rsplit_once('/').map(|(g, _)| g) == group && read != api_version
        })
    }

    /// Whether its objects live in a namespace.
    pub fn namespaced(self) -> bool {
        self != Self::ClusterTrainingRuntime
    }
}

/// A controller object as written (names completed), expanded by
/// [`expand`].
#[derive(Debug, Clone)]
pub struct Controller {
    /// What it is.
    pub kind: ControllerKind,
    /// The object.
    pub value: Value,
}

impl Controller {
    /// `metadata.namespace` (`default` when absent) and `metadata.name`.
    pub fn namespace_and_name(&self) -> (String, String) {
        let field = |k: &str| {
            self.value
                .pointer(&format!("/metadata/{k}"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let namespace = field("namespace");
        let namespace = if namespace.is_empty() && self.kind.namespaced() {
            "default".to_string()
        } else {
            namespace
        };
        (namespace, field("name"))
    }
}

/// The most pods one workload object is expanded into: a bound on what
/// a manifest can make wasched allocate (a `replicas: 2000000000` is
/// refused by name, not tried).
pub const MAX_PODS: usize = 100_000;

/// How the controllers are configured where the objects do not say: what a
/// controller's own flags or configuration decide.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControllerOptions {
    /// Controllers run with gang scheduling configured
    /// (`--gang-scheduling-for LeaderWorkerSet,PyTorchJob`): the LWS
    /// controller's `gangSchedulingManagement`, training-operator's
    /// `--gang-scheduler-name`.
    pub gang_scheduling: BTreeSet<ControllerKind>,
}

/// The controllers whose gang scheduling is configured in the controller,
/// not on the object, by the names `--gang-scheduling-for` takes.
pub const GANG_CONFIGURED_IN_CONTROLLER: [(&str, ControllerKind); 2] = [
    ("LeaderWorkerSet", ControllerKind::LeaderWorkerSet),
    ("PyTorchJob", ControllerKind::PyTorchJob),
];

/// A controller object that makes no pods, and why: it appears in the
/// output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WithoutPods {
    /// Its kind.
    pub kind: String,
    /// `namespace/name`, or `name`.
    pub name: String,
    /// Why its controller makes none.
    pub reason: String,
}

/// What is in the snapshot already, to tell which controllers' pods exist.
#[derive(Debug, Default)]
pub struct Present {
    /// (namespace, owner kind, owner name) of every object's controller
    /// references (pods, Jobs, controller objects).
    owned: BTreeSet<(String, String, String)>,
    /// (namespace, label key, value) of every pod label.
    pod_labels: BTreeSet<(String, String, String)>,
    /// (namespace, Deployment) of pods owned by a ReplicaSet
    /// `<deployment>-<pod-template-hash>`.
    deployments: BTreeSet<(String, String)>,
    /// (kind, `namespace/name`) of every PodGroup, Workload and
    /// CompositePodGroup.
    groups: BTreeSet<(&'static str, String)>,
}

impl Present {
    fn index(objects: &[(ObjectRef, Object)]) -> Self {
        let mut present = Self::default();
        let mut owners = |namespace: &str, meta_owners: Option<Vec<(String, String)>>| {
            for (kind, name) in meta_owners.into_iter().flatten() {
                present.owned.insert((namespace.to_string(), kind, name));
            }
        };
        let refs = |meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
            meta.owner_references
                .as_ref()
                .map(|o| o.iter().map(|r| (r.kind.clone(), r.name.clone())).collect())
        };
        let mut labels = Vec::new();
        let mut deployments = Vec::new();
        let mut groups = Vec::new();
        for (_, object) in objects {
            match object {
                Object::Pod(pod) => {
                    let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
                    owners(namespace, refs(&pod.metadata));
                    let hash = pod
                        .metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get("pod-template-hash"));
                    for owner in pod.metadata.owner_references.iter().flatten() {
                        if let Some(hash) = hash
                            && owner.kind == "ReplicaSet"
                            && let Some(deployment) = owner.name.strip_suffix(&format!("-{hash}"))
                        {
                            deployments.push((namespace.to_string(), deployment.to_string()));
                        }
                    }
                    for (key, value) in pod.metadata.labels.iter().flatten() {
                        labels.push((namespace.to_string(), key.clone(), value.clone()));
                    }
                }
                Object::Job(job) => {
                    let namespace = job.metadata.namespace.as_deref().unwrap_or("default");
                    owners(namespace, refs(&job.metadata));
                }
                Object::PodGroup(g) => groups.push(("PodGroup", pods::key(&g.metadata))),
                Object::Workload(w) => groups.push(("Workload", pods::key(&w.metadata))),
                Object::CompositePodGroup(c) => {
                    groups.push(("CompositePodGroup", pods::key(&c.metadata)))
                }
                Object::Controller(controller) => {
                    let (namespace, _) = controller.namespace_and_name();
                    let owners_of: Option<Vec<(String, String)>> = controller
                        .value
                        .pointer("/metadata/ownerReferences")
                        .and_then(Value::as_array)
                        .map(|list| {
                            list.iter()
                                .filter_map(|r| {
                                    Some((
                                        r.get("kind")?.as_str()?.to_string(),
                                        r.get("name")?.as_str()?.to_string(),
                                    ))
                                })
                                .collect()
                        });
                    owners(&namespace, owners_of);
                }
                _ => {}
            }
        }
        present.pod_labels.extend(labels);
        present.deployments.extend(deployments);
        present.groups.extend(groups);
        present
    }

    /// Whether an object of the snapshot names `kind` `name` as its owner.
    pub fn owned_by(&self, namespace: &str, kind: &str, name: &str) -> bool {
        self.owned
            .contains(&(namespace.to_string(), kind.to_string(), name.to_string()))
    }

    /// `Kind namespace/name` of `value` if it is a PodGroup, Workload or
    /// CompositePodGroup the snapshot holds already.
    pub fn group_object(&self, value: &Value) -> Option<String> {
        let kind = value.get("kind").and_then(Value::as_str)?;
        let kind = ["PodGroup", "Workload", "CompositePodGroup"]
            .into_iter()
            .find(|k| *k == kind)?;
        let field = |k: &str| {
            value
                .pointer(&format!("/metadata/{k}"))
                .and_then(Value::as_str)
        };
        let key = format!(
            "{}/{}",
            field("namespace").unwrap_or("default"),
            field("name")?
        );
        self.holds(kind, &key).then(|| format!("{kind} {key}"))
    }

    /// Whether the snapshot holds PodGroup, Workload or CompositePodGroup
    /// (`kind`) `key` (`namespace/name`).
    pub fn holds(&self, kind: &'static str, key: &str) -> bool {
        self.groups.contains(&(kind, key.to_string()))
    }

    /// Whether a pod of the snapshot belongs to a ReplicaSet of Deployment
    /// `name`.
    pub fn deployment_has_pods(&self, namespace: &str, name: &str) -> bool {
        self.deployments
            .contains(&(namespace.to_string(), name.to_string()))
    }

    /// Whether what controller `kind` `name` makes is in the snapshot: an
    /// object it owns, or a pod with its `label` (`label=name`).
    pub fn made(&self, namespace: &str, kind: &str, name: &str, label: &str) -> bool {
        self.owned_by(namespace, kind, name) || self.pod_labelled(namespace, label, name)
    }

    /// Whether a pod of the snapshot carries label `key=value`.
    pub fn pod_labelled(&self, namespace: &str, key: &str, value: &str) -> bool {
        self.pod_labels
            .contains(&(namespace.to_string(), key.to_string(), value.to_string()))
    }
}

/// What expanding one controller object gave.
pub enum Expansion {
    /// Objects to read (as written in a manifest), and what they are, for
    /// the note.
    Made {
        /// The objects, as values to read.
        objects: Vec<Value>,
        /// What was made, for the note.
        made: Vec<String>,
    },
    /// Its objects are in the snapshot already.
    Present(String),
    /// Its controller makes no pods now.
    NoPods(String),
}

/// The context an expander reads: the snapshot's objects and the
/// controllers' configuration.
pub struct Context<'a> {
    /// What is in the snapshot.
    pub present: &'a Present,
    /// The controllers' configuration.
    pub options: &'a ControllerOptions,
    /// The runtimes a TrainJob may name, by (namespace or "", name).
    pub runtimes: &'a BTreeMap<(String, String), Controller>,
    /// How unknown fields are treated.
    pub validation: super::FieldValidation,
}

/// Completes what was read: the PodGroups `v1alpha1` pods name
/// ([`super::versions::finish`]), then every controller object of `into`
/// expanded (see the module's doc), then every Job; controller objects
/// themselves are not kept. Call once, after everything is read.
pub fn expand(into: &mut Manifests) -> Result<()> {
    super::versions::finish(into);
    expand_controllers(into)?;
    job::expand(into)?;
    kueue::note_groups(into);
    Ok(())
}

/// Every controller object of `into` expanded, level by level, down to
/// Jobs and pods; the Jobs are left as they are (for [`job::expand`]).
pub fn expand_controllers(into: &mut Manifests) -> Result<()> {
    let options = into.controllers.clone();
    // Each level makes objects of a lower one (TrainJob → JobSet → Job,
    // RayJob → RayCluster, Deployment → ReplicaSet): three at most.
    for level in 0.. {
        // What is in the snapshot, this level's controllers included (a
        // Deployment's ReplicaSet in the snapshot is its pods' maker).
        let present = Present::index(&into.objects);
        let (controllers, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut into.objects)
            .into_iter()
            .partition(|(_, o)| matches!(o, Object::Controller(_)));
        into.objects = rest;
        if controllers.is_empty() {
            break;
        }
        if level == LEVELS {
            let (origin, _) = &controllers[0];
            bail!("{origin}: made by a chain of more than {LEVELS} controllers, not expanded");
        }
        let mut runtimes = BTreeMap::new();
        let mut now = Vec::new();
        for (origin, object) in controllers {
            let Object::Controller(controller) = object else {
                unreachable!("partitioned on Controller")
            };
            match controller.kind {
                ControllerKind::TrainingRuntime | ControllerKind::ClusterTrainingRuntime => {
                    let (_, kind) = controller.kind.api();
                    into.notes.push(format!(
                        "{kind} {}: a runtime, read for the TrainJobs that name it",
                        origin.name
                    ));
                    let (namespace, name) = controller.namespace_and_name();
                    runtimes.insert((namespace, name), *controller);
                }
                _ => now.push((origin, controller)),
            }
        }
        let context = Context {
            present: &present,
            options: &options,
            runtimes: &runtimes,
            validation: into.validation,
        };
        let mut made_here = Vec::new();
        for (origin, controller) in now {
            let expansion = expand_one(&context, &origin, &controller, &mut into.unknown_fields)?;
            made_here.push((origin, controller, expansion));
        }
        for (origin, controller, expansion) in made_here {
            let (kind, name) = (origin.kind.clone(), origin.name.clone());
            match expansion {
                Expansion::Made { objects, mut made } => {
                    let file = format!("{} (from {kind} {name})", origin.file);
                    for value in objects {
                        // A group the snapshot holds already (a queued
                        // Volcano Job's PodGroup, say) is used as it is.
                        if let Some(existing) = present.group_object(&value) {
                            made.push(format!("{existing} in the snapshot, used as it is"));
                            continue;
                        }
                        super::load::add_value(into, &file, value)?;
                    }
                    into.notes.push(format!(
                        "{kind} {name}: expanded as {}: {}",
                        expanded_as(controller.kind),
                        made.join(", ")
                    ));
                }
                Expansion::Present(what) => into.notes.push(format!(
                    "{kind} {name}: {what} in the snapshot, used as they are"
                )),
                Expansion::NoPods(reason) => {
                    into.notes.push(format!(
                        "{kind} {name}: {reason}, so its controller makes no pods"
                    ));
                    into.without_pods.push(WithoutPods { kind, name, reason });
                }
            }
        }
    }
    Ok(())
}

/// The most levels of controllers making controllers.
const LEVELS: usize = 4;

/// Whose behaviour an expansion follows, for its note.
fn expanded_as(kind: ControllerKind) -> &'static str {
    match kind {
        ControllerKind::Deployment => "the Deployment controller would",
        ControllerKind::ReplicaSet => "the ReplicaSet controller would",
        ControllerKind::StatefulSet => "the StatefulSet controller would",
        ControllerKind::JobSet => "the JobSet controller would (KEP-969 for spec.scheduling)",
        ControllerKind::LeaderWorkerSet => "the LeaderWorkerSet controller would",
        ControllerKind::RayCluster => "the KubeRay operator would",
        ControllerKind::RayJob => "the KubeRay operator would",
        ControllerKind::PyTorchJob => "training-operator would",
        ControllerKind::TrainJob => "the Kubeflow Trainer controller would",
        ControllerKind::VolcanoJob => "the Volcano job controller would",
        ControllerKind::TrainingRuntime | ControllerKind::ClusterTrainingRuntime => "a runtime",
    }
}

fn expand_one(
    context: &Context,
    origin: &ObjectRef,
    controller: &Controller,
    unknown: &mut super::fields::UnknownFields,
) -> Result<Expansion> {
    let mut read = Reader {
        origin,
        value: &controller.value,
        validation: context.validation,
        unknown,
    };
    match controller.kind {
        ControllerKind::Deployment => apps::deployment(context, &mut read),
        ControllerKind::ReplicaSet => apps::replica_set(context, &mut read),
        ControllerKind::StatefulSet => apps::stateful_set(context, &mut read),
        ControllerKind::JobSet => jobset::expand(context, &mut read),
        ControllerKind::LeaderWorkerSet => lws::expand(context, &mut read),
        ControllerKind::RayCluster => ray::cluster(context, &mut read),
        ControllerKind::RayJob => ray::job(context, &mut read),
        ControllerKind::PyTorchJob => kubeflow::pytorch_job(context, &mut read),
        ControllerKind::TrainJob => kubeflow::train_job(context, &mut read),
        ControllerKind::VolcanoJob => volcano::job(context, &mut read),
        ControllerKind::TrainingRuntime | ControllerKind::ClusterTrainingRuntime => {
            unreachable!("runtimes are read by TrainJobs")
        }
    }
}

/// Reads a controller object's fields, naming the object and the field in
/// every error; pod and Job templates are read through their k8s-openapi
/// types, their unknown fields named as a pod's are.
pub struct Reader<'a> {
    /// The object, for messages.
    pub origin: &'a ObjectRef,
    /// Its value.
    pub value: &'a Value,
    validation: super::FieldValidation,
    unknown: &'a mut super::fields::UnknownFields,
}

impl Reader<'_> {
    /// The object's metadata, namespace (`default` when absent) and name.
    pub fn identity(
        &mut self,
    ) -> Result<(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        String,
        String,
    )> {
        let meta = self.metadata()?;
        let namespace = meta.namespace.clone().unwrap_or_else(|| "default".into());
        let name = meta.name.clone().unwrap_or_default();
        Ok((meta, namespace, name))
    }

    /// The object's metadata.
    pub fn metadata(
        &mut self,
    ) -> Result<k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta> {
        self.typed("metadata", self.value.get("metadata"))
            .map(|m: Option<_>| m.unwrap_or_default())
    }

    /// An integer field, `default` when absent; `field` names it in errors.
    pub fn int(&self, value: Option<&Value>, field: &str, default: i64) -> Result<i64> {
        match value {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v.as_i64().ok_or_else(|| {
                anyhow!(
                    "{}: field {field}: expected an integer, got {v}",
                    self.origin
                )
            }),
        }
    }

    /// A count field (an integer of at least 0).
    pub fn count(&self, value: Option<&Value>, field: &str, default: i64) -> Result<usize> {
        let n = self.int(value, field, default)?;
        usize::try_from(n).map_err(|_| {
            anyhow!(
                "{}: field {field}: must be at least 0, got {n}",
                self.origin
            )
        })
    }

    /// Refuses an object that would make more than [`MAX_PODS`] pods,
    /// naming the fields that say how many.
    pub fn bounded(&self, pods: u128, fields: &str) -> Result<usize> {
        usize::try_from(pods)
            .ok()
            .filter(|&n| n <= MAX_PODS)
            .ok_or_else(|| {
                anyhow!(
                    "{}: field {fields}: makes {pods} pods, more than the {MAX_PODS} wasched expands one object into",
                    self.origin
                )
            })
    }

    /// A boolean field, `false` when absent.
    pub fn flag(&self, value: Option<&Value>, field: &str) -> Result<bool> {
        match value {
            None | Some(Value::Null) => Ok(false),
            Some(v) => v.as_bool().ok_or_else(|| {
                anyhow!(
                    "{}: field {field}: expected true or false, got {v}",
                    self.origin
                )
            }),
        }
    }

    /// A string field.
    pub fn text<'v>(&self, value: Option<&'v Value>, field: &str) -> Result<Option<&'v str>> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_str().map(Some).ok_or_else(|| {
                anyhow!("{}: field {field}: expected a string, got {v}", self.origin)
            }),
        }
    }

    /// A list field (empty when absent).
    pub fn list<'v>(&self, value: Option<&'v Value>, field: &str) -> Result<&'v [Value]> {
        match value {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(v) => Err(anyhow!(
                "{}: field {field}: expected a list, got {v}",
                self.origin
            )),
        }
    }

    /// A required field's value.
    pub fn required<'v>(&self, value: Option<&'v Value>, field: &str) -> Result<&'v Value> {
        value
            .filter(|v| !v.is_null())
            .ok_or_else(|| anyhow!("{}: field {field}: required field is missing", self.origin))
    }

    /// `value` (at `field`) through its k8s-openapi type: a pod template,
    /// a Job template; unknown fields are named with their whole path.
    pub fn typed<T>(&mut self, field: &str, value: Option<&Value>) -> Result<Option<T>>
    where
        T: serde::de::DeserializeOwned + serde::Serialize,
    {
        let Some(value) = value.filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        super::fields::parse_at::<T>(
            self.origin,
            field,
            value.clone(),
            self.validation,
            false,
            self.unknown,
        )
        .map(|t| Some(*t))
    }

    /// The whole object through its k8s-openapi type, its required fields
    /// checked.
    pub fn object<T>(&mut self) -> Result<T>
    where
        T: serde::de::DeserializeOwned + serde::Serialize,
    {
        super::fields::parse::<T>(
            self.origin,
            self.value.clone(),
            self.validation,
            true,
            self.unknown,
        )
        .map(|t| *t)
    }

    /// A required template at `field`.
    pub fn template<T>(&mut self, field: &str, value: Option<&Value>) -> Result<T>
    where
        T: serde::de::DeserializeOwned + serde::Serialize,
    {
        let value = self.required(value, field)?.clone();
        self.typed(field, Some(&value))?
            .ok_or_else(|| anyhow!("{}: field {field}: required field is missing", self.origin))
    }
}

/// The value at a JSON pointer (`/spec/replicas`) of `value`, if set.
pub fn get<'v>(value: &'v Value, pointer: &str) -> Option<&'v Value> {
    value.pointer(pointer).filter(|v| !v.is_null())
}

/// An object as a manifest value, with its apiVersion and kind.
pub fn manifest<T: Serialize>(api_version: &str, kind: &str, object: &T) -> Value {
    let mut value = serde_json::to_value(object).expect("k8s-openapi objects serialise");
    if let Value::Object(map) = &mut value {
        map.insert("apiVersion".into(), Value::String(api_version.into()));
        map.insert("kind".into(), Value::String(kind.into()));
    }
    value
}
