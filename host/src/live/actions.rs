//! Decisions carried out on a live cluster, as kube-scheduler v1.37 carries
//! them out: [`plan`] turns a run's [`Outcome`] into [`Action`]s (pure, so
//! `--dry-run` shows exactly what would be done), [`Executor::apply`] makes
//! the API calls.
//!
//! - a binding is a `pods/binding` with the pod's UID, then a `Scheduled`
//!   Event;
//! - a victim gets the `DisruptionTarget=True` condition (reason
//!   `PreemptionByScheduler`) on its status, then is deleted — with a UID
//!   precondition, wasched's stricter choice (upstream deletes by name) so
//!   that a pod recreated under the same name is never the one deleted —
//!   and a `Preempted` Event naming its preemptor;
//! - a preemptor's pods get `nominatedNodeName` and `PodScheduled=False`;
//! - a pod left pending gets `PodScheduled=False` (reason `Unschedulable`)
//!   and a `FailedScheduling` Event;
//! - a PodGroup attempted gets `PodGroupInitiallyScheduled` (never back
//!   from `True`; patched only when it changes).
//!
//! Events go through kube-runtime's recorder, which folds repeats of one
//! Event into a series (as kube-scheduler's broadcaster does), behind a
//! token bucket: a thousand pending pods retried do not flood the API
//! server; Events over the budget are dropped and counted.

use std::collections::BTreeMap;
use std::time::Instant;

use k8s_openapi::api::core::v1::{Binding, ObjectReference, Pod};
use k8s_openapi::api::scheduling::v1beta1::PodGroup;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::{Api, Client};
use serde_json::json;

use super::kinds::Kind;
use super::store::Store;
use crate::manifest::Object;
use crate::outcome::{Outcome, PodGroupDecision};

/// A pod, by name and UID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodRef {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`.
    pub uid: String,
}

impl PodRef {
    /// A pod's name and UID.
    pub fn of(pod: &Pod) -> Self {
        Self {
            namespace: pod.metadata.namespace.clone().unwrap_or_default(),
            name: pod.metadata.name.clone().unwrap_or_default(),
            uid: pod.metadata.uid.clone().unwrap_or_default(),
        }
    }

    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    fn reference(&self) -> ObjectReference {
        ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Pod".into()),
            namespace: Some(self.namespace.clone()),
            name: Some(self.name.clone()),
            uid: Some(self.uid.clone()),
            ..ObjectReference::default()
        }
    }
}

/// Who preempted: a pod, a PodGroup or a CompositePodGroup tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Preemptor {
    /// `pod`, `podgroup` or `compositepodgroup` (upstream's words).
    pub kind: &'static str,
    /// Its object.
    pub reference: ObjectReference,
}

/// One thing to do on the cluster.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Bind `pod` to `node`.
    Bind {
        /// The pod.
        pod: PodRef,
        /// The node.
        node: String,
    },
    /// Evict `victim` (on `node`) for `by`.
    Preempt {
        /// The victim.
        victim: PodRef,
        /// Its node.
        node: String,
        /// The preemptor.
        by: Preemptor,
    },
    /// Nominate a preemptor's pod to `node` while its victims go.
    Nominate {
        /// The pod.
        pod: PodRef,
        /// The node its victims free.
        node: String,
        /// Its `PodScheduled=False` message.
        message: String,
    },
    /// A lower-priority pod's nomination to a node a preemptor takes is
    /// cleared (`nominatedNodeName: ""`), as upstream's preemption does.
    ClearNomination {
        /// The pod.
        pod: PodRef,
    },
    /// `pod` stays pending: `PodScheduled=False` (unless it says so
    /// already) and `FailedScheduling`.
    Unschedulable {
        /// The pod.
        pod: PodRef,
        /// Why, in kube-scheduler's words.
        message: String,
        /// Whether its `PodScheduled=False` condition already has this
        /// message.
        current: bool,
    },
    /// A PodGroup's `PodGroupInitiallyScheduled` condition.
    GroupCondition {
        /// `namespace/name`.
        group: String,
        /// `True` or `False`.
        status: bool,
        /// `Scheduled`, `Unschedulable` or `SchedulerError`.
        reason: String,
        /// The message.
        message: String,
        /// Every condition of the group's status with this one set (the
        /// patch replaces the list).
        conditions: Vec<Condition>,
        /// The group's `resourceVersion` they were read at: the patch is
        /// refused if another writer came between.
        resource_version: Option<String>,
    },
}

impl Action {
    /// The pod it acts on, if it acts on one.
    pub fn pod(&self) -> Option<&PodRef> {
        match self {
            Action::Bind { pod, .. }
            | Action::Nominate { pod, .. }
            | Action::ClearNomination { pod }
            | Action::Unschedulable { pod, .. } => Some(pod),
            Action::Preempt { victim, .. } => Some(victim),
            Action::GroupCondition { .. } => None,
        }
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Action::Bind { pod, node } => write!(f, "bind pod {} to node {node}", pod.key()),
            Action::Preempt { victim, node, by } => write!(
                f,
                "preempt pod {} on node {node} for {} {}",
                victim.key(),
                by.kind,
                reference_key(&by.reference)
            ),
            Action::Nominate { pod, node, .. } => {
                write!(f, "nominate pod {} to node {node}", pod.key())
            }
            Action::ClearNomination { pod } => {
                write!(f, "clear the nomination of pod {}", pod.key())
            }
            Action::Unschedulable { pod, message, .. } => {
                write!(f, "leave pod {} pending: {message}", pod.key())
            }
            Action::GroupCondition {
                group,
                status,
                reason,
                ..
            } => write!(
                f,
                "set PodGroupInitiallyScheduled={} ({reason}) on PodGroup {group}",
                if *status { "True" } else { "False" }
            ),
        }
    }
}

fn reference_key(r: &ObjectReference) -> String {
    match &r.namespace {
        Some(ns) => format!("{ns}/{}", r.name.as_deref().unwrap_or_default()),
        None => r.name.clone().unwrap_or_default(),
    }
}

/// The condition type wasched writes on PodGroups.
pub const GROUP_CONDITION: &str = "PodGroupInitiallyScheduled";

/// What a run's `outcome` asks of the cluster in `store`: victims first
/// (their preemptors' nominations after them), then bindings in the order
/// they were decided, then pods left pending, then group conditions. Pods
/// the store no longer holds are left out.
pub fn plan(outcome: &Outcome, store: &Store, scheduler_name: &str) -> Vec<Action> {
    let pod = |key: &str| -> Option<(PodRef, &Pod)> {
        let Some(Object::Pod(pod)) = store.get(Kind::Pod, key) else {
            return None;
        };
        Some((PodRef::of(pod), pod.as_ref()))
    };
    let mut actions = Vec::new();
    for eviction in &outcome.evictions {
        let Some((victim, object)) = pod(&eviction.pod) else {
            continue;
        };
        let node = object
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default();
        let by = preemptor(outcome, store, &eviction.by);
        // Workload-aware preemption names the whole cluster as the
        // candidate (upstream's literal "cluster"); a pod's is its node.
        let node = if by.kind == "pod" {
            node
        } else {
            "cluster".into()
        };
        actions.push(Action::Preempt { victim, node, by });
    }
    actions.extend(cleared_nominations(outcome, store, scheduler_name));
    for nomination in &outcome.nominations {
        let Some((pod_ref, object)) = pod(&nomination.pod) else {
            continue;
        };
        let group = group_key(object);
        let message = match group {
            Some(group) => {
                // A group's victims are counted under its key, a tree's
                // under its root's.
                let mut victims = outcome.evictions.iter().filter(|e| e.by == group).count();
                if victims == 0 {
                    victims = outcome
                        .evictions
                        .iter()
                        .filter(|e| store.get(Kind::CompositePodGroup, &e.by).is_some())
                        .count();
                }
                format!(
                    "pod group is unschedulable, pod group preemption: found a placement for podgroup, preempting {victims} victims"
                )
            }
            None => format!(
                "preemption: preempting {} victims on node {}",
                outcome
                    .evictions
                    .iter()
                    .filter(|e| e.by == nomination.pod)
                    .count(),
                nomination.node
            ),
        };
        actions.push(Action::Nominate {
            pod: pod_ref,
            node: nomination.node.clone(),
            message,
        });
    }
    for binding in &outcome.placements {
        if let Some((pod, _)) = pod(&binding.pod) {
            actions.push(Action::Bind {
                pod,
                node: binding.node.clone(),
            });
        }
    }
    // A preemption that failed clears the preemptor's nomination (upstream
    // returns an empty NominatedNodeName); one that was not allowed keeps
    // it.
    let failed_groups: Vec<&str> = outcome
        .pod_groups
        .iter()
        .filter(|g| g.preemption.as_ref().is_some_and(|p| p.domain.is_none()))
        .map(|g| g.pod_group.as_str())
        .collect();
    let nominated: Vec<&str> = outcome.nominations.iter().map(|n| n.pod.as_str()).collect();
    for left in &outcome.unschedulable {
        if nominated.contains(&left.pod.as_str()) {
            continue;
        }
        let Some((pod, object)) = pod(&left.pod) else {
            continue;
        };
        let group = group_key(object);
        let failed = match &group {
            None => left.preemption.is_some(),
            Some(group) => failed_groups.contains(&group.as_str()),
        };
        let has_nomination = object
            .status
            .as_ref()
            .and_then(|s| s.nominated_node_name.as_deref())
            .is_some_and(|n| !n.is_empty());
        if failed && has_nomination {
            actions.push(Action::ClearNomination { pod });
        }
    }
    for left in &outcome.unschedulable {
        if nominated.contains(&left.pod.as_str()) {
            continue;
        }
        if let Some((pod, object)) = pod(&left.pod) {
            let message = match &left.preemption {
                // kube-scheduler appends the PostFilter's message after
                // the fit error's sentence.
                Some(why) if left.reason.ends_with('.') => {
                    format!("{} preemption: {why}", left.reason)
                }
                Some(why) => format!("{}, preemption: {why}", left.reason),
                None => left.reason.clone(),
            };
            let current = pod_scheduled_message(object).as_deref() == Some(message.as_str());
            actions.push(Action::Unschedulable {
                pod,
                message,
                current,
            });
        }
    }
    for decision in &outcome.pod_groups {
        if let Some(action) = group_condition(decision, store) {
            actions.push(action);
        }
    }
    actions
}

/// The pods nominated to a node a lone preemptor takes, of lower priority
/// than it, whose nominations go (`getLowerPriorityNominatedPods`). Group
/// preemption names the whole cluster as its candidate, to which no pod is
/// nominated, so it clears none, as upstream.
fn cleared_nominations(outcome: &Outcome, store: &Store, scheduler_name: &str) -> Vec<Action> {
    // `spec.priority` is the resolved priority (admission sets it).
    let priority = |pod: &Pod| pod.spec.as_ref().and_then(|s| s.priority).unwrap_or(0);
    let ours = |pod: &Pod| {
        let name = pod.spec.as_ref().and_then(|s| s.scheduler_name.as_deref());
        name.unwrap_or(crate::model::DEFAULT_SCHEDULER_NAME) == scheduler_name
    };
    let mut cleared: Vec<Action> = Vec::new();
    for nomination in &outcome.nominations {
        let Some(Object::Pod(preemptor)) = store.get(Kind::Pod, &nomination.pod) else {
            continue;
        };
        if group_key(preemptor).is_some() {
            continue;
        }
        for object in store.objects(Kind::Pod) {
            let Object::Pod(pod) = object else { continue };
            let nominated = pod
                .status
                .as_ref()
                .and_then(|s| s.nominated_node_name.as_deref());
            let pending = pod
                .spec
                .as_ref()
                .is_none_or(|s| s.node_name.as_deref().is_none_or(str::is_empty));
            if nominated == Some(nomination.node.as_str())
                && pending
                && ours(pod)
                && priority(pod) < priority(preemptor)
            {
                let action = Action::ClearNomination {
                    pod: PodRef::of(pod),
                };
                if !cleared.contains(&action) {
                    cleared.push(action);
                }
            }
        }
    }
    cleared
}

/// The `namespace/name` of the PodGroup a pod belongs to.
fn group_key(pod: &Pod) -> Option<String> {
    let group = pod
        .spec
        .as_ref()?
        .scheduling_group
        .as_ref()?
        .pod_group_name
        .as_ref();
    let group = group.filter(|g| !g.is_empty())?;
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
    Some(format!("{namespace}/{group}"))
}

/// The preemptor named `by` in an eviction.
fn preemptor(outcome: &Outcome, store: &Store, by: &str) -> Preemptor {
    let group_preempted = outcome
        .pod_groups
        .iter()
        .any(|g| g.pod_group == by && g.preemption.as_ref().is_some_and(|p| p.domain.is_some()));
    let (kind, object_kind, api_version) = if group_preempted {
        ("podgroup", Kind::PodGroup, "scheduling.k8s.io/v1beta1")
    } else if store.get(Kind::CompositePodGroup, by).is_some() {
        (
            "compositepodgroup",
            Kind::CompositePodGroup,
            "scheduling.k8s.io/v1alpha3",
        )
    } else {
        ("pod", Kind::Pod, "v1")
    };
    let uid = store.get(object_kind, by).and_then(|o| match o {
        Object::Pod(p) => p.metadata.uid.clone(),
        Object::PodGroup(g) => g.metadata.uid.clone(),
        Object::CompositePodGroup(c) => c.metadata.uid.clone(),
        _ => None,
    });
    let (namespace, name) = by.split_once('/').unwrap_or(("default", by));
    Preemptor {
        kind,
        reference: ObjectReference {
            api_version: Some(api_version.into()),
            kind: Some(object_kind.name().into()),
            namespace: Some(namespace.into()),
            name: Some(name.into()),
            uid,
            ..ObjectReference::default()
        },
    }
}

/// The `PodGroupInitiallyScheduled` condition a decision sets, unless the
/// group already has it (or is `True`: it never goes back).
fn group_condition(decision: &PodGroupDecision, store: &Store) -> Option<Action> {
    let preempted = decision
        .preemption
        .as_ref()
        .filter(|p| p.domain.is_some() && decision.scheduled);
    let (status, reason, message) = if let Some(p) = preempted {
        (
            false,
            "Unschedulable".to_string(),
            format!(
                "pod group is unschedulable, pod group preemption: found a placement for podgroup, preempting {} victims",
                p.victims
            ),
        )
    } else if decision.scheduled {
        (true, "Scheduled".to_string(), String::new())
    } else if decision.condition_reason.is_empty() {
        return None; // held back before any attempt (PreEnqueue)
    } else {
        let mut message = decision.reason.clone();
        if let Some(p) = &decision.preemption {
            message.push_str(&format!(", pod group preemption: {}", p.reason));
        }
        (false, decision.condition_reason.clone(), message)
    };
    let Some(Object::PodGroup(group)) = store.get(Kind::PodGroup, &decision.pod_group) else {
        return None;
    };
    match condition_of(group) {
        Some(c) if c.status == "True" => return None,
        Some(c) if (c.status == "True") == status && c.reason == reason && c.message == message => {
            return None;
        }
        _ => {}
    }
    let mut conditions: Vec<Condition> = group
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let status_text = if status { "True" } else { "False" };
    // The transition time moves only when the status does.
    let last_transition_time = condition_of(group)
        .filter(|c| c.status == status_text)
        .map_or_else(
            || Time(k8s_openapi::jiff::Timestamp::now()),
            |c| c.last_transition_time.clone(),
        );
    conditions.retain(|c| c.type_ != GROUP_CONDITION);
    conditions.push(Condition {
        type_: GROUP_CONDITION.into(),
        status: status_text.into(),
        reason: reason.clone(),
        message: message.clone(),
        last_transition_time,
        observed_generation: group.metadata.generation,
    });
    Some(Action::GroupCondition {
        group: decision.pod_group.clone(),
        status,
        reason,
        message,
        conditions,
        resource_version: group.metadata.resource_version.clone(),
    })
}

fn condition_of(group: &PodGroup) -> Option<&Condition> {
    group
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == GROUP_CONDITION))
}

/// What applying a plan did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Pods bound: UID → node.
    pub bound: Vec<(String, String)>,
    /// Victims deleted (UIDs).
    pub evicted: Vec<String>,
    /// Preemptors nominated: UID → node.
    pub nominated: Vec<(String, String)>,
    /// API calls that failed: (operation, message).
    pub errors: Vec<(&'static str, String)>,
    /// Events left out over the budget.
    pub events_dropped: u64,
}

/// Events per second the executor may post, and its burst.
pub const EVENT_RATE: (f64, f64) = (10.0, 50.0);

/// Makes the API calls of plans, on behalf of one scheduler.
pub struct Executor {
    client: Client,
    recorder: Recorder,
    scheduler_name: String,
    tokens: f64,
    refilled: Instant,
}

impl Executor {
    /// An executor for `scheduler_name` (its Events' reporting controller).
    pub fn new(client: Client, scheduler_name: &str) -> Self {
        let reporter = Reporter {
            controller: scheduler_name.to_string(),
            instance: std::env::var("POD_NAME").ok(),
        };
        Self {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            scheduler_name: scheduler_name.to_string(),
            tokens: EVENT_RATE.1,
            refilled: Instant::now(),
        }
    }

    /// Carries out `actions` in order; a failed call is reported and the
    /// rest go on.
    /// `still_leading` is asked before each call: once the lease is lost,
    /// nothing more is done.
    pub async fn apply(&mut self, actions: &[Action], still_leading: &dyn Fn() -> bool) -> Applied {
        let mut applied = Applied::default();
        for action in actions {
            if !still_leading() {
                applied
                    .errors
                    .push(("lease", format!("{action}: not done, the lease was lost")));
                continue;
            }
            if let Err((operation, e)) = self.one(action, &mut applied).await {
                applied.errors.push((operation, format!("{action}: {e}")));
            }
        }
        applied
    }

    async fn one(
        &mut self,
        action: &Action,
        applied: &mut Applied,
    ) -> Result<(), (&'static str, kube::Error)> {
        match action {
            Action::Bind { pod, node } => {
                let binding = Binding {
                    metadata: ObjectMeta {
                        name: Some(pod.name.clone()),
                        namespace: Some(pod.namespace.clone()),
                        uid: Some(pod.uid.clone()),
                        ..ObjectMeta::default()
                    },
                    target: ObjectReference {
                        kind: Some("Node".into()),
                        name: Some(node.clone()),
                        ..ObjectReference::default()
                    },
                };
                self.pods(&pod.namespace)
                    .create_subresource::<_, serde_json::Value>(
                        "binding",
                        &pod.name,
                        &PostParams::default(),
                        &binding,
                    )
                    .await
                    .map_err(|e| ("bind", e))?;
                applied.bound.push((pod.uid.clone(), node.clone()));
                let note = format!("Successfully assigned {} to {node}", pod.key());
                self.event(
                    &pod.reference(),
                    EventType::Normal,
                    "Scheduled",
                    "Binding",
                    note,
                    None,
                    applied,
                )
                .await;
            }
            Action::Preempt { victim, node, by } => {
                let condition = json!({
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "PreemptionByScheduler",
                    "message": format!("{}: preempting to accommodate a higher priority {}", self.scheduler_name, by.kind),
                    "lastTransitionTime": Time(k8s_openapi::jiff::Timestamp::now()),
                });
                let patch = json!({"status": {"conditions": [condition]}});
                let pods = self.pods(&victim.namespace);
                match pods
                    .patch_status(
                        &victim.name,
                        &PatchParams::default(),
                        &Patch::Strategic(patch),
                    )
                    .await
                {
                    Err(kube::Error::Api(s)) if s.code == 404 => return Ok(()),
                    other => other.map_err(|e| ("preempt", e))?,
                };
                let params = DeleteParams {
                    preconditions: Some(Preconditions {
                        uid: Some(victim.uid.clone()),
                        resource_version: None,
                    }),
                    ..DeleteParams::default()
                };
                match pods.delete(&victim.name, &params).await {
                    Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => return Ok(()),
                    other => other.map_err(|e| ("preempt", e))?,
                };
                applied.evicted.push(victim.uid.clone());
                let uid = by.reference.uid.clone().unwrap_or_default();
                let note = format!("Preempted by {} {uid} on node {node}", by.kind);
                self.event(
                    &victim.reference(),
                    EventType::Normal,
                    "Preempted",
                    "Preempting",
                    note,
                    Some(by.reference.clone()),
                    applied,
                )
                .await;
            }
            Action::ClearNomination { pod } => {
                let patch = json!({"status": {"nominatedNodeName": null}});
                self.patch_pod_status(pod, patch, "nominate").await?;
            }
            Action::Nominate { pod, node, message } => {
                let patch = json!({"status": {
                    "nominatedNodeName": node,
                    "conditions": [pod_scheduled_false(message)],
                }});
                self.patch_pod_status(pod, patch, "nominate").await?;
                applied.nominated.push((pod.uid.clone(), node.clone()));
            }
            Action::Unschedulable {
                pod,
                message,
                current,
            } => {
                if !current {
                    let patch = json!({"status": {"conditions": [pod_scheduled_false(message)]}});
                    self.patch_pod_status(pod, patch, "status").await?;
                }
                self.event(
                    &pod.reference(),
                    EventType::Warning,
                    "FailedScheduling",
                    "Scheduling",
                    message.clone(),
                    None,
                    applied,
                )
                .await;
            }
            Action::GroupCondition {
                group,
                conditions,
                resource_version,
                ..
            } => {
                let (namespace, name) = group.split_once('/').unwrap_or(("default", group));
                let api: Api<PodGroup> = Api::namespaced(self.client.clone(), namespace);
                let patch = json!({
                    "metadata": {"resourceVersion": resource_version},
                    "status": {"conditions": conditions},
                });
                match api
                    .patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
                    .await
                {
                    Err(kube::Error::Api(s)) if s.code == 404 => {}
                    other => {
                        other.map_err(|e| ("group-status", e))?;
                    }
                }
            }
        }
        Ok(())
    }

    fn pods(&self, namespace: &str) -> Api<Pod> {
        Api::namespaced(self.client.clone(), namespace)
    }

    async fn patch_pod_status(
        &self,
        pod: &PodRef,
        patch: serde_json::Value,
        operation: &'static str,
    ) -> Result<(), (&'static str, kube::Error)> {
        match self
            .pods(&pod.namespace)
            .patch_status(&pod.name, &PatchParams::default(), &Patch::Strategic(patch))
            .await
        {
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            other => other.map(|_| ()).map_err(|e| (operation, e)),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn event(
        &mut self,
        regarding: &ObjectReference,
        type_: EventType,
        reason: &str,
        action: &str,
        note: String,
        related: Option<ObjectReference>,
        applied: &mut Applied,
    ) {
        let now = Instant::now();
        let (rate, burst) = EVENT_RATE;
        self.tokens =
            (self.tokens + now.duration_since(self.refilled).as_secs_f64() * rate).min(burst);
        self.refilled = now;
        if self.tokens < 1.0 {
            applied.events_dropped += 1;
            return;
        }
        self.tokens -= 1.0;
        let event = Event {
            type_,
            reason: reason.into(),
            note: Some(truncate(note, 1024)),
            action: action.into(),
            secondary: related,
        };
        if let Err(e) = self.recorder.publish(&event, regarding).await {
            applied
                .errors
                .push(("event", format!("{reason} Event: {e}")));
        }
    }
}

/// `PodScheduled=False`, reason `Unschedulable`.
fn pod_scheduled_false(message: &str) -> serde_json::Value {
    json!({
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": message,
        "lastTransitionTime": Time(k8s_openapi::jiff::Timestamp::now()),
    })
}

/// The message of a pod's `PodScheduled=False` condition, if it has one.
fn pod_scheduled_message(pod: &Pod) -> Option<String> {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| {
            c.iter()
                .find(|c| c.type_ == "PodScheduled" && c.status == "False")
        })
        .and_then(|c| c.message.clone())
}

/// `text` cut to at most `max` bytes on a character boundary.
fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// How many actions of each kind a plan holds, for logs.
pub fn summary(actions: &[Action]) -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for action in actions {
        let kind = match action {
            Action::Bind { .. } => "bind",
            Action::Preempt { .. } => "preempt",
            Action::Nominate { .. } => "nominate",
            Action::ClearNomination { .. } => "clear-nomination",
            Action::Unschedulable { .. } => "unschedulable",
            Action::GroupCondition { .. } => "group-condition",
        };
        *counts.entry(kind).or_default() += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{Binding, Eviction, PreemptionOutcome, Unschedulable};
    use kube::runtime::watcher::Event as WatchEvent;

    fn store(yaml: &str) -> Store {
        let mut store = Store::default();
        for document in yaml.split("\n---\n") {
            let value: serde_json::Value = serde_norway::from_str(document).unwrap();
            let (kind, object) = match value["kind"].as_str().unwrap() {
                "Pod" => (
                    Kind::Pod,
                    Object::Pod(serde_json::from_value(value).unwrap()),
                ),
                "PodGroup" => (
                    Kind::PodGroup,
                    Object::PodGroup(serde_json::from_value(value).unwrap()),
                ),
                kind => panic!("{kind}"),
            };
            store.apply(kind, WatchEvent::Apply(object));
        }
        store
    }

    const PODS: &str = r#"apiVersion: v1
kind: Pod
metadata: {name: high, namespace: a, uid: u-high}
spec: {priority: 100, containers: []}
---
apiVersion: v1
kind: Pod
metadata: {name: low-nominated, namespace: a, uid: u-low}
spec: {priority: 1, containers: []}
status: {nominatedNodeName: n1}
---
apiVersion: v1
kind: Pod
metadata: {name: high-nominated, namespace: a, uid: u-high2}
spec: {priority: 500, containers: []}
status: {nominatedNodeName: n1}
---
apiVersion: v1
kind: Pod
metadata: {name: victim, namespace: a, uid: u-victim}
spec: {priority: 0, nodeName: n1, containers: []}
---
apiVersion: v1
kind: Pod
metadata: {name: member, namespace: a, uid: u-member}
spec: {priority: 100, schedulingGroup: {podGroupName: g}, containers: []}
status:
  conditions: [{type: PodScheduled, status: "False", reason: Unschedulable, message: "no room"}]
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: g, namespace: a, uid: u-g}
spec: {schedulingPolicy: {basic: {}}}
status:
  conditions: [{type: PodGroupInitiallyScheduled, status: "True", reason: Scheduled, message: "", lastTransitionTime: "2026-11-20T10:00:00Z"}]"#;

    #[test]
    fn a_lone_preemptor_clears_lower_priority_nominations_to_its_node() {
        let store = store(PODS);
        let outcome = Outcome {
            evictions: vec![Eviction {
                pod: "a/victim".into(),
                by: "a/high".into(),
            }],
            nominations: vec![Binding {
                pod: "a/high".into(),
                node: "n1".into(),
            }],
            ..Outcome::default()
        };
        let actions = plan(&outcome, &store, "default-scheduler");
        let shown: Vec<String> = actions.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "preempt pod a/victim on node n1 for pod a/high",
                "clear the nomination of pod a/low-nominated",
                "nominate pod a/high to node n1",
            ]
        );
        let Action::Nominate { message, .. } = &actions[2] else {
            panic!()
        };
        assert_eq!(message, "preemption: preempting 1 victims on node n1");
    }

    #[test]
    fn a_group_condition_never_goes_back_from_true_and_repeats_are_not_patched() {
        let store = store(PODS);
        let decision = PodGroupDecision {
            pod_group: "a/g".into(),
            scheduled: false,
            reason: "no room".into(),
            min_count: None,
            bound: 0,
            pending: 1,
            placement: None,
            domains: Vec::new(),
            condition_reason: "Unschedulable".into(),
            preemption: Some(PreemptionOutcome {
                result: "failed".into(),
                domain: None,
                victims: 0,
                reason: "no lower-priority victims".into(),
            }),
            disruption: None,
        };
        let outcome = Outcome {
            unschedulable: vec![Unschedulable {
                pod: "a/member".into(),
                reason: "no room".into(),
                preemption: None,
            }],
            pod_groups: vec![decision.clone()],
            ..Outcome::default()
        };
        let actions = plan(&outcome, &store, "default-scheduler");
        assert_eq!(actions.len(), 1, "{actions:?}");
        assert!(matches!(
            &actions[0],
            Action::Unschedulable { current: true, .. }
        ));
        // A group not yet scheduled gets False, with the preemption's reason.
        let fresh = store_without_condition();
        let actions = plan(&outcome, &fresh, "default-scheduler");
        let Some(Action::GroupCondition {
            status,
            reason,
            message,
            conditions,
            ..
        }) = actions.last()
        else {
            panic!("{actions:?}")
        };
        assert!(!status);
        assert_eq!(reason, "Unschedulable");
        assert_eq!(
            message,
            "no room, pod group preemption: no lower-priority victims"
        );
        assert_eq!(conditions.len(), 1);
    }

    fn store_without_condition() -> Store {
        let text = PODS.replace(
            "status:\n  conditions: [{type: PodGroupInitiallyScheduled, status: \"True\", reason: Scheduled, message: \"\", lastTransitionTime: \"2026-11-20T10:00:00Z\"}]",
            "",
        );
        assert_ne!(text, PODS);
        store(&text)
    }
}
