//! Start-time estimates (`wasched simulate --until-start`): hand-computed
//! scenarios of `testdata/estimate/`, the estimate against the start a
//! replay of the same cluster gives, what the flags change, and bad input.
//! The estimate against the real kube-scheduler is in `cluster.rs`.

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use wasched::replay::estimate::{self, Estimates};

fn wasched() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wasched"))
}

/// What `simulate FILE --until-start ARGS` prints.
fn until_start(file: &Path, args: &[&str]) -> String {
    let output = wasched()
        .arg("simulate")
        .arg(file)
        .arg("--until-start")
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `simulate FILE --until-start -o json ARGS`, parsed.
fn estimates(file: &Path, args: &[&str]) -> Value {
    let args: Vec<&str> = ["-o", "json"].iter().chain(args).copied().collect();
    serde_json::from_str(&until_start(file, &args)).unwrap()
}

/// The estimate of entity `name`.
fn of<'a>(estimates: &'a Value, name: &str) -> &'a Value {
    estimates["estimates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no estimate for {name}: {estimates:#}"))
}

/// Seconds from now of an estimated start.
fn after(estimate: &Value) -> f64 {
    estimate["after"]
        .as_f64()
        .unwrap_or_else(|| panic!("not estimated: {estimate:#}"))
}

/// kube-scheduler's queue may hold a group that failed before for up to its
/// longest backoff (10 s × √2 for a group of two) past the instant that
/// frees its nodes; the hand-computed starts are the instants themselves.
const BACKOFF_SLACK: f64 = 15.0;

fn near(what: &str, got: f64, want: f64) {
    assert!(
        (want..=want + BACKOFF_SLACK).contains(&got),
        "{what}: {got} s, hand-computed {want} s (plus at most {BACKOFF_SLACK} s of backoff)"
    );
}

#[test]
fn a_gang_waits_for_both_jobs_on_its_rack_and_what_waits_for_an_unknown_runtime_is_said() {
    let e = estimates(&common::testdata("estimate/rack.yaml"), &[]);
    assert_eq!(e["now"], "2026-12-06T10:00:00Z");
    assert_eq!(e["nowFrom"], "the snapshot's latest timestamp");
    // train-b ends at +1h (activeDeadlineSeconds), train-a at +2h
    // (run-for 3h, started 1h ago): the gang needs both of rack r1.
    let big = of(&e, "ml/big");
    near("ml/big", after(big), 7200.0);
    assert_eq!(
        big["restsOn"],
        "after ml/train-a ends on topology.kubernetes.io/rack=r1 (annotation wasched.io/run-for)"
    );
    let probe = of(&e, "research/probe");
    assert_eq!(probe["estimate"], "not estimable");
    assert_eq!(
        probe["restsOn"],
        "waits for research/sweep, whose runtime is unknown: not before it ends"
    );
    let huge = of(&e, "ml/huge");
    assert_eq!(huge["estimate"], "never");
    assert!(
        huge["restsOn"]
            .as_str()
            .unwrap()
            .contains("never schedulable, even on empty nodes: 0/4 nodes are available: 4 Insufficient nvidia.com/gpu."),
        "{huge:#}"
    );
    // Estimated first, then not estimable, then never.
    let order: Vec<&str> = e["estimates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["ml/big", "research/probe", "ml/huge"]);
}

#[test]
fn a_higher_priority_gang_pending_ahead_starts_first() {
    let e = estimates(&common::testdata("estimate/ahead.yaml"), &[]);
    let high = after(of(&e, "ml/high"));
    let low = after(of(&e, "ml/low"));
    // ml/hold ends at +10m; ml/high runs 30 min from its start.
    near("ml/high", high, 600.0);
    near("ml/low", low, high + 1800.0);
    assert_eq!(
        of(&e, "ml/low")["restsOn"],
        "after ml/high ends on node gpu-0 (annotation wasched.io/run-for)"
    );
}

#[test]
fn a_preemption_starts_a_gang_after_its_victims_grace_period() {
    let e = estimates(&common::testdata("estimate/preemption.yaml"), &[]);
    let urgent = of(&e, "ml/urgent");
    // Not in 5 h, when ml/batch would end: after its 30 s grace period.
    near("ml/urgent", after(urgent), 30.0);
    assert_eq!(
        urgent["restsOn"],
        "after preempting ml/batch on node gpu-0 (grace period 30 s)"
    );
}

#[test]
fn a_runtime_from_the_flags_makes_an_unknown_wait_estimable() {
    let file = common::testdata("estimate/rack.yaml");
    // research/sweep started at 09:00 and runs 3 h by its class' default:
    // research/probe (pinned to rack r2) starts at +2h.
    let e = estimates(&file, &["--default-runtime", "3h"]);
    let probe = of(&e, "research/probe");
    near("research/probe", after(probe), 7200.0);
    let rests_on = probe["restsOn"].as_str().unwrap();
    assert!(
        rests_on.starts_with("after research/sweep ends on node r2-")
            && rests_on.ends_with(" (default runtime)"),
        "{rests_on}"
    );
    // --now moves every estimate.
    let later = estimates(
        &file,
        &["--default-runtime", "3h", "--now", "2026-12-06T11:00:00Z"],
    );
    assert_eq!(later["nowFrom"], "--now");
    near(
        "research/probe an hour later",
        after(of(&later, "research/probe")),
        3600.0,
    );
}

#[test]
fn an_estimate_is_the_start_a_replay_of_the_same_cluster_gives() {
    // The same cluster two ways: as a snapshot (hold running since now,
    // two gangs pending) and as a trace whose jobs all arrive at 0 (hold
    // first: its class is above both gangs').
    const CLASSES: &str = "
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: top}
value: 2000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 100
---
apiVersion: v1
kind: Node
metadata: {name: gpu-0, labels: {kubernetes.io/hostname: gpu-0}}
status: {allocatable: {cpu: \"32\", memory: 256Gi, nvidia.com/gpu: \"8\", pods: \"110\"}}
";
    let pod = |name: &str,
               group: Option<&str>,
               class: &str,
               gpus: u32,
               run_for: &str,
               node: Option<&str>| {
        let mut text = format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, creationTimestamp: \"2026-12-06T10:00:00Z\", annotations: {{wasched.io/run-for: \"{run_for}\"}}}}\nspec:\n  restartPolicy: Never\n  priorityClassName: {class}\n  containers: [{{name: main, image: trainer, resources: {{requests: {{cpu: \"1\", nvidia.com/gpu: \"{gpus}\"}}, limits: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]\n"
        );
        if let Some(group) = group {
            text.push_str(&format!("  schedulingGroup: {{podGroupName: {group}}}\n"));
        }
        if let Some(node) = node {
            text.push_str(&format!(
                "  nodeName: {node}\nstatus: {{phase: Running, startTime: \"2026-12-06T10:00:00Z\"}}\n"
            ));
        }
        text
    };
    let group = |name: &str, class: &str| {
        format!(
            "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {{name: {name}, namespace: default, creationTimestamp: \"2026-12-06T10:00:00Z\"}}\nspec: {{schedulingPolicy: {{gang: {{minCount: 2}}}}, priorityClassName: {class}}}\n"
        )
    };
    let mut snapshot = CLASSES.to_string();
    snapshot.push_str(&pod("hold-0", None, "top", 8, "10m", Some("gpu-0")));
    snapshot.push_str(&group("high", "high"));
    snapshot.push_str(&pod("high-0", Some("high"), "high", 4, "30m", None));
    snapshot.push_str(&pod("high-1", Some("high"), "high", 4, "30m", None));
    snapshot.push_str(&group("low", "low"));
    snapshot.push_str(&pod("low-0", Some("low"), "low", 4, "1h", None));
    snapshot.push_str(&pod("low-1", Some("low"), "low", 4, "1h", None));
    let read = wasched::ReadOptions::default();
    let manifests = wasched::read_manifests_text("snapshot.yaml", &snapshot, &read).unwrap();
    let mut plugins = common::runtime()
        .bundled(&wasched::PluginConfig::default())
        .unwrap();
    let estimated: Estimates =
        estimate::estimate(manifests, &mut plugins, &estimate::Options::default()).unwrap();

    const TRACE: &str = r#"{"name":"hold","submit":0,"duration":600,"gpu":8,"cpu":"1","priorityClass":"top"}
{"name":"high","submit":0,"duration":1800,"workers":2,"minCount":2,"gpu":4,"cpu":"1","priorityClass":"high"}
{"name":"low","submit":0,"duration":3600,"workers":2,"minCount":2,"gpu":4,"cpu":"1","priorityClass":"low"}
"#;
    let cluster = wasched::read_manifests_text("cluster.yaml", CLASSES, &read).unwrap();
    let model = wasched::replay::model_of(cluster).unwrap();
    let jobs = wasched::replay::trace::finish(
        wasched::replay::trace::parse("trace.jsonl", TRACE).unwrap(),
    )
    .unwrap();
    let (rows, _) = common::replay(model, jobs, &wasched::replay::Options::default());
    for name in ["high", "low"] {
        let replayed = rows
            .iter()
            .find(|r| r.job == format!("default/{name}"))
            .and_then(|r| r.start)
            .unwrap_or_else(|| panic!("{name} did not start in the replay: {rows:#?}"));
        let estimate = estimated
            .estimates
            .iter()
            .find(|e| e.name == format!("default/{name}"))
            .and_then(|e| e.after)
            .unwrap_or_else(|| panic!("{name} not estimated: {estimated:#?}"));
        assert_eq!(
            estimate, replayed,
            "{name}: the estimate and the replay differ"
        );
    }
}

#[test]
fn the_output_is_the_same_in_every_format_and_run() {
    let file = common::testdata("estimate/rack.yaml");
    let run = |format: &str| until_start(&file, &["-o", format]);
    let table = run("table");
    assert!(
        table.starts_with(
            "Estimated starts from 2026-12-06T10:00:00Z (the snapshot's latest timestamp).\nSTART"
        ),
        "{table}"
    );
    assert!(table.contains("2026-12-06T12:00:"), "{table}");
    assert_eq!(run("table"), table);
    let yaml: Value = serde_norway::from_str(&run("yaml")).unwrap();
    let json: Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(yaml, json);
}

#[test]
fn bad_input_is_one_line() {
    let dir = common::tempdir("estimate-bad");
    let file = dir.join("bad.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: \"4\", pods: \"10\"}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team, annotations: {wasched.io/run-for: soon}}\nspec:\n  nodeName: n\n  containers: [{name: c, image: i}]\n",
    )
    .unwrap();
    let fails = |args: &[&str]| {
        let output = wasched().arg("simulate").args(args).output().unwrap();
        assert!(!output.status.success(), "{args:?} succeeded");
        String::from_utf8(output.stderr).unwrap()
    };
    let path = file.to_str().unwrap();
    let err = fails(&[path, "--until-start"]);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "{path}: Pod team/p: field metadata.annotations[wasched.io/run-for]"
        )),
        "{err}"
    );
    let err = fails(&[path, "--until-start", "--engine", "kube-scheduler"]);
    assert!(
        err.contains("--until-start replays the snapshot with wasched's engine"),
        "{err}"
    );
    let err = fails(&[path, "--default-runtime", "1h"]);
    assert!(err.contains("--until-start"), "{err}");
    let err = fails(&[path, "--until-start", "--runtime", "batch"]);
    assert!(err.contains("expected CLASS=DURATION"), "{err}");
}

#[test]
fn the_page_draws_a_timeline_of_the_estimates() {
    let dir = common::tempdir("estimate-html");
    let page = dir.join("estimates.html");
    until_start(
        &common::testdata("estimate/rack.yaml"),
        &["--html", page.to_str().unwrap()],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("\"name\":\"ml/big\""),
        "the page carries the estimates"
    );
    assert!(!html.contains("__WASCHED_ESTIMATES__"));
}

/// A pending group whose pods differ is judged by each of them: here its
/// first pod would fit, but its second asks for more GPUs than a node
/// has, so the group never starts.
#[test]
fn a_group_whose_second_pod_fits_no_node_never_starts() {
    let pod = |name: &str, gpus: u32| {
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, creationTimestamp: \"2026-12-06T10:00:00Z\", annotations: {{wasched.io/run-for: 10m}}}}\nspec:\n  restartPolicy: Never\n  schedulingGroup: {{podGroupName: mixed}}\n  containers: [{{name: main, image: trainer, resources: {{requests: {{cpu: \"1\", nvidia.com/gpu: \"{gpus}\"}}, limits: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]\n"
        )
    };
    let mut snapshot = String::from(
        "apiVersion: v1
kind: Node
metadata: {name: gpu-0, labels: {kubernetes.io/hostname: gpu-0}}
status: {allocatable: {cpu: \"32\", memory: 256Gi, nvidia.com/gpu: \"8\", pods: \"110\"}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: mixed, namespace: default, creationTimestamp: \"2026-12-06T10:00:00Z\"}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
",
    );
    snapshot.push_str(&pod("mixed-0", 1));
    snapshot.push_str(&pod("mixed-1", 16));
    let manifests =
        wasched::read_manifests_text("snapshot.yaml", &snapshot, &Default::default()).unwrap();
    let mut plugins = common::runtime()
        .bundled(&wasched::PluginConfig::default())
        .unwrap();
    let estimated =
        estimate::estimate(manifests, &mut plugins, &estimate::Options::default()).unwrap();
    let mixed = &estimated.estimates[0];
    assert_eq!(
        (mixed.name.as_str(), mixed.estimate.as_str()),
        ("default/mixed", "never"),
        "{mixed:#?}"
    );
    // Known at once from the pods, not after replaying until nothing ends.
    assert!(
        mixed.rests_on.starts_with(
            "never schedulable, even on empty nodes: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
        ),
        "{mixed:#?}"
    );
}
