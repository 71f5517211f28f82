//! What gang admission costs: one Permit decision through the wasm component
//! against the same logic called natively, a whole scheduling run of the
//! default snapshot, and one of a generated 5,000-node cluster.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use wasched::framework::{ExtensionPoint, Progress, Unit};
use wasched_benches::{
    bundled_plugins, bundled_plugins_with, default_snapshot, first_gang, has_permit, large_snapshot,
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
            |snapshot| black_box(wasched::scheduler::run(snapshot, &mut plugins)),
            criterion::BatchSize::SmallInput,
        )
    });
    bench.finish();
}

fn simulate_large(c: &mut Criterion) {
    let snapshot = large_snapshot().unwrap();
    let (_runtime, mut plugins) = bundled_plugins().unwrap();
    let mut bench = c.benchmark_group("simulate_generated");
    bench.sample_size(10);
    bench.bench_function("5000_nodes_10000_pending_pods", |b| {
        b.iter_batched_ref(
            || snapshot.clone(),
            |snapshot| black_box(wasched::scheduler::run(snapshot, &mut plugins)),
            criterion::BatchSize::LargeInput,
        )
    });
    bench.finish();
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

criterion_group!(benches, permit, simulate, simulate_large, load);
criterion_main!(benches);
