//! The bundled plugins' logic compiled into the host
//! (`wasched::framework::native`), no wasm: every scenario decides exactly
//! as with the components, so the cycle, the CompositePodGroup search and
//! preemption can be exercised and debugged natively, and the benchmarks'
//! native baseline is the same logic.

mod common;

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
    let binpack = common::binpack_config(common::BINPACK_ARGS);
    let mut moved = 0;
    for snapshot in files {
        let wasm = common::simulate(&snapshot, None).to_json();
        let mut read = wasched::read_snapshot(&snapshot).unwrap();
        let native = wasched::scheduler::run(
            &mut read,
            &mut common::native_plugins(false),
            wasched::scheduler::RunOptions::default(),
        )
        .to_json();
        assert_eq!(wasm, native, "{snapshot:?}");
        // With GPU bin-packing on (a bundled plugin the config enables).
        let wasm_binpack = common::simulate_with(&snapshot, None, binpack.clone()).to_json();
        let mut read = wasched::read_snapshot(&snapshot).unwrap();
        let native = wasched::scheduler::run(
            &mut read,
            &mut common::native_plugins(true),
            wasched::scheduler::RunOptions::default(),
        )
        .to_json();
        assert_eq!(wasm_binpack, native, "{snapshot:?} with GpuBinPacking");
        moved += usize::from(wasm_binpack != wasm);
    }
    assert!(moved >= 1, "GPU bin-packing changes some decision");
}
