//! What reading a large snapshot costs: a generated cluster of 5,000 nodes
//! with 10,000 pending pods (the scheduler_perf standard size), from YAML
//! text to the indexed snapshot, against the YAML parse alone as baseline;
//! and what the worker threads (`--threads`) buy: reading, and a pod's
//! static node checks over 5,000 nodes, on 1 and on 2 threads; and what a
//! `wasched shadow` pass spends before its cycle on that cluster (the model
//! rebuilt from the watched store, identities carried over); what a real
//! cluster's dump costs to read (2,000 nodes and 60k pods as the API server
//! stores them, `managedFields` and status included; its peak memory is
//! `examples/read_dump.rs`'s); and that a YAML text nested past the limit is
//! read at a cost linear in its depth up to the limit, and refused past it
//! at the cost of reaching the limit.

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

fn shadow_pass(c: &mut Criterion) {
    use kube::runtime::watcher::Event;
    use wasched::live::kinds::Kind;
    use wasched::live::store::Store;
    let json = generate_json(&LARGE).unwrap();
    let mut read = wasched::manifest::Manifests::default();
    wasched::manifest::load_str(&mut read, "generated.json", &json).unwrap();
    let mut store = Store::default();
    for (_, object) in read.objects {
        let kind = Kind::of(&object).expect("a modelled kind");
        store.apply(kind, Event::Apply(object));
    }
    let options = wasched::model::BuildOptions {
        schedulers: Vec::new(),
        live: true,
    };
    let held = store.manifests();
    let mut registry = wasched::model::identity::Registry::new();
    let mut bench = c.benchmark_group("shadow_pass_5000_nodes_10000_pending_pods");
    bench.sample_size(10);
    bench.bench_function("store_copy", |b| b.iter(|| black_box(store.manifests())));
    bench.bench_function("model_build", |b| {
        b.iter(|| {
            black_box(wasched::model::oracle::build_with(black_box(&held), &options).unwrap())
        })
    });
    bench.bench_function("copy_build_stamp", |b| {
        b.iter(|| {
            let manifests = store.manifests();
            let mut snapshot = wasched::model::oracle::build_with(&manifests, &options).unwrap();
            registry.stamp(&mut snapshot);
            black_box(snapshot)
        })
    });
    // What a pass does: the store's objects shared, not copied.
    bench.bench_function("store_share", |b| b.iter(|| black_box(store.held())));
    let read = wasched::manifest::Manifests::default();
    bench.bench_function("share_build_stamp", |b| {
        b.iter(|| {
            let held = store.held();
            let objects = held.iter().map(|h| (&h.0, &h.1));
            let mut snapshot =
                wasched::model::oracle::build_objects(&read, objects, &options).unwrap();
            registry.stamp(&mut snapshot);
            black_box(snapshot)
        })
    });
    // The incremental model the shadow keeps instead: loaded once from the
    // shared objects, then a pass reads only what changed.
    let shared = store.held();
    bench.bench_function("model_load", |b| {
        b.iter(|| {
            let mut model = wasched::model::Model::new(&read, &options).unwrap();
            model.sync(shared.iter());
            black_box(model.snapshot())
        })
    });
    let mut model = wasched::model::Model::new(&read, &options).unwrap();
    model.sync(shared.iter());
    // What a pass copies to run its cycle on.
    bench.bench_function("model_snapshot", |b| b.iter(|| black_box(model.snapshot())));
    bench.bench_function("model_pass_unchanged", |b| {
        b.iter(|| {
            model.sync(black_box(store.held()).iter());
            black_box(model.snapshot())
        })
    });
    // A pass after one pending pod was bound (the watch shows its binding),
    // then unbound again, alternately.
    let at = shared
        .iter()
        .position(|held| match &held.1 {
            wasched::manifest::Object::Pod(pod) => {
                pod.spec.as_ref().is_some_and(|s| s.node_name.is_none())
            }
            _ => false,
        })
        .expect("a pending pod");
    let node = shared
        .iter()
        .find_map(|held| match &held.1 {
            wasched::manifest::Object::Node(node) => node.metadata.name.clone(),
            _ => None,
        })
        .expect("a node");
    let mut bound = (*shared[at]).clone();
    if let wasched::manifest::Object::Pod(pod) = &mut bound.1 {
        pod.spec.get_or_insert_default().node_name = Some(node);
    }
    let versions = [shared[at].clone(), std::sync::Arc::new(bound)];
    let mut flip = 0;
    bench.bench_function("model_pass_one_pod_bound", |b| {
        b.iter(|| {
            flip = 1 - flip;
            let mut objects = store.held();
            objects[at] = versions[flip].clone();
            model.sync(objects.iter());
            black_box(model.snapshot())
        })
    });
    bench.finish();
}

fn dump(c: &mut Criterion) {
    let options = wasched::generate::Options {
        nodes: 2_000,
        pending_pods: 60_000,
        ..LARGE
    };
    let text = wasched::generate::dump_json(&options).unwrap();
    let mut bench = c.benchmark_group("dump_2000_nodes_60000_pods");
    bench.sample_size(10);
    bench.bench_function("json_scan_only", |b| {
        b.iter(|| {
            black_box(serde_json::from_str::<serde::de::IgnoredAny>(black_box(&text)).unwrap())
        })
    });
    bench.bench_function("json_to_snapshot", |b| {
        b.iter(|| {
            let mut manifests = wasched::manifest::Manifests::default();
            wasched::manifest::load_str(&mut manifests, "dump.json", black_box(&text)).unwrap();
            black_box(wasched::model::Model::snapshot_of(manifests, &Default::default()).unwrap())
        })
    });
    bench.finish();
}

fn nesting(c: &mut Criterion) {
    let mut bench = c.benchmark_group("yaml_nesting");
    let read = |text: &str| {
        let mut manifests = wasched::manifest::Manifests::default();
        wasched::manifest::load_str(&mut manifests, "deep.yaml", text)
    };
    // Within the limit: an object (of a kind skipped) nested `depth` deep.
    for depth in [32, 64, 128] {
        let text = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: deep}}\ndata: {}{}\n",
            "[".repeat(depth - 1),
            "]".repeat(depth - 1)
        );
        bench.bench_function(format!("read/{depth}"), |b| {
            b.iter(|| read(black_box(&text)).unwrap())
        });
    }
    // Past it: refused where the limit is crossed, whatever follows.
    for depth in [2_500, 10_000, 40_000] {
        let text = format!("a: {}{}\n", "[".repeat(depth), "]".repeat(depth));
        bench.bench_function(format!("refused/{depth}"), |b| {
            b.iter(|| black_box(read(black_box(&text)).unwrap_err()))
        });
    }
    bench.finish();
}

criterion_group!(benches, load, generate, threads, shadow_pass, dump, nesting);
criterion_main!(benches);
