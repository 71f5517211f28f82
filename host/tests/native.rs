//! The bundled plugins' logic compiled into the host
//! (`wasched::framework::native`), no wasm: every scenario decides exactly
//! as with the components, so the cycle, the CompositePodGroup search and
//! preemption can be exercised and debugged natively, and the benchmarks'
//! native baseline is the same logic.

mod common;

use wasched::PluginSet;
use wasched::framework::ExtensionPoint;
use wasched::framework::native::NativePlugin;
use wasched_sdk::Plugin as _;

/// `GpuBinPacking` args that exercise both of its points.
const BINPACK_ARGS: &str = r#"{"resources": [{"name": "nvidia.com/gpu", "weight": 2}, {"name": "cpu"}], "reserveForRequesters": true}"#;

fn native_plugins(binpack: bool) -> PluginSet {
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

#[test]
fn native_plugins_decide_every_scenario_as_the_components_do() {
    let mut files: Vec<Vec<std::path::PathBuf>> = vec![Vec::new()];
    for entry in std::fs::read_dir(common::testdata("scenarios")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            files.push(vec![path]);
        }
    }
    files.sort();
    let binpack = wasched::PluginConfig::parse(&format!(
        "plugins: [{{name: GpuBinPacking, enabled: true, args: {BINPACK_ARGS}}}]"
    ))
    .unwrap();
    let mut moved = 0;
    for snapshot in files {
        let wasm = common::simulate(&snapshot, None).to_json();
        let mut read = wasched::read_snapshot(&snapshot).unwrap();
        let native = wasched::scheduler::run(&mut read, &mut native_plugins(false)).to_json();
        assert_eq!(wasm, native, "{snapshot:?}");
        // With GPU bin-packing on (a bundled plugin the config enables).
        let wasm_binpack = common::simulate_with(&snapshot, None, binpack.clone()).to_json();
        let mut read = wasched::read_snapshot(&snapshot).unwrap();
        let native = wasched::scheduler::run(&mut read, &mut native_plugins(true)).to_json();
        assert_eq!(wasm_binpack, native, "{snapshot:?} with GpuBinPacking");
        moved += usize::from(wasm_binpack != wasm);
    }
    assert!(moved >= 1, "GPU bin-packing changes some decision");
}
