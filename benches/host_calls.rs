//! What the components cost the process that runs them, beyond time per
//! call: the resident memory of a full pool of instances of each bundled
//! component (kube-scheduler keeps up to 16 per component, one per
//! concurrent call), and the peak memory and time of a call that asks the
//! host about 16 M duplicate node ids (the hostile fixture's
//! `duplicate-ids`, refused before the host reads the list).
//!
//! The memory figures are printed once per run (`cargo bench --bench
//! host_calls`); criterion times the refused call against a neutral call
//! of the same fixture in the same run.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use wasched::config::PluginSettings;
use wasched::{PluginConfig, PluginSet, Runtime};
use wasched_benches::{peak_rss_mib, rss_mib};
use wasched_ffi::pool::{DEFAULT_POOL_SIZE, Plugin, Spec};

/// Takes `depth` instances of `plugin` at once (each call inside the one
/// before), so that the pool makes that many.
fn hold(plugin: &Plugin, runtime: &Runtime, depth: usize) {
    if depth > 0 {
        plugin
            .with_instance(runtime, |_| hold(plugin, runtime, depth - 1))
            .unwrap();
    }
}

/// Resident memory of a full pool of each bundled component, made by
/// `DEFAULT_POOL_SIZE` calls at once (the pool of a plugin without `poolSize`).
fn pool_memory() {
    let runtime = Runtime::with_cache(wasched::runtime::ComponentCache::off()).unwrap();
    for bundled in wasched::runtime::BUNDLED {
        let spec = Spec {
            name: bundled.name.to_string(),
            component: None,
            config: serde_json::Value::Null,
        };
        let plugin = Plugin::load(&runtime, spec).unwrap();
        let before = rss_mib();
        hold(&plugin, &runtime, DEFAULT_POOL_SIZE);
        let info = plugin.info();
        println!(
            "pool of {} instances of {}: +{:.1} MiB resident",
            info["instances"]["alive"],
            bundled.name,
            rss_mib() - before
        );
    }
}

/// The hostile fixture at filter, misbehaving as `misbehave` for team/bad.
fn hostile(runtime: &Runtime, misbehave: &str) -> PluginSet {
    let wasm = std::path::Path::new(wasched::runtime::FIXTURE_DIR).join("hostile.wasm");
    let settings = PluginSettings {
        fuel: 1_000_000_000,
        timeout: Duration::from_secs(30),
        memory_limit: 160 << 20,
        args: format!(r#"{{"point": "filter", "misbehave": "{misbehave}"}}"#),
        ..PluginSettings::default()
    };
    let plugin = runtime
        .load(
            "hostile.wasm",
            &std::fs::read(&wasm).unwrap(),
            &PluginConfig::uniform(settings),
        )
        .unwrap();
    let mut set = PluginSet::new();
    set.add(Box::new(plugin)).unwrap();
    set
}

fn duplicate_ids(c: &mut Criterion) {
    pool_memory();
    let runtime = Runtime::with_cache(wasched::runtime::ComponentCache::off()).unwrap();
    let snapshot = wasched::read_snapshot(&[std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/sandbox/snapshot.yaml"
    ))])
    .unwrap();
    let run = |plugins: &mut PluginSet| {
        let mut snapshot = snapshot.clone();
        wasched::scheduler::run(
            &mut snapshot,
            plugins,
            wasched::scheduler::RunOptions::default(),
        )
    };
    let mut refused = hostile(&runtime, "duplicate-ids");
    let before = peak_rss_mib();
    let outcome = run(&mut refused);
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    println!(
        "16 M duplicate node ids asked of the host at every filter call: peak RSS {:.0} MiB (before: {before:.0} MiB; the component's own 64 MiB of ids included)",
        peak_rss_mib()
    );
    let mut neutral = hostile(&runtime, "");
    let mut group = c.benchmark_group("host_calls");
    group.sample_size(10);
    group.bench_function("sandbox-run/neutral", |b| b.iter(|| run(&mut neutral)));
    group.bench_function("sandbox-run/16M-duplicate-ids", |b| {
        b.iter(|| run(&mut refused))
    });
    group.finish();
}

criterion_group!(benches, duplicate_ids);
criterion_main!(benches);
