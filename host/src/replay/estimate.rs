//! "When will my job start?": a start-time estimate for every pending
//! PodGroup, CompositePodGroup and pod of a snapshot (`wasched simulate
//! --until-start`), by replaying the snapshot forward with no new
//! arrivals.
//!
//! The snapshot's pending entities are taken on as they are (their own
//! pods, whatever their specs) and queued in kube-scheduler's order; the
//! replay's queue, cycle and plugins then run as for a trace. Each pod
//! runs for a time taken, in this order, from:
//!
//! 1. the [`RUN_FOR`] annotation (as the trace format's pods carry it);
//! 2. `spec.activeDeadlineSeconds`;
//! 3. the runtime given for its priority class (`--runtime CLASS=DUR`);
//! 4. the default runtime (`--default-runtime DUR`);
//!
//! counted from its `status.startTime` for a running pod (else its
//! `creationTimestamp`, else the estimate's start), from its start in the
//! estimate for a pending one. A pod with none of these, or whose
//! `restartPolicy` is `Always` (its containers restart when they exit) but
//! for its `activeDeadlineSeconds`, runs for ever;
//! what waits for it is "not estimable". A pod being deleted is gone at
//! its `deletionTimestamp`. The pods of a pending group run for the
//! longest runtime among them.
//!
//! An entity starts when every pod it needs runs: a gang's `minCount`
//! (less its members already running), each pod of a basic group, each
//! PodGroup of a CompositePodGroup. Each estimate says what it rests on:
//! the pod whose end (or preemption) freed the nodes it starts on last.
//!
//! Simplifications, besides the replay's own: the queue holds no history
//! (every pending entity is fresh in the active queue at the start, with
//! no backoff), preempted pods of the snapshot are not recreated by their
//! controllers, and nothing new arrives.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};
use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;

use super::manifests::RUN_FOR;
use super::trace::{self, Disruption, Grouping, Job};
use super::{Engine, Event, JobRun, Phase, QueueConfig, Unit, entity_key, objects};
use crate::framework::PluginSet;
use crate::manifest::{Manifests, Object};
use crate::model::{Model, PodId, Snapshot};
use crate::scheduler::{self, Entity};

/// How an estimate runs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The instant estimates count from, Unix seconds; `None`: the
    /// snapshot's latest timestamp ([`latest_timestamp`]).
    pub now: Option<i64>,
    /// What `now` is, for the report ("--now", "the time the cluster was
    /// read"); empty with `now` unset.
    pub now_from: String,
    /// Runtime of a pod nothing else gives one.
    pub default_runtime: Option<Duration>,
    /// Runtime of the pods of a priority class, by class name.
    pub class_runtimes: BTreeMap<String, Duration>,
    /// The queue's configuration.
    pub queue: QueueConfig,
    /// Estimate only the pending pods of these schedulers
    /// ([`crate::model::BuildOptions::schedulers`]; empty: every one).
    pub schedulers: Vec<String>,
}

/// Where a pod's runtime was taken from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The [`RUN_FOR`] annotation.
    Annotation,
    /// `spec.activeDeadlineSeconds`.
    ActiveDeadline,
    /// The runtime given for its priority class.
    Class(String),
    /// The default runtime.
    Default,
    /// It was being deleted in the snapshot.
    Deletion,
    /// None: it runs for ever.
    Unknown,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Annotation => write!(f, "annotation {RUN_FOR}"),
            Source::ActiveDeadline => f.write_str("activeDeadlineSeconds"),
            Source::Class(class) => write!(f, "runtime of priority class {class}"),
            Source::Default => f.write_str("default runtime"),
            Source::Deletion => f.write_str("being deleted"),
            Source::Unknown => f.write_str("runtime unknown"),
        }
    }
}

impl Options {
    /// How long `pod` runs once started, and from what; `None`: for ever.
    /// A pod whose `restartPolicy` is `Always` (the default) ends only at
    /// its `activeDeadlineSeconds`: its containers restart when they
    /// exit.
    pub fn runtime(&self, origin: &str, pod: &Pod) -> Result<Option<(Duration, Source)>> {
        let name = format!(
            "{}/{}",
            pod.metadata.namespace.as_deref().unwrap_or("default"),
            pod.metadata.name.as_deref().unwrap_or_default()
        );
        let spec = pod.spec.as_ref();
        // A pod whose containers always restart never ends by itself.
        let restarts = spec
            .and_then(|s| s.restart_policy.as_deref())
            .is_none_or(|p| p == "Always");
        if let Some(text) = pod
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(RUN_FOR))
        {
            let runtime = trace::go_duration(text).map_err(|e| {
                anyhow::anyhow!("{origin}: Pod {name}: field metadata.annotations[{RUN_FOR}]: {e}")
            })?;
            // The deadline ends it earlier, if it is shorter.
            let deadline = spec
                .and_then(|s| s.active_deadline_seconds)
                .map(|s| Duration::from_secs(s.max(0) as u64));
            if !restarts {
                return Ok(Some(match deadline {
                    Some(deadline) if deadline < runtime => (deadline, Source::ActiveDeadline),
                    _ => (runtime, Source::Annotation),
                }));
            }
        }
        if let Some(seconds) = spec.and_then(|s| s.active_deadline_seconds) {
            return Ok(Some((
                Duration::from_secs(seconds.max(0) as u64),
                Source::ActiveDeadline,
            )));
        }
        if restarts {
            return Ok(None);
        }
        if let Some((class, runtime)) = spec
            .and_then(|s| s.priority_class_name.as_deref())
            .and_then(|c| self.class_runtimes.get_key_value(c))
        {
            return Ok(Some((*runtime, Source::Class(class.clone()))));
        }
        Ok(self.default_runtime.map(|r| (r, Source::Default)))
    }
}

/// When an entity is estimated to start.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Estimate {
    /// `PodGroup`, `CompositePodGroup` or `Pod`.
    pub kind: &'static str,
    /// `namespace/name`.
    pub name: String,
    /// Its pending pods.
    pub pods: u32,
    /// `priorityClassName` of its (first) pending pod.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub priority_class: String,
    /// `now`, `+2h10m`, `never` or `not estimable`.
    pub estimate: String,
    /// Seconds from the estimate's start, when estimated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<f64>,
    /// The instant (RFC 3339), when estimated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// What the estimate rests on.
    pub rests_on: String,
}

/// Every pending entity's estimate.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Estimates {
    /// The instant the estimates count from (RFC 3339).
    pub now: String,
    /// Where that instant was taken from.
    pub now_from: String,
    /// One per pending entity: estimated starts in time order, then the
    /// entities not estimable, then those that never start; ties in
    /// kube-scheduler's queue order.
    pub estimates: Vec<Estimate>,
}

impl Estimates {
    /// A table, one row per entity, under a line saying when it counts
    /// from.
    pub fn to_table(&self) -> String {
        let mut rows = vec![
            [
                "START", "AT", "KIND", "NAME", "PODS", "PRIORITY", "RESTS ON",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for e in &self.estimates {
            rows.push(vec![
                e.estimate.clone(),
                e.at.clone().unwrap_or_else(|| "-".into()),
                e.kind.to_string(),
                e.name.clone(),
                e.pods.to_string(),
                if e.priority_class.is_empty() {
                    "-".into()
                } else {
                    e.priority_class.clone()
                },
                e.rests_on.clone(),
            ]);
        }
        format!(
            "Estimated starts from {} ({}).\n{}",
            self.now,
            self.now_from,
            crate::table::render(&rows)
        )
    }
}

/// `+2h10m`: a span of whole seconds as Go prints one, zero parts left out
/// (`now` for none).
pub fn span(seconds: u64) -> String {
    if seconds == 0 {
        return "now".into();
    }
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let mut out = String::from("+");
    for (value, unit) in [(h, "h"), (m, "m"), (s, "s")] {
        if value > 0 {
            out.push_str(&format!("{value}{unit}"));
        }
    }
    out
}

/// A Unix second as RFC 3339.
fn rfc3339(second: i64) -> String {
    k8s_openapi::jiff::Timestamp::from_second(second)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| second.to_string())
}

/// The latest creation or start time of the snapshot's pods, PodGroups
/// and CompositePodGroups, Unix seconds; `None` if none has one.
pub fn latest_timestamp(snapshot: &Snapshot) -> Option<i64> {
    let pods = snapshot.pods.iter().flat_map(|p| [p.created, p.started]);
    let groups = snapshot.groups.iter().map(|g| g.created);
    let trees = snapshot.composites.iter().map(|c| c.created);
    pods.chain(groups).chain(trees).filter(|&t| t > 0).max()
}

/// Estimates a start for every pending entity of `manifests` with
/// `plugins`.
pub fn estimate(
    manifests: Manifests,
    plugins: &mut PluginSet,
    options: &Options,
) -> Result<Estimates> {
    let build = crate::model::BuildOptions {
        schedulers: options.schedulers.clone(),
        live: true,
    };
    let mut model = Model::build(manifests, &build)?;
    let (now, now_from) = match options.now {
        Some(now) => (now, options.now_from.clone()),
        None => match latest_timestamp(model.lend()) {
            Some(now) => (now, "the snapshot's latest timestamp".to_string()),
            None => (objects::EPOCH, "no timestamp in the snapshot".to_string()),
        },
    };
    let replay_options = super::Options {
        queue: options.queue,
        epoch: Some(now),
        stop_once_started: true,
        ..Default::default()
    };
    let mut engine = Engine::new(model, plugins, &replay_options)?;
    engine.watch = Some(Watch::default());
    let entities = engine.take_on(options, now)?;
    let mut rows: Vec<super::JobRow> = Vec::new();
    let mut never: Vec<u32> = engine.watch.as_ref().map_or_else(Vec::new, |w| {
        w.unstarted
            .iter()
            .filter(|(_, u)| matches!(u, Unstarted::Never(_)))
            .map(|(i, _)| *i)
            .collect()
    });
    never.sort_unstable();
    for index in never {
        engine.end_job(index, "NeverSchedulable", &mut rows)?;
    }
    engine.run(std::iter::empty(), &mut rows, &mut |_| {})?;
    let watch = engine.watch.take().expect("set above");
    let mut estimates: Vec<(u8, u64, usize, Estimate)> = Vec::new();
    for (index, entity) in entities.into_iter().enumerate() {
        let index = index as u32;
        let (rank, after, estimate, rests_on) = match watch.starts.get(&index) {
            Some((at, rests_on)) => {
                let secs = at.as_secs();
                (0, secs, span(secs), rests_on.clone())
            }
            None => match watch.unstarted.get(&index) {
                Some(Unstarted::Never(reason)) => (2, 0, "never".into(), reason.clone()),
                Some(Unstarted::Unknown(reason)) => (1, 0, "not estimable".into(), reason.clone()),
                None => {
                    let reason = rows
                        .iter()
                        .find(|r| r.job == entity.job)
                        .map(|r| r.waited_for.clone())
                        .unwrap_or_default();
                    (2, 0, "never".into(), reason)
                }
            },
        };
        let estimated = rank == 0;
        estimates.push((
            rank,
            after,
            index as usize,
            Estimate {
                kind: entity.kind,
                name: entity.name,
                pods: entity.pods,
                priority_class: entity.priority_class,
                estimate,
                after: estimated.then_some(after as f64),
                at: estimated.then(|| rfc3339(now + after as i64)),
                rests_on,
            },
        ));
    }
    estimates.sort_by_key(|(rank, after, index, _)| (*rank, *after, *index));
    Ok(Estimates {
        now: rfc3339(now),
        now_from,
        estimates: estimates.into_iter().map(|(.., e)| e).collect(),
    })
}

/// A pending entity taken on as a replay job.
struct Entry {
    kind: &'static str,
    name: String,
    /// The replay job's `namespace/name`, as its row names it.
    job: String,
    pods: u32,
    priority_class: String,
}

/// Why an entity did not start in the estimate.
#[derive(Debug, Clone)]
enum Unstarted {
    /// No node could ever hold it.
    Never(String),
    /// It waits for pods that run for ever.
    Unknown(String),
}

/// The pod that last left a node.
#[derive(Debug, Clone)]
struct Left {
    at: Duration,
    /// Its PodGroup, else itself: `namespace/name`.
    owner: String,
    /// Preempted (with its grace period, seconds), else ended.
    preempted: Option<i64>,
    source: Source,
}

/// What an estimate watches while the replay runs.
#[derive(Debug, Default)]
pub(super) struct Watch {
    /// Each pod's runtime source (pods of the snapshot and of its pending
    /// entities).
    sources: HashMap<String, Source>,
    /// The last pod that left each node, by node name.
    left: HashMap<String, Left>,
    /// Each job's start and what it rests on.
    starts: HashMap<u32, (Duration, String)>,
    /// Why each job that did not start did not.
    unstarted: HashMap<u32, Unstarted>,
}

impl Watch {
    /// Pod `key` leaves its node at `at` (still in `model`): ended, or
    /// `preempted`.
    pub(super) fn left_node(
        &mut self,
        key: &str,
        model: &mut Model,
        at: Duration,
        preempted: bool,
    ) {
        let grace = preempted.then(|| match model.object("Pod", key).map(|o| &o.1) {
            Some(Object::Pod(pod)) => pod
                .spec
                .as_ref()
                .and_then(|s| s.termination_grace_period_seconds)
                .unwrap_or(30),
            _ => 30,
        });
        let snapshot = model.lend();
        let Some(p) = snapshot.pod_named(key) else {
            return;
        };
        let pod = &snapshot.pods[p as usize];
        let Some(node) = pod.node else {
            return;
        };
        let owner = pod.group.map_or_else(
            || key.to_string(),
            |g| snapshot.groups[g as usize].key.clone(),
        );
        let left = Left {
            at,
            owner,
            preempted: grace,
            source: self.sources.get(key).cloned().unwrap_or(Source::Unknown),
        };
        self.left
            .insert(snapshot.nodes[node as usize].name.clone(), left);
    }

    /// Job `job` has started at `at`: what it rests on.
    pub(super) fn started(&mut self, job: u32, run: &JobRun, model: &mut Model, at: Duration) {
        let snapshot = model.lend();
        let last = run
            .nodes
            .iter()
            .filter_map(|n| self.left.get(n).map(|l| (n, l)))
            .filter(|(_, l)| l.at <= at)
            .max_by(|a, b| a.1.at.cmp(&b.1.at).then_with(|| b.0.cmp(a.0)));
        let rests_on = match last {
            None if at.is_zero() => "fits now".to_string(),
            None => "its next scheduling attempt (the queue's backoff)".to_string(),
            Some((node, left)) => {
                let place = place(snapshot, node, run.spec.topology_key.as_deref());
                match left.preempted {
                    Some(grace) => format!(
                        "after preempting {} on {place} (grace period {grace} s)",
                        left.owner
                    ),
                    None if left.source == Source::Deletion => {
                        format!("after {} is deleted from {place}", left.owner)
                    }
                    None => format!("after {} ends on {place} ({})", left.owner, left.source),
                }
            }
        };
        self.starts.insert(job, (at, rests_on));
    }
}

/// `KEY=VALUE` of `node`'s topology label `key`, else `node NAME`.
fn place(snapshot: &Snapshot, node: &str, key: Option<&str>) -> String {
    let value = key.and_then(|key| {
        let n = snapshot.nodes.iter().find(|n| n.name == node)?;
        Some(format!("{key}={}", n.labels.get(key)?))
    });
    value.unwrap_or_else(|| format!("node {node}"))
}

impl Engine<'_> {
    /// Takes on the snapshot: its running pods end at their runtimes, and
    /// each pending entity becomes a job (in queue order; its index is its
    /// place). Jobs no node could ever hold are left in `never`.
    fn take_on(&mut self, options: &Options, now: i64) -> Result<Vec<Entry>> {
        // Running and terminating pods.
        let snapshot = self.model.lend();
        let placed: Vec<(String, i64)> = snapshot
            .pods
            .iter()
            .filter(|p| !p.pending && p.node.is_some())
            .map(|p| (p.key.clone(), p.started))
            .collect();
        let watch = self.watch.as_mut().expect("estimating");
        let mut ends: Vec<(Duration, String)> = Vec::new();
        for (key, started) in placed {
            let (origin, object) = match self.model.object("Pod", &key) {
                Some(shared) => match &shared.1 {
                    Object::Pod(object) => (shared.0.file.clone(), object.clone()),
                    _ => continue,
                },
                None => continue,
            };
            if let Some(deleted) = object.metadata.deletion_timestamp.as_ref() {
                let left = (deleted.0.as_second() - now).max(0) as u64;
                // A victim of a preemption still terminating: its preemptor
                // may not preempt again meanwhile.
                let disrupted = object
                    .status
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|c| {
                        c.iter()
                            .any(|c| c.type_ == "DisruptionTarget" && c.status == "True")
                    });
                if disrupted {
                    self.preempted.insert(key.clone());
                }
                watch.sources.insert(key.clone(), Source::Deletion);
                ends.push((Duration::from_secs(left), key));
                continue;
            }
            match options.runtime(&origin, &object)? {
                Some((runtime, source)) => {
                    let started = if started > 0 { started } else { now };
                    let ran = Duration::from_secs((now - started).max(0) as u64);
                    watch.sources.insert(key.clone(), source);
                    ends.push((runtime.saturating_sub(ran), key));
                }
                None => {
                    watch.sources.insert(key, Source::Unknown);
                }
            }
        }
        for (at, pod) in ends {
            self.schedule(at, Event::Gone { pod });
        }
        // Pending entities, in queue order.
        let snapshot = self.model.lend();
        let entities: Vec<Entity> = scheduler::queue::queue(snapshot);
        let mut entries = Vec::with_capacity(entities.len());
        for (index, entity) in entities.into_iter().enumerate() {
            let index = index as u32;
            let (entry, run) = self.job_of(entity, options)?;
            for w in 0..run.spec.workers {
                self.pods.insert(run.pod_key(w), (index, w));
            }
            if let Entity::Group(_) = entity {
                self.groups.insert(entry.name.clone(), index);
            }
            self.running.insert(index, run);
            self.recorder.arrived(Duration::ZERO);
            self.total_jobs += 1;
            if let Some(reason) = self.never_fits(index) {
                let watch = self.watch.as_mut().expect("estimating");
                watch.unstarted.insert(index, Unstarted::Never(reason));
            }
            entries.push(entry);
        }
        Ok(entries)
    }

    /// The replay job of a pending entity: its pending pods, in units of
    /// what each needs running.
    fn job_of(&mut self, entity: Entity, options: &Options) -> Result<(Entry, JobRun)> {
        let snapshot = self.model.lend();
        let (key, ..) = entity_key(snapshot, entity);
        let (kind, name) = key.split_once(' ').expect("kind and name");
        let kind: &'static str = match kind {
            "PodGroup" => "PodGroup",
            "CompositePodGroup" => "CompositePodGroup",
            _ => "Pod",
        };
        let name = name.to_string();
        // The PodGroups of the entity (none for a lone pod).
        let groups: Vec<u32> = match entity {
            Entity::Pod(_) => Vec::new(),
            Entity::Group(g) => vec![g],
            Entity::Tree(c) => (0..snapshot.groups.len() as u32)
                .filter(|&g| snapshot.root_of(g) == Some(c))
                .collect(),
        };
        let mut pods: Vec<PodId> = Vec::new();
        let mut units: Vec<Unit> = Vec::new();
        let mut add = |pending: Vec<PodId>, need: Option<u32>, pods: &mut Vec<PodId>| {
            let first = pods.len() as u32;
            let last = first + pending.len() as u32;
            match need {
                Some(need) if !pending.is_empty() => units.push(Unit::new(first..last, need)),
                _ => units.extend((first..last).map(|w| Unit::new(w..w + 1, 1))),
            }
            pods.extend(pending);
        };
        match entity {
            Entity::Pod(p) => add(vec![p], None, &mut pods),
            _ => {
                for &g in &groups {
                    let group = &snapshot.groups[g as usize];
                    let (pending, others): (Vec<PodId>, Vec<PodId>) = group
                        .members
                        .iter()
                        .partition(|&&m| snapshot.pods[m as usize].pending);
                    let running = others
                        .iter()
                        .filter(|&&m| !snapshot.pods[m as usize].terminating)
                        .count() as u32;
                    // A gang with members running needs the rest of its
                    // minCount; one admitted already, each pod on its own.
                    let need = group
                        .min_count()
                        .filter(|&min| min > running)
                        .map(|min| (min - running).min(pending.len() as u32));
                    add(pending, need, &mut pods);
                }
            }
        }
        if pods.is_empty() {
            bail!("{key}: a pending entity without pending pods");
        }
        let topology_key = groups.iter().find_map(|&g| {
            snapshot.groups[g as usize]
                .spec
                .as_ref()
                .and_then(|s| s.topology_key.clone())
        });
        let names: Vec<String> = pods
            .iter()
            .map(|&p| snapshot.pods[p as usize].key.clone())
            .collect();
        // Each pod's runtime; the entity's is the longest (for ever if one
        // is).
        let mut runtime = Some((Duration::ZERO, Source::Unknown));
        let mut first: Option<(String, Pod)> = None;
        for key in &names {
            let Some(shared) = self.model.object("Pod", key) else {
                bail!("{key}: a pending pod not in the model");
            };
            let Object::Pod(pod) = &shared.1 else {
                bail!("{key}: not a pod");
            };
            let origin = shared.0.file.clone();
            let own = options.runtime(&origin, pod)?;
            runtime = match (runtime, own) {
                (Some(longest), Some(own)) if own.0 > longest.0 || longest.1 == Source::Unknown => {
                    Some(own)
                }
                (Some(longest), Some(_)) => Some(longest),
                _ => None,
            };
            if first.is_none() {
                first = Some((origin, (**pod).clone()));
            }
        }
        let (origin, pod) = first.expect("at least one pending pod");
        let (duration, source) = runtime.unwrap_or((super::FOREVER, Source::Unknown));
        let watch = self.watch.as_mut().expect("estimating");
        for key in &names {
            watch.sources.insert(key.clone(), source.clone());
        }
        let (namespace, short) = name.split_once('/').unwrap_or(("default", &name));
        let spec_pod = pod.spec.as_ref();
        let priority_class = spec_pod
            .and_then(|s| s.priority_class_name.clone())
            .unwrap_or_default();
        let job = Job {
            origin: origin.clone(),
            namespace: namespace.to_string(),
            name: short.to_string(),
            submit: Duration::ZERO,
            duration,
            workers: pods.len() as u32,
            // The entity's PodGroup, which ending the job deletes (a
            // CompositePodGroup's are left as they are).
            grouping: if matches!(entity, Entity::Group(_)) {
                Grouping::Basic
            } else {
                Grouping::None
            },
            requests: gpu_requests(&pod),
            node_selector: Default::default(),
            node_affinity: Default::default(),
            priority_class: (!priority_class.is_empty()).then(|| priority_class.clone()),
            priority_class_at: origin,
            topology_key,
            disruption: Disruption::Pod,
            checkpoint: None,
            backoff_limit: 0,
            ignore_disruptions: false,
            grace_period: Duration::from_secs(
                spec_pod
                    .and_then(|s| s.termination_grace_period_seconds)
                    .unwrap_or(30)
                    .max(0) as u64,
            ),
            roles: Vec::new(),
        };
        let mut run = JobRun::new(Arc::new(job), Grouping::None);
        run.units = units;
        run.names = Some(
            names
                .iter()
                .map(|k| k.split_once('/').map_or(k.clone(), |(_, n)| n.to_string()))
                .collect(),
        );
        for worker in &mut run.workers {
            worker.phase = Phase::Pending;
        }
        let entry = Entry {
            kind,
            job: format!("{namespace}/{short}"),
            name: name.clone(),
            pods: pods.len() as u32,
            priority_class,
        };
        Ok((entry, run))
    }

    /// Why each job still waiting at the end waits: the pods that run for
    /// ever on nodes it could use, else its longest wait.
    pub(super) fn explain_unstarted(&mut self) {
        let snapshot = self.model.lend();
        let watch = self.watch.as_mut().expect("estimating");
        let mut jobs: Vec<(&u32, &JobRun)> = self.running.iter().collect();
        jobs.sort_unstable_by_key(|(i, _)| **i);
        for (&index, run) in jobs {
            if run.all_started || watch.unstarted.contains_key(&index) {
                continue;
            }
            let pending = (0..run.spec.workers)
                .find(|&w| run.workers[w as usize].phase == Phase::Pending)
                .and_then(|w| snapshot.pod_named(&run.pod_key(w)));
            // Pods that run for ever on nodes it could use, but its own.
            let own = format!("{}/{}", run.spec.namespace, run.spec.name);
            let mut blockers = BTreeSet::new();
            let mut waits_for_own = false;
            if let Some(p) = pending {
                for pod in &snapshot.pods {
                    let Some(node) = pod.node else { continue };
                    if pod.pending
                        || watch.sources.get(&pod.key) != Some(&Source::Unknown)
                        || crate::filters::static_check(snapshot, p, node).is_err()
                    {
                        continue;
                    }
                    let owner = pod.group.map_or_else(
                        || pod.key.clone(),
                        |g| snapshot.groups[g as usize].key.clone(),
                    );
                    if owner != own && self.pods.get(&pod.key).is_none_or(|(j, _)| *j != index) {
                        blockers.insert(owner);
                    } else {
                        waits_for_own = true;
                    }
                }
            }
            let unstarted = match blockers.iter().next() {
                Some(first) => Unstarted::Unknown(match blockers.len() - 1 {
                    0 => format!("waits for {first}, whose runtime is unknown: not before it ends"),
                    n => format!(
                        "waits for {first} and {n} more, whose runtimes are unknown: not before one ends"
                    ),
                }),
                None if waits_for_own => Unstarted::Unknown(
                    "waits for its own running pods, whose runtime is unknown: not before they end"
                        .into(),
                ),
                // Everything that could end has: nothing will change.
                None => {
                    let mut reason = run.longest_wait();
                    if reason.is_empty() {
                        reason = if run.attempts == 0 {
                            "the scheduler never tried it (held before its queue)".into()
                        } else {
                            "no plugin gave a reason".into()
                        };
                    }
                    Unstarted::Never(format!(
                        "never starts, even once every pod that ends has: {reason}"
                    ))
                }
            };
            watch.unstarted.insert(index, unstarted);
        }
    }
}

/// The GPU requests of `pod` (its first container asking for one), for the
/// GPU-seconds a preemption loses.
fn gpu_requests(pod: &Pod) -> BTreeMap<String, String> {
    let containers = pod.spec.iter().flat_map(|s| &s.containers);
    containers
        .filter_map(|c| c.resources.as_ref()?.requests.as_ref())
        .flat_map(|r| r.iter())
        .filter(|(name, _)| *name == trace::GPU_RESOURCE)
        .map(|(name, q)| (name.clone(), q.0.clone()))
        .take(1)
        .collect()
}

/// [`estimate`] of the snapshot in `files` (none: the bundled default).
pub fn estimate_files(
    files: &[std::path::PathBuf],
    read: &crate::ReadOptions,
    plugins: &mut PluginSet,
    options: &Options,
) -> Result<Estimates> {
    let manifests = crate::read_manifests_with(files, read)?;
    estimate(manifests, plugins, options)
}

/// The page template of [`html`]; the JSON goes where [`PLACEHOLDER`] is.
const TEMPLATE: &str = include_str!("estimate.html");
/// Where the page's data goes.
const PLACEHOLDER: &str = "__WASCHED_ESTIMATES__";

/// A self-contained page titled `title`: a timeline of the estimated
/// starts, each with what it rests on.
pub fn html(title: &str, estimates: &Estimates) -> String {
    #[derive(Serialize)]
    struct Page<'a> {
        title: &'a str,
        estimates: &'a Estimates,
    }
    crate::report::html::fill(TEMPLATE, PLACEHOLDER, &Page { title, estimates })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_as_go_prints_them() {
        assert_eq!(span(0), "now");
        assert_eq!(span(45), "+45s");
        assert_eq!(span(7800), "+2h10m");
        assert_eq!(span(3601), "+1h1s");
    }

    #[test]
    fn the_page_is_self_contained() {
        crate::report::html::is_self_contained(TEMPLATE, PLACEHOLDER).unwrap();
    }
}
