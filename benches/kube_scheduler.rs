//! wasched against the real kube-scheduler v1.37.2 on the same snapshot:
//! the time from "all objects exist" to the last decision, for generated
//! clusters of 1,000 and 5,000 nodes with 2,000 pending pods in gang
//! workloads (`wasched generate --shape gpu`).
//!
//! - `wasched`: wasched's scheduling run with the bundled components (the
//!   snapshot already read, as the control plane already holds it);
//! - `kube-scheduler`: the harness's measure (`decidedSeconds`) from the
//!   start of kube-scheduler's scheduling loop — every object created, its
//!   informers synced, its queue holding every pending pod — to the last
//!   binding, nomination or eviction, under the configuration the
//!   differential tests use (upstream's default profile, every node scored);
//! - `kube-scheduler-adaptive`: the same with upstream's default
//!   `percentageOfNodesToScore` (scores a sample of the nodes above 100),
//!   what an unconfigured cluster runs;
//! - `kube-scheduler-wasm`: the same kube-scheduler with wasched's bundled
//!   components in place of its in-tree workload plugins
//!   (`--engine kube-scheduler-wasm`), the same measure.
//!
//! One kube-scheduler iteration starts a control plane and loads the
//! snapshot (not timed), so a run of this benchmark takes tens of minutes.
//! It needs the Go harness (`make -C kube`, or `WASCHED_KUBE`).

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use wasched::cluster::{self, Harness, ScheduleOptions, WasmComponents};
use wasched::generate::{Options, Shape};
use wasched::{ReadOptions, Snapshot};
use wasched_benches::bundled_plugins;

/// The objects go to a real kube-scheduler: read whole.
const KEEP_STORED: ReadOptions = ReadOptions {
    topology_aliases: std::collections::BTreeMap::new(),
    strict: false,
    keep_stored: true,
    show_progress: false,
    controllers: wasched::manifest::ControllerOptions {
        gang_scheduling: std::collections::BTreeSet::new(),
    },
};

/// The clusters: nodes, with 2,000 pending pods each.
const SIZES: [usize; 2] = [1000, 5000];

/// upstream's default `percentageOfNodesToScore` (0: adaptive).
const ADAPTIVE: &str = "apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 0
clientConnection:
  qps: 5000
  burst: 5000
profiles:
- schedulerName: default-scheduler
";

fn against_kube_scheduler(c: &mut Criterion) {
    let harness = Harness::locate().expect("the benchmark needs the Go harness (make -C kube)");
    let (_runtime, mut plugins) = bundled_plugins().unwrap();
    let dir = std::env::temp_dir().join(format!("wasched-bench-kube-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let adaptive = dir.join("adaptive.yaml");
    std::fs::write(&adaptive, ADAPTIVE).unwrap();
    let mut group = c.benchmark_group("schedule_vs_kube_scheduler");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(1));
    for nodes in SIZES {
        let options = Options {
            nodes,
            pending_pods: 2000,
            seed: 1,
            shape: Shape::Gpu,
        };
        let file = dir.join(format!("generated-{nodes}.json"));
        std::fs::write(&file, wasched::generate::generate_json(&options).unwrap()).unwrap();
        let manifests = wasched::read_manifests_with(&[file], &KEEP_STORED).unwrap();
        let snapshot = Snapshot::build(&manifests).unwrap();
        group.bench_function(format!("wasched/{nodes}_nodes"), |b| {
            b.iter_batched_ref(
                || snapshot.clone(),
                |snapshot| {
                    black_box(wasched::scheduler::run(
                        snapshot,
                        &mut plugins,
                        wasched::scheduler::RunOptions::default(),
                    ))
                },
                BatchSize::LargeInput,
            )
        });
        for (name, config, wasm) in [
            ("kube-scheduler", None, None),
            ("kube-scheduler-adaptive", Some(adaptive.clone()), None),
            ("kube-scheduler-wasm", None, Some(WasmComponents::default())),
        ] {
            let options = ScheduleOptions {
                config,
                wasm,
                timeout: Duration::from_secs(1800),
                ..ScheduleOptions::default()
            };
            group.bench_function(format!("{name}/{nodes}_nodes"), |b| {
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| {
                            let run = cluster::schedule(&harness, &manifests, &snapshot, &options)
                                .unwrap_or_else(|e| panic!("{name}: {e:#}"));
                            Duration::from_secs_f64(run.result.stats.decided_seconds)
                        })
                        .sum()
                })
            });
        }
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, against_kube_scheduler);
criterion_main!(benches);
