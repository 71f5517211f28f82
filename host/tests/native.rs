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

fn native_plugins() -> PluginSet {
    let mut set = PluginSet::new();
    set.add(Box::new(NativePlugin::new(
        gang_permit::GangScheduling,
        &[ExtensionPoint::PreEnqueue, ExtensionPoint::Permit],
    )))
    .unwrap();
    let topology = topology_placement::TopologyPlacement::new(Default::default()).unwrap();
    set.add(Box::new(NativePlugin::new(
        topology,
        &[
            ExtensionPoint::PlacementGenerate,
            ExtensionPoint::PlacementScore,
        ],
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
    for snapshot in files {
        let wasm = common::simulate(&snapshot, None).to_json();
        let mut read = wasched::read_snapshot(&snapshot).unwrap();
        let mut plugins = native_plugins();
        let native = wasched::scheduler::run(&mut read, &mut plugins).to_json();
        assert_eq!(wasm, native, "{snapshot:?}");
    }
}
