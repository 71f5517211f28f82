//! What gang admission costs: one Permit decision through the wasm component
//! against the same logic called natively, a whole scheduling run of the
//! default snapshot, one 3-pod gang at 5,000 nodes and the whole generated
//! 5,000-node cluster (each through the components and natively), and
//! loading the bundled plugins cold and cached.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use wasched::framework::{ExtensionPoint, Progress, Unit};
use wasched_benches::{
    bench_components_and_native, bench_components_and_native_at, bundled_plugins,
    bundled_plugins_with, default_snapshot, first_gang, gang, has_permit, large_snapshot,
    racked_cluster,
};

fn permit(c: &mut Criterion) {
    let mut snapshot = default_snapshot().unwrap();
    let (_runtime, mut plugins) = bundled_plugins().unwrap();
    assert!(has_permit(&plugins));
    let (group, min_count) = first_gang(&snapshot);
    let mut bench = c.benchmark_group("permit_decision");
    bench.bench_function("component", |b| {
        let mut plugin = plugins.at(ExtensionPoint::Permit).next().unwrap();
        b.iter(|| {
            let progress = Progress {
                scheduled: black_box(1),
                remaining: black_box(2),
            };
            let status = plugin
                .permit(&mut snapshot, Unit::Group(black_box(group)), progress)
                .unwrap();
            black_box(status)
        })
    });
    bench.bench_function("native", |b| {
        let policy = Some(gang_permit::Policy::Gang { min_count });
        b.iter(|| {
            let progress = gang_permit::Progress {
                scheduled: black_box(1),
                remaining: black_box(2),
            };
            black_box(gang_permit::permit(black_box(policy), progress))
        })
    });
    bench.finish();
}

fn simulate(c: &mut Criterion) {
    let snapshot = default_snapshot().unwrap();
    let (_runtime, mut plugins) = bundled_plugins().unwrap();
    let mut bench = c.benchmark_group("simulate_default_snapshot");
    bench.bench_function("with_gang_component", |b| {
        b.iter_batched_ref(
            || snapshot.clone(),
            |snapshot| {
                black_box(wasched::scheduler::run(
                    snapshot,
                    &mut plugins,
                    wasched::scheduler::RunOptions::default(),
                ))
            },
            criterion::BatchSize::SmallInput,
        )
    });
    bench.finish();
}

/// The whole generated cluster (5,000 nodes, 10,000 pending pods, all three
/// stages), through the components and natively: at upstream's adaptive
/// `percentageOfNodesToScore` (10% at 5,000 nodes), and with every
/// feasible node scored (the ablation of the sampling).
fn simulate_large(c: &mut Criterion) {
    let snapshot = large_snapshot().unwrap();
    bench_components_and_native(c, "simulate_generated", &snapshot, 10);
    bench_components_and_native_at(c, "simulate_generated_every_node", &snapshot, 10, 100);
}

/// The ablation of the host's reuse on the same cluster, natively and as
/// components (the reuse is the host's; what it saves is calls, dearer
/// across the wasm boundary): all on, then each off.
fn simulate_large_reuse(c: &mut Criterion) {
    use wasched::scheduler::RunOptions;
    use wasched::scheduler::ablation::{Reuse, run_reusing};
    let snapshot = large_snapshot().unwrap();
    let mut native = wasched_benches::native_plugins();
    let (_runtime, mut wasm) = wasched_benches::bundled_plugins().unwrap();
    let all = Reuse::default();
    let mut bench = c.benchmark_group("simulate_generated_reuse");
    bench.sample_size(10);
    let variants = [
        ("all", all),
        (
            "no-running-units-cache",
            Reuse {
                running_units: false,
                ..all
            },
        ),
        (
            "latest-permit-verdict-only",
            Reuse {
                permit_verdicts: false,
                ..all
            },
        ),
        (
            "no-misfits",
            Reuse {
                misfits: false,
                ..all
            },
        ),
        (
            "no-short-nodes",
            Reuse {
                short_nodes: false,
                ..all
            },
        ),
        (
            "no-node-scores",
            Reuse {
                node_scores: false,
                ..all
            },
        ),
        (
            "no-placement-reuse",
            Reuse {
                placements: false,
                ..all
            },
        ),
    ];
    for (set, plugins) in [("native", &mut native), ("component", &mut wasm)] {
        for (label, reuse) in variants {
            bench.bench_function(format!("{set}/{label}"), |b| {
                b.iter_batched_ref(
                    || snapshot.clone(),
                    |s| black_box(run_reusing(s, plugins, RunOptions::default(), reuse)),
                    criterion::BatchSize::LargeInput,
                )
            });
        }
    }
    bench.finish();
}

/// One 3-pod gang's whole cycle (queue, node checks, permit, binding) on an
/// otherwise idle 5,000-node cluster (kube-scheduler: 3.7–5.7 ms).
fn gang_attempt(c: &mut Criterion) {
    let objects = gang("trio", 100, 3, 4, None, None, false, &|_| None);
    let snapshot = racked_cluster(5000, 16, objects).unwrap();
    bench_components_and_native(c, "gang_attempt_3_pods_5000_nodes", &snapshot, 50);
}

fn load(c: &mut Criterion) {
    let mut bench = c.benchmark_group("load_bundled_plugins");
    bench.bench_function("compiled", |b| {
        b.iter(|| black_box(bundled_plugins().unwrap()))
    });
    let dir = std::env::temp_dir().join(format!("wasched-bench-cache-{}", std::process::id()));
    let cache = wasched::runtime::ComponentCache::at(&dir);
    bundled_plugins_with(cache.clone()).unwrap(); // warm it
    bench.bench_function("cached", |b| {
        b.iter(|| black_box(bundled_plugins_with(cache.clone()).unwrap()))
    });
    bench.finish();
    let _ = std::fs::remove_dir_all(dir);
}

criterion_group!(
    benches,
    permit,
    simulate,
    gang_attempt,
    simulate_large,
    simulate_large_reuse,
    load
);
criterion_main!(benches);
