//! The plugin components themselves: what the built artifacts import and
//! export, how the host wires them, and what it refuses to load.

use wasched::PluginConfig;
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
    let set = PluginSet::bundled(&runtime, &PluginConfig::default()).unwrap();
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
    let set = PluginSet::from_dir(&runtime, &dir, &PluginConfig::default()).unwrap();
    assert_eq!(set.iter().count(), 1);
    let outcome = wasched::simulate(&[], Some(&dir)).unwrap();
    assert!(!outcome.placements.is_empty());
}

fn gang_bytes() -> &'static [u8] {
    bundled_plugins()
        .iter()
        .find(|(name, _)| *name == "gang-permit")
        .unwrap()
        .1
}

/// The bundled component with every occurrence of each `from` replaced by
/// its `to` (same length, so the binary stays well-formed).
fn patched_all(replacements: &[(&str, &str)]) -> Vec<u8> {
    let mut bytes = gang_bytes().to_vec();
    for (from, to) in replacements {
        assert_eq!(from.len(), to.len());
        let mut count = 0;
        let mut i = 0;
        while let Some(at) = bytes[i..]
            .windows(from.len())
            .position(|w| w == from.as_bytes())
        {
            bytes[i + at..i + at + from.len()].copy_from_slice(to.as_bytes());
            i += at + from.len();
            count += 1;
        }
        assert!(count > 0, "{from} not found");
    }
    bytes
}

fn patched(from: &str, to: &str) -> Vec<u8> {
    patched_all(&[(from, to)])
}

fn load_error(source: &str, bytes: &[u8]) -> String {
    let runtime = Runtime::new().unwrap();
    format!(
        "{:#}",
        runtime
            .load(source, bytes, &PluginConfig::default())
            .unwrap_err()
    )
}

#[test]
fn refuses_what_is_not_a_plugin_component() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "notes.wasm",
            b"hello, I am text".to_vec(),
            "notes.wasm: not a WebAssembly file",
        ),
        (
            "empty.wasm",
            Vec::new(),
            "empty.wasm: not a WebAssembly file",
        ),
        (
            "core.wasm",
            b"\0asm\x01\0\0\0".to_vec(),
            "core.wasm: a core wasm module, not a component",
        ),
        (
            "truncated.wasm",
            gang_bytes()[..gang_bytes().len() / 2].to_vec(),
            "truncated.wasm: corrupt or truncated component",
        ),
        (
            "future.wasm",
            patched("@0.1.0", "@0.2.0"),
            "future.wasm: built against wasched:scheduler@0.2.0",
        ),
        (
            "wasi.wasm",
            patched("wasched:scheduler/log@0.1.0", "wasi:logging/loggerss@0.1.0"),
            "wasi.wasm: imports wasi:logging/loggerss@0.1.0, which this host does not provide",
        ),
        (
            "pointless.wasm",
            patched("wasched:scheduler/p", "wasched:schedulerx/"),
            "pointless.wasm: does not export wasched:scheduler/plugin@0.1.0",
        ),
        (
            "idle.wasm",
            patched_all(&[
                ("wasched:scheduler/pre-e", "wasched:schedulerx/pre-"),
                ("wasched:scheduler/perm", "wasched:schedulerx/per"),
            ]),
            "idle.wasm: exports no extension point",
        ),
    ];
    for (source, bytes, expected) in cases {
        let err = load_error(source, &bytes);
        assert!(err.starts_with(expected), "{source}: {err}");
        assert!(!err.contains('\n'), "one line: {err}");
    }
}

#[test]
fn refuses_bad_args_and_duplicate_names() {
    let runtime = Runtime::new().unwrap();
    let config =
        PluginConfig::parse("plugins: [{name: GangScheduling, args: {minCount: 2}}]").unwrap();
    let err = format!(
        "{:#}",
        runtime
            .load("gang.wasm", gang_bytes(), &config)
            .unwrap_err()
    );
    assert!(
        err.contains("plugin GangScheduling refused its args: GangScheduling takes no args"),
        "{err}"
    );

    let dir = tempdir();
    std::fs::write(dir.join("a.wasm"), gang_bytes()).unwrap();
    std::fs::write(dir.join("b.wasm"), gang_bytes()).unwrap();
    let err = PluginSet::from_dir(&runtime, &dir, &PluginConfig::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("plugin name GangScheduling is already used"),
        "{err}"
    );

    let typo =
        PluginConfig::parse("plugins: [{name: GangSchedulng, failurePolicy: Ignore}]").unwrap();
    let err = PluginSet::bundled(&runtime, &typo).unwrap_err().to_string();
    assert!(err.contains("names plugin GangSchedulng, but no loaded plugin has that name (loaded: GangScheduling)"), "{err}");
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
