//! The team-isolation score in three languages, side by side in one run:
//! the bundled Rust component (`WaschedTeamGpuIsolation`), the Python one
//! (componentize-py, `plugins/python/team-gpu-isolation`) and the
//! JavaScript one (componentize-js, `plugins/javascript/team-gpu-isolation`),
//! all built (`hack/polyglot.sh`) before the run.
//!
//! - `polyglot/compile/<lang>`: a cold compile (no cache);
//! - `polyglot/cached_load/<lang>`: loading from the on-disk cache
//!   (deserialising the compiled code, then instantiating as below);
//! - `polyglot/instantiate/<lang>`: loading a component compiled in the
//!   runtime's memory: two instantiations (the first tells the name) and
//!   `configure`;
//! - `polyglot/score_500/<lang>`, `polyglot/score_5000/<lang>`: one score
//!   call for a GPU pod of the generated 5,000-node cluster on 500 nodes
//!   (upstream's adaptive sample there) and on every node;
//! - `polyglot/simulate_generated/<lang>`: the whole generated cluster
//!   scheduled by the bundled plugins with the language's component
//!   enabled (weight 1).
//!
//! Each component's size in bytes is printed before the run, and the fuel
//! one score call takes on 500 and on 5,000 nodes (found by bisection;
//! fuel is deterministic). The calls run under a fuel budget of 10^10, a
//! 60 s deadline and 1 GiB of memory, above what any of them needs.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use wasched::config::PluginSettings;
use wasched::framework::{ExtensionPoint, Plugin};
use wasched::runtime::{BUNDLED, ComponentCache, bundled_plugins};
use wasched::scheduler::{self, RunOptions};
use wasched::{PluginConfig, PluginSet, Runtime, Snapshot};
use wasched_benches::large_snapshot;

/// Each language's plugin: label, name and component bytes.
fn languages() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let file = |path: &str| -> Vec<u8> {
        let path: PathBuf = root.join(path);
        std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; build it first with hack/polyglot.sh",
                path.display()
            )
        })
    };
    let rust = bundled_plugins()
        .iter()
        .find(|(name, _)| *name == "team-gpu-isolation")
        .expect("bundled")
        .1
        .to_vec();
    vec![
        ("rust", "WaschedTeamGpuIsolation", rust),
        (
            "python",
            "TeamGpuIsolationPy",
            file("plugins/python/team-gpu-isolation/build/team-gpu-isolation.wasm"),
        ),
        (
            "javascript",
            "TeamGpuIsolationJs",
            file("plugins/javascript/team-gpu-isolation/build/team-gpu-isolation.wasm"),
        ),
    ]
}

/// The fuel budget every plugin gets here: far above what a call takes.
const FUEL: u64 = 10_000_000_000;

/// A configuration with `name` enabled (weight 1) under [`FUEL`], a 60 s
/// deadline and 1 GiB of memory.
fn enabling(name: &str) -> PluginConfig {
    PluginConfig::parse(&format!(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    multiPoint:\n      enabled: [{{name: {name}}}]\n  pluginConfig:\n  - {{name: {name}, args: {{fuel: {FUEL}, timeout: 1m, memoryLimit: 1Gi}}}}\n"
    ))
    .unwrap()
}

/// Every plugin under `fuel`, a 60 s deadline and 1 GiB of memory.
fn with_fuel(fuel: u64) -> PluginConfig {
    PluginConfig::uniform(PluginSettings {
        fuel,
        timeout: std::time::Duration::from_secs(60),
        memory_limit: 1 << 30,
        ..PluginSettings::default()
    })
}

/// The least fuel one score call of the component takes, to 1%.
fn fuel_needed(
    runtime: &Runtime,
    label: &str,
    bytes: &[u8],
    snapshot: &mut Snapshot,
    pod: u32,
    nodes: &[u32],
) -> u64 {
    let fits = |fuel: u64, snapshot: &mut Snapshot| -> bool {
        let mut set = PluginSet::new();
        set.add(Box::new(
            runtime.load(label, bytes, &with_fuel(fuel)).unwrap(),
        ))
        .unwrap();
        let mut plugin = set.at(ExtensionPoint::Score).next().unwrap();
        plugin.score(snapshot, pod, nodes).is_ok()
    };
    let (mut low, mut high) = (1_000u64, FUEL);
    assert!(fits(high, snapshot), "{label} needs more than {FUEL} fuel");
    while high - low > high / 100 {
        let mid = low + (high - low) / 2;
        if fits(mid, snapshot) {
            high = mid;
        } else {
            low = mid;
        }
    }
    high
}

fn load_costs(c: &mut Criterion) {
    let languages = languages();
    for (label, _, bytes) in &languages {
        eprintln!("polyglot: {label} component: {} bytes", bytes.len());
    }
    let config = PluginConfig::default();
    let mut group = c.benchmark_group("polyglot/compile");
    group.sample_size(10);
    for (label, _, bytes) in &languages {
        group.bench_function(*label, |b| {
            b.iter(|| {
                let runtime = Runtime::with_cache(ComponentCache::off()).unwrap();
                black_box(runtime.load(label, bytes, &config).unwrap())
            })
        });
    }
    group.finish();

    let dir = std::env::temp_dir().join(format!("wasched-polyglot-bench-{}", std::process::id()));
    let mut group = c.benchmark_group("polyglot/cached_load");
    group.sample_size(10);
    for (label, _, bytes) in &languages {
        // Filled once; each iteration starts a runtime that finds it there.
        Runtime::with_cache(ComponentCache::at(&dir))
            .unwrap()
            .load(label, bytes, &config)
            .unwrap();
        group.bench_function(*label, |b| {
            b.iter(|| {
                let runtime = Runtime::with_cache(ComponentCache::at(&dir)).unwrap();
                black_box(runtime.load(label, bytes, &config).unwrap())
            })
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);

    let runtime = Runtime::with_cache(ComponentCache::off()).unwrap();
    let mut group = c.benchmark_group("polyglot/instantiate");
    for (label, _, bytes) in &languages {
        runtime.load(label, bytes, &config).unwrap();
        group.bench_function(*label, |b| {
            b.iter(|| black_box(runtime.load(label, bytes, &config).unwrap()))
        });
    }
    group.finish();
}

/// A pending GPU pod of the cluster.
fn gpu_pod(snapshot: &Snapshot) -> u32 {
    let gpu = snapshot
        .resource_names
        .iter()
        .position(|r| r == "nvidia.com/gpu")
        .expect("a GPU cluster");
    snapshot
        .pods
        .iter()
        .position(|p| p.pending && p.requests[gpu] > 0)
        .expect("a pending GPU pod") as u32
}

fn score_calls(c: &mut Criterion) {
    let mut snapshot = large_snapshot().unwrap();
    let pod = gpu_pod(&snapshot);
    let every: Vec<u32> = (0..snapshot.node_count() as u32).collect();
    // Upstream's adaptive sample at 5,000 nodes: 10%, spread as its
    // rotating start spreads it.
    let sample: Vec<u32> = every.iter().copied().step_by(10).collect();
    let runtime = Runtime::with_cache(ComponentCache::off()).unwrap();
    let config = with_fuel(FUEL);
    for (nodes, group_name) in [
        (&sample, "polyglot/score_500"),
        (&every, "polyglot/score_5000"),
    ] {
        for (label, _, bytes) in languages() {
            let fuel = fuel_needed(&runtime, label, &bytes, &mut snapshot, pod, nodes);
            eprintln!("{group_name}/{label}: one call takes {fuel} fuel");
        }
        let mut group = c.benchmark_group(group_name);
        group.sample_size(10);
        for (label, _, bytes) in languages() {
            let mut set = PluginSet::new();
            set.add(Box::new(runtime.load(label, &bytes, &config).unwrap()))
                .unwrap();
            group.bench_function(label, |b| {
                b.iter(|| {
                    let mut plugin = set.at(ExtensionPoint::Score).next().unwrap();
                    black_box(plugin.score(&mut snapshot, pod, nodes).unwrap().unwrap())
                })
            });
        }
        group.finish();
    }
}

fn simulate_generated(c: &mut Criterion) {
    let snapshot = large_snapshot().unwrap();
    let runtime = Runtime::with_cache(ComponentCache::off()).unwrap();
    let mut group = c.benchmark_group("polyglot/simulate_generated");
    group.sample_size(10);
    for (label, name, bytes) in languages() {
        let config = enabling(name);
        let mut loaded: Vec<(Box<dyn Plugin>, bool)> = Vec::new();
        for ((crate_name, component), entry) in bundled_plugins().iter().zip(BUNDLED.iter()) {
            if *crate_name != "team-gpu-isolation" {
                let plugin = runtime.load(crate_name, component, &config).unwrap();
                loaded.push((Box::new(plugin), entry.on_by_default));
            }
        }
        loaded.push((
            Box::new(runtime.load(label, &bytes, &config).unwrap()),
            true,
        ));
        let (mut set, _) = config.assemble(loaded).unwrap();
        group.bench_function(label, |b| {
            b.iter_batched_ref(
                || snapshot.clone(),
                |s| black_box(scheduler::run(s, &mut set, RunOptions::default())),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, load_costs, score_calls, simulate_generated);
criterion_main!(benches);
