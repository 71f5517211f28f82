//! Differential tests: every scenario in `testdata/scenarios`, the default
//! snapshot and generated clusters, scheduled by wasched's engine with the
//! bundled components and by the real kube-scheduler v1.37.2 on a real
//! control plane (the Go harness in `kube/`), compared pod by pod; and the
//! same with that kube-scheduler running the bundled components
//! (`--engine kube-scheduler-wasm`), to show where the same components
//! decide differently inside kube-scheduler than in wasched's own cycle.
//!
//! Where kube-scheduler breaks a tie between equally scored nodes or
//! placements, the harness breaks it toward wasched's choice when that is
//! among the tied best (so one tie does not cascade). Each snapshot runs
//! once, and every run is recorded (`target/tmp/differential/ENGINE/`). A
//! difference is accepted only in a named class of kube-scheduler's
//! nondeterminism identified from its own recorded scores
//! ([`agreement::Nondeterminism`]: its node among the equal top scores
//! that hold wasched's) or as an entry of that engine's file under
//! `testdata/differential/` (deliberate differences; differences of the
//! two frameworks); every entry must still be a difference: the files are
//! held exact. Any other difference fails, whatever another run would do.
//!
//! These tests need the harness: `WASCHED_KUBE` names it, or it is found
//! in `kube/bin/`, or built there on first use (`make -C kube`). They never
//! skip: without Go and the module proxy they fail saying so.
//! `WASCHED_DIFF_SEEDS=N` compares N generated clusters instead of 3.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Mutex;

use wasched::ReadOptions;
use wasched::cluster::agreement::{self, Disagreement};
use wasched::cluster::{self, Harness, KubeRun, ScheduleOptions, WasmComponents};
use wasched::framework::{ExtensionPoint, Plugin};
use wasched::model::{NodeId, PodId, Snapshot};

/// The objects go to a real kube-scheduler: read whole.
const KEEP_STORED: ReadOptions = ReadOptions {
    topology_aliases: std::collections::BTreeMap::new(),
    strict: false,
    keep_stored: true,
    show_progress: false,
    controllers: wasched::manifest::ControllerOptions {
        gang_scheduling: std::collections::BTreeSet::new(),
    },
};

/// A snapshot under comparison: its name in the tables, and files.
struct Case {
    name: String,
    files: Vec<PathBuf>,
}

fn cases() -> Vec<Case> {
    let mut cases = vec![Case {
        name: "default".into(),
        files: Vec::new(),
    }];
    let dir = common::testdata("scenarios");
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    scenarios.sort();
    for path in scenarios {
        cases.push(Case {
            name: path.file_stem().unwrap().to_string_lossy().into_owned(),
            files: vec![path],
        });
    }
    // Workloads as users submit them, expanded as their controllers would.
    for workload in ["jobset", "raycluster", "volcano-job"] {
        cases.push(Case {
            name: format!("workload {workload}"),
            files: vec![
                common::testdata("dialects/nodes.yaml"),
                common::testdata(&format!("workloads/{workload}.yaml")),
            ],
        });
    }
    let seeds: u64 = std::env::var("WASCHED_DIFF_SEEDS")
        .ok()
        .map(|s| s.parse().expect("WASCHED_DIFF_SEEDS is a number"))
        .unwrap_or(3);
    let dir = common::tempdir("differential");
    for seed in 1..=seeds {
        let options = wasched::generate::Options {
            nodes: 200,
            pending_pods: 400,
            seed,
            shape: wasched::generate::Shape::Mixed,
        };
        let path = dir.join(format!("generated-{seed}.yaml"));
        std::fs::write(&path, wasched::generate::generate_yaml(&options).unwrap()).unwrap();
        cases.push(Case {
            name: format!("generated seed {seed}"),
            files: vec![path],
        });
    }
    cases
}

/// One case through both engines.
struct Compared {
    name: String,
    snapshot: Snapshot,
    wasched: wasched::Outcome,
    kube: KubeRun,
}

fn harness() -> Harness {
    Harness::locate().unwrap_or_else(|e| panic!("the differential tests need the harness: {e:#}"))
}

/// wasched's decisions on `snapshot` with the bundled plugins and `extra`.
fn wasched_run(snapshot: &Snapshot, extra: Option<Box<dyn Plugin>>) -> wasched::Outcome {
    let runtime = common::runtime();
    // kube-scheduler runs with percentageOfNodesToScore 100 (the
    // harness's configuration); so does wasched here.
    let mut config = wasched::PluginConfig::default();
    config.set_percentage_of_nodes_to_score(100);
    let mut plugins = runtime.bundled(&config).unwrap();
    if let Some(plugin) = extra {
        plugins.add(plugin).unwrap();
    }
    wasched::scheduler::run(
        &mut snapshot.clone(),
        &mut plugins,
        wasched::scheduler::RunOptions::default(),
    )
}

/// Every case through wasched, then once through kube-scheduler with its
/// ties broken toward wasched's choices, a few kube-scheduler runs at a
/// time (each is mostly waiting on its control plane).
///
/// Each case runs once: a difference is never outvoted by a rerun that
/// agrees. Every run is recorded under [`records`] (what each engine
/// decided, kube-scheduler's scores and tie classes, each difference with
/// the nondeterminism that explains it, and the control plane's log).
fn compare_all(cases: Vec<Case>, engine: &Engine) -> Vec<Compared> {
    let harness = harness();
    let records = records(engine);
    let prepared: Vec<_> = cases
        .into_iter()
        .map(|case| {
            let manifests = wasched::read_manifests_with(&case.files, &KEEP_STORED)
                .unwrap_or_else(|e| panic!("{}: {e:#}", case.name));
            let snapshot = Snapshot::build(&manifests).unwrap();
            let outcome = wasched_run(&snapshot, None);
            (case.name, manifests, snapshot, outcome)
        })
        .collect();
    let queue = Mutex::new(prepared.into_iter().enumerate().collect::<Vec<_>>());
    let done = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| {
                loop {
                    let Some((i, (name, manifests, snapshot, outcome))) =
                        queue.lock().unwrap().pop()
                    else {
                        return;
                    };
                    let file = name.replace(' ', "-");
                    let options = ScheduleOptions {
                        ties: true,
                        prefer: Some(agreement::preferences(&snapshot, &outcome)),
                        log: Some(records.join(format!("{file}.log"))),
                        wasm: engine.wasm.clone(),
                        ..ScheduleOptions::default()
                    };
                    let kube = cluster::schedule(&harness, &manifests, &snapshot, &options)
                        .unwrap_or_else(|e| panic!("{name}: kube-scheduler: {e:#}"));
                    let record = Record {
                        snapshot: &name,
                        engine: engine.name,
                        differences: agreement::differences(&snapshot, &outcome, &kube),
                        wasched: &outcome,
                        kube_scheduler: &kube.result,
                    };
                    let path = records.join(format!("{file}.json"));
                    std::fs::write(&path, serde_json::to_vec_pretty(&record).unwrap())
                        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    done.lock().unwrap().push((
                        i,
                        Compared {
                            name,
                            snapshot,
                            wasched: outcome,
                            kube,
                        },
                    ));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, c)| c).collect()
}

/// Where `engine`'s runs are recorded, emptied first:
/// `target/tmp/differential/ENGINE/`, one `CASE.json` and one `CASE.log`
/// (the control plane's log) per snapshot.
fn records(engine: &Engine) -> PathBuf {
    let dir = records_dir(engine);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `target/tmp/differential/ENGINE/`.
fn records_dir(engine: &Engine) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("differential")
        .join(engine.name)
}

/// One kube-scheduler run, as recorded.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Record<'a> {
    snapshot: &'a str,
    engine: &'a str,
    /// Every pod decided differently, explained or not.
    differences: Vec<agreement::Difference>,
    wasched: &'a wasched::Outcome,
    kube_scheduler: &'a wasched::cluster::KubeResult,
}

/// Which kube-scheduler wasched is compared with, and its table of
/// accepted differences.
struct Engine {
    /// Its name in messages.
    name: &'static str,
    /// kube-scheduler runs wasched's components.
    wasm: Option<WasmComponents>,
    /// The table's file stem under `testdata/differential/`.
    table: &'static str,
}

/// The stock kube-scheduler, and the deliberate differences.
fn stock() -> Engine {
    Engine {
        name: "kube-scheduler",
        wasm: None,
        table: "kube-scheduler",
    }
}

/// kube-scheduler running the bundled components, and the differences of
/// the two frameworks.
fn with_components() -> Engine {
    Engine {
        name: "kube-scheduler-wasm",
        wasm: Some(WasmComponents::default()),
        table: "kube-scheduler-wasm",
    }
}

/// One accepted difference of a table under `testdata/differential/`.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Accepted {
    snapshot: String,
    pod: String,
    field: String,
    wasched: String,
    kube_scheduler: String,
    /// Why the difference is deliberate; required, not compared.
    #[allow(dead_code)]
    why: String,
}

/// The file under `testdata/differential/` listing an engine's accepted
/// differences.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AcceptedDifferences {
    differences: Vec<Accepted>,
}

/// An engine's table of accepted differences: (snapshot, disagreement).
fn expected_differences(table: &str) -> BTreeSet<(String, Disagreement)> {
    let path = common::testdata("differential").join(format!("{table}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file: AcceptedDifferences =
        serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut rows = BTreeSet::new();
    for d in file.differences {
        let row = (
            d.snapshot,
            Disagreement {
                pod: d.pod,
                field: d.field,
                wasched: d.wasched,
                kube_scheduler: d.kube_scheduler,
            },
        );
        assert!(
            rows.insert(row),
            "{}: an entry is listed twice",
            path.display()
        );
    }
    rows
}

/// The two engines' tests run one after the other: each keeps three
/// control planes busy, and kube-scheduler's queue must take in a
/// generated cluster's 400 pods within the harness's bound.
static ONE_ENGINE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn wasched_decides_what_kube_scheduler_decides() {
    let _one = ONE_ENGINE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let compared = check(&stock());
    // The comparison bites: one perturbed score (every node but the first
    // gets nothing, the first 100 extra) makes wasched disagree.
    let perturbed = wasched_run(&compared[0].snapshot, Some(Box::new(FirstNodeFirst)));
    let differs = agreement::disagreements(&compared[0].snapshot, &perturbed, &compared[0].kube);
    assert!(
        differs
            .iter()
            .any(|d| d.field == "node" || d.field == "fate"),
        "a perturbed score must show as a difference"
    );
}

#[test]
fn the_components_decide_inside_kube_scheduler_as_in_wasched() {
    let _one = ONE_ENGINE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    check(&with_components());
}

/// Every case through wasched and `engine`; the differences must be
/// exactly the engine's table.
fn check(engine: &Engine) -> Vec<Compared> {
    let compared = compare_all(cases(), engine);
    let mut found = BTreeSet::new();
    let mut explained = BTreeMap::new();
    let mut pods = 0;
    for case in &compared {
        pods += case.snapshot.pods.iter().filter(|p| p.pending).count();
        for d in agreement::differences(&case.snapshot, &case.wasched, &case.kube) {
            match d.explained {
                Some(class) => *explained.entry(class).or_insert(0) += 1,
                None => {
                    found.insert((case.name.clone(), d.disagreement));
                }
            }
        }
    }
    let explained: Vec<String> = explained
        .iter()
        .map(|(class, n)| format!("{n} as {class}"))
        .collect();
    let explained = match explained.is_empty() {
        true => "none explained by kube-scheduler's nondeterminism".to_string(),
        false => format!("explained: {}", explained.join(", ")),
    };
    // Rows of snapshots this run compared (more generated seeds run with
    // WASCHED_DIFF_SEEDS than by default).
    let expected: BTreeSet<_> = expected_differences(engine.table)
        .into_iter()
        .filter(|(case, _)| compared.iter().any(|c| &c.name == case))
        .collect();
    let new: Vec<String> = found
        .difference(&expected)
        .map(|(case, d)| {
            format!(
                "  - {{snapshot: {case}, pod: {}, field: {}, wasched: {:?}, kubeScheduler: {:?}, why: ...}}",
                d.pod, d.field, d.wasched, d.kube_scheduler
            )
        })
        .collect();
    let gone: Vec<String> = expected
        .difference(&found)
        .map(|(case, d)| format!("{case}: {d}"))
        .collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "{} snapshots, {pods} pending pods compared with {} ({explained}; every run recorded in {}).\nDifferences not in testdata/differential/{}.yaml:\n{}\nEntries of that file that are no longer differences:\n{}",
        compared.len(),
        engine.name,
        records_dir(engine).display(),
        engine.table,
        new.join("\n"),
        gone.join("\n")
    );
    eprintln!(
        "{} snapshots, {pods} pending pods: wasched and {} agree but for the {} accepted differences of testdata/differential/{}.yaml ({explained}; every run recorded in {})",
        compared.len(),
        engine.name,
        expected.len(),
        engine.table,
        records_dir(engine).display()
    );
    compared
}

/// A score plugin that perturbs wasched's scores: 100 for the node whose
/// name sorts first, 0 for every other.
struct FirstNodeFirst;

impl Plugin for FirstNodeFirst {
    fn name(&self) -> &str {
        "FirstNodeFirst"
    }
    fn points(&self) -> &[ExtensionPoint] {
        &[ExtensionPoint::Score]
    }
    fn score(
        &mut self,
        _snapshot: &mut Snapshot,
        _pod: PodId,
        nodes: &[NodeId],
    ) -> wasched::framework::Answer<Result<Vec<i64>, wasched::framework::Status>> {
        let first = nodes.iter().min().copied();
        Ok(Ok(nodes
            .iter()
            .map(|&n| if Some(n) == first { 100 } else { 0 })
            .collect()))
    }
}
