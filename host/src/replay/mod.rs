//! `wasched replay`: a workload trace driven through the scheduling cycle in
//! virtual time.
//!
//! The cluster is an incremental [`Model`], as `wasched shadow` keeps one;
//! the replay plays the parts of the API server, the kubelets and the Job
//! controller around it, and kube-scheduler's queue ([`queue`]) decides
//! what is tried when. At each instant, in this order:
//!
//! 1. work that completes: a job's pods end and are deleted;
//! 2. victims of preemption whose grace period is over are deleted;
//! 3. the Job controller's replacement pods are created;
//! 4. jobs of the trace arrive (their PodGroup and pods are created);
//! 5. the queue's timers run (backoff expiries, the unschedulable flush);
//! 6. the scheduler pops the active queue (or, when it is empty, the
//!    backoff queue) and runs the cycle over what it popped, in pop order,
//!    until nothing is left to pop; each batch's bindings and preemptions
//!    are cluster events for the next.
//!
//! Events of one kind at one instant keep the order they were made in
//! (arrivals: the trace's order). Scheduling takes no virtual time.

pub mod alibaba;
mod controllers;
pub mod estimate;
pub mod generate;
mod groups;
pub mod manifests;
pub mod objects;
pub mod pictures;
pub mod queue;
pub mod report;
pub mod requeue;
pub mod stats;
pub mod trace;
pub mod whatif;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::framework::PluginSet;
use crate::manifest::Object;
use crate::model::{Model, Snapshot};
use crate::outcome::Outcome;
use crate::scheduler::{self, Entity, RunOptions};
pub use queue::QueueConfig;
pub use report::{JobRow, Sink, Summary};
use requeue::{Action, Resource};
use stats::{Level, round};
pub use trace::Job;

/// How a replay runs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Stop at this virtual time (jobs not done are reported unfinished).
    pub until: Option<Duration>,
    /// The queue's configuration.
    pub queue: QueueConfig,
    /// The time series' first resolution (it widens as time goes on);
    /// `None`: 60 s.
    pub resolution: Option<Duration>,
    /// Check the replay's invariants after every instant (tests; it costs
    /// a pass over the cluster each time): no node holds more than it
    /// has, a job that runs has the pods it needs running, and every job
    /// that arrived is waiting, running or ended.
    pub check_invariants: bool,
    /// kube-scheduler's `GenericWorkload` feature gate off (v1.37's
    /// default; the replay otherwise takes it as on): no PodGroup is
    /// created, pods carry no scheduling group and are scheduled one by
    /// one, with pod-level preemption. A gang job still makes progress
    /// only while `minCount` of its pods run, so a partial gang holds
    /// its nodes.
    pub generic_workload_off: bool,
    /// The Unix second virtual time 0 stands for, in the objects'
    /// timestamps; `None`: [`objects::EPOCH`].
    pub epoch: Option<i64>,
    /// Stop once every job has started (no stall is noted: what never
    /// starts is reported unfinished).
    pub stop_once_started: bool,
}

/// Where a replay is, for a progress line.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Progress {
    /// Virtual time reached.
    pub now: Duration,
    /// Events handled so far.
    pub events: u64,
    /// Jobs ended so far.
    pub ended: u64,
    /// Jobs in the trace.
    pub jobs: u64,
}

/// The Job controller's delay before it replaces failed pods, after
/// `failures` pod failures since the job's last success (ignored ones
/// included): 10 s, doubled per failure, at most 10 min
/// (`DefaultJobPodFailureBackOff`, `MaxJobPodFailureBackOff`), counted
/// from the last failure.
pub fn recreation_delay(failures: u32) -> Duration {
    const INITIAL: Duration = Duration::from_secs(10);
    const MAX: Duration = Duration::from_secs(600);
    if failures == 0 {
        return Duration::ZERO;
    }
    INITIAL
        .saturating_mul(1u32 << (failures - 1).min(16))
        .min(MAX)
}

/// What happens at an instant, in the order of the kinds at one instant.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    /// A unit of a job completes its work (if its generation still holds).
    Complete {
        job: u32,
        unit: u32,
        generation: u64,
    },
    /// A terminating pod is gone.
    Gone { pod: String },
    /// The Job controller creates a replacement for a worker.
    Recreate { job: u32, worker: u32 },
}

impl Event {
    fn rank(&self) -> u8 {
        match self {
            Event::Complete { .. } => 0,
            Event::Gone { .. } => 1,
            Event::Recreate { .. } => 2,
        }
    }
}

/// An event at its time; ordered by (time, kind, sequence).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Timed {
    at: Duration,
    rank: u8,
    seq: u64,
    event: Event,
}

impl Ord for Timed {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.rank, self.seq).cmp(&(other.at, other.rank, other.seq))
    }
}

impl PartialOrd for Timed {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Where a worker's current pod is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Pending,
    Nominated,
    Running,
    Terminating,
    /// Gone, a replacement to come (or none: the job ended).
    Gone,
    /// Completed.
    Done,
}

#[derive(Debug, Clone)]
struct Worker {
    incarnation: u32,
    phase: Phase,
}

/// Pods that make progress together: a gang's pods, or one pod of a basic
/// group or a plain Job.
#[derive(Debug, Clone)]
struct Unit {
    workers: std::ops::Range<u32>,
    need: u32,
    /// Work saved (what a restart resumes from).
    saved: Duration,
    /// Work done since the last save started at this time.
    running_since: Option<Duration>,
    /// Invalidates a `Complete` event scheduled before an interruption.
    generation: u64,
    done: bool,
}

/// A job of the trace while it is in the cluster.
#[derive(Debug)]
struct JobRun {
    spec: Arc<Job>,
    workers: Vec<Worker>,
    units: Vec<Unit>,
    started: Option<Duration>,
    attempts: u32,
    preempted: u32,
    /// The instant of the last preemption counted.
    preempted_at: Option<Duration>,
    /// Each preemption's instant, seconds.
    preemptions: Vec<f64>,
    /// Failures counted against `backoffLimit`.
    failures: u32,
    /// Failures since the last pod succeeded (the replacement delay).
    failures_since_success: u32,
    gpu_seconds_lost: f64,
    flaps: u32,
    /// Admitted or nominated since it last went back to pending.
    admitted: bool,
    /// The reason it waits now, since when.
    waiting: Option<(String, Duration)>,
    /// Time waited per reason (at most [`REASONS`] kept).
    waited: BTreeMap<String, Duration>,
    /// The node of each binding of its pods, in order.
    nodes: Vec<String>,
    /// Every unit has started once: every pod it needs ran.
    all_started: bool,
    /// Its pods' names when they are not the trace's (`NAME-0` …): a
    /// snapshot's pending pods, taken on as they are.
    names: Option<Vec<String>>,
}

/// The duration of a job that runs until deleted (a snapshot's pod that
/// gives no runtime, [`estimate`]).
pub const FOREVER: Duration = Duration::MAX;

/// Most pops of the queue at one instant before the replay gives up (a
/// queue that never settles would be a bug, never a long wait).
const MAX_POPS_PER_INSTANT: usize = 100_000;

/// Most job shapes whose [`Engine::never_fits`] answer is kept (all are
/// forgotten when one more comes).
const NEVER_FITS_KEPT: usize = 4096;

/// Most distinct wait reasons kept per job.
const REASONS: usize = 8;

impl JobRun {
    /// A job arriving; `units` is the grouping its work needs (a gang's
    /// `minCount` running), which its pods' own may lack (the
    /// `GenericWorkload` gate off).
    fn new(spec: Arc<Job>, units: trace::Grouping) -> Self {
        let workers = (0..spec.workers)
            .map(|_| Worker {
                incarnation: 0,
                phase: Phase::Pending,
            })
            .collect();
        let units = match units {
            trace::Grouping::Gang(min) => vec![Unit::new(0..spec.workers, min)],
            _ => (0..spec.workers).map(|w| Unit::new(w..w + 1, 1)).collect(),
        };
        Self {
            spec,
            workers,
            units,
            started: None,
            attempts: 0,
            preempted: 0,
            preempted_at: None,
            preemptions: Vec::new(),
            failures: 0,
            failures_since_success: 0,
            gpu_seconds_lost: 0.0,
            flaps: 0,
            admitted: false,
            waiting: None,
            waited: BTreeMap::new(),
            nodes: Vec::new(),
            all_started: false,
            names: None,
        }
    }

    /// The name of worker `worker`'s current pod.
    fn pod_name(&self, worker: u32) -> String {
        let incarnation = self.workers[worker as usize].incarnation;
        match &self.names {
            Some(names) if incarnation == 0 => names[worker as usize].clone(),
            _ => objects::pod_name(&self.spec, worker, incarnation),
        }
    }

    /// `namespace/name` of worker `worker`'s current pod.
    fn pod_key(&self, worker: u32) -> String {
        format!("{}/{}", self.spec.namespace, self.pod_name(worker))
    }

    fn unit_of(&self, worker: u32) -> usize {
        self.units
            .iter()
            .position(|u| u.workers.contains(&worker))
            .expect("every worker is in a unit")
    }

    fn running(&self, unit: usize) -> u32 {
        self.units[unit]
            .workers
            .clone()
            .filter(|&w| self.workers[w as usize].phase == Phase::Running)
            .count() as u32
    }

    /// Ends the current wait (if any) at `now`.
    fn stop_waiting(&mut self, now: Duration) {
        if let Some((reason, since)) = self.waiting.take() {
            *self.waited.entry(reason).or_default() += now.saturating_sub(since);
            if self.waited.len() > REASONS {
                let least = self
                    .waited
                    .iter()
                    .min_by_key(|(r, d)| (**d, Reverse((*r).clone())))
                    .map(|(r, _)| r.clone())
                    .expect("not empty");
                self.waited.remove(&least);
            }
        }
    }

    fn wait_for(&mut self, reason: &str, now: Duration) {
        if self.waiting.as_ref().is_some_and(|(r, _)| r == reason) {
            return;
        }
        self.stop_waiting(now);
        self.waiting = Some((reason.to_string(), now));
    }

    fn longest_wait(&self) -> String {
        self.waited
            .iter()
            .max_by_key(|(r, d)| (**d, Reverse((*r).clone())))
            .map(|(r, _)| r.clone())
            .unwrap_or_default()
    }
}

impl Unit {
    fn new(workers: std::ops::Range<u32>, need: u32) -> Self {
        Self {
            workers,
            need,
            saved: Duration::ZERO,
            running_since: None,
            generation: 0,
            done: false,
        }
    }
}

/// Runs a replay of `jobs` over `model` with `plugins`; rows go to `sink`
/// as jobs end, `progress` hears where it is now and then.
///
/// `jobs` come in submit order and are taken one at a time as they
/// arrive, so a trace generated or read as it goes is never held whole. A
/// job naming a PriorityClass the cluster lacks stops the replay when it
/// arrives; [`check_classes`] finds them all before.
pub fn replay<J>(
    model: Model,
    jobs: J,
    plugins: &mut PluginSet,
    options: &Options,
    sink: &mut dyn Sink,
    progress: &mut dyn FnMut(Progress),
) -> Result<Summary>
where
    J: IntoIterator<Item = Job>,
    J::IntoIter: ExactSizeIterator,
{
    let engine = Engine::new(model, plugins, options)?;
    replay_with(engine, jobs.into_iter(), sink, progress)
}

/// [`replay`] with each of the cycle's reuses on or off (every choice
/// replays the same), for the test that holds each off against on. Not
/// part of the stable API: present with the `reuse-ablation` feature.
#[cfg(feature = "reuse-ablation")]
pub fn replay_reusing(
    model: Model,
    jobs: Vec<Job>,
    plugins: &mut PluginSet,
    options: &Options,
    sink: &mut dyn Sink,
    reuse: scheduler::ablation::Reuse,
) -> Result<Summary> {
    let mut engine = Engine::new(model, plugins, options)?;
    engine.reuse = reuse;
    replay_with(engine, jobs.into_iter(), sink, &mut |_| {})
}

fn replay_with(
    mut engine: Engine,
    jobs: impl ExactSizeIterator<Item = Job>,
    sink: &mut dyn Sink,
    progress: &mut dyn FnMut(Progress),
) -> Result<Summary> {
    engine.total_jobs = jobs.len() as u64;
    let stalled = engine.run(jobs, sink, progress)?;
    let end = engine.now;
    let mut recorder = engine.recorder;
    recorder.series.set(end, engine.last_level);
    let mut summary = recorder.finish(end);
    summary.notes.extend(stalled);
    Ok(summary)
}

/// How long nothing may change, with nothing left to arrive or complete,
/// before the replay is taken as stalled: two of the queue's longest
/// holds, so every pending entity was retried since the last change.
fn stall_limit(queue: &QueueConfig) -> Duration {
    (queue.max_in_unschedulable + queue.backoff.max) * 2
}

/// What [`Engine::never_fits`] reads of a job: for each kind of its pods,
/// their static signature, non-zero requests by resource and how many;
/// the pods it needs, and whether each of its pods runs on its own.
type JobShape = (Vec<PodKind>, u32, bool);

/// One kind of a job's pods, as [`Engine::never_fits`] reads it: their
/// static signature, non-zero requests by resource, and how many.
type PodKind = (Arc<str>, Vec<(String, u64)>, u32);

/// The replay's state.
struct Engine<'a> {
    model: Model,
    plugins: &'a mut PluginSet,
    options: Options,
    now: Duration,
    events: BinaryHeap<Reverse<Timed>>,
    seq: u64,
    queue: queue::Queue,
    /// The cluster events each loaded plugin registers.
    requeue: requeue::Requeue,
    /// Cluster events the queue has not heard yet.
    heard: Vec<requeue::Event>,
    /// Jobs in the cluster, by trace index.
    running: HashMap<u32, JobRun>,
    /// Pod key → (job, worker) of every trace pod in the cluster.
    pods: HashMap<String, (u32, u32)>,
    /// PodGroup key → job, for the jobs in the cluster with a PodGroup.
    groups: HashMap<String, u32>,
    /// Victims preempted by the scheduler and still terminating.
    preempted: std::collections::BTreeSet<String>,
    /// kube-scheduler's `nextStartNodeIndex`.
    search_start: std::cell::Cell<usize>,
    /// What each run of the cycle leaves the next (the nodes never change).
    kept: scheduler::Kept,
    /// What the cycle reuses (all of it but in the test that holds each
    /// reuse off against on).
    reuse: scheduler::Reuse,
    recorder: report::Recorder,
    last_level: Level,
    /// Cluster GPU and CPU (millicores), for the shares.
    capacity: (u64, u64),
    events_handled: u64,
    ended: u64,
    total_jobs: u64,
    /// Jobs that exceeded their backoff limit, to end.
    failing: Vec<u32>,
    /// Workers whose pods the Job controller replaces once terminating.
    to_replace: Vec<(u32, u32)>,
    /// What a start-time estimate watches ([`estimate`]).
    watch: Option<estimate::Watch>,
    /// [`Engine::never_fits`]'s answers, by what it reads of a job
    /// ([`JobShape`]).
    never_fits_known: HashMap<JobShape, Option<String>>,
}

impl<'a> Engine<'a> {
    fn new(mut model: Model, plugins: &'a mut PluginSet, options: &Options) -> Result<Self> {
        let snapshot = model.lend();
        let capacity = capacity(snapshot);
        let mut queue = queue::Queue::new(options.queue);
        for (priority, entity) in scheduler::queue::prioritized(snapshot) {
            let (key, pods, group) = entity_key(snapshot, entity);
            queue.add(&key, priority, pods, group, Duration::ZERO);
        }
        let requeue = requeue::Requeue::new(plugins)?;
        let series = report::Recorder::new(stats::Series::new(
            options.resolution.unwrap_or(Duration::from_secs(60)),
        ));
        Ok(Self {
            model,
            plugins,
            options: options.clone(),
            now: Duration::ZERO,
            events: BinaryHeap::new(),
            seq: 0,
            queue,
            requeue,
            heard: Vec::new(),
            running: HashMap::new(),
            pods: HashMap::new(),
            groups: HashMap::new(),
            preempted: Default::default(),
            search_start: std::cell::Cell::new(0),
            kept: scheduler::Kept::default(),
            reuse: scheduler::Reuse::default(),
            recorder: series,
            last_level: Level::default(),
            capacity,
            events_handled: 0,
            ended: 0,
            total_jobs: 0,
            failing: Vec::new(),
            to_replace: Vec::new(),
            watch: None,
            never_fits_known: HashMap::new(),
        })
    }

    /// The Unix second of now, for the objects' timestamps.
    fn clock(&self) -> i64 {
        self.options.epoch.unwrap_or(objects::EPOCH) + self.now.as_secs() as i64
    }

    fn schedule(&mut self, at: Duration, event: Event) {
        self.seq += 1;
        let rank = event.rank();
        self.events.push(Reverse(Timed {
            at,
            rank,
            seq: self.seq,
            event,
        }));
    }

    /// Runs the replay to its end; says why if it stopped because nothing
    /// could change any more (pods holding nodes for gangs that can never
    /// all run: the `GenericWorkload` gate off).
    fn run(
        &mut self,
        jobs: impl Iterator<Item = Job>,
        sink: &mut dyn Sink,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Option<String>> {
        let mut arrivals = jobs.enumerate().peekable();
        let mut last_report = std::time::Instant::now();
        let mut changed_at = self.now;
        let mut changes = self.recorder.changes();
        let mut stalled = None;
        loop {
            let next_event = self.events.peek().map(|Reverse(t)| t.at);
            let next_arrival = arrivals.peek().map(|(_, j)| j.submit);
            // The snapshot's own pending entities are active from the start.
            let next_timer = if self.queue.has_active() {
                Some(self.now)
            } else {
                self.queue.next_timer(self.now)
            };
            if next_event.is_none()
                && next_arrival.is_none()
                && !self.running.is_empty()
                && self.now.saturating_sub(changed_at) > stall_limit(&self.options.queue)
            {
                if self.options.stop_once_started {
                    break;
                }
                stalled = Some(format!(
                    "the replay stalled at {:.0} s: nothing arrived, completed, was bound or evicted since {:.0} s; the {} job(s) left hold pods that cannot all run (a gang's pods without the workload API) and are reported unfinished",
                    self.now.as_secs_f64(),
                    changed_at.as_secs_f64(),
                    self.running.len()
                ));
                break;
            }
            let Some(next) = [next_event, next_arrival, next_timer]
                .into_iter()
                .flatten()
                .min()
            else {
                break;
            };
            if self.options.until.is_some_and(|until| next > until) {
                self.advance(self.options.until.expect("checked"));
                break;
            }
            self.advance(next);
            while let Some(Reverse(timed)) = self.events.peek() {
                if timed.at != next {
                    break;
                }
                let Reverse(timed) = self.events.pop().expect("peeked");
                self.events_handled += 1;
                self.handle(timed.event, sink)?;
            }
            while arrivals.peek().is_some_and(|(_, j)| j.submit == next) {
                let (index, job) = arrivals.next().expect("peeked");
                self.events_handled += 1;
                self.arrive(index as u32, job, sink)?;
            }
            self.queue.tick(next);
            self.schedule_queued(sink)?;
            if next_event == Some(next)
                || next_arrival == Some(next)
                || self.recorder.changes() != changes
            {
                changed_at = next;
                changes = self.recorder.changes();
            }
            self.measure();
            if self.options.check_invariants {
                self.check_invariants()
                    .with_context(|| format!("invariant broken at {:?}", self.now))?;
            }
            if last_report.elapsed() >= Duration::from_millis(250) {
                last_report = std::time::Instant::now();
                progress(self.progress());
            }
            if self.options.stop_once_started
                && arrivals.peek().is_none()
                && self.running.values().all(|r| r.all_started)
            {
                break;
            }
        }
        if self.watch.is_some() {
            self.explain_unstarted();
        }
        // What is left is unfinished.
        let mut left: Vec<u32> = self.running.keys().copied().collect();
        left.sort_unstable();
        for job in left {
            self.end_job(job, "Unfinished", sink)?;
        }
        progress(self.progress());
        Ok(stalled)
    }

    fn progress(&self) -> Progress {
        Progress {
            now: self.now,
            events: self.events_handled,
            ended: self.ended,
            jobs: self.total_jobs,
        }
    }

    fn advance(&mut self, to: Duration) {
        self.now = to.max(self.now);
    }

    // -- The cluster's side ------------------------------------------------

    fn handle(&mut self, event: Event, sink: &mut dyn Sink) -> Result<()> {
        match event {
            Event::Complete {
                job,
                unit,
                generation,
            } => self.complete(job, unit, generation, sink),
            Event::Gone { pod } => {
                self.gone(&pod);
                Ok(())
            }
            Event::Recreate { job, worker } => self.recreate(job, worker),
        }
    }

    /// A job arrives: its PodGroup and pods are created and queued.
    fn arrive(&mut self, index: u32, job: Job, sink: &mut dyn Sink) -> Result<()> {
        check_classes(&self.model, std::slice::from_ref(&job))?;
        let now = self.now;
        self.recorder.arrived(now);
        // What the job needs running to progress, whatever the API says.
        let units = job.grouping;
        let job = if self.options.generic_workload_off {
            without_workload_api(job)
        } else {
            job
        };
        let spec = Arc::new(job);
        if let Some(group) = objects::pod_group(&spec, now)? {
            self.upsert(group)?;
            let key = format!("{}/{}", spec.namespace, spec.name);
            self.groups.insert(key.clone(), index);
            self.cluster_event(requeue::Event::pod(
                Resource::PodGroup,
                Action::Add,
                Some(key),
            ));
        }
        let mut run = JobRun::new(spec.clone(), units);
        run.waiting = Some(("arrived".into(), now));
        self.running.insert(index, run);
        for worker in 0..spec.workers {
            let name = self.running[&index].pod_name(worker);
            self.create_pod(index, worker, &name)?;
        }
        if let Some(reason) = self.never_fits(index) {
            let run = self.running.get_mut(&index).expect("inserted");
            run.waiting = Some((reason, now));
            return self.end_job(index, "NeverSchedulable", sink);
        }
        self.enqueue(index);
        Ok(())
    }

    fn create_pod(&mut self, job: u32, worker: u32, name: &str) -> Result<()> {
        let spec = self.job_spec(job);
        let pod = objects::pod(&spec, worker, name, self.now)?;
        self.upsert(objects::shared_pod(&spec, pod))?;
        self.pods
            .insert(format!("{}/{name}", spec.namespace), (job, worker));
        // The pod names its job's PodGroup, created before it (read from
        // the job: the model settles new pods only when next lent).
        let group = (spec.grouping != trace::Grouping::None)
            .then(|| format!("{}/{}", spec.namespace, spec.name));
        self.cluster_event(requeue::Event::pod(
            Resource::UnscheduledPod,
            Action::Add,
            group,
        ));
        Ok(())
    }

    fn job_spec(&self, job: u32) -> Arc<Job> {
        match self.running.get(&job) {
            Some(run) => run.spec.clone(),
            None => unreachable!("job {job} is not in the cluster"),
        }
    }

    fn upsert(&mut self, object: crate::model::SharedObject) -> Result<()> {
        let what = object.0.clone();
        self.model
            .upsert(object)
            .with_context(|| format!("the replay's own {what} was refused"))
    }

    /// Queues the job's pending pods: its PodGroup's entity, or each
    /// pending pod's.
    fn enqueue(&mut self, job: u32) {
        let now = self.now;
        let run = &self.running[&job];
        let spec = run.spec.clone();
        let pending: Vec<u32> = (0..spec.workers)
            .filter(|&w| run.workers[w as usize].phase == Phase::Pending)
            .collect();
        let snapshot = self.model.lend();
        match spec.grouping {
            trace::Grouping::None => {
                for w in pending {
                    let key = self.running[&job].pod_key(w);
                    let priority = snapshot
                        .pod_named(&key)
                        .map_or(0, |p| snapshot.pods[p as usize].priority);
                    self.queue
                        .add(&format!("Pod {key}"), priority, 1, false, now);
                }
            }
            _ => {
                if pending.is_empty() {
                    return;
                }
                let key = format!("{}/{}", spec.namespace, spec.name);
                let priority = snapshot
                    .group_named(&key)
                    .and_then(|g| snapshot.groups[g as usize].spec.as_ref())
                    .map_or(0, |s| s.priority);
                self.queue.add(
                    &format!("PodGroup {key}"),
                    priority,
                    pending.len() as u32,
                    true,
                    now,
                );
            }
        }
    }

    /// Why no node could ever hold the job, even empty (in
    /// kube-scheduler's wording); `None` if the nodes could, emptied. Each
    /// of the job's pods is read as the model holds it, so a job of unlike
    /// pods ([`Job::roles`], or a snapshot's pending group of them) never
    /// fits when, each kind of pod counted on the empty nodes alone, fewer
    /// than it needs fit — or, for a job whose pods each run on their own,
    /// when one kind fits nowhere.
    fn never_fits(&mut self, job: u32) -> Option<String> {
        let spec = self.job_spec(job);
        let run = &self.running[&job];
        let needed = run.units.first().map_or(1, |u| u.need);
        let each_alone = run.units.iter().all(|u| u.need <= 1);
        let keys: Vec<String> = (0..spec.workers).map(|w| run.pod_key(w)).collect();
        let snapshot = self.model.lend();
        // Each kind of the job's pods as the model holds them (a job's
        // roles, or a snapshot's group of unlike pods), with the id of its
        // first pod: pods the checks cannot tell apart are one kind (a
        // grace period, a quantity spelt otherwise).
        let mut kinds: Vec<(PodKind, u32)> = Vec::new();
        for key in &keys {
            let pod = snapshot.pod_named(key)?;
            let info = &snapshot.pods[pod as usize];
            let signature = crate::filters::static_signature(info);
            // The same requests, a column a pod lacks asking for none.
            let alike = |other: u32| {
                let other = &snapshot.pods[other as usize].requests;
                let request = |of: &[u64], r: usize| of.get(r).copied().unwrap_or(0);
                (0..info.requests.len().max(other.len()))
                    .all(|r| request(&info.requests, r) == request(other, r))
            };
            match kinds
                .iter_mut()
                .find(|((s, _, _), first)| *s == signature && alike(*first))
            {
                Some(((_, _, count), _)) => *count += 1,
                None => {
                    let requests = info
                        .requests
                        .iter()
                        .enumerate()
                        .filter(|&(_, &q)| q > 0)
                        .map(|(r, &q)| (snapshot.resource_names[r].clone(), q))
                        .collect();
                    kinds.push(((signature, requests, 1), pod));
                }
            }
        }
        // The nodes never change: jobs alike in what the checks read share
        // the answer.
        let alike: JobShape = (
            kinds.iter().map(|(kind, _)| kind.clone()).collect(),
            needed,
            each_alone,
        );
        if let Some(known) = self.never_fits_known.get(&alike) {
            return known.clone();
        }
        let mut fit = 0u64;
        // Why the first kind of pod short of nodes is, and whether it fits
        // nowhere.
        let mut short = None;
        for &((_, _, workers), pod) in &kinds {
            let requests = &snapshot.pods[pod as usize].requests;
            let mut diagnosis = crate::filters::Diagnosis::over(snapshot.node_count());
            let mut of_kind = 0u64;
            for node in 0..snapshot.node_count() as u32 {
                if let Err(rejection) = crate::filters::static_check(snapshot, pod, node) {
                    diagnosis.reject(rejection);
                    continue;
                }
                let mut on_node = u64::from(workers);
                for (r, &request) in requests.iter().enumerate() {
                    if request == 0 {
                        continue;
                    }
                    let fits = snapshot.allocatable(r)[node as usize] / request;
                    if fits == 0 {
                        diagnosis.add(format!("Insufficient {}", snapshot.resource_names[r]));
                    }
                    on_node = on_node.min(fits);
                }
                of_kind += on_node;
            }
            fit += of_kind.min(u64::from(workers));
            let nowhere = of_kind == 0;
            match &short {
                Some((_, true)) => {}
                Some(_) if !nowhere => {}
                _ if of_kind < u64::from(workers) => short = Some((diagnosis, nowhere)),
                _ => {}
            }
        }
        let never = match &short {
            Some((_, true)) if each_alone => true,
            _ => fit < u64::from(needed),
        };
        let answer = never.then(|| {
            let (diagnosis, _) = short.expect("a kind of pod is short when the job never fits");
            format!(
                "never schedulable, even on empty nodes: {}",
                diagnosis.render(snapshot)
            )
        });
        // Bounded: a trace of ever new shapes does not grow the replay.
        if self.never_fits_known.len() >= NEVER_FITS_KEPT {
            self.never_fits_known.clear();
        }
        self.never_fits_known.insert(alike, answer.clone());
        answer
    }

    /// A unit's work completes: its pods end.
    fn complete(
        &mut self,
        job: u32,
        unit: u32,
        generation: u64,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let Some(run) = self.running.get_mut(&job) else {
            return Ok(());
        };
        let u = &mut run.units[unit as usize];
        if u.generation != generation || u.done {
            return Ok(());
        }
        u.done = true;
        u.running_since = None;
        let workers = u.workers.clone();
        run.failures_since_success = 0;
        let spec = run.spec.clone();
        let mut ending = Vec::new();
        for w in workers {
            let phase = run.workers[w as usize].phase;
            if matches!(phase, Phase::Pending | Phase::Nominated | Phase::Running) {
                ending.push((run.pod_key(w), phase));
            }
            let worker = &mut run.workers[w as usize];
            if worker.phase != Phase::Terminating {
                worker.phase = Phase::Done;
            }
        }
        let all_done = run.units.iter().all(|u| u.done);
        self.delete_pods(&ending, spec.grouping);
        if all_done {
            self.end_job(job, "Succeeded", sink)?;
        }
        Ok(())
    }

    /// A job ends: what is left of it is deleted, its row written.
    fn end_job(&mut self, job: u32, result: &'static str, sink: &mut dyn Sink) -> Result<()> {
        let Some(mut run) = self.running.remove(&job) else {
            return Ok(());
        };
        let now = self.now;
        let spec = run.spec.clone();
        let mut ending = Vec::new();
        for w in 0..spec.workers {
            let key = run.pod_key(w);
            match run.workers[w as usize].phase {
                phase @ (Phase::Pending | Phase::Nominated | Phase::Running) => {
                    ending.push((key, phase));
                }
                Phase::Terminating => {
                    // Its deletion is under way; it is no longer the job's.
                    self.pods.remove(&key);
                }
                Phase::Gone | Phase::Done => {}
            }
        }
        self.delete_pods(&ending, spec.grouping);
        if spec.grouping != trace::Grouping::None {
            let key = format!("{}/{}", spec.namespace, spec.name);
            self.queue.remove(&format!("PodGroup {key}"));
            self.model.delete("PodGroup", &key);
            self.groups.remove(&key);
            self.cluster_event(requeue::Event::pod(
                Resource::PodGroup,
                Action::Delete,
                Some(key),
            ));
        }
        // Work of running units is lost if the job failed or the replay
        // ended: not counted as lost to preemption.
        run.stop_waiting(now);
        let end = now;
        let start = run.started;
        let wait = start.unwrap_or(end).saturating_sub(spec.submit);
        let row = JobRow {
            job: format!("{}/{}", spec.namespace, spec.name),
            priority_class: spec.priority_class.clone().unwrap_or_default(),
            workers: spec.workers,
            submit: round(spec.submit.as_secs_f64()),
            start: start.map(|s| round(s.as_secs_f64())),
            end: round(end.as_secs_f64()),
            wait: round(wait.as_secs_f64()),
            result,
            attempts: run.attempts,
            preempted: run.preempted,
            gpu_seconds_lost: round(run.gpu_seconds_lost),
            pending_flaps: run.flaps,
            waited_for: run.longest_wait(),
            nodes: std::mem::take(&mut run.nodes),
            gpus: spec.gpus(),
            preemptions: std::mem::take(&mut run.preemptions),
        };
        self.recorder.ended(&row);
        self.ended += 1;
        sink.job(&row)
    }

    /// A terminating pod is gone: its node's resources are free.
    fn gone(&mut self, key: &str) {
        if self.model.lend().pod_named(key).is_some() {
            self.pod_event(key, Resource::AssignedPod, Action::Delete);
            if let Some(watch) = &mut self.watch {
                let preempted = self.preempted.contains(key);
                watch.left_node(key, &mut self.model, self.now, preempted);
            }
        }
        self.model.delete("Pod", key);
        self.preempted.remove(key);
        if let Some((job, worker)) = self.pods.remove(key)
            && let Some(run) = self.running.get_mut(&job)
        {
            run.workers[worker as usize].phase = Phase::Gone;
            if run.spec.ignore_disruptions {
                // `podReplacementPolicy: Failed` (a podFailurePolicy is
                // set): the replacement waits for the pod to be gone,
                // then for the failure backoff from then.
                let delay = recreation_delay(run.failures_since_success);
                self.schedule(self.now + delay, Event::Recreate { job, worker });
            }
        }
    }

    /// The Job controller creates a replacement pod for a worker.
    fn recreate(&mut self, job: u32, worker: u32) -> Result<()> {
        let Some(run) = self.running.get_mut(&job) else {
            return Ok(());
        };
        let phase = run.workers[worker as usize].phase;
        if !matches!(phase, Phase::Terminating | Phase::Gone) {
            return Ok(());
        }
        if phase == Phase::Terminating {
            // The old pod is no longer counted as the job's.
            let old = run.pod_key(worker);
            self.pods.remove(&old);
        }
        let w = &mut run.workers[worker as usize];
        w.incarnation += 1;
        w.phase = Phase::Pending;
        let name = run.pod_name(worker);
        self.create_pod(job, worker, &name)?;
        self.enqueue(job);
        Ok(())
    }

    // -- The scheduler's side ----------------------------------------------

    /// Pops and runs the queue until nothing is left to pop.
    fn schedule_queued(&mut self, sink: &mut dyn Sink) -> Result<()> {
        // Each pop after the first needs a PodGroup that bound pods and
        // left some: a bounded number per instant.
        for _ in 0..MAX_POPS_PER_INSTANT {
            self.deliver_events();
            let popped = self.queue.pop_all();
            if popped.is_empty() {
                return Ok(());
            }
            self.attempt(popped, sink)?;
        }
        bail!(
            "the scheduling queue did not settle at {:.3} s after {MAX_POPS_PER_INSTANT} pops",
            self.now.as_secs_f64()
        )
    }

    /// One run of the cycle over the popped entities, in pop order.
    fn attempt(&mut self, popped: Vec<String>, sink: &mut dyn Sink) -> Result<()> {
        let now = self.now;
        let snapshot = self.model.lend();
        let mut order = Vec::with_capacity(popped.len());
        let mut attempted = Vec::with_capacity(popped.len());
        // Preemptors whose victims still terminate may not preempt again.
        let mut blocked: HashSet<Entity> = HashSet::new();
        for key in popped {
            let Some(entity) = entity_named(snapshot, &key) else {
                self.queue.remove(&key);
                continue;
            };
            let pending = scheduler::nomination::pending_pods(snapshot, entity);
            if pending.is_empty() {
                self.queue.remove(&key);
                continue;
            }
            if scheduler::nomination::victims_terminating(snapshot, &pending, &self.preempted) {
                blocked.insert(entity);
            }
            order.push(entity);
            attempted.push(key);
        }
        if order.is_empty() {
            return Ok(());
        }
        let may_preempt = |e: Entity| !blocked.contains(&e);
        let options = RunOptions {
            live: true,
            order: Some(&order),
            may_preempt: Some(&may_preempt),
            search_start: Some(&self.search_start),
            kept: Some(&mut self.kept),
            ..RunOptions::default()
        };
        let outcome = scheduler::run_with(snapshot, self.plugins, options, self.reuse);
        let _ = self.plugins.drain_logs();
        self.recorder.count(
            outcome.evictions.len() as u64,
            outcome.placements.len() as u64,
            attempted.len() as u64,
        );
        self.apply(&outcome, &attempted, now, sink)
    }

    /// Makes the cluster what the run decided, and requeues what failed.
    fn apply(
        &mut self,
        outcome: &Outcome,
        attempted: &[String],
        now: Duration,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        // Attempts and wait reasons, per job.
        for key in attempted {
            if let Some(job) = self.job_of_entity(key) {
                self.running.get_mut(&job).expect("running").attempts += 1;
            }
        }
        for unschedulable in &outcome.unschedulable {
            if let Some(&(job, worker)) = self.pods.get(&unschedulable.pod)
                && let Some(run) = self.running.get_mut(&job)
                && run.started.is_none()
            {
                // A nominated pod waits for its victims, whatever its
                // attempts meanwhile say.
                if run.workers[worker as usize].phase != Phase::Nominated {
                    run.wait_for(&unschedulable.reason, now);
                }
            }
        }
        // A group's own reason, for a job that has no other (a snapshot's
        // group whose pods name no reason).
        for decision in outcome.pod_groups.iter().filter(|d| !d.scheduled) {
            if let Some(&job) = self.groups.get(&decision.pod_group)
                && let Some(run) = self.running.get_mut(&job)
                && run.started.is_none()
                && run.waiting.is_none()
                && !decision.reason.is_empty()
            {
                run.wait_for(&decision.reason, now);
            }
        }
        // Bindings.
        let mut started_units: Vec<(u32, usize)> = Vec::new();
        for binding in &outcome.placements {
            self.bind(&binding.pod, &binding.node)?;
            if let Some(&(job, worker)) = self.pods.get(&binding.pod)
                && let Some(run) = self.running.get_mut(&job)
            {
                run.workers[worker as usize].phase = Phase::Running;
                run.admitted = true;
                let unit = run.unit_of(worker);
                if !started_units.contains(&(job, unit)) {
                    started_units.push((job, unit));
                }
            }
        }
        // Nominations.
        for nomination in &outcome.nominations {
            let Some(pod) = self.pod_object(&nomination.pod) else {
                continue;
            };
            // A nomination moved elsewhere frees the old node for pods of
            // at most its priority (`hasNominatedNodeNameChanged`).
            let before = pod
                .status
                .as_ref()
                .and_then(|s| s.nominated_node_name.clone());
            if before.is_some_and(|n| n != nomination.node) {
                self.nomination_released(&nomination.pod);
            }
            let nominated = objects::nominated(pod, &nomination.node);
            self.upsert_pod_like(&nomination.pod, nominated)?;
            if let Some(&(job, worker)) = self.pods.get(&nomination.pod)
                && let Some(run) = self.running.get_mut(&job)
            {
                run.workers[worker as usize].phase = Phase::Nominated;
                run.admitted = true;
                run.wait_for("nominated: waiting for its victims to terminate", now);
            }
        }
        // Preemption victims.
        for eviction in &outcome.evictions {
            self.evict(&eviction.pod)?;
        }
        self.replace();
        // Units whose pods now all run start (or resume) work.
        for (job, unit) in started_units {
            self.maybe_start(job, unit);
        }
        // The queue: an entity with nothing left pending is done; a
        // PodGroup that bound pods and left some goes back to the active
        // queue at once; the rest failed.
        let bound: HashSet<&str> = outcome.placements.iter().map(|b| b.pod.as_str()).collect();
        let snapshot = self.model.lend();
        let mut after: Vec<(&String, u32, bool)> = Vec::with_capacity(attempted.len());
        for key in attempted {
            let entity = entity_named(snapshot, key);
            let pending = entity
                .map(|e| scheduler::nomination::pending_pods(snapshot, e).len() as u32)
                .unwrap_or(0);
            let progressed = match entity {
                Some(Entity::Group(g)) => snapshot.groups[g as usize]
                    .members
                    .iter()
                    .any(|&p| bound.contains(snapshot.pods[p as usize].key.as_str())),
                _ => false,
            };
            after.push((key, pending, progressed));
        }
        for (key, pending, progressed) in after {
            if pending == 0 {
                self.queue.remove(key);
            } else if progressed {
                self.queue.admitted_with_leftovers(key, pending);
            } else {
                let rejectors = key
                    .strip_prefix("Pod ")
                    .and_then(|pod| outcome.rejectors.get(pod))
                    .cloned()
                    .unwrap_or_default();
                self.queue.failed(key, pending, now, rejectors);
            }
        }
        for job in std::mem::take(&mut self.failing) {
            self.end_job(job, "Failed", sink)?;
        }
        Ok(())
    }

    fn job_of_entity(&self, key: &str) -> Option<u32> {
        let (kind, name) = key.split_once(' ')?;
        match kind {
            "Pod" => self.pods.get(name).map(|&(job, _)| job),
            "PodGroup" => self.groups.get(name).copied(),
            _ => None,
        }
    }

    fn pod_object(&self, key: &str) -> Option<k8s_openapi::api::core::v1::Pod> {
        match &self.model.object("Pod", key)?.1 {
            Object::Pod(pod) => Some((**pod).clone()),
            _ => None,
        }
    }

    /// Replaces pod `key` with `pod`, keeping where it was read from.
    fn upsert_pod_like(&mut self, key: &str, pod: k8s_openapi::api::core::v1::Pod) -> Result<()> {
        let origin = self
            .model
            .object("Pod", key)
            .map(|o| o.0.clone())
            .expect("the pod is in the model");
        self.upsert(Arc::new((origin, Object::Pod(Box::new(pod)))))
    }

    fn bind(&mut self, key: &str, node: &str) -> Result<()> {
        let Some(pod) = self.pod_object(key) else {
            return Ok(());
        };
        let mut bound = objects::bound(pod, node, self.clock());
        if let Some(status) = bound.status.as_mut() {
            status.nominated_node_name = None;
        }
        if let Some(run) = self
            .pods
            .get(key)
            .and_then(|(job, _)| self.running.get_mut(job))
        {
            run.nodes.push(node.to_string());
        }
        self.upsert_pod_like(key, bound)?;
        self.pod_event(key, Resource::AssignedPod, Action::Add);
        Ok(())
    }

    /// A victim of preemption starts terminating.
    fn evict(&mut self, key: &str) -> Result<()> {
        let now = self.now;
        let Some(pod) = self.pod_object(key) else {
            return Ok(());
        };
        let grace = pod
            .spec
            .as_ref()
            .and_then(|s| s.termination_grace_period_seconds)
            .unwrap_or(30)
            .max(0) as u64;
        self.upsert_pod_like(key, objects::preempted(pod, self.clock()))?;
        self.pod_event(key, Resource::AssignedPod, Action::Update);
        self.preempted.insert(key.to_string());
        self.schedule(
            now + Duration::from_secs(grace),
            Event::Gone {
                pod: key.to_string(),
            },
        );
        let Some(&(job, worker)) = self.pods.get(key) else {
            return Ok(());
        };
        let Some(run) = self.running.get_mut(&job) else {
            return Ok(());
        };
        run.workers[worker as usize].phase = Phase::Terminating;
        if run.preempted_at != Some(now) {
            run.preempted += 1;
            run.preempted_at = Some(now);
            run.preemptions.push(round(now.as_secs_f64()));
        }
        if run.admitted {
            run.flaps += 1;
            run.admitted = false;
        }
        // The unit's work stops; what was not saved is lost.
        let unit = run.unit_of(worker);
        let spec = run.spec.clone();
        let u = &mut run.units[unit];
        if let Some(since) = u.running_since.take() {
            let total = u.saved + now.saturating_sub(since);
            let saved = match spec.checkpoint {
                Some(every) => {
                    every.saturating_mul((total.as_millis() / every.as_millis().max(1)) as u32)
                }
                None => Duration::ZERO,
            };
            let gpus: f64 = u.workers.clone().map(|w| spec.gpus_of(w)).sum();
            run.gpu_seconds_lost += (total - saved).as_secs_f64() * gpus;
            u.saved = saved;
            u.generation += 1;
        }
        run.wait_for("preempted: waiting for a replacement pod", now);
        // The Job controller: the failure delays replacements whether or
        // not the podFailurePolicy ignores it.
        run.failures_since_success += 1;
        if spec.ignore_disruptions {
            // Not counted; replaced once gone ([`Engine::gone`]).
            return Ok(());
        }
        run.failures += 1;
        if run.failures > spec.backoff_limit {
            return self.fail_job(job);
        }
        // `podReplacementPolicy: TerminatingOrFailed`: a terminating pod
        // counts as failed at once and is replaced after the failure
        // backoff, counted from the deletion, once the Job controller has
        // seen every failure of this instant ([`Engine::replace`]).
        self.to_replace.push((job, worker));
        Ok(())
    }

    /// The Job controller replaces terminating pods, after the failure
    /// backoff of every failure it has seen.
    fn replace(&mut self) {
        for (job, worker) in std::mem::take(&mut self.to_replace) {
            let Some(run) = self.running.get(&job) else {
                continue;
            };
            let delay = recreation_delay(run.failures_since_success);
            self.schedule(self.now + delay, Event::Recreate { job, worker });
        }
    }

    /// The job failed (its backoff limit): its pods are deleted, with
    /// their grace periods; it ends now.
    fn fail_job(&mut self, job: u32) -> Result<()> {
        let Some(run) = self.running.get_mut(&job) else {
            return Ok(());
        };
        run.waiting = Some(("failed: backoffLimit exceeded".into(), self.now));
        let spec = run.spec.clone();
        let running: Vec<(String, Duration)> = (0..spec.workers)
            .filter(|&w| run.workers[w as usize].phase == Phase::Running)
            .map(|w| (run.pod_key(w), spec.shape(w).grace_period))
            .collect();
        for w in &mut run.workers {
            if w.phase == Phase::Running {
                w.phase = Phase::Terminating;
            }
        }
        let now = self.now;
        for (key, grace_period) in running {
            if let Some(pod) = self.pod_object(&key) {
                self.upsert_pod_like(&key, objects::deleting(pod, self.clock()))?;
                self.pod_event(&key, Resource::AssignedPod, Action::Update);
                self.pods.remove(&key);
                self.schedule(now + grace_period, Event::Gone { pod: key });
            }
        }
        self.failing.push(job);
        Ok(())
    }

    /// Starts a unit's work if the pods it needs run.
    fn maybe_start(&mut self, job: u32, unit: usize) {
        let now = self.now;
        let Some(run) = self.running.get_mut(&job) else {
            return;
        };
        let running = run.running(unit);
        let u = &run.units[unit];
        if u.done || u.running_since.is_some() || running < u.need {
            return;
        }
        let remaining = run.spec.duration.saturating_sub(u.saved);
        let generation = u.generation;
        run.units[unit].running_since = Some(now);
        if run.started.is_none() {
            run.started = Some(now);
        }
        run.stop_waiting(now);
        if !run.all_started
            && run
                .units
                .iter()
                .all(|u| u.done || u.running_since.is_some())
        {
            run.all_started = true;
            if let Some(watch) = &mut self.watch {
                watch.started(job, run, &mut self.model, now);
            }
        }
        // A job that runs for ever never completes.
        if run.spec.duration != FOREVER
            && let Some(at) = now.checked_add(remaining)
        {
            self.schedule(
                at,
                Event::Complete {
                    job,
                    unit: unit as u32,
                    generation,
                },
            );
        }
    }

    /// Deletes pods `ending` of one job (each pending, nominated or
    /// running): the events kube-scheduler hears of them, in order, and
    /// the queue entries of lone pods; the model loses them together.
    fn delete_pods(&mut self, ending: &[(String, Phase)], grouping: trace::Grouping) {
        for (key, phase) in ending {
            match phase {
                Phase::Running => {
                    self.pod_event(key, Resource::AssignedPod, Action::Delete);
                    if let Some(watch) = &mut self.watch {
                        watch.left_node(key, &mut self.model, self.now, false);
                    }
                }
                // A pending pod's deletion moves none.
                Phase::Nominated => self.nomination_released(key),
                _ => {}
            }
            self.pods.remove(key);
            if grouping == trace::Grouping::None {
                self.queue.remove(&format!("Pod {key}"));
            }
        }
        self.model
            .delete_pods(ending.iter().map(|(key, _)| key.as_str()));
    }

    /// Pod `key` (still in the model) gave up its nomination (deleted, or
    /// nominated elsewhere): kube-scheduler moves the pods of at most its
    /// priority as an assigned pod's deletion would
    /// (`deletePodFromSchedulingQueue`, `hasNominatedNodeNameChanged`).
    fn nomination_released(&mut self, key: &str) {
        let snapshot = self.model.lend();
        if let Some(p) = snapshot.pod_named(key) {
            let priority = snapshot.pods[p as usize].priority;
            let mut event = self.event_of_pod(key, Resource::AssignedPod, Action::Delete);
            event.at_most_priority = Some(priority);
            self.cluster_event(event);
        }
    }

    /// The event `action` on pod `key` (still in the model), with its
    /// PodGroup.
    fn event_of_pod(&mut self, key: &str, resource: Resource, action: Action) -> requeue::Event {
        let snapshot = self.model.lend();
        let group = snapshot
            .pod_named(key)
            .and_then(|p| snapshot.pods[p as usize].group)
            .map(|g| snapshot.groups[g as usize].key.clone());
        requeue::Event::pod(resource, action, group)
    }

    /// [`Engine::cluster_event`] of [`Engine::event_of_pod`].
    fn pod_event(&mut self, key: &str, resource: Resource, action: Action) {
        let event = self.event_of_pod(key, resource, action);
        self.cluster_event(event);
    }

    /// A cluster event: the queue hears it before its next pop (or at the
    /// end of the run that made it), once per kind and PodGroup.
    fn cluster_event(&mut self, event: requeue::Event) {
        if !self.heard.contains(&event) {
            self.heard.push(event);
        }
    }

    /// The queue hears the events made since it last did: each
    /// unschedulable pod moves if one of them may help it, as the plugins
    /// that rejected it registered ([`requeue`]).
    fn deliver_events(&mut self) {
        if self.heard.is_empty() {
            return;
        }
        let heard = std::mem::take(&mut self.heard);
        let requeue = &self.requeue;
        self.queue.on_event(self.now, |waiting| {
            heard.iter().any(|e| requeue.worth_requeuing(waiting, e))
        });
    }

    /// See [`Options::check_invariants`].
    fn check_invariants(&mut self) -> Result<()> {
        let arrived = self.recorder.arrived_count();
        if arrived != self.running.len() as u64 + self.ended {
            bail!(
                "{arrived} jobs arrived, {} in the cluster and {} ended",
                self.running.len(),
                self.ended
            );
        }
        for run in self.running.values() {
            for (i, unit) in run.units.iter().enumerate() {
                let running = run.running(i);
                if unit.running_since.is_some() && running < unit.need {
                    bail!(
                        "job {} does work with {running} of the {} pods it needs running",
                        run.spec.name,
                        unit.need
                    );
                }
            }
        }
        let snapshot = self.model.lend();
        for r in 0..snapshot.resource_names.len() {
            for (node, (&used, &has)) in snapshot
                .requested(r)
                .iter()
                .zip(snapshot.allocatable(r))
                .enumerate()
            {
                if used > has {
                    bail!(
                        "node {} holds {used} of {} and has {has}",
                        snapshot.nodes[node].name,
                        snapshot.resource_names[r]
                    );
                }
            }
        }
        Ok(())
    }

    /// Records the cluster's level for the time series.
    fn measure(&mut self) {
        let snapshot = self.model.lend();
        let gpu = gpu_milli(snapshot, |r| snapshot.requested(r));
        let cpu = snapshot
            .resource_index("cpu")
            .map_or(0, |r| snapshot.requested(r).iter().sum::<u64>());
        let pending = self
            .running
            .values()
            .filter(|r| r.started.is_none())
            .count() as u64;
        let share = |used: u64, total: u64| {
            if total == 0 {
                0.0
            } else {
                used as f64 / total as f64
            }
        };
        let level = Level {
            gpu_share: share(gpu, self.capacity.0),
            cpu_share: share(cpu, self.capacity.1),
            pending_jobs: pending,
        };
        if level != self.last_level {
            self.recorder.series.set(self.now, level);
            self.last_level = level;
        }
    }
}

/// `job` as the API server keeps it with the `GenericWorkload` gate off:
/// no PodGroup, so no grouping, topology constraint or group disruption.
fn without_workload_api(mut job: Job) -> Job {
    job.grouping = trace::Grouping::None;
    job.topology_key = None;
    job.disruption = trace::Disruption::Pod;
    job
}

/// The cluster's GPUs (in thousandths) and CPU (in the model's units).
fn capacity(snapshot: &Snapshot) -> (u64, u64) {
    let cpu = snapshot
        .resource_index("cpu")
        .map_or(0, |r| snapshot.allocatable(r).iter().sum::<u64>());
    (gpu_milli(snapshot, |r| snapshot.allocatable(r)), cpu)
}

/// Thousandths of a GPU over the nodes, whole GPUs and shares alike;
/// `per_node` gives a resource's amount on each node.
fn gpu_milli<'a>(snapshot: &Snapshot, per_node: impl Fn(usize) -> &'a [u64]) -> u64 {
    let sum = |name: &str| {
        snapshot
            .resource_index(name)
            .map_or(0, |r| per_node(r).iter().sum::<u64>())
    };
    sum(trace::GPU_RESOURCE) * 1000 + sum(trace::GPU_MILLI_RESOURCE)
}

/// The queue's key of an entity, with its pending pods and whether it is
/// a group.
fn entity_key(snapshot: &Snapshot, entity: Entity) -> (String, u32, bool) {
    let pods = scheduler::nomination::pending_pods(snapshot, entity).len() as u32;
    match entity {
        Entity::Pod(p) => (
            format!("Pod {}", snapshot.pods[p as usize].key),
            pods,
            false,
        ),
        Entity::Group(g) => (
            format!("PodGroup {}", snapshot.groups[g as usize].key),
            pods,
            true,
        ),
        Entity::Tree(c) => (
            format!("CompositePodGroup {}", snapshot.composites[c as usize].key),
            pods,
            true,
        ),
    }
}

/// The entity a queue key names in `snapshot` now.
fn entity_named(snapshot: &Snapshot, key: &str) -> Option<Entity> {
    let (kind, name) = key.split_once(' ')?;
    match kind {
        "Pod" => snapshot.pod_named(name).map(Entity::Pod),
        "PodGroup" => {
            let g = snapshot.group_named(name)?;
            let group = &snapshot.groups[g as usize];
            if group.parent.is_some() && group.invalid.is_none() {
                snapshot.root_of(g).map(Entity::Tree)
            } else {
                Some(Entity::Group(g))
            }
        }
        "CompositePodGroup" => snapshot.composite_named(name).map(Entity::Tree),
        _ => None,
    }
}

/// What `wasched replay` reads.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// The cluster: manifest files or directories (none: the bundled
    /// default snapshot).
    pub cluster: Vec<std::path::PathBuf>,
    /// Trace files.
    pub traces: Vec<std::path::PathBuf>,
    /// A public trace's node list to start from instead of `cluster`
    /// (one of [`alibaba`]'s).
    pub cluster_from: Option<std::path::PathBuf>,
    /// How the rows of a public trace are mapped.
    pub mapping: alibaba::Mapping,
    /// How the cluster's manifests are read.
    pub read: crate::ReadOptions,
}

/// Reads the cluster and the traces of `inputs` (every error names its
/// file, line or object), then replays with `plugins` as `options` say.
pub fn replay_files(
    inputs: &Inputs,
    plugins: &mut PluginSet,
    options: &Options,
    sink: &mut dyn Sink,
    progress: &mut dyn FnMut(Progress),
) -> Result<Summary> {
    let mut notes = Vec::new();
    let reading = trace::Reading {
        mapping: inputs.mapping,
        controllers: inputs.read.controllers.clone(),
        skip_unmapped: true,
    };
    let jobs = trace::read_noting(&inputs.traces, &reading, &mut notes)?;
    let model = match &inputs.cluster_from {
        Some(file) => model_of(public_cluster(
            file,
            inputs.mapping,
            &inputs.read,
            &mut notes,
        )?)?,
        None => cluster_model(&inputs.cluster, &inputs.read)?,
    };
    check_classes(&model, &jobs)?;
    let mut summary = replay(model, jobs, plugins, options, sink, progress)?;
    notes.append(&mut summary.notes);
    summary.notes = notes;
    Ok(summary)
}

/// Every PriorityClass a job of `jobs` names exists in `model`'s cluster;
/// the first that does not is named with the trace's file, line and
/// column.
pub fn check_classes(model: &Model, jobs: &[Job]) -> Result<()> {
    for job in jobs {
        if let Some(class) = &job.priority_class
            && model.object("PriorityClass", class).is_none()
        {
            bail!(
                "{}: job {}/{}: field priorityClass: {class:?} is not a PriorityClass of the cluster",
                job.priority_class_at,
                job.namespace,
                job.name
            );
        }
    }
    Ok(())
}

/// The cluster a public trace's node list describes (see [`alibaba`]);
/// rows that cannot be mapped are skipped and said in `notes`.
pub fn public_cluster(
    file: &std::path::Path,
    mapping: alibaba::Mapping,
    read: &crate::ReadOptions,
    notes: &mut Vec<String>,
) -> Result<crate::manifest::Manifests> {
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file).with_context(|| format!("{name}: cannot read"))?;
    let (yaml, skipped) = alibaba::cluster(&name, &text, mapping)?;
    notes.extend(skipped.note(&name));
    crate::read_manifests_text(&name, &yaml, read)
}

/// The cluster as the replay's model: pods being deleted keep their
/// resources until they are gone, as on a live cluster.
pub fn cluster_model(files: &[std::path::PathBuf], read: &crate::ReadOptions) -> Result<Model> {
    model_of(crate::read_manifests_with(files, read)?)
}

/// The replay's model of `manifests` (see [`cluster_model`]).
pub fn model_of(manifests: crate::manifest::Manifests) -> Result<Model> {
    let build = crate::model::BuildOptions {
        live: true,
        ..Default::default()
    };
    Model::build(manifests, &build)
}
