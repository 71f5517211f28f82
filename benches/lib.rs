//! Shared set-up for the criterion benchmarks in this directory.
//!
//! Run them with `cargo bench -p wasched-benches`; each benchmark names what
//! it prices, and pairs a wasm-component measurement with its native
//! baseline in the same run so that ratios survive a noisy machine.

use anyhow::Result;

/// The allocator the `wasched` binary uses, so that benchmarks measure what
/// users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use serde_json::{Value, json};
use wasched::framework::ExtensionPoint;
use wasched::generate::{Options, Shape};
use wasched::{PluginSet, Runtime, Snapshot};

/// The large generated cluster the benchmarks use: 5,000 nodes with 10,000
/// pending pods (scheduler_perf's standard size).
pub const LARGE: Options = Options {
    nodes: 5000,
    pending_pods: 10_000,
    seed: 1,
    shape: Shape::Gpu,
};

/// Reads manifest text (YAML or JSON) into an indexed snapshot, as
/// `wasched simulate` does for one file.
pub fn snapshot_from(file: &str, text: &str) -> Result<Snapshot> {
    wasched::read_snapshot_text(file, text, &wasched::ReadOptions::default())
}

/// The [`LARGE`] cluster, indexed.
pub fn large_snapshot() -> Result<Snapshot> {
    snapshot_from("generated.json", &wasched::generate::generate_json(&LARGE)?)
}

/// The bundled default snapshot, indexed.
pub fn default_snapshot() -> Result<Snapshot> {
    wasched::read_snapshot(&[])
}

/// The bundled plugins, compiled into a fresh runtime (no on-disk cache).
pub fn bundled_plugins() -> Result<(Runtime, PluginSet)> {
    bundled_plugins_with(wasched::runtime::ComponentCache::off())
}

/// The bundled plugins loaded into a fresh runtime with `cache`.
pub fn bundled_plugins_with(
    cache: wasched::runtime::ComponentCache,
) -> Result<(Runtime, PluginSet)> {
    let runtime = Runtime::with_cache(cache)?;
    let plugins = runtime.bundled(&wasched::PluginConfig::default())?;
    Ok((runtime, plugins))
}

/// The bundled components as built against contract 0.2.0 (the fixtures
/// in `testdata/plugins/v0.2.0`, through the host's adapter), with GPU
/// bin-packing off as in the bundled set: the same decisions as
/// [`bundled_plugins`] without 0.3.0's contract changes (reusable permit
/// verdicts, grouped rejections, host-side label grouping), for ablation.
pub fn v0_2_0_plugins() -> Result<(Runtime, PluginSet)> {
    let runtime = Runtime::with_cache(wasched::runtime::ComponentCache::off())?;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/plugins/v0.2.0");
    let config = wasched::PluginConfig::default().disable("GpuBinPacking");
    let plugins = runtime.from_dir(&dir, &config)?;
    Ok((runtime, plugins))
}

/// Index of the first gang PodGroup in `snapshot` and its `minCount`.
pub fn first_gang(snapshot: &Snapshot) -> (u32, u32) {
    snapshot
        .groups
        .iter()
        .enumerate()
        .find_map(|(i, g)| g.min_count().map(|m| (i as u32, m)))
        .expect("the default snapshot has a gang")
}

/// Whether `plugins` has a permit plugin (sanity check for the benches).
pub fn has_permit(plugins: &PluginSet) -> bool {
    plugins.any_at(ExtensionPoint::Permit)
}

/// The bundled plugins' logic compiled into the host (no wasm): the
/// baseline every component measurement is paired with.
pub fn native_plugins() -> PluginSet {
    use wasched::framework::native::NativePlugin;
    use wasched_sdk::Plugin as _;
    let mut set = PluginSet::new();
    let gang = NativePlugin::new(
        gang_permit::GangScheduling,
        &[ExtensionPoint::PreEnqueue, ExtensionPoint::Permit],
    );
    let topology = topology_placement::TopologyPlacement::new(Default::default())
        .expect("default args are valid");
    let topology = NativePlugin::new(topology, &[ExtensionPoint::PlacementGenerate]);
    let preemption = NativePlugin::new(
        workload_preemption::WorkloadPreemption::default(),
        &[ExtensionPoint::PodGroupPostFilter],
    );
    for plugin in [
        Box::new(gang) as Box<dyn wasched::framework::Plugin>,
        Box::new(topology),
        Box::new(preemption),
    ] {
        set.add(plugin).expect("unique names");
    }
    set
}

/// [`native_plugins`] plus `GpuBinPacking` with `args` (JSON): the
/// baseline of the components loaded with it enabled.
pub fn native_plugins_with_binpack(args: &str) -> PluginSet {
    use wasched::framework::native::NativePlugin;
    let mut set = native_plugins();
    let binpack = wasched_sdk::configure::<gpu_binpack::GpuBinPacking>(args)
        .expect("valid GpuBinPacking args");
    set.add(Box::new(NativePlugin::new(
        binpack,
        &[ExtensionPoint::Filter, ExtensionPoint::Score],
    )))
    .expect("unique names");
    set
}

/// The 0.2.0 fixture components (see [`v0_2_0_plugins`]) with
/// `GpuBinPacking` enabled under `args` (JSON): its filter answers one
/// rejection per node, as 0.2.0 did.
pub fn v0_2_0_plugins_with_binpack(args: &str) -> Result<(Runtime, PluginSet)> {
    let runtime = Runtime::with_cache(wasched::runtime::ComponentCache::off())?;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/plugins/v0.2.0");
    let config = binpack_config("GpuBinPacking", args)?;
    let plugins = runtime.from_dir(&dir, &config)?;
    Ok((runtime, plugins))
}

/// The bundled components with `GpuBinPacking` enabled under `args` (JSON).
pub fn bundled_plugins_with_binpack(args: &str) -> Result<(Runtime, PluginSet)> {
    let runtime = Runtime::with_cache(wasched::runtime::ComponentCache::off())?;
    let config = binpack_config("WaschedGpuBinPacking", args)?;
    let plugins = runtime.bundled(&config)?;
    Ok((runtime, plugins))
}

/// A configuration enabling the bin-packing plugin called `name` with
/// `args` (JSON) as its own args.
fn binpack_config(name: &str, args: &str) -> Result<wasched::PluginConfig> {
    let args: serde_json::Value = serde_json::from_str(args)?;
    wasched::PluginConfig::default()
        .enable(name)
        .configure(name, serde_json::json!({ "args": args }))
}

/// A cluster in zones, blocks and racks: `nodes` nodes of 32 cpu, 256 GiB
/// and 8 GPUs, `per_rack` to a rack, 8 racks to a block, 4 blocks to a
/// zone (labels `topology.kubernetes.io/zone`, `example.com/block`,
/// `example.com/rack`), with `objects` (JSON Kubernetes objects) added.
pub fn racked_cluster(nodes: usize, per_rack: usize, objects: Vec<Value>) -> Result<Snapshot> {
    let mut items = Vec::with_capacity(nodes + objects.len());
    for n in 0..nodes {
        let rack = n / per_rack;
        items.push(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": format!("node-{n:05}"), "labels": {
                "kubernetes.io/hostname": format!("node-{n:05}"),
                "topology.kubernetes.io/zone": format!("zone-{}", rack / 32),
                "example.com/block": format!("block-{:03}", rack / 8),
                "example.com/rack": format!("rack-{rack:04}"),
            }},
            "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"}}
        }));
    }
    items.extend(objects);
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    snapshot_from("racked.json", &list.to_string())
}

/// A gang PodGroup `ns/name` of `pods` pods requesting `cpu` cores each,
/// with an optional topology key, parent composite and running node per pod.
#[allow(clippy::too_many_arguments)]
pub fn gang(
    name: &str,
    priority: i32,
    pods: usize,
    cpu: u32,
    topology: Option<&str>,
    parent: Option<&str>,
    disrupt_all: bool,
    running_on: &dyn Fn(usize) -> Option<String>,
) -> Vec<Value> {
    let mut spec = json!({"priority": priority, "schedulingPolicy": {"gang": {"minCount": pods}}});
    if let Some(key) = topology {
        spec["schedulingConstraints"] = json!({"topology": [{"key": key}]});
    }
    if let Some(parent) = parent {
        spec["parentCompositePodGroupName"] = json!(parent);
    }
    if disrupt_all {
        spec["disruptionMode"] = json!({"all": {}});
    }
    let mut objects = vec![json!({
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "bench", "creationTimestamp": "2026-11-20T10:00:00Z"},
        "spec": spec
    })];
    for i in 0..pods {
        let mut pod_spec = json!({
            "schedulingGroup": {"podGroupName": name},
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu.to_string()}}}]
        });
        let mut status = json!({});
        if let Some(node) = running_on(i) {
            pod_spec["nodeName"] = json!(node);
            status = json!({"phase": "Running", "startTime": "2026-11-20T09:00:00Z"});
        }
        objects.push(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("{name}-{i}"), "namespace": "bench"},
            "spec": pod_spec, "status": status
        }));
    }
    objects
}

/// A CompositePodGroup `bench/name` with a topology key and an optional parent.
pub fn composite(name: &str, min_groups: u32, key: &str, parent: Option<&str>) -> Value {
    let mut spec = json!({
        "workloadRef": {"workloadName": "tree", "templateName": "t"},
        "priority": 100,
        "schedulingPolicy": {"gang": {"minGroupCount": min_groups}},
        "schedulingConstraints": {"topology": [{"key": key}]}
    });
    if let Some(parent) = parent {
        spec["parentCompositePodGroupName"] = json!(parent);
    }
    json!({
        "apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
        "metadata": {"name": name, "namespace": "bench", "creationTimestamp": "2026-11-20T09:00:00Z"},
        "spec": spec
    })
}

/// The `q`-quantile (0..=1) of `samples`, which it sorts.
pub fn quantile(samples: &mut [std::time::Duration], q: f64) -> std::time::Duration {
    samples.sort_unstable();
    let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
    samples.get(i).copied().unwrap_or_default()
}

/// The process's peak resident memory so far (`VmHWM`), in MiB.
pub fn peak_rss_mib() -> f64 {
    status_mib("VmHWM:")
}

/// The process's resident memory now (`VmRSS`), in MiB.
pub fn rss_mib() -> f64 {
    status_mib("VmRSS:")
}

/// A memory field of `/proc/self/status` in MiB (0 where there is none).
fn status_mib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Benchmarks a whole scheduling run of `snapshot` through the bundled
/// components, through their 0.2.0 builds (the ablation of the 0.3.0
/// contract changes) and through the same logic natively, in one group
/// `name`, at upstream's default `percentageOfNodesToScore`.
pub fn bench_components_and_native(
    c: &mut criterion::Criterion,
    name: &str,
    snapshot: &Snapshot,
    sample_size: usize,
) {
    bench_components_and_native_at(c, name, snapshot, sample_size, 0);
}

/// [`bench_components_and_native`] with `percentageOfNodesToScore` set
/// (100: every feasible node scored).
pub fn bench_components_and_native_at(
    c: &mut criterion::Criterion,
    name: &str,
    snapshot: &Snapshot,
    sample_size: usize,
    percentage_of_nodes_to_score: u32,
) {
    let (_runtime, mut wasm) = bundled_plugins().expect("the bundled plugins load");
    let (_old_runtime, mut old) = v0_2_0_plugins().expect("the 0.2.0 fixtures load");
    let mut native = native_plugins();
    for set in [&mut wasm, &mut old, &mut native] {
        set.set_percentage_of_nodes_to_score(percentage_of_nodes_to_score);
    }
    let mut group = c.benchmark_group(name);
    group.sample_size(sample_size);
    for (label, plugins) in [
        ("component", &mut wasm),
        ("component-0.2.0", &mut old),
        ("native", &mut native),
    ] {
        group.bench_function(label, |bencher| {
            bencher.iter_batched_ref(
                || snapshot.clone(),
                |s| {
                    std::hint::black_box(wasched::scheduler::run(
                        s,
                        plugins,
                        wasched::scheduler::RunOptions::default(),
                    ))
                },
                criterion::BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

/// One replay of a generated trace on a generated GPU cluster, timed:
/// what `benches/replay.rs` and `examples/time_replay.rs` print.
pub mod replay_run {
    use std::time::{Duration, Instant};

    use anyhow::Result;
    use wasched::generate::{Options, Shape, generate_yaml};
    use wasched::replay::generate::{TraceOptions, jobs};
    use wasched::replay::{self, JobRow, Sink, Summary};

    /// Counts the rows instead of keeping them, so memory shows the
    /// replay's own.
    struct Count;

    impl Sink for Count {
        fn job(&mut self, _row: &JobRow) -> anyhow::Result<()> {
            Ok(())
        }
    }

    /// The generated `--shape gpu` cluster of `nodes` nodes (seed 1), as
    /// the replay's model.
    pub fn cluster(nodes: usize) -> Result<wasched::manifest::Manifests> {
        let yaml = generate_yaml(&Options {
            nodes,
            pending_pods: 0,
            seed: 1,
            shape: Shape::Gpu,
        })?;
        wasched::read_manifests_text("generated.yaml", &yaml, &Default::default())
    }

    /// A replay's figures and its wall time.
    pub struct Timed {
        /// What the replay reports.
        pub summary: Summary,
        /// Wall time of the replay alone (cluster and components ready).
        pub wall: f64,
    }

    impl Timed {
        /// Pod starts per second of wall time.
        pub fn pod_starts_per_second(&self) -> f64 {
            self.summary.pod_starts as f64 / self.wall
        }

        /// One line: counts, rates, the virtual-time speed-up, GPU
        /// allocation (mean and highest point), pending jobs on average
        /// and the process's peak resident memory.
        pub fn line(&self) -> String {
            let s = &self.summary;
            let points = s.series.len().max(1) as f64;
            let gpu_mean = s.series.iter().map(|p| p.gpu_share).sum::<f64>() / points;
            let gpu_max = s.series.iter().map(|p| p.gpu_share).fold(0.0, f64::max);
            let pending = s.series.iter().map(|p| p.pending_jobs).sum::<f64>() / points;
            format!(
                "{} jobs ({} succeeded), {} pod starts, {} attempts, {} evictions in {:.2} s: {:.0} pod starts/s, {:.0} attempts/s, {:.0}x real time; GPU allocation mean {:.0} %, highest {:.0} %; {:.0} jobs pending on average; peak RSS {:.0} MiB",
                s.jobs,
                s.succeeded,
                s.pod_starts,
                s.attempts,
                s.evictions,
                self.wall,
                self.pod_starts_per_second(),
                s.attempts as f64 / self.wall,
                s.replayed / self.wall,
                gpu_mean * 100.0,
                gpu_max * 100.0,
                pending,
                super::peak_rss_mib(),
            )
        }
    }

    /// Replays `count` jobs of the generated trace (`mean_gap` apart on
    /// average, gangs of up to `max_workers`, seed 1) over `cluster` through
    /// `plugins`, made as they arrive, up to `until` (virtual time) if
    /// given; with `reuse`, the cycle reuses only what it allows (the
    /// trace is then made whole first).
    pub fn replay_generated(
        cluster: &wasched::manifest::Manifests,
        plugins: &mut wasched::PluginSet,
        count: usize,
        mean_gap: Duration,
        max_workers: u32,
        until: Option<Duration>,
        reuse: Option<wasched::scheduler::ablation::Reuse>,
    ) -> Result<Timed> {
        let model = replay::model_of(cluster.clone())?;
        let trace = jobs(&TraceOptions {
            jobs: count,
            mean_gap,
            max_workers,
            seed: 1,
        });
        let options = replay::Options {
            until,
            ..replay::Options::default()
        };
        let started = Instant::now();
        let summary = match reuse {
            None => replay::replay(model, trace, plugins, &options, &mut Count, &mut |_| {})?,
            Some(reuse) => {
                let trace = trace.collect();
                replay::replay_reusing(model, trace, plugins, &options, &mut Count, reuse)?
            }
        };
        Ok(Timed {
            summary,
            wall: started.elapsed().as_secs_f64(),
        })
    }
}
