//! Plugins written in Python and JavaScript, built from their projects
//! under `plugins/python` and `plugins/javascript` by their own
//! toolchains (componentize-py, componentize-js), run in the same sandbox
//! as Rust components and decide exactly as the Rust plugin of the same
//! policy:
//!
//! - `TeamGpuIsolationPy` and `TeamGpuIsolationJs` score every pending pod
//!   on every node exactly as `WaschedTeamGpuIsolation` (Rust) does, on
//!   every scenario and sandbox snapshot and on a few hundred generated
//!   clusters, and a run with each enabled decides alike (in the host,
//!   through `simulate` and `compare` with `--plugins`, and in the real
//!   kube-scheduler through its configuration);
//! - what a component may reach beyond the contract is not there: a
//!   Python component that opens a file or reads the clock traps,
//!   contained and named, and finds its environment empty; JavaScript's
//!   clock traps and its random numbers are fixed; `print` and
//!   `console.log` reach the log; two runs are byte-identical;
//! - a component that imports WASI (built without the stubs) is refused
//!   at load with one line naming the import.
//!
//! The components are built by `hack/polyglot.sh` (`make test` runs it
//! first when the toolchains are installed); these tests are ignored
//! otherwise, and fail with the command to run when a component is
//! missing.

mod common;

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use wasched::framework::{ExtensionPoint, LogLevel};
use wasched::generate::{Options, Shape};
use wasched::manifest::{Manifests, expand_workloads, load_str};
use wasched::runtime::{BUNDLED, bundled_plugins};
use wasched::scheduler::{self, RunOptions};
use wasched::{PluginConfig, PluginSet, Snapshot};

/// The Rust plugin of the policy.
const RUST: &str = "WaschedTeamGpuIsolation";
/// The policy's components in other languages: name and file.
const OTHERS: [(&str, &str); 2] = [
    (
        "TeamGpuIsolationPy",
        "plugins/python/team-gpu-isolation/build/team-gpu-isolation.wasm",
    ),
    (
        "TeamGpuIsolationJs",
        "plugins/javascript/team-gpu-isolation/build/team-gpu-isolation.wasm",
    ),
];

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// A component file's bytes; a missing one names the command that builds it.
fn component(path: &str) -> Vec<u8> {
    let file = repo(path);
    std::fs::read(&file).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; build the Python and JavaScript components first: hack/polyglot.sh",
            file.display()
        )
    })
}

/// A set holding one plugin, loaded from `bytes` under `config`.
fn one(source: &str, bytes: &[u8], config: &PluginConfig) -> PluginSet {
    let plugin = common::runtime()
        .load(source, bytes, config)
        .unwrap_or_else(|e| panic!("{source}: {e:#}"));
    let mut set = PluginSet::new();
    set.add(Box::new(plugin)).unwrap();
    set
}

/// The bytes of the bundled Rust plugin of the policy.
fn rust_component() -> &'static [u8] {
    bundled_plugins()
        .iter()
        .find(|(name, _)| *name == "team-gpu-isolation")
        .expect("bundled")
        .1
}

/// A configuration handing every plugin the same `args`.
fn with_args(names: &[&str], args: &str) -> PluginConfig {
    let entries: Vec<String> = names
        .iter()
        .map(|n| format!("{{name: {n}, args: {{args: {args}}}}}"))
        .collect();
    PluginConfig::parse(&format!(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig: [{}]\n",
        entries.join(", ")
    ))
    .unwrap()
}

/// The policy in its three languages, each in a set of its own, with `args`.
struct Three {
    sets: Vec<(String, PluginSet)>,
}

impl Three {
    fn load(args: &str) -> Three {
        let names: Vec<&str> = std::iter::once(RUST)
            .chain(OTHERS.iter().map(|(n, _)| *n))
            .collect();
        let config = with_args(&names, args);
        let mut sets = vec![(
            RUST.to_string(),
            one("bundled:team-gpu-isolation", rust_component(), &config),
        )];
        for (name, path) in OTHERS {
            sets.push((name.to_string(), one(path, &component(path), &config)));
        }
        Three { sets }
    }

    /// Every pending pod of `snapshot` scored on every node by each
    /// language; panics naming the first difference. Returns the pods
    /// scored and how many of their scores were not zero.
    fn agree_on(&mut self, snapshot: &mut Snapshot, what: &str) -> (usize, usize) {
        let nodes: Vec<u32> = (0..snapshot.node_count() as u32).collect();
        let (mut pods, mut nonzero) = (0, 0);
        for pod in 0..snapshot.pods.len() as u32 {
            if !snapshot.pods[pod as usize].pending {
                continue;
            }
            let mut answers: Vec<(String, Vec<i64>)> = Vec::new();
            for (name, set) in &mut self.sets {
                let mut plugin = set
                    .at(ExtensionPoint::Score)
                    .next()
                    .expect("the set's one plugin scores");
                let scores = plugin
                    .score(snapshot, pod, &nodes)
                    .unwrap_or_else(|e| panic!("{what}: {e}"))
                    .unwrap_or_else(|s| panic!("{what}: {name} answered {s:?}"));
                answers.push((name.clone(), scores));
            }
            let (reference, expected) = &answers[0];
            for (name, got) in &answers[1..] {
                assert_eq!(
                    got, expected,
                    "{what}, pod {}: {name} and {reference} disagree",
                    snapshot.pods[pod as usize].key
                );
            }
            pods += 1;
            nonzero += expected.iter().filter(|&&s| s != 0).count();
        }
        (pods, nonzero)
    }
}

#[test]
#[ignore = "needs the Python and JavaScript components: hack/polyglot.sh builds them"]
fn the_three_languages_score_alike_on_every_snapshot() {
    for args in ["{}", r#"{"resource": "cpu"}"#] {
        let mut three = Three::load(args);
        let (mut pods, mut nonzero) = (0, 0);
        for files in common::every_snapshot() {
            let mut snapshot = wasched::read_snapshot(&files).unwrap();
            let (p, n) = three.agree_on(&mut snapshot, &format!("{files:?} with args {args}"));
            pods += p;
            nonzero += n;
        }
        eprintln!("args {args}: {pods} pending pods scored alike, {nonzero} scores not zero");
        assert!(
            pods > 100 && nonzero > 100,
            "the snapshots exercise the policy"
        );
    }
}

/// `count` small generated clusters' options, the same on every run.
fn generated_cases(count: usize) -> Vec<Options> {
    let mut runner = TestRunner::new_with_rng(
        Config {
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    (0..count)
        .map(|_| small_cluster().new_tree(&mut runner).unwrap().current())
        .collect()
}

fn generated(options: &Options) -> Snapshot {
    let yaml = wasched::generate::generate_yaml(options).expect("the generator's own output");
    let mut manifests = Manifests::default();
    load_str(&mut manifests, "generated.yaml", &yaml).unwrap();
    expand_workloads(&mut manifests).unwrap();
    Snapshot::build(&manifests).unwrap()
}

fn small_cluster() -> impl Strategy<Value = Options> {
    (
        4usize..40,
        2usize..30,
        any::<u64>(),
        prop_oneof![Just(Shape::Gpu), Just(Shape::Mixed), Just(Shape::Cpu)],
    )
        .prop_map(|(nodes, pending_pods, seed, shape)| Options {
            nodes,
            pending_pods,
            seed,
            shape,
        })
}

#[test]
#[ignore = "needs the Python and JavaScript components: hack/polyglot.sh builds them"]
fn the_three_languages_score_alike_on_generated_clusters() {
    let mut three = Three::load("{}");
    let (mut pods, mut nonzero) = (0, 0);
    for options in generated_cases(300) {
        let mut snapshot = generated(&options);
        let (p, n) = three.agree_on(&mut snapshot, &format!("{options:?}"));
        pods += p;
        nonzero += n;
    }
    eprintln!(
        "300 generated clusters: {pods} pending pods scored alike, {nonzero} scores not zero"
    );
    assert!(
        pods > 1000 && nonzero > 1000,
        "the clusters exercise the policy"
    );
}

/// The placements, evictions and PodGroup verdicts of a run, as text.
fn decisions_of(outcome: &wasched::Outcome) -> String {
    let verdicts: Vec<(&str, bool)> = outcome
        .pod_groups
        .iter()
        .map(|g| (g.pod_group.as_str(), g.scheduled))
        .collect();
    serde_json::to_string_pretty(&(&outcome.placements, &outcome.evictions, &verdicts)).unwrap()
}

/// The decisions of a run with the bundled plugins on by default and
/// `name` (from `bytes`) enabled with weight 10.
fn decisions(snapshot: &Snapshot, name: &str, source: &str, bytes: &[u8]) -> String {
    let config = PluginConfig::parse(&format!(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    multiPoint:\n      enabled: [{{name: {name}, weight: 10}}]\n"
    ))
    .unwrap();
    let runtime = common::runtime();
    let mut loaded: Vec<(Box<dyn wasched::framework::Plugin>, bool)> = Vec::new();
    for ((crate_name, component), entry) in bundled_plugins().iter().zip(BUNDLED.iter()) {
        if *crate_name != "team-gpu-isolation" {
            let plugin = runtime.load(crate_name, component, &config).unwrap();
            loaded.push((Box::new(plugin), entry.on_by_default));
        }
    }
    loaded.push((
        Box::new(runtime.load(source, bytes, &config).unwrap()),
        true,
    ));
    let (mut set, _) = config.assemble(loaded).unwrap();
    let mut snapshot = snapshot.clone();
    let outcome = scheduler::run(&mut snapshot, &mut set, RunOptions::default());
    assert!(
        outcome.plugin_errors.is_empty(),
        "{name}: {:?}",
        outcome.plugin_errors
    );
    decisions_of(&outcome)
}

#[test]
#[ignore = "needs the Python and JavaScript components: hack/polyglot.sh builds them"]
fn a_run_with_each_language_decides_alike() {
    let mut snapshots: Vec<(String, Snapshot)> = common::every_snapshot()
        .into_iter()
        .map(|files| {
            (
                format!("{files:?}"),
                wasched::read_snapshot(&files).unwrap(),
            )
        })
        .collect();
    for options in generated_cases(24) {
        snapshots.push((format!("{options:?}"), generated(&options)));
    }
    let others: Vec<(&str, &str, Vec<u8>)> = OTHERS
        .iter()
        .map(|(name, path)| (*name, *path, component(path)))
        .collect();
    let mut differs_from_default = 0;
    for (what, snapshot) in &snapshots {
        let expected = decisions(
            snapshot,
            RUST,
            "bundled:team-gpu-isolation",
            rust_component(),
        );
        for (name, path, bytes) in &others {
            let got = decisions(snapshot, name, path, bytes);
            assert_eq!(got, expected, "{what}: a run with {name} decides otherwise");
        }
        let mut plain = snapshot.clone();
        let mut bundled = common::runtime().bundled(&PluginConfig::default()).unwrap();
        let default = scheduler::run(&mut plain, &mut bundled, RunOptions::default());
        differs_from_default += usize::from(decisions_of(&default) != expected);
    }
    eprintln!(
        "{} snapshots decided alike; the policy moved pods in {differs_from_default}",
        snapshots.len()
    );
    assert!(
        differs_from_default > 0,
        "the policy changes some decisions"
    );
}

/// The probe fixture of `language`, loaded with `probe` as its args.
fn probe(language: &str, probe: &str) -> PluginSet {
    let path = format!("testdata/plugins/probe-{language}/build/probe.wasm");
    let name = if language == "python" {
        "ProbePython"
    } else {
        "ProbeJavascript"
    };
    let config = with_args(&[name], &format!("{{probe: {probe}}}"));
    one(&path, &component(&path), &config)
}

/// Log lines: level and text.
type Logged = Vec<(LogLevel, String)>;

/// Runs the probe's score on the default snapshot: its answer (or the
/// failure's message) and the lines it logged.
fn run_probe(set: &mut PluginSet) -> (Result<Vec<i64>, String>, Logged) {
    let mut snapshot = wasched::read_snapshot(&[]).unwrap();
    let pod = snapshot
        .pods
        .iter()
        .position(|p| p.pending)
        .expect("a pending pod") as u32;
    let answer =
        match set
            .at(ExtensionPoint::Score)
            .next()
            .unwrap()
            .score(&mut snapshot, pod, &[0, 1])
        {
            Ok(Ok(scores)) => Ok(scores),
            Ok(Err(status)) => Err(format!("{status:?}")),
            Err(error) => Err(error.to_string()),
        };
    let logs = set
        .drain_logs()
        .into_iter()
        .map(|(_, line)| (line.level, line.message))
        .collect();
    (answer, logs)
}

#[test]
#[ignore = "needs the Python and JavaScript components: hack/polyglot.sh builds them"]
fn python_reaches_no_file_or_clock_and_an_empty_environment() {
    for what in ["open", "clock"] {
        let (answer, _) = run_probe(&mut probe("python", what));
        let error = answer.expect_err(what);
        assert!(
            error.starts_with("plugin ProbePython: trapped") && error.ends_with(" in score"),
            "{what}: {error}"
        );
    }
    assert_eq!(logged_twice("python", "env"), "environ {}");
}

#[test]
#[ignore = "needs the Python and JavaScript components: hack/polyglot.sh builds them"]
fn print_reaches_the_log_in_both_languages() {
    let (answer, logs) = run_probe(&mut probe("python", "print"));
    assert_eq!(answer, Ok(vec![7, 7]));
    assert_eq!(
        logs,
        [
            (LogLevel::Info, "hello from Python".to_string()),
            (LogLevel::Warn, "a warning".to_string())
        ]
    );
    let (answer, logs) = run_probe(&mut probe("javascript", "print"));
    assert_eq!(answer, Ok(vec![7, 7]));
    assert_eq!(
        logs,
        [
            (LogLevel::Info, "hello from JavaScript 42n".to_string()),
            (LogLevel::Error, "a warning".to_string())
        ]
    );
}

/// What a probe logged, on two fresh instances: equal, or the probe is
/// not deterministic.
fn logged_twice(language: &str, what: &str) -> String {
    let runs: Vec<Logged> = (0..2)
        .map(|_| {
            let (answer, logs) = run_probe(&mut probe(language, what));
            assert_eq!(answer, Ok(vec![7, 7]), "{language} {what}");
            logs
        })
        .collect();
    assert_eq!(runs[0], runs[1], "{language} {what}: two instances differ");
    assert_eq!(runs[0].len(), 1, "{language} {what}: {:?}", runs[0]);
    runs[0][0].1.clone()
}

#[test]
#[ignore = "needs the Python and JavaScript components: hack/polyglot.sh builds them"]
fn random_numbers_hashes_and_clocks_are_fixed() {
    // Python: the seed of `random` and of `hash()` is baked in at build.
    for what in ["random", "hash"] {
        let line = logged_twice("python", what);
        assert!(line.starts_with(what), "{line}");
    }
    // JavaScript: no entropy reaches SpiderMonkey, and the clock traps.
    let line = logged_twice("javascript", "random");
    assert!(line.starts_with("random"), "{line}");
    let (answer, _) = run_probe(&mut probe("javascript", "clock"));
    let error = answer.expect_err("clock");
    assert!(
        error.starts_with("plugin ProbeJavascript: trapped") && error.ends_with(" in score"),
        "{error}"
    );
    let env = logged_twice("javascript", "env");
    assert_eq!(env, "process undefined");
}

#[test]
#[ignore = "needs the Python and JavaScript components: hack/polyglot.sh builds them"]
fn a_component_that_imports_wasi_is_refused_naming_the_import() {
    let path = "testdata/plugins/probe-python/build/probe-with-wasi.wasm";
    let error = common::runtime()
        .load(path, &component(path), &PluginConfig::default())
        .map(|_| ())
        .unwrap_err();
    let message = format!("{error:#}");
    assert!(
        message.contains(path) && message.contains("wasi:"),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1, "{message}");
}

#[test]
#[ignore = "needs the Python and JavaScript components: hack/polyglot.sh builds them"]
fn two_runs_with_a_python_plugin_are_byte_identical() {
    let (name, path) = OTHERS[0];
    let bytes = component(path);
    let snapshot = generated(&Options {
        nodes: 40,
        pending_pods: 60,
        seed: 3,
        shape: Shape::Gpu,
    });
    let runs: Vec<String> = (0..2)
        .map(|_| decisions(&snapshot, name, path, &bytes))
        .collect();
    assert_eq!(runs[0], runs[1]);
}

/// `wasched simulate` with `args` and the component of `name` alone in a
/// plugin directory, enabled at PreScore and Score with weight 10 (one
/// file for both engines): the lines of the table it prints.
fn simulate_alone(name: &str, path: &str, args: &[&str]) -> String {
    let dir = common::tempdir(&format!("polyglot-{name}"));
    std::fs::copy(repo(path), dir.join("team-gpu-isolation.wasm")).unwrap();
    let config = dir.join("config.yaml");
    std::fs::write(
        &config,
        format!(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    preScore:\n      enabled: [{{name: {name}}}]\n    score:\n      enabled: [{{name: {name}, weight: 10}}]\n"
        ),
    )
    .unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_wasched"))
        .arg("simulate")
        .args(args)
        .arg("--plugins")
        .arg(&dir)
        .arg("--config")
        .arg(&config)
        .arg(repo("testdata/scenarios/teams-share-gpu-nodes.yaml"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{name} {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// ml's pods go to ml's own node, vision's beside vision.
fn assert_teams_kept_apart(stdout: &str, what: &str) {
    for (pod, node) in [
        ("ml/finetune-0", "gpu-b"),
        ("ml/finetune-1", "gpu-b"),
        ("vision/segment-0", "gpu-a"),
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.contains(pod) && l.trim_end().ends_with(&format!("node {node}"))),
            "{what}: {pod} not on {node}:\n{stdout}"
        );
    }
}

#[test]
#[ignore = "needs the Python and JavaScript components: hack/polyglot.sh builds them"]
fn simulate_runs_each_component_from_a_plugin_directory() {
    for (name, path) in OTHERS {
        assert_teams_kept_apart(&simulate_alone(name, path, &[]), name);
    }
}

/// kube-scheduler v1.37.2 loads the Python and JavaScript components from
/// the configuration the harness writes for `--plugins DIR` and the same
/// file, on a real control plane, and decides as wasched does.
#[test]
#[ignore = "needs the Python and JavaScript components: hack/polyglot.sh builds them"]
fn kube_scheduler_runs_each_component_through_its_configuration() {
    assert!(
        std::env::var_os("WASCHED_KUBE").is_some(),
        "needs the harness: WASCHED_KUBE=kube/bin/wasched-kube (make test sets it)"
    );
    for (name, path) in OTHERS {
        let stdout = simulate_alone(name, path, &["--engine", "kube-scheduler-wasm"]);
        assert_teams_kept_apart(&stdout, &format!("kube-scheduler with {name}"));
    }
}

#[test]
#[ignore = "needs the Python and JavaScript components: hack/polyglot.sh builds them"]
fn the_three_languages_agree_beyond_2_53_and_on_refused_nodes() {
    // Amounts past 2^53 (where a JavaScript Number loses units), on a
    // resource the args name.
    let text = r#"
apiVersion: v1
kind: Node
metadata: {name: big-a}
status: {allocatable: {cpu: "64", memory: 64Gi, pods: "110", example.com/units: "18014398509481987"}}
---
apiVersion: v1
kind: Node
metadata: {name: big-b}
status: {allocatable: {cpu: "64", memory: 64Gi, pods: "110", example.com/units: "9007199254740993"}}
---
apiVersion: v1
kind: Pod
metadata: {name: held, namespace: other}
spec:
  nodeName: big-a
  containers: [{name: c, image: x, resources: {requests: {example.com/units: "9007199254740995"}, limits: {example.com/units: "9007199254740995"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: held, namespace: team}
spec:
  nodeName: big-b
  containers: [{name: c, image: x, resources: {requests: {example.com/units: "3"}, limits: {example.com/units: "3"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: new, namespace: team}
spec:
  containers: [{name: c, image: x, resources: {requests: {example.com/units: "1"}, limits: {example.com/units: "1"}}}]
"#;
    let mut snapshot =
        wasched::read_snapshot_text("big.yaml", text, &wasched::ReadOptions::default()).unwrap();
    let mut three = Three::load(r#"{"resource": "example.com/units"}"#);
    let (pods, nonzero) = three.agree_on(&mut snapshot, "big.yaml");
    assert_eq!((pods, nonzero), (1, 2));

    // Every node asked twice: the host refuses the list, and each language
    // answers the same error status.
    let pod = snapshot.pods.iter().position(|p| p.pending).unwrap() as u32;
    let twice: Vec<u32> = (0..snapshot.node_count() as u32)
        .chain(0..snapshot.node_count() as u32)
        .collect();
    let answers: Vec<String> = three
        .sets
        .iter_mut()
        .map(|(name, set)| {
            let answer = set
                .at(ExtensionPoint::Score)
                .next()
                .unwrap()
                .score(&mut snapshot, pod, &twice)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            format!("{:?}", answer.expect_err(name))
        })
        .collect();
    assert!(
        answers[0].contains("node-resources refused the nodes asked: Unknown"),
        "{}",
        answers[0]
    );
    assert!(answers.iter().all(|a| *a == answers[0]), "{answers:?}");
}

#[test]
#[ignore = "needs the Python and JavaScript components: hack/polyglot.sh builds them"]
fn wasm_limits_bound_what_an_interpreter_is_made_of() {
    let (name, path) = OTHERS[0];
    let bytes = component(path);
    let load = |limits: &str| {
        let config = PluginConfig::parse(&format!(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig: [{{name: {name}, args: {{wasmLimits: {limits}}}}}]\n"
        ))
        .unwrap();
        common::runtime()
            .load(path, &bytes, &config)
            .map(|_| ())
            .map_err(|e| format!("{e:#}"))
    };
    // CPython links 38 core instances and a table of 5,695 elements.
    load("{instances: 38, tableElements: 5695}").unwrap();
    for (limits, why) in [
        ("{instances: 37}", "instance count too high"),
        ("{tableElements: 5694}", "table"),
        ("{tables: 1}", "table count too high"),
    ] {
        let err = load(limits).unwrap_err();
        assert!(
            err.contains(path)
                && err.contains("instantiation failed (wasmLimits: ")
                && err.contains(why),
            "{limits}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// `wasched compare` between a directory holding the Rust component and
/// one holding the Python (or JavaScript) component of the policy: nothing
/// differs (exit 0); against the bundled plugins, the team score moves
/// pods (exit 1).
#[test]
#[ignore = "needs the Python and JavaScript components: hack/polyglot.sh builds them"]
fn compare_finds_nothing_between_the_languages() {
    let scenario = repo("testdata/scenarios/teams-share-gpu-nodes.yaml");
    let rust = common::tempdir("polyglot-compare-rust");
    std::fs::write(rust.join("team-gpu-isolation.wasm"), rust_component()).unwrap();
    // The bundled plugins as they come (the team score off).
    let bundled = rust.join("bundled.yaml");
    std::fs::write(
        &bundled,
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
    )
    .unwrap();
    let compare = |a: &Path, b: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_wasched"))
            .arg("compare")
            .arg("--a")
            .arg(a)
            .arg("--b")
            .arg(b)
            .arg(&scenario)
            .output()
            .unwrap()
    };
    for (name, path) in OTHERS {
        let other = common::tempdir(&format!("polyglot-compare-{name}"));
        std::fs::copy(repo(path), other.join("team-gpu-isolation.wasm")).unwrap();
        let same = compare(&rust, &other);
        assert_eq!(same.status.code(), Some(0), "{name}: {same:?}");
        let moved = compare(&bundled, &other);
        assert_eq!(moved.status.code(), Some(1), "{name}: {moved:?}");
        let stdout = String::from_utf8_lossy(&moved.stdout);
        assert!(
            stdout
                .lines()
                .any(|l| l.contains("ml/finetune") && l.ends_with("bound on gpu-b")),
            "{name}: {stdout}"
        );
    }
}
