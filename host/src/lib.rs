//! wasched: workload-aware Kubernetes scheduling (gang admission, topology
//! placement, workload-aware preemption) as WebAssembly components, and the
//! host that runs them over cluster snapshots.
//!
//! Layers, each knowing only those before it:
//!
//! 1. [`manifest`] reads Kubernetes manifests into k8s-openapi types;
//! 2. [`model`] indexes them into a [`Snapshot`] with checkpoints;
//! 3. [`filters`] are kube-scheduler's native per-node checks and scores;
//! 4. [`framework`] is the plugin trait, statuses, failure policy and the
//!    checks on every plugin answer — no wasm;
//! 5. [`scheduler`] runs the cycle (queue, group algorithm, trials) through
//!    the framework only;
//! 6. [`runtime`] implements the framework's plugins with wasm components;
//!
//! and around them [`config`], [`outcome`], [`metrics`], [`report`] (the
//! HTML page), [`compare`] (what-if), [`cluster`] (the real control plane
//! and kube-scheduler v1.37.2, through the Go harness), [`builder`],
//! [`generate`] and the pipeline [`simulate`] that the CLI runs.

pub mod builder;
pub mod cluster;
pub mod compare;
pub mod config;
pub mod filters;
pub mod framework;
pub mod generate;
pub mod live;
pub mod manifest;
pub mod metrics;
pub mod model;
pub mod outcome;
pub mod progress;
pub mod replay;
pub mod report;
pub mod runtime;
pub mod scheduler;
pub mod table;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

pub use config::PluginConfig;
pub use framework::PluginSet;
pub use model::Snapshot;
pub use outcome::Outcome;
pub use runtime::Runtime;

/// The bundled default snapshot: a small GPU cluster with competing gangs.
pub const DEFAULT_SNAPSHOT: &str = include_str!("../../testdata/default/cluster.yaml");
/// How the bundled default snapshot is named in messages.
pub const DEFAULT_SNAPSHOT_NAME: &str = "testdata/default/cluster.yaml (bundled)";

/// How to read manifests.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Topology policy names of the early CompositePodGroup dialect mapped
    /// to node label keys (`LowLatencyNetwork` → `network.topology.nvidia.com/leaf`).
    pub topology_aliases: std::collections::BTreeMap<String, String>,
    /// Unknown fields are errors, not warnings (`--strict`).
    pub strict: bool,
    /// Keep what wasched's own cycle never reads (`managedFields`, pod and
    /// node status, [`manifest::prune`]): the objects go to a real API
    /// server (`cluster up`, the kube-scheduler engines).
    pub keep_stored: bool,
    /// Show a long read's progress on stderr if it is a terminal.
    pub show_progress: bool,
    /// How workload controllers are configured where objects do not say
    /// (`--gang-scheduling-for`).
    pub controllers: manifest::ControllerOptions,
}

/// Reads a snapshot from files and directories, or the bundled default if
/// `files` is empty.
pub fn read_snapshot(files: &[PathBuf]) -> Result<Snapshot> {
    read_snapshot_with(files, &ReadOptions::default())
}

/// [`read_snapshot`] with options.
pub fn read_snapshot_with(files: &[PathBuf], options: &ReadOptions) -> Result<Snapshot> {
    let manifests = read_manifests_with(files, options)?;
    model::Model::snapshot_of(manifests, &Default::default())
}

/// The manifests a snapshot is built from: the files (or the bundled
/// default) read, dialects mapped, Jobs expanded.
pub fn read_manifests_with(
    files: &[PathBuf],
    options: &ReadOptions,
) -> Result<manifest::Manifests> {
    read_into(options, |manifests| {
        if files.is_empty() {
            manifest::load_str(manifests, DEFAULT_SNAPSHOT_NAME, DEFAULT_SNAPSHOT)
        } else {
            manifest::load_files(manifests, files)
        }
    })
}

/// The snapshot of one manifest text read as a file named `name` would be
/// (what the benchmarks price without a file system in the way).
pub fn read_snapshot_text(name: &str, text: &str, options: &ReadOptions) -> Result<Snapshot> {
    let manifests = read_manifests_text(name, text, options)?;
    model::Model::snapshot_of(manifests, &Default::default())
}

/// The manifests of one text read as a file named `name` would be.
pub fn read_manifests_text(
    name: &str,
    text: &str,
    options: &ReadOptions,
) -> Result<manifest::Manifests> {
    read_into(options, |manifests| {
        manifest::load_str(manifests, name, text)
    })
}

/// Manifests set up as `options` say, filled by `load`, then finished:
/// workloads expanded, dialects mapped.
fn read_into(
    options: &ReadOptions,
    load: impl FnOnce(&mut manifest::Manifests) -> Result<()>,
) -> Result<manifest::Manifests> {
    let mut manifests = manifest::Manifests {
        progress: if options.show_progress {
            progress::Reading::on_terminal()
        } else {
            progress::Reading::default()
        },
        keep_stored: options.keep_stored,
        ..Default::default()
    };
    manifests.dialects.topology_aliases = options.topology_aliases.clone();
    manifests.controllers = options.controllers.clone();
    if options.strict {
        manifests.validation = manifest::FieldValidation::Strict;
    }
    load(&mut manifests)?;
    manifests.progress.finish();
    manifest::expand_workloads(&mut manifests)?;
    manifests.finish();
    Ok(manifests)
}

/// The snapshot of `manifests` under `build`, with a note on the pods it
/// leaves out, and, if `keep_objects`, the objects themselves (for a
/// kube-scheduler run, which loads them into its API server).
pub(crate) fn snapshot_keeping(
    manifests: manifest::Manifests,
    build: &model::BuildOptions,
    keep_objects: bool,
) -> Result<(Snapshot, Option<manifest::Manifests>)> {
    let left_out = build.left_out_note(&manifests);
    let objects = keep_objects.then(|| manifests.clone());
    let mut snapshot = model::Model::snapshot_of(manifests, build)?;
    std::sync::Arc::make_mut(&mut snapshot.notes).extend(left_out);
    Ok((snapshot, objects))
}

/// Loads the bundled plugins, or every component in `dir`, under `config`.
pub fn load_plugins(
    runtime: &Runtime,
    dir: Option<&Path>,
    config: &PluginConfig,
) -> Result<PluginSet> {
    match dir {
        Some(dir) => runtime.from_dir(dir, config),
        None => runtime.bundled(config),
    }
}

/// Which scheduler decides.
#[derive(Debug, Clone, Default)]
pub enum Engine {
    /// wasched's own cycle with the plugin components.
    #[default]
    Wasched,
    /// The real kube-scheduler v1.37.2 on a real control plane (the Go
    /// harness; its configuration, timeout and score classes in the
    /// options; with `options.wasm`, running wasched's components).
    KubeScheduler(cluster::ScheduleOptions),
}

/// One run of `wasched simulate`: what to read and which plugins to load.
#[derive(Debug, Clone, Default)]
pub struct Simulation {
    /// Which scheduler decides ([`Engine::Wasched`] unless asked).
    pub engine: Engine,
    /// Manifest files and directories; empty for the bundled default.
    pub files: Vec<PathBuf>,
    /// How to read them.
    pub read: ReadOptions,
    /// A directory of plugin components instead of the bundled ones.
    pub plugins: Option<PathBuf>,
    /// Plugin bounds, failure policy, caps and args.
    pub config: PluginConfig,
    /// Time every plugin call and the node checks ([`Stats`]; costs a few
    /// percent at hundreds of thousands of calls).
    pub timed: bool,
    /// Capture the cluster before the run for a report, grouping nodes by
    /// these label keys (empty: [`report::DEFAULT_GROUP_BY`]).
    pub capture: Option<Vec<String>>,
    /// Read the snapshot from the live cluster of this kubeconfig instead
    /// of files (`simulate --kubeconfig`).
    pub kubeconfig: Option<PathBuf>,
    /// How the model reads the pods (`--scheduler-name`).
    pub build: model::BuildOptions,
}

/// What a run decided, the plugins' log lines, and where the time went.
#[derive(Debug)]
pub struct Simulated {
    /// The decisions.
    pub outcome: Outcome,
    /// `(plugin, line)` in the order the plugins are configured.
    pub logs: Vec<(String, framework::LogLine)>,
    /// Timings (`wasched simulate --stats`).
    pub stats: Stats,
    /// The plugins that ran.
    pub plugins: Vec<report::PluginInfo>,
    /// The cluster before the run, when [`Simulation::capture`] asked.
    pub cluster: Option<report::ClusterView>,
}

/// Where a run's time went.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Reading the manifests into a snapshot.
    pub read: std::time::Duration,
    /// Loading the plugins (compiling them or taking them from the cache).
    pub load: std::time::Duration,
    /// The scheduling run.
    pub schedule: std::time::Duration,
    /// Of which the in-tree node checks.
    pub node_checks: std::time::Duration,
    /// Pending pods decided (bound or left pending).
    pub pods: usize,
    /// Per plugin and extension point: calls and their time.
    pub calls: Vec<(String, framework::ExtensionPoint, framework::CallTimes)>,
    /// The process's peak resident memory once the run ended (reading
    /// included), in bytes; `None` where the system does not say (Linux's
    /// `VmHWM` is read).
    pub peak_memory: Option<u64>,
}

/// The process's peak resident memory so far, in bytes (Linux: `VmHWM` of
/// `/proc/self/status`); `None` elsewhere.
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl Stats {
    /// Pods decided per second of scheduling.
    pub fn pods_per_second(&self) -> f64 {
        self.pods as f64 / self.schedule.as_secs_f64().max(1e-9)
    }

    /// The report `--stats` prints: one line of totals, then one row per
    /// plugin and extension point.
    pub fn to_table(&self) -> String {
        let ms = |d: std::time::Duration| format!("{:.3} ms", d.as_secs_f64() * 1e3);
        let mut out = format!(
            "read {}, plugins loaded {}, scheduled {} ({} pods, {:.0} pods/s), node checks {}",
            ms(self.read),
            ms(self.load),
            ms(self.schedule),
            self.pods,
            self.pods_per_second(),
            ms(self.node_checks)
        );
        if let Some(bytes) = self.peak_memory {
            out.push_str(&format!(
                ", peak memory {:.1} MiB",
                bytes as f64 / f64::from(1 << 20)
            ));
        }
        out.push('\n');
        let mut rows = vec![[
            "PLUGIN".to_string(),
            "EXTENSION POINT".into(),
            "CALLS".into(),
            "TOTAL".into(),
            "MEAN".into(),
            "MAX".into(),
        ]];
        for (plugin, point, times) in &self.calls {
            let mean = times.total / u32::try_from(times.calls.max(1)).unwrap_or(u32::MAX);
            rows.push([
                plugin.clone(),
                point.interface().into(),
                times.calls.to_string(),
                ms(times.total),
                ms(mean),
                ms(times.max),
            ]);
        }
        out.push_str(&crate::table::render(&rows));
        out
    }
}

/// A run's timings, and its progress told to a callback.
struct Progress<'p> {
    times: scheduler::RunTimes,
    progress: &'p mut dyn FnMut(usize, usize),
}

impl scheduler::Observer for Progress<'_> {
    fn entity(&mut self, time: scheduler::EntityTime, done: usize, queued: usize) {
        self.times.entity(time, done, queued);
        (self.progress)(done, queued);
    }

    fn finished(&mut self, node_checks: std::time::Duration) {
        self.times.finished(node_checks);
    }
}

impl Simulation {
    /// Reads the snapshot, loads the plugins into `runtime` and runs the
    /// scheduling cycle: the pipeline behind `wasched simulate`.
    pub fn run(&self, runtime: &Runtime) -> Result<Simulated> {
        self.run_observed(runtime, &mut |_, _| {})
    }

    /// [`Simulation::run`], telling `progress` (entities done, entities in
    /// the queue) after each scheduling cycle.
    pub fn run_observed(
        &self,
        runtime: &Runtime,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Simulated> {
        let start = std::time::Instant::now();
        // kube-scheduler's run loads the objects, whole, into its API server.
        let keep = matches!(self.engine, Engine::KubeScheduler(_));
        let manifests = match &self.kubeconfig {
            Some(kubeconfig) => live::read_cluster(kubeconfig)?,
            None => {
                let read = ReadOptions {
                    keep_stored: keep,
                    ..self.read.clone()
                };
                read_manifests_with(&self.files, &read)?
            }
        };
        let (snapshot, objects) = snapshot_keeping(manifests, &self.build, keep)?;
        let read = start.elapsed();
        let cluster = self
            .capture
            .as_ref()
            .map(|group_by| report::ClusterView::capture(&snapshot, group_by));
        let mut simulated = match &self.engine {
            Engine::Wasched => self.schedule(snapshot, runtime, progress)?,
            Engine::KubeScheduler(options) => {
                let objects = objects.expect("kept for kube-scheduler");
                kube_scheduler(&objects, &snapshot, options)?
            }
        };
        simulated.stats.read = read;
        simulated.cluster = cluster;
        Ok(simulated)
    }

    /// Loads the plugins into `runtime` and schedules a snapshot already
    /// read (`compare` reads once and schedules twice). [`Simulation::files`],
    /// [`Simulation::read`] and [`Simulation::capture`] are not used.
    pub fn schedule(
        &self,
        mut snapshot: Snapshot,
        runtime: &Runtime,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Simulated> {
        let start = std::time::Instant::now();
        let mut plugins = load_plugins(runtime, self.plugins.as_deref(), &self.config)?;
        plugins.time_calls(self.timed);
        let load = start.elapsed();
        let mut observer = Progress {
            times: scheduler::RunTimes::default(),
            progress,
        };
        let options = scheduler::RunOptions {
            observer: Some(&mut observer),
            ..Default::default()
        };
        let mut outcome = scheduler::run(&mut snapshot, &mut plugins, options);
        let times = observer.times;
        outcome.notes.extend(plugins.notes().iter().cloned());
        let stats = Stats {
            read: std::time::Duration::ZERO,
            load,
            schedule: start.elapsed() - load,
            node_checks: times.node_checks,
            pods: outcome.placements.len() + outcome.unschedulable.len(),
            calls: plugins
                .call_times()
                .into_iter()
                .map(|(plugin, point, times)| (plugin.to_string(), point, times))
                .collect(),
            peak_memory: peak_memory(),
        };
        Ok(Simulated {
            outcome,
            logs: plugins.drain_logs(),
            stats,
            plugins: plugins.iter().map(report::PluginInfo::of).collect(),
            cluster: None,
        })
    }
}

/// Runs `manifests` (modelled as `snapshot`) through the real
/// kube-scheduler: the decisions in wasched's shape; `stats.schedule` is
/// the time from the start of scheduling to the last decision.
pub fn kube_scheduler(
    manifests: &manifest::Manifests,
    snapshot: &Snapshot,
    options: &cluster::ScheduleOptions,
) -> Result<Simulated> {
    let harness = cluster::Harness::locate()?;
    let (name, contract) = match &options.wasm {
        None => ("kube-scheduler", "kube-scheduler v1.37.2 (default profile)"),
        Some(_) => (
            "kube-scheduler-wasm",
            "kube-scheduler v1.37.2 with wasched's components",
        ),
    };
    let run = cluster::schedule(&harness, manifests, snapshot, options)
        .with_context(|| format!("engine {name}"))?;
    let stats = Stats {
        schedule: std::time::Duration::from_secs_f64(run.result.stats.decided_seconds),
        pods: run.outcome.placements.len() + run.outcome.unschedulable.len(),
        ..Stats::default()
    };
    Ok(Simulated {
        outcome: run.outcome,
        logs: Vec::new(),
        stats,
        plugins: vec![report::PluginInfo {
            name: name.into(),
            source: harness.path().display().to_string(),
            contract: contract.into(),
        }],
        cluster: None,
    })
}

/// Worker threads by default: the machine's cores.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// [`Simulation::run`] with default settings in a new runtime.
pub fn simulate(files: &[PathBuf], plugins: Option<&Path>) -> Result<Outcome> {
    let simulation = Simulation {
        files: files.to_vec(),
        plugins: plugins.map(Path::to_path_buf),
        ..Simulation::default()
    };
    Ok(simulation.run(&Runtime::new()?)?.outcome)
}
