//! What reading a large snapshot costs: a generated cluster of 5,000 nodes
//! with 10,000 pending pods (the scheduler_perf standard size), from YAML
//! text to the indexed snapshot, against the YAML parse alone as baseline;
//! and what the worker threads (`--threads`) buy: reading, and a pod's
//! static node checks over 5,000 nodes, on 1 and on 2 threads.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use wasched::generate::{generate_json, generate_yaml};
use wasched_benches::{LARGE, snapshot_from};

fn load(c: &mut Criterion) {
    let text = generate_yaml(&LARGE).unwrap();
    let mut bench = c.benchmark_group("load_5000_nodes_10000_pending_pods");
    bench.sample_size(10);
    bench.bench_function("yaml_parse_only", |b| {
        b.iter(|| {
            let docs: Vec<serde_json::Value> = serde_norway::from_str(black_box(&text))
                .map(|v| vec![v])
                .unwrap();
            black_box(docs)
        })
    });
    bench.bench_function("yaml_to_snapshot", |b| {
        b.iter(|| black_box(snapshot_from("generated.yaml", black_box(&text)).unwrap()))
    });
    let json = generate_json(&LARGE).unwrap();
    bench.bench_function("json_to_snapshot", |b| {
        b.iter(|| black_box(snapshot_from("generated.json", black_box(&json)).unwrap()))
    });
    bench.finish();
}

fn generate(c: &mut Criterion) {
    let mut bench = c.benchmark_group("generate");
    bench.sample_size(10);
    bench.bench_function("5000_nodes_10000_pending_pods", |b| {
        b.iter(|| black_box(generate_yaml(&LARGE).unwrap()))
    });
    bench.finish();
}

fn threads(c: &mut Criterion) {
    let text = generate_yaml(&LARGE).unwrap();
    let snapshot = snapshot_from("generated.yaml", &text).unwrap();
    let pod = snapshot
        .pods
        .iter()
        .position(|p| p.pending)
        .expect("pending pods") as u32;
    let mut bench = c.benchmark_group("threads");
    bench.sample_size(10);
    for n in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap();
        bench.bench_function(format!("yaml_to_snapshot/{n}"), |b| {
            b.iter(|| pool.install(|| black_box(snapshot_from("generated.yaml", &text).unwrap())))
        });
        bench.bench_function(format!("static_node_checks_5000_nodes/{n}"), |b| {
            b.iter(|| {
                pool.install(|| {
                    black_box(wasched::filters::StaticVerdicts::of(
                        &snapshot,
                        black_box(pod),
                    ))
                })
            })
        });
    }
    bench.finish();
}

criterion_group!(benches, load, generate, threads);
criterion_main!(benches);
