//! The plugin components themselves: what the built artifacts import and
//! export, how the host wires them, and what it refuses to load.

mod common;

use common::runtime;
use wasched::PluginConfig;
use wasched::framework::ExtensionPoint;
use wasched::runtime::{PACKAGE, bundled_plugins};

#[test]
fn bundled_gang_permit_is_a_component_importing_only_our_package() {
    let (_, bytes) = bundled_plugins()
        .iter()
        .find(|(name, _)| *name == "gang-permit")
        .expect("gang-permit is bundled");
    let engine = wasmtime::Engine::default();
    // A fresh engine: the artifact itself, not the host's view of it.
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
    let mut exports: Vec<String> = ty
        .exports(&engine)
        .map(|(name, _)| name.to_string())
        .collect();
    exports.sort();
    assert_eq!(
        exports,
        [
            "wasched:scheduler/permit@0.3.0",
            "wasched:scheduler/plugin@0.3.0",
            "wasched:scheduler/pre-enqueue@0.3.0",
        ]
    );
}

#[test]
fn host_wires_exactly_the_exported_extension_points() {
    let set = runtime().bundled(&PluginConfig::default()).unwrap();
    let gang = set
        .iter()
        .find(|p| p.name() == "WaschedGangScheduling")
        .expect("GangScheduling loaded");
    assert_eq!(
        gang.points(),
        [ExtensionPoint::PreEnqueue, ExtensionPoint::Permit]
    );
    assert_eq!(gang.source(), "bundled:gang-permit");
    // Placement generation only: the host computes the default placement
    // scores itself, so the bundled topology plugin exports no
    // placement-score (it would be counted twice).
    let topology = set
        .iter()
        .find(|p| p.name() == "WaschedTopologyPlacement")
        .expect("TopologyPlacement loaded");
    assert_eq!(topology.points(), [ExtensionPoint::PlacementGenerate]);
    assert_eq!(topology.source(), "bundled:topology-placement");
}

#[test]
fn plugin_directory_loads_every_component_in_it() {
    let dir = common::tempdir("plugin-dir");
    std::fs::write(dir.join("gang.wasm"), gang_bytes()).unwrap();
    std::fs::write(dir.join("README.txt"), "not a plugin").unwrap();
    let set = runtime().from_dir(&dir, &PluginConfig::default()).unwrap();
    assert_eq!(set.iter().count(), 1);
    let outcome = common::simulate(&[], Some(&dir));
    assert!(!outcome.placements.is_empty());
}

/// A component built against 0.1.0 (kept as a fixture, never rebuilt)
/// loads through the adapter, is wired into the same points, and decides
/// exactly what the current component decides on every scenario and on
/// the bundled default snapshot.
#[test]
fn a_component_built_against_0_1_0_keeps_loading_and_decides_the_same() {
    let dir = common::tempdir("v0.1.0");
    std::fs::copy(common::gang_v0_1_0(), dir.join("gang-permit.wasm")).unwrap();
    let set = runtime().from_dir(&dir, &PluginConfig::default()).unwrap();
    let old = set.iter().next().unwrap();
    assert_eq!(old.name(), "GangScheduling");
    assert_eq!(
        old.points(),
        [ExtensionPoint::PreEnqueue, ExtensionPoint::Permit]
    );
    let mut snapshots: Vec<Vec<std::path::PathBuf>> = vec![Vec::new()];
    for entry in std::fs::read_dir(common::testdata("scenarios")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            snapshots.push(vec![path]);
        }
    }
    assert!(snapshots.len() > 5);
    let current_dir = common::tempdir("v0.2.0");
    std::fs::write(current_dir.join("gang-permit.wasm"), gang_bytes()).unwrap();
    for files in snapshots {
        let current = common::simulate(&files, Some(&current_dir)).to_json();
        let adapted = common::simulate(&files, Some(&dir)).to_json();
        assert_eq!(current, in_0_3_words(&adapted), "{files:?}");
    }
}

fn gang_bytes() -> &'static [u8] {
    common::bundled("gang-permit")
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
    format!(
        "{:#}",
        runtime()
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
            patched("@0.3.0", "@0.9.0"),
            "future.wasm: built against wasched:scheduler@0.9.0 (",
        ),
        (
            "wasi.wasm",
            patched("wasched:scheduler/log@0.3.0", "wasi:logging/loggerss@0.3.0"),
            "wasi.wasm: imports wasi:logging/loggerss@0.3.0, which this host does not provide",
        ),
        (
            "pointless.wasm",
            patched("wasched:scheduler/p", "wasched:schedulerx/"),
            "pointless.wasm: does not export wasched:scheduler/plugin@0.3.0",
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
    // An unknown version names both: the component's and the host's.
    let err = load_error("future.wasm", &patched("@0.3.0", "@0.9.0"));
    assert!(
        err.contains(
            "but this host implements wasched:scheduler@0.3.0 (and loads wasched:scheduler@0.2.0, wasched:scheduler@0.1.0)"
        ),
        "{err}"
    );
}

#[test]
fn refuses_bad_args_and_duplicate_names() {
    let runtime = runtime();
    let config = PluginConfig::default()
        .configure(
            "WaschedGangScheduling",
            serde_json::json!({"args": {"minCount": 2}}),
        )
        .unwrap();
    let err = format!(
        "{:#}",
        runtime
            .load("gang.wasm", gang_bytes(), &config)
            .unwrap_err()
    );
    assert!(
        err.contains(
            "plugin WaschedGangScheduling refused its args: WaschedGangScheduling takes no args"
        ),
        "{err}"
    );

    let dir = common::tempdir("duplicates");
    std::fs::write(dir.join("a.wasm"), gang_bytes()).unwrap();
    std::fs::write(dir.join("b.wasm"), gang_bytes()).unwrap();
    let err = runtime
        .from_dir(&dir, &PluginConfig::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("plugin name WaschedGangScheduling is already used"),
        "{err}"
    );

    let typo = PluginConfig::default()
        .configure(
            "GangSchedulng",
            serde_json::json!({"failurePolicy": "Ignore"}),
        )
        .unwrap();
    let err = runtime.bundled(&typo).unwrap_err().to_string();
    assert!(err.contains("names plugin GangSchedulng, but no loaded plugin has that name (loaded: WaschedGangScheduling, WaschedGpuBinPacking, WaschedTaintToleration, WaschedTeamGpuIsolation, WaschedTopologyPlacement, WaschedWorkloadPreemption)"), "{err}");
}

/// One configuration file serves wasched and kube-scheduler: there a
/// wasched plugin's Score is prepared in PreScore and its Filter in
/// PreFilter, so a file names it at both; wasched accepts those entries
/// for a plugin with that point (its cycle has none to run) and refuses
/// them for any other.
#[test]
fn pre_score_and_pre_filter_name_a_plugin_that_scores_or_filters() {
    let file = |plugins: &str| {
        PluginConfig::parse(&format!(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n{plugins}"
        ))
        .unwrap()
    };
    let both = file(
        "    preFilter: {enabled: [{name: WaschedGpuBinPacking}]}\n    filter: {enabled: [{name: WaschedGpuBinPacking}]}\n    preScore: {enabled: [{name: WaschedTeamGpuIsolation}]}\n    score: {enabled: [{name: WaschedTeamGpuIsolation, weight: 10}]}\n",
    );
    let mut set = common::runtime().bundled(&both).unwrap();
    let scoring: Vec<String> = set
        .at(ExtensionPoint::Score)
        .map(|p| p.name().to_string())
        .collect();
    assert_eq!(scoring, ["WaschedTeamGpuIsolation"]);
    // Enabled so, the team score keeps ml's pods on ml's node (the default
    // scores put them beside vision: testdata/scenarios'
    // teams-share-gpu-nodes.expected.json).
    let mut snapshot =
        wasched::read_snapshot(&[common::testdata("scenarios/teams-share-gpu-nodes.yaml")])
            .unwrap();
    let outcome = wasched::scheduler::run(
        &mut snapshot,
        &mut set,
        wasched::scheduler::RunOptions::default(),
    );
    let placed: Vec<(&str, &str)> = outcome
        .placements
        .iter()
        .map(|b| (b.pod.as_str(), b.node.as_str()))
        .collect();
    assert_eq!(
        placed,
        [
            ("ml/finetune-0", "gpu-b"),
            ("ml/finetune-1", "gpu-b"),
            ("vision/segment-0", "gpu-a")
        ]
    );
    let err = common::runtime()
        .bundled(&file(
            "    preScore: {enabled: [{name: WaschedGangScheduling}]}\n",
        ))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("WaschedGangScheduling is a wasched plugin; wasched plugins have no such extension point"),
        "{err}"
    );
    let err = common::runtime()
        .bundled(&file(
            "    bind: {enabled: [{name: WaschedTeamGpuIsolation}]}\n",
        ))
        .unwrap_err()
        .to_string();
    assert!(err.contains("no such extension point"), "{err}");
}

/// The bundled components built against 0.2.0 (kept as fixtures, never
/// rebuilt) load through the adapter under their 0.2.0 names, are wired
/// into the same points as today's, and decide exactly what today's
/// bundled 0.3.0 components decide on every scenario and on the bundled
/// default snapshot.
#[test]
fn components_built_against_0_2_0_keep_loading_and_decide_the_same() {
    let dir = common::v0_2_0_dir();
    let set = runtime().from_dir(&dir, &PluginConfig::default()).unwrap();
    let names: Vec<(&str, Option<&str>)> = set
        .iter()
        .map(|p| (p.name(), p.contract_version()))
        .collect();
    assert_eq!(
        names,
        [
            ("GangScheduling", Some("0.2.0")),
            ("GpuBinPacking", Some("0.2.0")),
            ("TopologyPlacement", Some("0.2.0")),
            ("WorkloadPreemption", Some("0.2.0")),
        ]
    );
    let bundled = runtime().bundled(&PluginConfig::default()).unwrap();
    for old in set.iter() {
        let new = bundled
            .iter()
            .find(|p| p.name() == format!("Wasched{}", old.name()))
            .or_else(|| (old.name() == "GpuBinPacking").then_some(old))
            .unwrap();
        assert_eq!(old.points(), new.points(), "{}", old.name());
    }
    // GpuBinPacking is off by default in the bundled set, not in a
    // directory: compare the sets without it, and with it enabled.
    let without_binpack = PluginConfig::default().disable("GpuBinPacking");
    let with_binpack = PluginConfig::default().enable("WaschedGpuBinPacking");
    let mut snapshots: Vec<Vec<std::path::PathBuf>> = vec![Vec::new()];
    for entry in std::fs::read_dir(common::testdata("scenarios")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            snapshots.push(vec![path]);
        }
    }
    snapshots.sort();
    assert!(snapshots.len() > 20);
    // Placement answers handed on without asking: 0.2.0 has no way to
    // mark one reusable.
    let (mut reused, mut reused_adapted) = (0, 0);
    for files in &snapshots {
        let current = common::simulate_with(files, None, PluginConfig::default());
        let adapted = common::simulate_with(files, Some(&dir), without_binpack.clone());
        reused += current.placement_stats.reused_placements;
        reused_adapted += adapted.placement_stats.reused_placements;
        assert_eq!(
            current.to_json(),
            in_0_3_words(&adapted.to_json()),
            "{files:?}"
        );
        let current = common::simulate_with(files, None, with_binpack.clone()).to_json();
        let adapted = common::simulate(files, Some(&dir)).to_json();
        assert_eq!(
            current,
            in_0_3_words(&adapted),
            "{files:?} with GpuBinPacking"
        );
    }
    assert!(
        reused > 0 && reused_adapted == 0,
        "0.3.0 answers reused {reused} times, 0.2.0 answers {reused_adapted}"
    );
}

/// The 0.1.0 and 0.2.0 components' one reason worded otherwise since: a gang that
/// cannot be satisfied ("gang cannot reach minCount 4: 1 placed + 2 left
/// to try < 4"), now in kube-scheduler's words ("minCount (4) cannot be
/// satisfied: 1 scheduled, 2 remaining"). Everything else must be equal.
fn in_0_3_words(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut rest = json;
    while let Some(at) = ["gang cannot reach ", "composite cannot reach "]
        .iter()
        .filter_map(|m| rest.find(m).map(|i| (i, m.len())))
        .min()
    {
        let (start, marker) = at;
        out.push_str(&rest[..start]);
        let after = &rest[start + marker..];
        // "<field> <min>: <scheduled> placed + <remaining> left to try < <min>"
        let end = after.find(" left to try < ").expect("old wording");
        let digits = after[end + 15..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after.len() - end - 15);
        let words: Vec<&str> = after[..end]
            .split([' ', ':', '+'])
            .filter(|w| !w.is_empty())
            .collect();
        let [field, min, scheduled, "placed", remaining] = words.as_slice() else {
            panic!("old wording: {}", &after[..end]);
        };
        out.push_str(&format!(
            "{field} ({min}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"
        ));
        rest = &after[end + 15 + digits..];
    }
    out.push_str(rest);
    out
}

#[test]
fn old_gang_wording_reads_as_today_s() {
    assert_eq!(
        in_0_3_words("x: gang cannot reach minCount 4: 1 placed + 2 left to try < 4; y"),
        "x: minCount (4) cannot be satisfied: 1 scheduled, 2 remaining; y"
    );
    assert_eq!(
        in_0_3_words("composite cannot reach minGroupCount 12: 0 placed + 11 left to try < 12"),
        "minGroupCount (12) cannot be satisfied: 0 scheduled, 11 remaining"
    );
}

/// The released 0.2.0 contract is frozen beside 0.1.0.
#[test]
fn the_released_0_2_0_contract_is_frozen() {
    assert_eq!(
        frozen_hash("v0.2.0"),
        0xedb5_18fd_76c1_47b8,
        "wit/frozen/v0.2.0 was edited"
    );
}

/// FNV-1a over the four files of a frozen contract version.
fn frozen_hash(version: &str) -> u64 {
    let dir = common::testdata(&format!("../wit/frozen/{version}"));
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for file in [
        "cluster.wit",
        "extension-points.wit",
        "types.wit",
        "worlds.wit",
    ] {
        for byte in std::fs::read(dir.join(file)).unwrap() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// The released 0.1.0 contract is frozen: components were built against
/// exactly this text. Changing the contract means a new version beside it.
#[test]
fn the_released_0_1_0_contract_is_frozen() {
    assert_eq!(
        frozen_hash("v0.1.0"),
        0x0cb1_23d4_74c9_f6fc,
        "wit/frozen/v0.1.0 was edited"
    );
}

/// Compiled components are cached on disk; an entry that is corrupt,
/// truncated or not a wasmtime artifact is compiled again, never used.
#[test]
fn the_component_cache_serves_valid_entries_and_recompiles_damaged_ones() {
    use wasched::runtime::{ComponentCache, Origin};
    let dir = common::tempdir("cache");
    let cache = ComponentCache::at(&dir);
    let engine = wasmtime::Engine::default();
    let load = || cache.load(&engine, gang_bytes()).unwrap().1;
    assert_eq!(load(), Origin::Compiled);
    assert_eq!(load(), Origin::Cached);
    let entry = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "cwasm"))
        .expect("an entry was written");
    let good = std::fs::read(&entry).unwrap();
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0xff;
    // The right magic and a matching checksum over a payload wasmtime refuses.
    let mut forged = b"WASCHED1".to_vec();
    let payload = b"not a wasmtime artifact".to_vec();
    let sum = {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let mut h = DefaultHasher::new();
        payload.as_slice().hash(&mut h);
        h.finish()
    };
    forged.extend_from_slice(&sum.to_le_bytes());
    forged.extend_from_slice(&payload);
    for (what, bytes) in [
        ("corrupt", flipped),
        ("truncated", good[..good.len() / 3].to_vec()),
        ("forged", forged),
    ] {
        std::fs::write(&entry, bytes).unwrap();
        assert_eq!(load(), Origin::Compiled, "{what}");
        assert_eq!(load(), Origin::Cached, "{what}: rewritten");
    }
    // A runtime on a warm cache decides as one that compiled.
    let warm = wasched::Runtime::with_cache(ComponentCache::at(common::cache_dir())).unwrap();
    let mut set = warm.bundled(&PluginConfig::default()).unwrap();
    let mut snapshot = wasched::read_snapshot(&[]).unwrap();
    let outcome = wasched::scheduler::run(
        &mut snapshot,
        &mut set,
        wasched::scheduler::RunOptions::default(),
    );
    assert_eq!(outcome.to_json(), common::simulate(&[], None).to_json());
}
