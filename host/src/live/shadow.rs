//! `wasched shadow`: what a plugin set would decide on a live cluster, held
//! against what the cluster's scheduler decides — read-only.
//!
//! Watchers keep the [`Store`](super::store::Store) current; one thread
//! owns the plugins and runs passes. A pass, after a burst of changes has
//! been coalesced:
//!
//! 1. compares what the watch shows the scheduler did (bindings,
//!    `Unschedulable` conditions, nominations, victims deleted) with the
//!    standing [`Predictions`];
//! 2. brings the incremental [`Model`] up to the watched objects (only what
//!    changed is read again; pods being deleted keep their node, as in
//!    kube-scheduler's cache) and runs the cycle over every pending pod and
//!    group of the watched scheduler names — live, so a preemptor is
//!    nominated while its victims go, and one whose victims still terminate
//!    does not preempt again;
//! 3. records the decisions as the new predictions, and publishes them at
//!    `/decisions` and as metrics.
//!
//! It never writes to the cluster: its ClusterRole is get, list and watch.
//! Binding, preemption, status and Events are the scheduler's — upstream's
//! kube-scheduler, with or without wasched's components.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;
use tracing::{debug, info, warn};

use super::endpoints::{self, Limits, Metrics, Published};
use super::gates;
use super::kinds::Served;
use super::predictions::{self, Pass, Predictions};
use super::store::{self, Held, Shared};
use crate::config::PluginConfig;
use crate::framework::PluginSet;
use crate::manifest::{Manifests, Object};
use crate::model::{BuildOptions, Model, Snapshot, unmodelled};
use crate::scheduler::nomination::{pending_pods, victims_terminating};
use crate::scheduler::{self, Entity, RunOptions};
use crate::{Outcome, Runtime};

/// How `wasched shadow` runs.
#[derive(Debug, Clone)]
pub struct ShadowOptions {
    /// The cluster's kubeconfig; `None`: `KUBECONFIG`, `~/.kube/config` or
    /// in-cluster.
    pub kubeconfig: Option<PathBuf>,
    /// The pods it decides on name one of these in `spec.schedulerName`
    /// (`default-scheduler` when unset).
    pub scheduler_names: Vec<String>,
    /// A directory of plugin components instead of the bundled ones.
    pub plugins: Option<PathBuf>,
    /// Plugin configuration (as `simulate --config`).
    pub config: PluginConfig,
    /// Where the endpoints are served.
    pub address: SocketAddr,
    /// Serve them over HTTPS with this certificate.
    pub tls: Option<endpoints::Tls>,
    /// Their connection limit and timeouts.
    pub limits: Limits,
    /// Coalesce changes for this long before a pass (a burst of created
    /// pods becomes one pass).
    pub coalesce: Duration,
}

impl Default for ShadowOptions {
    fn default() -> Self {
        Self {
            kubeconfig: None,
            scheduler_names: vec![crate::model::DEFAULT_SCHEDULER_NAME.into()],
            plugins: None,
            config: PluginConfig::default(),
            address: ([127, 0, 0, 1], 10260).into(),
            tls: None,
            limits: Limits::default(),
            coalesce: Duration::from_millis(200),
        }
    }
}

/// What `/decisions` serves: the last pass's decisions and the standing
/// predictions.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Decisions<'a> {
    /// Passes run so far (this is the last one's).
    pass: u64,
    /// The scheduler names whose pods are decided on.
    scheduler_names: &'a [String],
    /// Pods pending in the last pass.
    pending_pods: usize,
    /// The standing predictions, by pod: what the plugin set would do with
    /// each pod it has seen pending and the scheduler has not bound yet.
    predictions: BTreeMap<String, String>,
    /// The last pass's decisions, as `simulate -o json` writes them.
    decisions: &'a Outcome,
}

/// Runs `shadow` until SIGINT or SIGTERM.
pub fn run(options: ShadowOptions, runtime: &Runtime) -> Result<()> {
    // Everything that can be wrong with the command line fails before the
    // cluster is touched.
    let tls = options
        .tls
        .as_ref()
        .map(endpoints::Tls::acceptor)
        .transpose()?;
    let mut plugins = crate::load_plugins(runtime, options.plugins.as_deref(), &options.config)?;
    for note in plugins.notes() {
        info!("{note}");
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
        warn!("{note}");
    }
    let shared = Shared::new(&served);
    let metrics = Metrics::new();
    match tokio.block_on(gates::read(&client)) {
        Ok(enabled) => {
            for warning in gates::warnings(&enabled) {
                warn!("{warning}");
            }
            metrics.gates(&enabled);
        }
        Err(e) => info!(
            "cannot read the API server's feature gates ({e:#}): fields a gate that is off drops are not detected"
        ),
    }
    let _guard = tokio.enter();
    let published = Published::new();
    let address = tokio.block_on(endpoints::serve(
        options.address,
        tls,
        options.limits,
        shared.clone(),
        metrics.clone(),
        published.clone(),
    ))?;
    let scheme = if options.tls.is_some() {
        "https"
    } else {
        "http"
    };
    info!(
        "wasched shadow: deciding on the pods of {:?} (read-only), endpoints on {scheme}://{address}",
        options.scheduler_names,
    );
    store::watch_all(&client, &served, &shared);
    let stop = shared.clone();
    tokio.spawn(async move {
        shutdown_signal().await;
        info!("shutting down");
        stop.update(|store| store.stopping = true);
    });
    let build = BuildOptions {
        schedulers: options.scheduler_names.clone(),
        live: true,
    };
    let mut shadow = Shadow {
        model: Model::new(&Manifests::default(), &build)?,
        build,
        options,
        shared,
        metrics,
        published,
        predictions: Predictions::default(),
        not_modelled: BTreeMap::new(),
        excluded: BTreeSet::new(),
        search_start: std::cell::Cell::new(0),
        passes: 0,
    };
    shadow.watch(&mut plugins);
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

/// The pass thread's state.
struct Shadow {
    options: ShadowOptions,
    build: BuildOptions,
    shared: Arc<Shared>,
    metrics: Metrics,
    published: Arc<Published>,
    /// The cluster as the plugins see it, kept current pass by pass.
    model: Model,
    /// What it predicted, held against what the scheduler does.
    predictions: Predictions,
    /// The pending pods set aside as needing what wasched does not model:
    /// UID → (pod, message).
    not_modelled: BTreeMap<String, (String, String)>,
    /// Objects left out of the model because they cannot be read, by
    /// origin (each reported once).
    excluded: BTreeSet<String>,
    /// Where the next run's search for feasible nodes starts
    /// ([`RunOptions::search_start`]).
    search_start: std::cell::Cell<usize>,
    passes: u64,
}

impl Shadow {
    /// Runs a pass on every coalesced burst of changes until stopped.
    fn watch(&mut self, plugins: &mut PluginSet) {
        let mut seen_changes = 0;
        loop {
            let store = self.shared.wait_until(Duration::from_secs(3600), |s| {
                s.stopping || (s.ready() && s.changes != seen_changes)
            });
            if store.stopping {
                return;
            }
            if !store.ready() || store.changes == seen_changes {
                continue;
            }
            drop(store);
            // Let a burst of changes land before the pass.
            std::thread::sleep(self.options.coalesce);
            seen_changes = self.shared.lock().changes;
            self.pass(plugins);
        }
    }

    /// One pass: compare, model, decide, publish.
    fn pass(&mut self, plugins: &mut PluginSet) {
        let started = Instant::now();
        let (mut objects, counts) = {
            let store = self.shared.lock();
            (store.held(), store.counts())
        };
        self.metrics.model_size(&counts);
        let pods: Vec<&Pod> = objects
            .iter()
            .filter_map(|held| match &held.1 {
                Object::Pod(pod) => Some(pod.as_ref()),
                _ => None,
            })
            .collect();
        // Victims being deleted, and the nodes they still hold.
        let victims: Vec<&Pod> = pods
            .iter()
            .copied()
            .filter(|pod| {
                pod.metadata.deletion_timestamp.is_some()
                    && predictions::preempted_by_scheduler(pod)
            })
            .collect();
        let preempted: BTreeSet<String> =
            victims.iter().map(|pod| super::kinds::key(*pod)).collect();
        let victim_nodes: BTreeSet<String> = victims
            .iter()
            .filter_map(|pod| pod.spec.as_ref()?.node_name.clone())
            .collect();
        for comparison in self.predictions.observe(pods) {
            self.metrics.compared(&comparison);
            let line = format!(
                "{}: the scheduler {}; the plugins: {}",
                comparison.pod, comparison.scheduler, comparison.shadow
            );
            match comparison.agreement {
                predictions::Agreement::OtherNode | predictions::Agreement::Differ => {
                    info!(pod = %comparison.pod, agreement = comparison.agreement.label(), "{line}")
                }
                _ => {
                    debug!(pod = %comparison.pod, agreement = comparison.agreement.label(), "{line}")
                }
            }
        }
        self.forget_gone(&objects);
        self.set_aside_unmodelled(&mut objects);
        let mut snapshot = self.model(&mut objects);
        let queued = scheduler::queue(&snapshot);
        let blocked: HashSet<Entity> = queued
            .iter()
            .copied()
            .filter(|&e| victims_terminating(&snapshot, &pending_pods(&snapshot, e), &preempted))
            .collect();
        let pending = snapshot.pods.iter().filter(|p| p.pending).count();
        let may_preempt = |e: Entity| !blocked.contains(&e);
        let options = RunOptions {
            live: true,
            may_preempt: Some(&may_preempt),
            search_start: Some(&self.search_start),
            ..RunOptions::default()
        };
        let outcome = scheduler::run(&mut snapshot, plugins, options);
        for (plugin, line) in plugins.drain_logs() {
            debug!(plugin = %plugin, level = ?line.level, "{}", line.message);
        }
        let pass = Pass {
            not_modelled: self.not_modelled.clone(),
            victim_nodes,
        };
        self.predictions.record(&snapshot, &outcome, &pass);
        self.passes += 1;
        self.metrics
            .pass(&outcome, self.not_modelled.len(), started.elapsed());
        let size = self.model.size();
        self.metrics.state(&[
            ("predictions", self.predictions.len()),
            ("not-modelled", self.not_modelled.len()),
            ("excluded", self.excluded.len()),
            ("identities", size.modelled.iter().sum()),
            ("free-identity-slots", size.free_slots),
            ("symbols", size.symbols),
            ("taint-texts", size.taint_texts),
            ("resources", size.resources),
            ("refused", size.refused),
        ]);
        let decisions = Decisions {
            pass: self.passes,
            scheduler_names: &self.options.scheduler_names,
            pending_pods: pending + self.not_modelled.len(),
            predictions: self.predictions.standing(),
            decisions: &outcome,
        };
        self.published
            .set(&decisions, &self.predictions.differences());
        info!(
            pass = self.passes,
            pending = decisions.pending_pods,
            bound = outcome.placements.len(),
            nominated = outcome.nominations.len(),
            victims = outcome.evictions.len(),
            blocked = blocked.len(),
            millis = format_args!("{:.1}", started.elapsed().as_secs_f64() * 1e3),
            "pass"
        );
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
        self.not_modelled
            .retain(|uid, _| uids.contains(uid.as_str()));
        self.excluded.retain(|origin| origins.contains(origin));
    }

    /// Takes the watched scheduler's pending pods that need what wasched
    /// does not model out of `objects`, into [`Self::not_modelled`].
    fn set_aside_unmodelled(&mut self, objects: &mut Vec<Held>) {
        let mut set_aside = BTreeMap::new();
        objects.retain(|held| {
            let Object::Pod(pod) = &held.1 else {
                return true;
            };
            let Some(spec) = pod.spec.as_ref() else {
                return true;
            };
            let pending = spec.node_name.as_deref().is_none_or(str::is_empty)
                && pod.metadata.deletion_timestamp.is_none();
            if !pending || !self.build.schedules(spec) {
                return true;
            }
            let needs = unmodelled::needs(spec);
            if needs.is_empty() {
                return true;
            }
            let uid = pod.metadata.uid.clone().unwrap_or_default();
            set_aside.insert(uid, (held.0.name.clone(), unmodelled::message(&needs)));
            false
        });
        for (uid, (pod, message)) in &set_aside {
            if self.not_modelled.get(uid).map(|(_, m)| m) != Some(message) {
                info!(pod = %pod, "not decided: {message}");
            }
        }
        self.not_modelled = set_aside;
    }

    /// Brings the model up to `objects` and returns it as a snapshot. An
    /// object the model refuses (the error names it) is left out and
    /// reported once; a bound pod left out would leave its node's room
    /// looking free, so its node is treated as cordoned meanwhile.
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
                    warn!("left out of the model: {why}{cordon}");
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
