//! The plugin components themselves: what the built artifacts import and
//! export, how the host wires them, and what it refuses to load.

use wasched::runtime::{ExtensionPoint, PACKAGE, PluginSet, Runtime, bundled_plugins};

#[test]
fn bundled_gang_permit_is_a_component_importing_only_our_package() {
    let (_, bytes) = bundled_plugins()
        .iter()
        .find(|(name, _)| *name == "gang-permit")
        .expect("gang-permit is bundled");
    let engine = wasmtime::Engine::default();
    let component = wasmtime::component::Component::new(&engine, bytes).expect("a valid component");
    let ty = component.component_type();
    let imports: Vec<String> = ty
        .imports(&engine)
        .map(|(name, _)| name.to_string())
        .collect();
    assert!(!imports.is_empty());
    for import in &imports {
        assert!(
            import.starts_with(&format!("{PACKAGE}/")),
            "unexpected import {import} (no WASI allowed)"
        );
    }
    let exports: Vec<String> = ty
        .exports(&engine)
        .map(|(name, _)| name.to_string())
        .collect();
    assert_eq!(
        exports,
        [
            "wasched:scheduler/plugin@0.1.0",
            "wasched:scheduler/pre-enqueue@0.1.0",
            "wasched:scheduler/permit@0.1.0"
        ]
    );
}

#[test]
fn host_wires_exactly_the_exported_extension_points() {
    let runtime = Runtime::new().unwrap();
    let set = PluginSet::bundled(&runtime).unwrap();
    let gang = set
        .iter()
        .find(|p| p.name() == "GangScheduling")
        .expect("GangScheduling loaded");
    assert_eq!(
        gang.points(),
        [ExtensionPoint::PreEnqueue, ExtensionPoint::Permit]
    );
    assert_eq!(gang.source(), "bundled:gang-permit");
}

#[test]
fn plugin_directory_loads_every_component_in_it() {
    let dir = tempdir();
    let (_, bytes) = bundled_plugins()[0];
    std::fs::write(dir.join("gang.wasm"), bytes).unwrap();
    std::fs::write(dir.join("README.txt"), "not a plugin").unwrap();
    let runtime = Runtime::new().unwrap();
    let set = PluginSet::from_dir(&runtime, &dir).unwrap();
    assert_eq!(set.iter().count(), 1);
    let outcome = wasched::simulate(&[], Some(&dir)).unwrap();
    assert!(!outcome.placements.is_empty());
}

#[test]
fn refuses_what_is_not_a_plugin_component() {
    let runtime = Runtime::new().unwrap();
    let err = runtime
        .load("junk.wasm", b"\0asm\x01\0\0\0garbage", "{}")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("junk.wasm: not a loadable wasm component"),
        "{err}"
    );
    let err = runtime
        .load("empty.wasm", b"", "{}")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("empty.wasm: not a loadable wasm component"),
        "{err}"
    );
    let (_, bytes) = bundled_plugins()[0];
    let err = runtime
        .load("gang.wasm", bytes, r#"{"minCount": 2}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("GangScheduling takes no args"), "{err}");
    let dir = tempdir();
    std::fs::write(dir.join("a.wasm"), bytes).unwrap();
    std::fs::write(dir.join("b.wasm"), bytes).unwrap();
    let err = PluginSet::from_dir(&runtime, &dir).unwrap_err().to_string();
    assert!(
        err.contains("plugin name GangScheduling is already used"),
        "{err}"
    );
}

fn tempdir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "wasched-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
