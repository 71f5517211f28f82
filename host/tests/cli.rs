//! The `wasched` binary as a user runs it: output formats and errors.

mod common;

use std::process::Command;

fn wasched(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wasched"))
        .args(args)
        .env("WASCHED_CACHE_DIR", common::cache_dir())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Writes `text` to a file named `name` in a directory of its own.
fn write(name: &str, text: &str) -> String {
    let path = common::tempdir("cli").join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn default_snapshot_prints_one_json_object_with_the_promised_fields() {
    let (code, stdout, stderr) = wasched(&["simulate", "--output", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let value: serde_json::Value = serde_json::from_str(&stdout).expect("exactly one JSON object");
    for field in ["placements", "unschedulable", "evictions", "podGroups"] {
        assert!(value[field].is_array(), "missing {field}");
    }
    assert!(
        value["placements"][0]["pod"].is_string() && value["placements"][0]["node"].is_string()
    );
    assert!(value["unschedulable"][0]["reason"].is_string());
    let groups = value["podGroups"].as_array().unwrap();
    assert!(groups.iter().any(|g| g["scheduled"] == true));
    assert!(
        groups.iter().any(|g| g["scheduled"] == false),
        "the default snapshot has gangs that cannot fit"
    );
}

#[test]
fn table_and_yaml_carry_the_same_facts() {
    let (code, table, _) = wasched(&["simulate"]);
    assert_eq!(code, 0);
    assert!(table.starts_with("KIND"));
    assert!(table.contains("PodGroup  ml-training/llama-pretrain"));
    let (code, yaml, _) = wasched(&["simulate", "-o", "yaml"]);
    assert_eq!(code, 0);
    let value: serde_json::Value = serde_norway::from_str(&yaml).unwrap();
    assert!(value["podGroups"].is_array());
}

/// What a run without files says first on stderr.
const DEMO_LINE: &str =
    "wasched: no files given and nothing piped in: scheduling the bundled demo snapshot";

fn assert_one_line_error(args: &[&str], expected: &[&str]) {
    let (code, stdout, stderr) = wasched(args);
    // A run without files says first that it runs the bundled demo.
    let stderr = match stderr.strip_prefix(DEMO_LINE) {
        Some(rest) => rest
            .split_once('\n')
            .map_or("", |(_, rest)| rest)
            .to_string(),
        None => stderr,
    };
    assert_ne!(code, 0);
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "one line expected: {stderr}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{stderr}"
    );
    for part in expected {
        assert!(stderr.contains(part), "{stderr:?} lacks {part:?}");
    }
}

#[test]
fn bad_input_is_one_line_naming_file_object_and_field() {
    let bad_quantity = write(
        "bad-quantity.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: lots}}\n",
    );
    assert_one_line_error(
        &["simulate", &bad_quantity],
        &[
            &bad_quantity,
            "Node n1",
            "field status.allocatable.cpu",
            "invalid quantity \"lots\"",
        ],
    );

    // The API server refuses negative quantities; so does wasched.
    let negative = write(
        "negative.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: \"-1\"}}}]}\n",
    );
    assert_one_line_error(
        &["simulate", &negative],
        &[
            &negative,
            "Pod ns/p",
            "field spec.containers[0].resources.requests.cpu",
            "\"-1\" must be greater than or equal to 0",
        ],
    );

    let malformed = write(
        "malformed.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: 3}\n",
    );
    assert_one_line_error(
        &["simulate", &malformed],
        &[&malformed, "Pod ns/p", "field spec.containers"],
    );

    // A kind wasched does not model is skipped, whatever its group.
    let unknown = write(
        "unknown.yaml",
        "apiVersion: v1\nkind: Blob\nmetadata: {name: b}\n",
    );
    let (code, _, stderr) = wasched(&["simulate", &unknown]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("skipped 1 object(s) of kinds wasched does not model: 1 Blob (v1)"),
        "{stderr}"
    );

    let syntax = write("syntax.yaml", "kind: [unclosed\n");
    assert_one_line_error(
        &["simulate", &syntax],
        &[&syntax, "document 1", "not valid YAML"],
    );

    assert_one_line_error(
        &["simulate", "/no/such/file.yaml"],
        &["/no/such/file.yaml", "cannot read file"],
    );
    assert_one_line_error(
        &["simulate", "--plugins", "/no/such/dir"],
        &["/no/such/dir", "cannot read plugin directory"],
    );
}

#[test]
fn real_kinds_that_are_not_modelled_are_skipped_with_one_warning() {
    let file = write(
        "with-configmaps.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 8Gi}}\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: d}\n",
    );
    let (code, stdout, stderr) = wasched(&["simulate", &file, "-o", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let value: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        value["warnings"][0],
        "skipped 2 object(s) of kinds wasched does not model: 1 ConfigMap (v1), 1 Ingress (networking.k8s.io/v1)"
    );
}

#[test]
fn config_and_metrics_files() {
    let config = write(
        "config.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - {name: WaschedGangScheduling, args: {failurePolicy: Ignore, fuel: 50000000}}\n",
    );
    let metrics = common::tempdir("cli-metrics").join("metrics.txt");
    let metrics = metrics.display().to_string();
    let (code, _, stderr) = wasched(&[
        "simulate",
        "--config",
        &config,
        "--metrics",
        &metrics,
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&metrics).unwrap();
    // The default snapshot: six groups admitted (one of them after
    // preemption, whose first attempt counts as unschedulable), two not.
    for line in [
        r#"scheduler_podgroup_schedule_attempts_total{result="scheduled"} 6"#,
        r#"scheduler_podgroup_schedule_attempts_total{result="unschedulable"} 3"#,
        r#"scheduler_workload_preemption_attempts_total{result="success"} 1"#,
        r#"scheduler_workload_preemption_attempts_total{result="failure"} 2"#,
        "scheduler_workload_preemption_victims_count 1",
        r#"scheduler_placement_evaluations_total{result="feasible"}"#,
        "scheduler_generated_placements_total ",
    ] {
        assert!(text.contains(line), "{line} missing from\n{text}");
    }

    let bad = write(
        "bad-config.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig: [{name: WaschedGangScheduling, args: {memoryLimit: lots}}]\n",
    );
    assert_one_line_error(
        &["simulate", "--config", &bad],
        &[
            &bad,
            "field profiles[0].pluginConfig[0].args.memoryLimit",
            "invalid quantity",
        ],
    );
    let typo = write(
        "typo-config.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig: [{name: GangSchedulng}]\n",
    );
    assert_one_line_error(
        &["simulate", "--config", &typo],
        &["names plugin GangSchedulng, but no loaded plugin has that name"],
    );
}

#[test]
fn generated_snapshots_are_deterministic_and_schedulable() {
    let args = [
        "generate",
        "--nodes",
        "64",
        "--pending-pods",
        "80",
        "--seed",
        "3",
        "--shape",
        "mixed",
    ];
    let (code, first, stderr) = wasched(&args);
    assert_eq!(code, 0, "{stderr}");
    let (_, second, _) = wasched(&args);
    assert_eq!(first, second, "same arguments, same snapshot");
    let (_, json, _) = wasched(&[&args[..], &["-o", "json"]].concat());
    let yaml_file = write("generated.yaml", &first);
    let json_file = write("generated.json", &json);
    let (code, from_yaml, stderr) = wasched(&["simulate", &yaml_file, "-o", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let (_, from_json, _) = wasched(&["simulate", &json_file, "-o", "json"]);
    assert_eq!(
        from_yaml, from_json,
        "YAML and JSON forms are the same snapshot"
    );
    // As an API server stores them: the same decisions, in a heavier dump.
    let (code, stored, stderr) = wasched(&[&args[..], &["-o", "json", "--as-stored"]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stored.len() > 2 * json.len() && stored.contains("\"managedFields\""));
    let stored_file = write("stored.json", &stored);
    let (code, from_stored, stderr) = wasched(&["simulate", &stored_file, "-o", "json"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        from_stored, from_json,
        "what the server adds changes nothing"
    );
    let value: serde_json::Value = serde_json::from_str(&from_yaml).unwrap();
    let pending = value["placements"].as_array().unwrap().len()
        + value["unschedulable"].as_array().unwrap().len();
    assert_eq!(pending, 80);
    // Topology-constrained gangs are placed by the bundled topology plugin:
    // nothing is ignored, and admitted ones name their domain.
    let warnings = value["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .all(|w| !w.as_str().unwrap().contains("ignored")),
        "{warnings:?}"
    );
    let in_domains = value["podGroups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["scheduled"] == true && g["domains"].is_array())
        .count();
    assert!(in_domains > 0, "{from_yaml}");
}

#[test]
fn stats_report_where_the_time_went_on_stderr() {
    let (code, stdout, stderr) = wasched(&["simulate", "-o", "json", "--stats"]);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str::<serde_json::Value>(&stdout).expect("stdout stays one JSON object");
    let first = stderr
        .lines()
        .find(|l| l.starts_with("read "))
        .expect(&stderr);
    for part in [
        "read ",
        "plugins loaded ",
        "scheduled ",
        "pods/s",
        "node checks ",
        "peak memory ",
    ] {
        assert!(first.contains(part), "{first}");
    }
    assert!(
        stderr.contains("PLUGIN") && stderr.contains("EXTENSION POINT"),
        "{stderr}"
    );
    for (plugin, point) in [
        ("WaschedGangScheduling", "permit"),
        ("WaschedTopologyPlacement", "placement-generate"),
        ("WaschedWorkloadPreemption", "pod-group-post-filter"),
    ] {
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with(plugin) && l.contains(point)),
            "{plugin} {point}: {stderr}"
        );
    }
}

/// A configuration that turns on the GPU bin-packing node plugin.
fn binpack_config() -> String {
    write(
        "binpack.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: WaschedGpuBinPacking}]\n",
    )
}

#[test]
fn compare_of_identical_sets_finds_nothing_and_exits_0() {
    let (code, stdout, stderr) = wasched(&["compare", "--a", "bundled", "--b", "bundled"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("no differences\n"), "{stdout}");
    assert!(stdout.contains("A (bundled): 12 bound, 13 pending, 1 evicted, 43 GPUs used"));
}

#[test]
fn compare_lists_the_pods_gpu_bin_packing_moves_and_exits_1() {
    let config = binpack_config();
    let (code, stdout, stderr) = wasched(&["compare", "--a", "bundled", "--b", &config]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.starts_with("KIND"), "{stdout}");
    // LeastAllocated alone spreads bert-finetune's workers onto the emptier
    // node; MostAllocated over GPUs packs them onto partly used ones.
    assert!(
        stdout.contains(
            "Pod   ml-training/bert-finetune-worker-0  bound on gpu-a2-1  bound on gpu-b1-0"
        ),
        "{stdout}"
    );
    let (code, json, _) = wasched(&["compare", "--a", "bundled", "--b", &config, "-o", "json"]);
    assert_eq!(code, 1);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let pods = value["pods"].as_array().unwrap();
    assert_eq!(pods.len(), 2, "{json}");
    assert_eq!(pods[0]["a"]["state"], "bound");
    assert_eq!(pods[0]["b"]["node"], "gpu-b1-0");
    assert_eq!(value["b"]["label"], config.as_str());
    assert_eq!(value["a"]["gpus"], value["b"]["gpus"]);
}

#[test]
fn compare_names_a_side_that_fails_to_load_in_one_line_and_exits_2() {
    let empty = common::tempdir("cli-empty-plugins");
    let dir = empty.display().to_string();
    let default = common::testdata("default/cluster.yaml");
    let default = default.to_str().unwrap();
    let (code, stdout, stderr) = wasched(&["compare", default, "--a", "bundled", "--b", &dir]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("side B ({dir})"))
            && stderr.contains("no *.wasm plugin components"),
        "{stderr}"
    );
    let (code, _, stderr) = wasched(&["compare", "--a", "/no/such/thing", "--b", "bundled"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--a: /no/such/thing: expected `bundled`"),
        "{stderr}"
    );
}

#[test]
fn compare_over_a_trace_prints_the_aggregates_that_differ_with_their_ratio() {
    let (nodes, jobs) = spot_gpu_sample();
    let over = |a: &str, b: &str, format: &str| {
        wasched(&[
            "compare",
            "--trace",
            &jobs,
            "--cluster-from",
            &nodes,
            "--a",
            a,
            "--b",
            b,
            "-o",
            format,
        ])
    };
    // The same set twice: nothing differs, exit 0.
    let (code, stdout, stderr) = over("bundled", "bundled", "table");
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("No aggregate differs."), "{stdout}");
    assert!(stdout.contains("0 of 10 jobs differ"), "{stdout}");
    // Without preemption, HP jobs wait for Spot work to end: exit 1.
    let no_preemption = write(
        "no-preemption.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: WaschedWorkloadPreemption}]\n",
    );
    let (code, json, stderr) = over("bundled", &no_preemption, "json");
    assert_eq!(code, 1, "{stderr}");
    let value: serde_json::Value = serde_json::from_str(&json).expect("one JSON object");
    let aggregate = |name: &str| {
        value["aggregates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap_or_else(|| panic!("no {name}: {json}"))
            .clone()
    };
    let evicted = aggregate("pods evicted");
    assert!(
        evicted["a"].as_f64().unwrap() > 0.0 && evicted["b"] == 0.0,
        "{evicted}"
    );
    assert_eq!(evicted["ratio"], 0.0);
    let hp = aggregate("priority alibaba-hp: mean wait (s)");
    let (a, b) = (hp["a"].as_f64().unwrap(), hp["b"].as_f64().unwrap());
    assert!(b > a, "{hp}");
    assert_eq!(
        hp["ratio"].as_f64().unwrap(),
        (b / a * 1000.0).round() / 1000.0
    );
    // The job that moved most comes first, with its shift.
    let moved = &value["moved"][0];
    assert_eq!(
        moved["shift"].as_f64().unwrap(),
        moved["b"]["start"].as_f64().unwrap() - moved["a"]["start"].as_f64().unwrap()
    );
    let shifts: Vec<f64> = value["moved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["shift"].as_f64().unwrap().abs())
        .collect();
    assert!(shifts.windows(2).all(|w| w[0] >= w[1]), "{shifts:?}");
    assert_eq!(value["summaries"].as_array().unwrap().len(), 2);
    // The table says the same, ratio and all.
    let (_, table, _) = over("bundled", &no_preemption, "table");
    assert!(
        table.starts_with(&format!("A: bundled\nB: {no_preemption}\n")),
        "{table}"
    );
    let line = table
        .lines()
        .find(|l| l.starts_with("pods evicted"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(line.ends_with("0.000"), "{line}");
    // kube-scheduler compares snapshots only: one line, exit 2.
    let (code, stdout, stderr) = over("bundled", "kube-scheduler", "table");
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("side B (kube-scheduler): a trace is replayed by wasched's engine"),
        "{stderr}"
    );
}

#[test]
fn the_what_if_configurations_replay_as_they_say() {
    let (nodes, jobs) = spot_gpu_sample();
    let config = |name: &str| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../deploy/what-if")
            .join(name)
            .display()
            .to_string()
    };
    let summary = |file: &str, gates: &str| {
        let mut args = vec!["replay", "--cluster-from", &nodes, &jobs, "-o", "json"];
        let file = config(file);
        args.extend(["--config", &file]);
        if !gates.is_empty() {
            args.extend(["--feature-gates", gates]);
        }
        let (code, json, stderr) = wasched(&args);
        assert_eq!(code, 0, "{stderr}");
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        value["summary"].clone()
    };
    let evictions = |s: &serde_json::Value| s["evictions"].as_u64().unwrap();
    // (c) the HP gang preempts Spot pods; (b) no gang preempts, and this
    // trace's lone HP jobs find room, so nothing is evicted.
    let workload = summary("gang-workload-preemption.yaml", "");
    let pod_level = summary("gang-pod-preemption.yaml", "");
    assert!(evictions(&workload) > 0, "{workload}");
    assert_eq!(evictions(&pod_level), 0, "{pod_level}");
    let hp_wait = |s: &serde_json::Value| {
        s["byPriority"]["alibaba-hp"]["wait"]["mean"]
            .as_f64()
            .unwrap()
    };
    assert!(hp_wait(&pod_level) > hp_wait(&workload));
    // (a) without the workload API the gang's pods preempt one by one:
    // some are evicted, and the result is neither (b)'s nor (c)'s.
    let pod_by_pod = summary("pod-by-pod.yaml", "GenericWorkload=false");
    assert!(evictions(&pod_by_pod) > 0, "{pod_by_pod}");
    assert_ne!(pod_by_pod["attempts"], workload["attempts"]);
    // The same file with the gate on is (c)'s defaults: the bundled set.
    assert_eq!(
        summary("pod-by-pod.yaml", "")["attempts"],
        workload["attempts"]
    );
}

/// The figures the book's what-if page quotes, (b) against (c) on the
/// generated spot-GPU trace: the replay is deterministic, so they are
/// these on any machine.
#[test]
fn the_books_what_if_figures_are_what_compare_prints() {
    let path = |p: &str| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(p)
            .display()
            .to_string()
    };
    let (code, json, stderr) = wasched(&[
        "compare",
        "--trace",
        &path("testdata/replay/spot-gpu/job_info_df.csv"),
        "--cluster-from",
        &path("testdata/replay/spot-gpu/node_info_df.csv"),
        "--a",
        &path("deploy/what-if/gang-pod-preemption.yaml"),
        "--b",
        &path("deploy/what-if/gang-workload-preemption.yaml"),
        "-o",
        "json",
    ]);
    assert_eq!(code, 1, "{stderr}");
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let figures: Vec<(String, f64, f64)> = value["aggregates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap().to_string(),
                a["a"].as_f64().unwrap(),
                a["b"].as_f64().unwrap(),
            )
        })
        .collect();
    let page = std::fs::read_to_string(path("docs/src/guides/what-if.md")).unwrap();
    let book = page
        .split_once("## Should we turn on workload-aware scheduling?")
        .expect("the section")
        .1;
    for (name, a, b) in [
        ("pods evicted", 7.0, 141.0),
        ("pending flaps", 7.0, 76.0),
        ("all jobs: mean wait (s)", 1267.847, 2342.073),
        ("priority alibaba-hp: mean wait (s)", 1768.879, 15.232),
        ("priority alibaba-spot: mean wait (s)", 1021.07, 3488.129),
    ] {
        assert!(
            figures.contains(&(name.to_string(), a, b)),
            "{name}: {figures:?}"
        );
        let line = book
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("the book quotes no {name}"));
        let quoted: Vec<f64> = line[name.len()..]
            .split_whitespace()
            .take(2)
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(quoted, [a, b], "{line}");
    }
    assert_eq!(value["jobsDiffering"], 161);
}

#[test]
fn gpu_bin_packing_is_off_by_default_and_its_args_are_checked() {
    let (_, default, _) = wasched(&["simulate"]);
    let (_, explicit_off, _) = wasched(&[
        "simulate",
        "--config",
        &write(
            "off.yaml",
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: WaschedGpuBinPacking}]\n",
        ),
    ]);
    assert_eq!(default, explicit_off);
    let (_, on, stderr) = wasched(&["simulate", "--config", &binpack_config(), "--stats"]);
    assert_ne!(default, on);
    assert!(stderr.contains("GpuBinPacking       score"), "{stderr}");
    assert_one_line_error(
        &[
            "simulate",
            "--config",
            &write(
                "bad.yaml",
                "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: WaschedGpuBinPacking}]\n  pluginConfig:\n  - {name: WaschedGpuBinPacking, args: {args: {resources: []}}}\n",
            ),
        ],
        &["WaschedGpuBinPacking: resources is empty"],
    );
}

#[test]
fn threads_never_change_a_decision() {
    let snapshot = write(
        "big.yaml",
        &wasched::generate::generate_yaml(&wasched::generate::Options {
            nodes: 1_200,
            pending_pods: 600,
            seed: 7,
            shape: wasched::generate::Shape::Gpu,
        })
        .unwrap(),
    );
    let (code, one, stderr) = wasched(&["simulate", &snapshot, "-o", "json", "--threads", "1"]);
    assert_eq!(code, 0, "{stderr}");
    let (_, two, _) = wasched(&["simulate", &snapshot, "-o", "json", "--threads", "2"]);
    let (_, four, _) = wasched(&["simulate", &snapshot, "-o", "json", "--threads", "4"]);
    assert!(one == two && two == four, "output depends on --threads");
}

#[test]
fn html_report_is_self_contained_and_progress_never_reaches_a_pipe() {
    let dir = common::tempdir("cli-html");
    let html = dir.join("report.html");
    let (code, stdout, stderr) = wasched(&[
        "simulate",
        "--html",
        html.to_str().unwrap(),
        "--group-by",
        "topology.kubernetes.io/zone,topology.wasched.io/rack",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("KIND"));
    assert!(
        stderr.lines().all(|l| l.starts_with("warning: ")
            || l.starts_with("note: ")
            || l.starts_with(DEMO_LINE)),
        "no progress bar on a pipe: {stderr:?}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") || page.starts_with("<!doctype html>"));
    assert!(!page.contains("__WASCHED_DATA__"));
    assert!(
        page.contains(r#""groupBy":["topology.kubernetes.io/zone","topology.wasched.io/rack"]"#)
    );
    for remote in ["src=\"http", "href=\"http", "@import", "url(http"] {
        assert!(!page.contains(remote), "{remote}");
    }
}

#[test]
fn a_terminal_gets_a_progress_bar_on_stderr_and_the_output_stays_clean() {
    // `script` (util-linux) runs the command on a pseudo-terminal.
    let script = which("script").expect("`script` (util-linux) runs wasched on a terminal");
    let dir = common::tempdir("cli-tty");
    let out = dir.join("out.json");
    let command = format!(
        "{} simulate -o json > {}",
        env!("CARGO_BIN_EXE_wasched"),
        out.display()
    );
    let run = Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .env("WASCHED_CACHE_DIR", common::cache_dir())
        .output()
        .unwrap();
    assert!(run.status.success());
    let terminal = String::from_utf8_lossy(&run.stdout);
    assert!(terminal.contains("scheduling ["), "{terminal}");
    assert!(terminal.contains(" entities"), "{terminal}");
    let json = std::fs::read_to_string(&out).unwrap();
    serde_json::from_str::<serde_json::Value>(&json).expect("stdout is only the JSON");
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// `--config` takes a KubeSchedulerConfiguration: the sample in
/// `testdata/config` notes the in-tree plugins it names, and decides as
/// the same arrangement written in wasched's former format once `config
/// migrate` has turned it into a KubeSchedulerConfiguration; the former
/// format itself is refused with that way out.
#[test]
fn a_kube_scheduler_configuration_configures_simulate() {
    let sample = common::testdata("config/kube-scheduler.yaml");
    let (code, from_profile, stderr) = wasched(&[
        "simulate",
        "--config",
        sample.to_str().unwrap(),
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let notes =
        serde_json::from_str::<serde_json::Value>(&from_profile).unwrap()["notes"].to_string();
    for name in [
        "GangScheduling",
        "TopologyPlacementGenerator",
        "DefaultPreemption",
    ] {
        assert!(
            notes.contains(&format!(
                "in-tree plugin {name} runs only inside kube-scheduler"
            )),
            "{notes}"
        );
    }
    let own = write(
        "own.yaml",
        "plugins:\n  - {name: GpuBinPacking, enabled: true, weight: 2, failurePolicy: Ignore, timeout: 500ms, args: {resources: [{name: nvidia.com/gpu, weight: 5}, {name: cpu, weight: 1}]}}\n  - {name: WaschedWorkloadPreemption, fuel: 200000000}\n",
    );
    assert_one_line_error(
        &["simulate", "--config", &own],
        &[
            &own,
            "former configuration format",
            "wasched config migrate FILE",
        ],
    );
    let (code, migrated, stderr) = wasched(&["config", "migrate", &own]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        migrated.contains("name: WaschedGpuBinPacking"),
        "{migrated}"
    );
    let migrated = write("migrated.yaml", &migrated);
    // For a plugin directory whose components still call themselves by the
    // former names, the names stay and the directory's plugins are named.
    let dir = common::v0_2_0_dir();
    let (code, for_dir, stderr) = wasched(&[
        "config",
        "migrate",
        &own,
        "--plugins",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(for_dir.contains("- name: GpuBinPacking\n"), "{for_dir}");
    assert!(!for_dir.contains("WaschedGpuBinPacking"), "{for_dir}");
    let (code, from_own, stderr) = wasched(&["simulate", "--config", &migrated, "-o", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let decisions = |text: &str| {
        let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
        v.as_object_mut().unwrap().remove("notes");
        v
    };
    assert_eq!(decisions(&from_profile), decisions(&from_own));
    // And the GPU scores matter: without bin-packing something differs.
    let (_, plain, _) = wasched(&["simulate", "-o", "json"]);
    assert_ne!(decisions(&plain), decisions(&from_own));
}

#[test]
fn scheduler_name_gates_and_unmodelled_needs_are_said() {
    let snapshot = common::testdata("shadow/mixed.yaml");
    let snapshot = snapshot.to_str().unwrap();
    let json = |args: &[&str]| -> serde_json::Value {
        let (code, out, err) = wasched(args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let pods = |outcome: &serde_json::Value, field: &str| -> Vec<String> {
        outcome[field]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["pod"].as_str().unwrap().to_string())
            .collect()
    };
    // Every pending pod without --scheduler-name; only wasched's with it.
    let all = json(&["simulate", snapshot, "-o", "json"]);
    let decided = [pods(&all, "placements"), pods(&all, "unschedulable")].concat();
    assert!(decided.contains(&"shop/web-1".to_string()), "{decided:?}");
    let ours = json(&[
        "simulate",
        snapshot,
        "--scheduler-name",
        "wasched",
        "-o",
        "json",
    ]);
    let decided = [pods(&ours, "placements"), pods(&ours, "unschedulable")].concat();
    assert!(!decided.contains(&"shop/web-1".to_string()), "{decided:?}");
    assert!(decided.contains(&"team/solo".to_string()), "{decided:?}");
    // The host-port pod is scheduled, and the run says what was not checked.
    assert!(pods(&ours, "placements").contains(&"team/ports".to_string()));
    let warnings = ours["warnings"].to_string();
    assert!(
        warnings.contains("1 pending pod(s) ask for what wasched does not model, which is not checked for them: team/ports (host ports)"),
        "{warnings}"
    );
    // A pod held by a scheduling gate is not queued.
    let gated = std::fs::read_to_string(common::testdata("shadow/mixed.yaml"))
        .unwrap()
        .replace(
            "  schedulerName: wasched\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\", memory: 1Gi}}}]",
            "  schedulerName: wasched\n  schedulingGates: [{name: example.com/hold}]\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\", memory: 1Gi}}}]",
        );
    let file = write("gated.yaml", &gated);
    let held = json(&[
        "simulate",
        &file,
        "--scheduler-name",
        "wasched",
        "-o",
        "json",
    ]);
    let decided = [pods(&held, "placements"), pods(&held, "unschedulable")].concat();
    assert!(!decided.contains(&"team/solo".to_string()), "{decided:?}");
    assert!(
        held["warnings"]
            .to_string()
            .contains("1 pending pod(s) held by scheduling gates are not scheduled until their gates are removed"),
        "{}",
        held["warnings"]
    );
}

/// `WASCHED_PERF_MAP=1` lists the plugins' compiled functions for `perf`
/// in `/tmp/perf-<pid>.map`, components loaded from the cache included
/// (the bundled ones are built without a name section, so by number).
#[test]
fn perf_map_names_the_plugins_functions() {
    let child = Command::new(env!("CARGO_BIN_EXE_wasched"))
        .args(["simulate", "--output", "json"])
        .env("WASCHED_CACHE_DIR", common::cache_dir())
        .env("WASCHED_PERF_MAP", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let map = format!("/tmp/perf-{}.map", child.id());
    let status = child.wait_with_output().unwrap().status;
    assert!(status.success());
    let text = std::fs::read_to_string(&map).unwrap_or_default();
    let _ = std::fs::remove_file(&map);
    assert!(
        text.lines().any(|l| l.ends_with("wasm[0]::function[5]")),
        "no plugin function in {map}: {text:.300}"
    );
}

#[test]
fn replay_streams_job_rows_then_the_summary_in_every_format() {
    let cluster = common::testdata("replay/cluster.yaml")
        .display()
        .to_string();
    let jsonl = common::testdata("replay/trace.jsonl").display().to_string();
    let csv = common::testdata("replay/trace.csv").display().to_string();
    let (code, table, stderr) = wasched(&["replay", &cluster, &jsonl]);
    assert_eq!(code, 0, "{stderr}");
    assert!(table.starts_with("JOB "), "{table}");
    assert!(table.contains("default/too-big"), "{table}");
    assert!(table.contains("NeverSchedulable"), "{table}");
    assert!(table.contains("\njobs: 10 (9 succeeded"), "{table}");
    // The CSV form of the same trace, and any thread count: the same bytes.
    let (_, from_csv, _) = wasched(&["replay", &cluster, &csv]);
    assert_eq!(from_csv, table);
    // And as batch/v1 Jobs.
    let jobs = common::testdata("replay/jobs.yaml").display().to_string();
    let (_, from_jobs, stderr) = wasched(&["replay", &cluster, &jobs]);
    assert_eq!(from_jobs, table, "{stderr}");
    let (_, one_thread, _) = wasched(&["replay", &cluster, &jsonl, "--threads", "1"]);
    assert_eq!(one_thread, table);
    let (code, json, stderr) = wasched(&["replay", &cluster, &jsonl, "-o", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let value: serde_json::Value = serde_json::from_str(&json).expect("one JSON object");
    assert_eq!(value["jobs"].as_array().map(Vec::len), Some(10));
    assert_eq!(value["summary"]["jobs"], 10);
    assert!(
        value["summary"]["series"]
            .as_array()
            .is_some_and(|s| !s.is_empty())
    );
    let (code, yaml, _) = wasched(&["replay", &cluster, &jsonl, "-o", "yaml"]);
    assert_eq!(code, 0);
    let from_yaml: serde_json::Value = serde_norway::from_str(&yaml).unwrap();
    assert_eq!(from_yaml["jobs"], value["jobs"]);
    // --until: what is left is unfinished.
    let (_, early, _) = wasched(&["replay", &cluster, &jsonl, "--until", "1h", "-o", "json"]);
    let early: serde_json::Value = serde_json::from_str(&early).unwrap();
    assert_eq!(early["summary"]["replayed"], 3600.0);
    assert!(early["summary"]["unfinished"].as_u64().unwrap() > 0);
}

/// The few spot-GPU rows of `testdata/replay/alibaba/`: node list, jobs.
fn spot_gpu_sample() -> (String, String) {
    let path = |name: &str| {
        common::testdata(&format!("replay/alibaba/{name}"))
            .display()
            .to_string()
    };
    (path("node_info_df.csv"), path("job_info_df.csv"))
}

#[test]
fn replay_reads_alibabas_spot_gpu_trace_with_its_nodes_as_the_cluster() {
    let (nodes, jobs) = spot_gpu_sample();
    let (code, json, stderr) = wasched(&["replay", "--cluster-from", &nodes, &jobs, "-o", "json"]);
    assert_eq!(code, 0, "{stderr}");
    // The row it cannot map is named, on stderr and in the summary.
    let skipped = "job_info_df.csv: 1 row(s) not mapped, not replayed: ";
    assert!(stderr.contains(skipped), "{stderr}");
    assert!(
        stderr.contains("job_info_df.csv:3:21: job org-1/job-5000: field duration"),
        "{stderr}"
    );
    let value: serde_json::Value = serde_json::from_str(&json).expect("one JSON object");
    let summary = &value["summary"];
    assert_eq!(summary["jobs"], 10);
    assert!(summary["notes"][0].as_str().unwrap().contains(skipped));
    let classes: Vec<&str> = summary["byPriority"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(classes, ["alibaba-hp", "alibaba-spot"]);
    // The HP gang of two 8-GPU workers preempts Spot workers; replaced,
    // not failed, every job succeeds.
    assert!(summary["evictions"].as_u64().unwrap() > 0, "{summary}");
    assert_eq!(summary["succeeded"], 10, "{summary}");
    let row = |name: &str| {
        value["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["job"] == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .clone()
    };
    assert_eq!(row("org-21/job-2003")["preempted"], 0);
    assert!(row("org-57/job-2001")["preempted"].as_u64().unwrap() > 0);
    // A job waits for its GPU model: the A10 job for an A10 to free up.
    assert_eq!(row("org-13/job-1003")["start"], 1860.0);
    // A file that is not a node list: one line.
    assert_one_line_error(
        &["replay", "--cluster-from", &jobs, &jobs],
        &["job_info_df.csv: not a node list this version reads"],
    );
}

#[test]
fn replay_reads_the_openb_trace_with_a_share_of_a_gpu_whole_or_in_thousandths() {
    let nodes = common::testdata("replay/openb/openb_node_list_gpu_node.csv")
        .display()
        .to_string();
    let pods = common::testdata("replay/openb/openb_pod_list_default.csv")
        .display()
        .to_string();
    let replay = |share: &str| {
        let (code, json, stderr) = wasched(&[
            "replay",
            "--cluster-from",
            &nodes,
            &pods,
            "--gpu-share",
            share,
            "-o",
            "json",
        ]);
        assert_eq!(code, 0, "{stderr}");
        // The task that never ran in production is named, not replayed.
        assert!(
            stderr.contains(
                "openb_pod_list_default.csv:7:52: scheduled_time: empty, the task never ran"
            ),
            "{stderr}"
        );
        serde_json::from_str::<serde_json::Value>(&json).expect("one JSON object")
    };
    let row = |value: &serde_json::Value, name: &str| {
        value["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["job"] == format!("openb/{name}"))
            .unwrap_or_else(|| panic!("no {name}"))
            .clone()
    };
    let whole = replay("whole");
    let milli = replay("milli");
    for value in [&whole, &milli] {
        assert_eq!(value["summary"]["jobs"], 5);
        assert_eq!(value["summary"]["succeeded"], 5);
        // `V100M16|V100M32`: node affinity on the model label.
        assert_eq!(row(value, "openb-pod-0001")["nodes"][0], "openb-node-0002");
        // A GPU share shows in the allocated GPUs.
        let busiest = value["summary"]["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["gpuShare"].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert!(busiest > 0.5, "{}", value["summary"]["series"]);
    }
    // Two half-GPU tasks hold both T4s when a share is a whole GPU: the
    // T4 task waits for them to end. In thousandths they share one.
    assert_eq!(row(&whole, "openb-pod-0005")["start"], 110.0);
    assert_eq!(row(&milli, "openb-pod-0005")["start"], 20.0);
    assert_eq!(
        row(&milli, "openb-pod-0003")["nodes"],
        row(&milli, "openb-pod-0004")["nodes"]
    );
}

#[test]
fn a_bad_trace_is_one_line_naming_file_line_and_column() {
    let cluster = common::testdata("replay/cluster.yaml")
        .display()
        .to_string();
    let negative = write(
        "negative.jsonl",
        "{\"name\":\"a\",\"submit\":0,\"duration\":1}\n{\"name\":\"b\",\"submit\":0,\"duration\":-5}\n",
    );
    assert_one_line_error(
        &["replay", &cluster, &negative],
        &["negative.jsonl:2:35: job default/b: field duration: -5 is not a time"],
    );
    let class = write(
        "class.csv",
        "name,submit,duration,priorityClass\na,0,10,gold\n",
    );
    assert_one_line_error(
        &["replay", &cluster, &class],
        &[
            "class.csv:2:8: job default/a: field priorityClass: \"gold\" is not a PriorityClass of the cluster",
        ],
    );
    let cell = write("cell.csv", "name,submit,duration,gpu\na,0,10,two\n");
    assert_one_line_error(
        &["replay", &cluster, &cell],
        &["cell.csv:2:8: job default/a: field gpu"],
    );
    let unknown = write(
        "unknown.jsonl",
        "{\"name\":\"a\",\"submit\":0,\"duration\":1,\"gpus\":1}\n",
    );
    assert_one_line_error(
        &["replay", &cluster, &unknown],
        &["unknown.jsonl:1:37: unknown field `gpus`"],
    );
}
