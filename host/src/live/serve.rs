//! `wasched serve`: a second scheduler for a live cluster.
//!
//! Watchers keep the [`Store`] current; one scheduling thread owns the
//! plugins and runs passes. A pass takes the store's objects with what this
//! scheduler has done and the watch has not shown yet laid over them (pods
//! it bound, victims it deleted, preemptors it nominated: kube-scheduler's
//! assumed pods), brings the incremental [`Model`] up to them (only the
//! objects that changed since the last pass are read again; live: pods
//! being deleted keep their node; handles and node change values carry
//! over, so plugins keep per-node work between passes), and runs the
//! cycle over the entities that are due ([`Backoff`]) — live, so a
//! preemptor is nominated, not bound, until its victims are gone. The
//! decisions are then carried out ([`Executor`]) or, with `--dry-run`,
//! only logged and counted.
//!
//! What the loop never does: bind a pod it has bound (the assumed pod
//! stays bound in every later model until the watch shows it), evict a pod
//! twice (a victim is a pod being deleted from then on, and such pods are
//! never victims), start a new preemption for a preemptor whose victims
//! are still terminating on its nominated node (it is held until they are
//! gone), or spin (a pass runs on a change or when a backoff ends, and
//! tries nothing that is not due).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::actions::{self, Action, Executor};
use super::endpoints::{self, Metrics};
use super::gates;
use super::kinds::Served;
use super::leader::{self, LeaseOptions};
use super::store::{self, Held, Shared};
use crate::config::PluginConfig;
use crate::framework::PluginSet;
use crate::manifest::{Manifests, Object};
use crate::model::{BuildOptions, Model, Snapshot, unmodelled};
use crate::scheduler::backoff::Backoff;
use crate::scheduler::{self, Entity, RunOptions};
use crate::{Outcome, Runtime};

/// How `wasched serve` runs.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The cluster's kubeconfig; `None`: `KUBECONFIG`, `~/.kube/config` or
    /// in-cluster.
    pub kubeconfig: Option<PathBuf>,
    /// The pods it schedules name this in `spec.schedulerName`.
    pub scheduler_name: String,
    /// A directory of plugin components instead of the bundled ones.
    pub plugins: Option<PathBuf>,
    /// Plugin configuration (as `simulate --config`).
    pub config: PluginConfig,
    /// Decide and report, never bind, evict or write status.
    pub dry_run: bool,
    /// Where `/healthz`, `/readyz` and `/metrics` are served.
    pub address: SocketAddr,
    /// Serve them over HTTPS with this certificate.
    pub tls: Option<endpoints::Tls>,
    /// Coalesce changes for this long before a pass (a burst of created
    /// pods becomes one pass).
    pub settle: Duration,
    /// Elect a leader on this Lease before scheduling (`None`: no election;
    /// a dry run never takes part).
    pub lease: Option<LeaseOptions>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            kubeconfig: None,
            scheduler_name: "wasched".into(),
            plugins: None,
            config: PluginConfig::default(),
            dry_run: false,
            address: ([127, 0, 0, 1], 10260).into(),
            tls: None,
            settle: Duration::from_millis(50),
            lease: Some(LeaseOptions {
                namespace: "kube-system".into(),
                name: "wasched".into(),
            }),
        }
    }
}

/// Runs `serve` until SIGINT or SIGTERM.
pub fn run(options: ServeOptions, runtime: &Runtime) -> Result<()> {
    // Everything that can be wrong with the command line fails before the
    // cluster is touched.
    let tls = options
        .tls
        .as_ref()
        .map(endpoints::Tls::acceptor)
        .transpose()?;
    let mut plugins = crate::load_plugins(runtime, options.plugins.as_deref(), &options.config)?;
    for note in plugins.notes() {
        log::info(note);
    }
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let (client, served) = tokio.block_on(async {
        let client = super::connect(options.kubeconfig.as_deref()).await?;
        let served = Served::discover(&client).await?;
        anyhow::Ok((client, served))
    })?;
    for note in served.notes() {
        log::warn(&note);
    }
    let shared = Shared::new(&served);
    let metrics = Metrics::new(&options.scheduler_name);
    match tokio.block_on(gates::read(&client)) {
        Ok(enabled) => {
            for warning in gates::warnings(&enabled) {
                log::warn(&warning);
            }
            metrics.gates(&enabled);
        }
        Err(e) => log::info(&format!(
            "cannot read the API server's feature gates ({e:#}): fields a gate that is off drops are not detected"
        )),
    }
    let _guard = tokio.enter();
    let address = tokio.block_on(endpoints::serve(
        options.address,
        tls,
        shared.clone(),
        metrics.clone(),
    ))?;
    let scheme = if options.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let shadow = if options.dry_run {
        " (dry run: nothing is bound or evicted)"
    } else {
        ""
    };
    log::info(&format!(
        "wasched serve: scheduler {:?}{shadow}, health and metrics on {scheme}://{address}",
        options.scheduler_name,
    ));
    // A shadow never takes the lease from the scheduler it shadows.
    let lease = options.lease.clone().filter(|_| !options.dry_run);
    let leadership = match &lease {
        None => None,
        Some(lease) => {
            log::info(&format!(
                "waiting for the Lease {}/{}",
                lease.namespace, lease.name
            ));
            let acquired = tokio.block_on(async {
                tokio::select! {
                    held = leader::acquire(client.clone(), lease) => held.map(Some),
                    () = shutdown_signal() => Ok(None),
                }
            })?;
            let Some(leadership) = acquired else {
                log::info("shutting down");
                return Ok(());
            };
            log::info(&format!("leading as {}", leadership.identity));
            Some(leadership)
        }
    };
    store::watch_all(&client, &served, &shared);
    let stop = shared.clone();
    let mut held = leadership.as_ref().map(leader::Leadership::watch);
    tokio.spawn(async move {
        let lost = async {
            match &mut held {
                Some(held) => leader::lost(held).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = shutdown_signal() => log::info("shutting down"),
            () = lost => {
                log::warn("lost the lease: stopping");
                stop.update(|store| store.lost_lease = true);
            }
        }
        stop.update(|store| store.stopping = true);
    });
    let executor = Executor::new(client, &options.scheduler_name);
    let model_options = BuildOptions {
        schedulers: vec![options.scheduler_name.clone()],
        live: true,
    };
    let backoff = Backoff::new(options.config.backoff().unwrap_or_default());
    let mut server = Server {
        options,
        shared,
        metrics,
        executor,
        model: Model::new(&Manifests::default(), &model_options)?,
        backoff,
        overlay: Overlay::default(),
        reported: BTreeMap::new(),
        excluded: BTreeSet::new(),
        search_start: std::cell::Cell::new(0),
    };
    server.serve(&tokio, &mut plugins);
    if server.shared.lock().lost_lease {
        bail!("lost the Lease to another instance: exiting so that two never schedule at once");
    }
    if let Some(leadership) = leadership {
        tokio.block_on(leadership.release());
    }
    Ok(())
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => return std::future::pending().await,
            };
        tokio::select! {
            _ = interrupt => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}

/// What this scheduler did that the watch has not shown yet.
#[derive(Debug, Default)]
struct Overlay {
    /// Pods bound: UID → node.
    bound: BTreeMap<String, String>,
    /// Victims deleted (UIDs).
    deleting: BTreeSet<String>,
    /// Preemptors nominated: UID → node.
    nominated: BTreeMap<String, String>,
}

impl Overlay {
    /// Lays what the watch has not shown yet over the objects of a pass
    /// (copying only the pods it changes), and forgets what the watch has
    /// shown (or what is gone). Returns the pods being deleted as victims
    /// of preemption (`DisruptionTarget` with reason
    /// `PreemptionByScheduler`, or deleted by this scheduler), by key.
    fn apply(&mut self, objects: &mut [Held]) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut preempted = BTreeSet::new();
        for held in objects.iter_mut() {
            let (origin, Object::Pod(pod)) = held.as_ref() else {
                continue;
            };
            let Some(uid) = pod.metadata.uid.clone() else {
                continue;
            };
            seen.insert(uid.clone());
            let bound = pod
                .spec
                .as_ref()
                .is_some_and(|s| s.node_name.as_deref().is_some_and(|n| !n.is_empty()));
            let deleting = pod.metadata.deletion_timestamp.is_some();
            let nominated = pod
                .status
                .as_ref()
                .and_then(|s| s.nominated_node_name.clone());
            if deleting && disrupted_by_scheduler(pod) {
                preempted.insert(origin.name.clone());
            }
            // What the watch shows now is forgotten; what it does not yet
            // is laid over a copy of the pod.
            if bound {
                self.bound.remove(&uid);
            }
            if deleting {
                self.deleting.remove(&uid);
            }
            if self
                .nominated
                .get(&uid)
                .is_some_and(|n| Some(n) == nominated.as_ref())
            {
                self.nominated.remove(&uid);
            }
            let (node, delete, nominate) = (
                self.bound.get(&uid),
                self.deleting.contains(&uid),
                self.nominated.get(&uid),
            );
            if delete {
                preempted.insert(origin.name.clone());
            }
            if node.is_none() && !delete && nominate.is_none() {
                continue;
            }
            let (_, Object::Pod(pod)) = Arc::make_mut(held) else {
                unreachable!("a pod above")
            };
            if let Some(node) = node {
                pod.spec.get_or_insert_default().node_name = Some(node.clone());
            }
            if delete {
                pod.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::now()));
            }
            if let Some(node) = nominate {
                pod.status.get_or_insert_default().nominated_node_name = Some(node.clone());
            }
        }
        self.bound.retain(|uid, _| seen.contains(uid));
        self.deleting.retain(|uid| seen.contains(uid));
        self.nominated.retain(|uid, _| seen.contains(uid));
        preempted
    }
}

/// Whether a pod carries `DisruptionTarget=True` with reason
/// `PreemptionByScheduler`.
fn disrupted_by_scheduler(pod: &k8s_openapi::api::core::v1::Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions.iter().any(|c| {
                c.type_ == "DisruptionTarget"
                    && c.status == "True"
                    && c.reason.as_deref() == Some("PreemptionByScheduler")
            })
        })
}

/// The scheduling thread's state.
struct Server {
    options: ServeOptions,
    shared: Arc<Shared>,
    metrics: Metrics,
    executor: Executor,
    /// The cluster as the scheduler sees it, kept current pass by pass.
    model: Model,
    backoff: Backoff,
    overlay: Overlay,
    /// Pods told why they are not scheduled outside the cycle (unmodelled
    /// needs, bad objects): UID → message, so each is said once.
    reported: BTreeMap<String, String>,
    /// Objects left out of the model because they cannot be read, by
    /// origin, with the error (reported once).
    excluded: BTreeSet<String>,
    /// Where the next run's search for feasible nodes starts
    /// ([`RunOptions::search_start`]).
    search_start: std::cell::Cell<usize>,
}

/// An entity's queue key: `PodGroup ns/name`, `CompositePodGroup ns/name`
/// or `Pod ns/name`.
fn entity_key(snapshot: &Snapshot, entity: Entity) -> String {
    match entity {
        Entity::Group(g) => format!("PodGroup {}", snapshot.groups[g as usize].key),
        Entity::Tree(c) => format!("CompositePodGroup {}", snapshot.composites[c as usize].key),
        Entity::Pod(p) => format!("Pod {}", snapshot.pods[p as usize].key),
    }
}

/// The pending pods of an entity.
fn pending_pods(snapshot: &Snapshot, entity: Entity) -> Vec<u32> {
    let groups = match entity {
        Entity::Pod(p) => return vec![p],
        Entity::Group(g) => vec![g],
        Entity::Tree(c) => snapshot.subtree_groups(c),
    };
    groups
        .into_iter()
        .flat_map(|g| snapshot.groups[g as usize].members.iter().copied())
        .filter(|&p| snapshot.pods[p as usize].pending)
        .collect()
}

/// Whether a preemptor may not start another preemption: one of its pods
/// is nominated to a node where a pod of lower priority that the scheduler
/// preempted (`preempted`: being deleted, with `DisruptionTarget` reason
/// `PreemptionByScheduler`) is still terminating (kube-scheduler's
/// `PodEligibleToPreemptOthers`). It is still scheduled meanwhile.
fn victims_terminating(snapshot: &Snapshot, pods: &[u32], preempted: &BTreeSet<String>) -> bool {
    pods.iter().any(|&p| {
        let pod = &snapshot.pods[p as usize];
        pod.nominated_node.is_some_and(|node| {
            snapshot.pods_on_node(node).iter().any(|&other| {
                let other = &snapshot.pods[other as usize];
                other.terminating && other.priority < pod.priority && preempted.contains(&other.key)
            })
        })
    })
}

impl Server {
    fn serve(&mut self, tokio: &tokio::runtime::Runtime, plugins: &mut PluginSet) {
        let mut seen_changes = 0;
        loop {
            let due = self.backoff.next_due(self.shared.lock().helpful);
            let wait = due.map_or(Duration::from_secs(3600), |at| {
                at.saturating_duration_since(Instant::now())
            });
            let store = self.shared.wait_until(wait, |s| {
                s.stopping || (s.ready() && s.changes != seen_changes)
            });
            if store.stopping {
                return;
            }
            if !store.ready() {
                continue;
            }
            drop(store);
            // Let a burst of changes land before the pass.
            std::thread::sleep(self.options.settle);
            seen_changes = self.shared.lock().changes;
            self.pass(tokio, plugins);
        }
    }

    /// One pass: model, due entities, cycle, actions.
    fn pass(&mut self, tokio: &tokio::runtime::Runtime, plugins: &mut PluginSet) {
        let started = Instant::now();
        self.metrics.wakeup();
        let (mut objects, helpful, counts) = {
            let store = self.shared.lock();
            (store.held(), store.helpful, store.counts())
        };
        self.metrics.model_size(&counts);
        let preempted = self.overlay.apply(&mut objects);
        self.forget_gone(&objects);
        let mut early = self.set_aside_unmodelled(&mut objects);
        let mut snapshot = self.model(&mut objects);
        self.report_state();
        let now = Instant::now();
        let queued = scheduler::queue(&snapshot);
        let keys: BTreeSet<String> = queued.iter().map(|&e| entity_key(&snapshot, e)).collect();
        self.backoff.retain(|k| keys.contains(k));
        let mut admitted: Vec<(Entity, String)> = Vec::new();
        let mut blocked: HashSet<Entity> = HashSet::new();
        for &entity in &queued {
            let key = entity_key(&snapshot, entity);
            let pods = pending_pods(&snapshot, entity);
            let waiting = victims_terminating(&snapshot, &pods, &preempted);
            if waiting {
                blocked.insert(entity);
            }
            // A preemptor whose victims are gone goes first, whatever its
            // backoff, so that lower-priority entities do not take the room
            // it was nominated to (kube-scheduler reserves it for pods of
            // its priority and above while it waits).
            let nominated = pods
                .iter()
                .any(|&p| snapshot.pods[p as usize].nominated_node.is_some());
            if (nominated && !waiting) || self.backoff.admits(&key, helpful, now) {
                admitted.push((entity, key));
            }
        }
        self.metrics
            .queue(queued.len() - admitted.len(), blocked.len());
        if admitted.is_empty() && early.is_empty() {
            return;
        }
        let outcome = if admitted.is_empty() {
            Outcome::default()
        } else {
            let allowed: HashSet<Entity> = admitted.iter().map(|(e, _)| *e).collect();
            let admit = |e: Entity| allowed.contains(&e);
            let may_preempt = |e: Entity| !blocked.contains(&e);
            scheduler::run_with_options(
                &mut snapshot,
                plugins,
                &RunOptions {
                    live: true,
                    admit: Some(&admit),
                    may_preempt: Some(&may_preempt),
                    search_start: Some(&self.search_start),
                    ..RunOptions::default()
                },
            )
        };
        for (plugin, line) in plugins.drain_logs() {
            log::debug(&format!("plugin {plugin}: {line:?}"));
        }
        let mut actions = {
            let store = self.shared.lock();
            actions::plan(&outcome, &store, &self.options.scheduler_name)
        };
        // Only the pods the decisions were made on: one deleted and
        // recreated under its name meanwhile is a new pod, not touched.
        let uids: BTreeMap<&str, &str> = snapshot
            .pods
            .iter()
            .filter_map(|p| Some((p.key.as_str(), p.uid.as_deref()?)))
            .collect();
        actions.retain(|action| match action.pod() {
            Some(pod) => {
                let same = uids.get(pod.key().as_str()) == Some(&pod.uid.as_str());
                if !same {
                    log::info(&format!("{action}: skipped, the pod was replaced"));
                }
                same
            }
            None => true,
        });
        actions.append(&mut early);
        let summary = actions::summary(&actions);
        let mut bound: BTreeSet<String> = BTreeSet::new();
        if self.options.dry_run {
            for action in &actions {
                log::info(&format!("dry run: would {action}"));
            }
        } else {
            let leading = self.shared.clone();
            let still_leading = move || !leading.lock().lost_lease;
            let applied = tokio.block_on(self.executor.apply(&actions, &still_leading));
            for (uid, node) in &applied.bound {
                self.overlay.bound.insert(uid.clone(), node.clone());
                bound.insert(uid.clone());
            }
            self.overlay
                .deleting
                .extend(applied.evicted.iter().cloned());
            for action in &actions {
                match action {
                    // A decision stands whether or not its patch went
                    // through (upstream's nominator keeps it in memory).
                    Action::Nominate { pod, node, .. } => {
                        self.overlay.nominated.insert(pod.uid.clone(), node.clone());
                    }
                    Action::ClearNomination { pod } => {
                        self.overlay.nominated.remove(&pod.uid);
                    }
                    _ => {}
                }
            }
            for (operation, error) in &applied.errors {
                log::warn(&format!("{operation}: {error}"));
                self.metrics.api_error(operation);
            }
            self.metrics.applied(&applied);
        }
        // Backoff: an entity all of whose pending pods were bound (the API
        // server took each binding) is done; any other was tried and waits.
        for (entity, key) in &admitted {
            let done = pending_pods(&snapshot, *entity).iter().all(|&p| {
                snapshot.pods[p as usize]
                    .uid
                    .as_ref()
                    .is_some_and(|uid| bound.contains(uid))
            });
            if done {
                self.backoff.forget(key);
            } else {
                self.backoff.failed(key, helpful, now);
            }
        }
        self.metrics.record(&outcome, admitted.len());
        self.metrics.pass(started.elapsed());
        log::info(&format!(
            "pass: {} entities tried, {} waiting, {} blocked from preempting while their victims terminate; {summary:?} in {:.1} ms",
            admitted.len(),
            self.backoff.len(),
            blocked.len(),
            started.elapsed().as_secs_f64() * 1e3
        ));
    }

    /// The sizes of its own tables, for `/metrics`.
    fn report_state(&self) {
        let size = self.model.size();
        self.metrics.state(&[
            ("backoff", self.backoff.len()),
            ("assumed-bindings", self.overlay.bound.len()),
            ("victims-deleting", self.overlay.deleting.len()),
            ("nominations", self.overlay.nominated.len()),
            ("reported", self.reported.len()),
            ("excluded", self.excluded.len()),
            ("identities", size.modelled.iter().sum()),
            ("free-identity-slots", size.free_slots),
            ("symbols", size.symbols),
            ("taint-texts", size.taint_texts),
            ("resources", size.resources),
            ("refused", size.refused),
        ]);
    }

    /// Forgets what it said about objects that are gone, so that churn does
    /// not grow its memory.
    fn forget_gone(&mut self, objects: &[Held]) {
        let mut uids = BTreeSet::new();
        let mut origins = BTreeSet::new();
        for (origin, object) in objects.iter().map(|held| held.as_ref()) {
            origins.insert(origin.to_string());
            if let Object::Pod(pod) = object
                && let Some(uid) = &pod.metadata.uid
            {
                uids.insert(uid.as_str());
            }
        }
        self.reported.retain(|uid, _| uids.contains(uid.as_str()));
        self.excluded.retain(|origin| origins.contains(origin));
    }

    /// Takes this scheduler's pending pods that need what wasched does not
    /// model out of `objects`; returns what to tell the ones not told yet.
    fn set_aside_unmodelled(&mut self, objects: &mut Vec<Held>) -> Vec<Action> {
        let mut actions = Vec::new();
        let options = BuildOptions {
            schedulers: vec![self.options.scheduler_name.clone()],
            live: true,
        };
        objects.retain(|held| {
            let (_, object) = held.as_ref();
            let Object::Pod(pod) = object else {
                return true;
            };
            let Some(spec) = pod.spec.as_ref() else {
                return true;
            };
            let pending = spec.node_name.as_deref().is_none_or(str::is_empty)
                && pod.metadata.deletion_timestamp.is_none();
            if !pending || !options.schedules(spec) {
                return true;
            }
            let needs = unmodelled::needs(spec);
            if needs.is_empty() {
                return true;
            }
            let message = unmodelled::message(&needs);
            let uid = pod.metadata.uid.clone().unwrap_or_default();
            if self.reported.get(&uid) != Some(&message) {
                self.reported.insert(uid, message.clone());
                actions.push(Action::Unschedulable {
                    pod: actions::PodRef::of(pod),
                    message,
                    current: false,
                });
            }
            false
        });
        actions
    }

    /// Brings the model up to `objects` and returns it as a snapshot. An
    /// object the model refuses (the error names it) is left out and
    /// reported once; a bound pod left out would leave its node's room
    /// looking free, so nothing more goes to that node meanwhile.
    fn model(&mut self, objects: &mut [Held]) -> Snapshot {
        loop {
            self.model.sync(objects.iter());
            let refused: Vec<(String, String, Option<String>)> = self
                .model
                .refused()
                .map(|(origin, why)| {
                    let node = match self.model.object(&origin.kind, &origin.name) {
                        Some(held) => match &held.1 {
                            Object::Pod(pod) => pod
                                .spec
                                .as_ref()
                                .and_then(|s| s.node_name.clone())
                                .filter(|n| !n.is_empty()),
                            _ => None,
                        },
                        None => None,
                    };
                    (origin.to_string(), why.to_string(), node)
                })
                .collect();
            let mut cordoned = false;
            for (origin, why, node) in refused {
                if let Some(node) = &node {
                    cordoned |= cordon(objects, node);
                }
                if self.excluded.insert(origin) {
                    let cordon = node
                        .map(|n| format!("; node {n} is treated as cordoned meanwhile"))
                        .unwrap_or_default();
                    log::warn(&format!("left out of the model: {why}{cordon}"));
                }
            }
            if !cordoned {
                return self.model.snapshot();
            }
        }
    }
}

/// Marks node `name` of `objects` unschedulable (a copy of its object);
/// whether it was not already.
fn cordon(objects: &mut [Held], name: &str) -> bool {
    for held in objects.iter_mut() {
        if let (_, Object::Node(node)) = held.as_ref()
            && node.metadata.name.as_deref() == Some(name)
        {
            if node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true) {
                return false;
            }
            if let (_, Object::Node(node)) = Arc::make_mut(held) {
                node.spec.get_or_insert_default().unschedulable = Some(true);
            }
            return true;
        }
    }
    false
}

/// Structured log lines on stderr: `time=... level=... msg="..."`.
pub mod log {
    /// Whether debug lines are printed (`WASCHED_LOG=debug`).
    fn debug_on() -> bool {
        std::env::var("WASCHED_LOG").is_ok_and(|v| v == "debug")
    }

    fn line(level: &str, message: &str) {
        let time = k8s_openapi::jiff::Timestamp::now();
        eprintln!("time={time} level={level} msg={message:?}");
    }

    /// An informational line.
    pub fn info(message: &str) {
        line("info", message);
    }

    /// A warning.
    pub fn warn(message: &str) {
        line("warn", message);
    }

    /// A debug line.
    pub fn debug(message: &str) {
        if debug_on() {
            line("debug", message);
        }
    }
}
