//! Real cluster dumps and the bad files users write, read as the API
//! server and kubectl read them: unknown fields named (refused with
//! `--strict`), missing required fields said as missing, every kind wasched
//! does not model skipped in one line, `generateName` and namespaces
//! completed, standard input, a nesting bound in YAML as in JSON, encodings,
//! folders, and reasons a newcomer can follow.

mod common;

use std::io::Write as _;
use std::process::{Command, Stdio};

/// Runs `wasched` with `stdin` piped in (or none): (status, stdout, stderr).
fn wasched_with_stdin(args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_wasched"));
    command
        .args(args)
        .env("WASCHED_CACHE_DIR", common::cache_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = command.spawn().unwrap();
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        let text = text.to_string();
        std::thread::spawn(move || pipe.write_all(text.as_bytes()));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn wasched(args: &[&str]) -> (i32, String, String) {
    wasched_with_stdin(args, None)
}

/// Writes `text` to a file named `name` in a directory of its own.
fn write(name: &str, text: &str) -> String {
    let path = common::tempdir("dumps").join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

const NODE: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n\
                    status: {allocatable: {cpu: \"8\", memory: 32Gi, pods: \"110\", nvidia.com/gpu: \"8\"}}\n";

fn json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn an_unknown_field_is_named_and_refused_with_strict() {
    let file = write(
        "typo.yaml",
        &format!(
            "{NODE}---\napiVersion: v1\nkind: Pod\nmetadata: {{name: big, namespace: ml}}\n\
             spec:\n  containers:\n  - name: c\n    resource: {{requests: {{nvidia.com/gpu: \"64\"}}}}\n"
        ),
    );
    let (code, stdout, stderr) = wasched(&["simulate", &file, "-o", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let warning = format!("{file}: Pod ml/big: unknown field \"spec.containers[0].resource\"");
    assert!(
        json(&stdout)["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w == warning.as_str()),
        "{stdout}"
    );
    assert!(stderr.contains(&format!("warning: {warning}")), "{stderr}");
    let (code, stdout, stderr) = wasched(&["simulate", &file, "--strict"]);
    assert_eq!((code, stdout.as_str()), (1, ""), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "wasched: {file}: Pod ml/big: unknown field \"spec.containers[0].resource\" (--strict)\n"
        )
    );
}

#[test]
fn a_job_written_with_the_wrong_scheduling_field_is_named() {
    let file = write(
        "job.yaml",
        &format!(
            "{NODE}---\napiVersion: batch/v1\nkind: Job\nmetadata: {{name: train, namespace: ml}}\n\
             spec:\n  parallelism: 2\n  scheduling: {{gang: {{}}}}\n  template:\n    spec:\n\
             \x20     restartPolicy: Never\n      containers: [{{name: c, image: x}}]\n"
        ),
    );
    let (code, _, stderr) = wasched(&["simulate", &file]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("Job ml/train: unknown field \"spec.scheduling.gang\""),
        "{stderr}"
    );
}

#[test]
fn a_missing_min_count_is_said_missing_not_zero() {
    let file = write(
        "group.yaml",
        "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ml}\n\
         spec: {schedulingPolicy: {gang: {minCont: 4}}}\n",
    );
    let (code, _, stderr) = wasched(&["simulate", &file]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        format!(
            "wasched: {file}: PodGroup ml/g: field spec.schedulingPolicy.gang.minCount: required \
             field is missing (unknown field \"spec.schedulingPolicy.gang.minCont\")\n"
        )
    );
}

#[test]
fn every_kind_wasched_does_not_model_is_skipped_in_one_line() {
    let kinds = [
        ("sparkoperator.k8s.io/v1beta2", "SparkApplication", true),
        ("autoscaling.k8s.io/v1", "VerticalPodAutoscaler", true),
        ("snapshot.storage.k8s.io/v1", "VolumeSnapshot", true),
        ("gateway.networking.k8s.io/v1", "HTTPRoute", true),
        ("metrics.k8s.io/v1beta1", "NodeMetrics", false),
        ("networking.k8s.io/v1", "ServiceCIDR", false),
        ("networking.k8s.io/v1", "IPAddress", false),
        (
            "admissionregistration.k8s.io/v1beta1",
            "MutatingAdmissionPolicy",
            false,
        ),
        ("resource.k8s.io/v1alpha3", "DeviceTaintRule", false),
        ("v1", "ConfigMap", true),
    ];
    let mut text = NODE.to_string();
    for (api_version, kind, namespaced) in kinds {
        let namespace = if namespaced { ", namespace: ns" } else { "" };
        text.push_str(&format!(
            "---\napiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x{namespace}}}\nspec: {{anything: [1]}}\n"
        ));
    }
    let file = write("dump.yaml", &text);
    let (code, stdout, stderr) = wasched(&["simulate", &file, "-o", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let warnings = json(&stdout)["warnings"].clone();
    let skipped: Vec<&str> = warnings
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.starts_with("skipped "))
        .collect();
    assert_eq!(skipped.len(), 1, "{warnings}");
    assert!(
        skipped[0].starts_with("skipped 10 object(s)"),
        "{}",
        skipped[0]
    );
    for (api_version, kind, _) in kinds {
        assert!(
            skipped[0].contains(&format!("1 {kind} ({api_version})")),
            "{kind}: {}",
            skipped[0]
        );
    }
    // A kind one letter off a modelled one is named.
    let file = write(
        "typo-kind.yaml",
        "apiVersion: v1\nkind: Nod\nmetadata: {name: n1}\n",
    );
    let (_, _, stderr) = wasched(&["simulate", &file]);
    assert!(
        stderr.contains(
            "Nod n1: kind Nod (v1) is not one wasched models, skipped (did you mean Node?)"
        ),
        "{stderr}"
    );
}

#[test]
fn generate_name_and_namespaces_are_completed_as_the_api_server_does() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {generateName: worker-}\n\
               spec: {containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]}\n";
    let file = write("generated.yaml", &format!("{NODE}---\n{pod}---\n{pod}"));
    let run = || {
        let (code, stdout, stderr) = wasched(&["simulate", &file, "-o", "json"]);
        assert_eq!(code, 0, "{stderr}");
        json(&stdout)
    };
    let first = run();
    let bound: Vec<&str> = first["placements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["pod"].as_str().unwrap())
        .collect();
    assert_eq!(bound.len(), 2, "{first}");
    assert_ne!(bound[0], bound[1]);
    for pod in &bound {
        let suffix = pod.strip_prefix("default/worker-").expect(pod);
        assert_eq!(suffix.len(), 5, "{pod}");
    }
    assert_eq!(run(), first, "the same files give the same names");
    let notes = first["notes"].to_string();
    assert!(
        notes.contains("named from generateName \\\"worker-\\\""),
        "{notes}"
    );

    // One pod written with and without `namespace: default` is one pod
    // defined twice.
    let named = |ns: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p{ns}}}\nspec: {{containers: [{{name: c}}]}}\n"
        )
    };
    let file = write(
        "twice.yaml",
        &format!("{}---\n{}", named(""), named(", namespace: default")),
    );
    let (code, _, stderr) = wasched(&["simulate", &file]);
    assert_eq!(code, 1);
    assert!(stderr.contains("Pod default/p: defined twice"), "{stderr}");
}

#[test]
fn a_group_not_found_says_where_one_of_that_name_is() {
    let file = write(
        "elsewhere.yaml",
        &format!(
            "{NODE}---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\n\
             metadata: {{name: train, namespace: ml}}\nspec: {{schedulingPolicy: {{gang: {{minCount: 1}}}}}}\n\
             ---\napiVersion: v1\nkind: Pod\nmetadata: {{name: w-0}}\n\
             spec: {{schedulingGroup: {{podGroupName: train}}, containers: [{{name: c}}]}}\n"
        ),
    );
    let (code, _, stderr) = wasched(&["simulate", &file]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "warning: PodGroup default/train not found, named by 1 pod(s) (first: Pod default/w-0): \
             a PodGroup train exists in namespace ml (a pod joins a group of its own namespace)"
        ),
        "{stderr}"
    );
}

#[test]
fn pods_of_another_scheduler_are_noted_and_left_out_unless_named() {
    let pod = |name: &str, scheduler: &str| {
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ns}}\n\
             spec: {{schedulerName: {scheduler}, containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]}}\n"
        )
    };
    let file = write(
        "schedulers.yaml",
        &format!(
            "{NODE}{}{}{}",
            pod("mine", "default-scheduler"),
            pod("theirs", "volcano"),
            pod("also", "volcano")
        ),
    );
    let (code, stdout, stderr) = wasched(&["simulate", &file, "-o", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let out = json(&stdout);
    assert_eq!(out["placements"].as_array().unwrap().len(), 1, "{out}");
    assert!(
        stderr.contains(
            "note: 2 pending pod(s) name another scheduler (2 of volcano): left out; \
             --scheduler-name NAME,... includes them"
        ),
        "{stderr}"
    );
    let (_, stdout, _) = wasched(&[
        "simulate",
        &file,
        "-o",
        "json",
        "--scheduler-name",
        "default-scheduler,volcano",
    ]);
    assert_eq!(json(&stdout)["placements"].as_array().unwrap().len(), 3);
}

#[test]
fn standard_input_is_read_when_piped_or_named() {
    let text = format!(
        "{NODE}---\napiVersion: v1\nkind: Pod\nmetadata: {{name: piped, namespace: ns}}\n\
         spec: {{containers: [{{name: c}}]}}\n"
    );
    for args in [
        &["simulate", "-o", "json"][..],
        &["simulate", "-", "-o", "json"],
    ] {
        let (code, stdout, stderr) = wasched_with_stdin(args, Some(&text));
        assert_eq!(code, 0, "{args:?}: {stderr}");
        assert_eq!(
            json(&stdout)["placements"][0]["pod"],
            "ns/piped",
            "{args:?}"
        );
        assert!(!stderr.contains("bundled"), "{stderr}");
    }
    // Nothing piped: the bundled demo, said on stderr.
    let (code, stdout, stderr) = wasched(&["simulate"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("ml-training/llama-pretrain"));
    assert!(
        stderr.starts_with(
            "wasched: no files given and nothing piped in: scheduling the bundled demo snapshot"
        ),
        "{stderr}"
    );
}

#[test]
fn deep_nesting_is_refused_in_yaml_as_in_json() {
    let depth = 40_000;
    let yaml = write("deep.yaml", &format!("a: {}\n", "[".repeat(depth)));
    let (code, _, stderr) = wasched(&["simulate", &yaml]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        format!(
            "wasched: {yaml}: not valid YAML: recursion limit exceeded at line 1 column 132 \
             (nesting deeper than 128 levels)\n"
        )
    );
    let json_file = write("deep.json", &format!("{{\"a\": {}", "[".repeat(depth)));
    let (code, _, stderr) = wasched(&["simulate", &json_file]);
    assert_eq!(code, 1);
    assert!(stderr.contains("recursion limit exceeded"), "{stderr}");
}

#[test]
fn a_byte_order_mark_is_accepted_and_bad_encoding_named_by_offset() {
    let mut bytes = vec![0xEF, 0xBB, 0xBF];
    bytes.extend_from_slice(NODE.as_bytes());
    let path = common::tempdir("dumps").join("bom.yaml");
    std::fs::write(&path, &bytes).unwrap();
    let (code, _, stderr) = wasched(&["simulate", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let mut bad = NODE.as_bytes().to_vec();
    bad.insert(10, 0xFF);
    let path = common::tempdir("dumps").join("latin1.yaml");
    std::fs::write(&path, &bad).unwrap();
    let (code, _, stderr) = wasched(&["simulate", path.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        format!(
            "wasched: {}: not UTF-8 text: invalid byte 0xff at byte offset 10\n",
            path.display()
        )
    );
}

#[test]
fn what_a_directory_holds_besides_manifests_is_listed() {
    let dir = common::tempdir("dumps-dir");
    std::fs::write(dir.join("nodes.yaml"), NODE).unwrap();
    std::fs::write(dir.join("README.md"), "notes").unwrap();
    std::fs::create_dir(dir.join("more")).unwrap();
    let (code, _, stderr) = wasched(&["simulate", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "warning: {}: 1 folder(s) not read (folders are not searched): more/; 1 file(s) not \
             read (not *.yaml, *.yml or *.json): README.md",
            dir.display()
        )),
        "{stderr}"
    );
}

#[test]
fn a_gang_says_its_verdict_once_and_its_members_refer_to_it() {
    let (code, table, _) = wasched(&["simulate"]);
    assert_eq!(code, 0);
    let group_line = table
        .lines()
        .find(|l| l.starts_with("PodGroup  ml-training/llama-pretrain "))
        .expect(&table);
    assert!(
        group_line.contains("minCount (4) cannot be satisfied"),
        "{group_line}"
    );
    let member = table
        .lines()
        .find(|l| l.starts_with("Pod       ml-training/llama-pretrain-worker-0 "))
        .expect(&table);
    assert!(
        member.ends_with("pending   see PodGroup ml-training/llama-pretrain"),
        "{member}"
    );
    // Notes and warnings go to stderr, never into the table.
    assert!(
        !table.contains("note:") && !table.contains("warning:"),
        "{table}"
    );
}

#[test]
fn a_topology_key_no_node_carries_is_said_so() {
    let file = write(
        "no-key.yaml",
        &format!(
            "{NODE}---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\n\
             metadata: {{name: g, namespace: ml}}\nspec:\n  schedulingPolicy: {{gang: {{minCount: 1}}}}\n\
             \x20 schedulingConstraints: {{topology: [{{key: example.com/rack}}]}}\n\
             ---\napiVersion: v1\nkind: Pod\nmetadata: {{name: w-0, namespace: ml}}\n\
             spec: {{schedulingGroup: {{podGroupName: g}}, containers: [{{name: c}}]}}\n"
        ),
    );
    let (code, stdout, stderr) = wasched(&["simulate", &file, "-o", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let reason = json(&stdout)["podGroups"][0]["reason"].clone();
    assert_eq!(
        reason, "no node carries the label example.com/rack, the group's required topology key",
        "{stdout}"
    );
}

/// What a dump carries and scheduling never reads is dropped, but a
/// misspelt status field is still named; `cluster up` and the
/// kube-scheduler engines get the objects whole.
#[test]
fn dropped_status_still_names_a_misspelt_field_and_stored_objects_can_be_kept() {
    let text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  managedFields: [{manager: kubelet}]\n\
                status:\n  allocatabel: {cpu: '4'}\n  images: [{names: [a], sizeBytes: 1}]\n";
    let file = write("misspelt-status.yaml", text);
    let read = |keep_stored: bool| {
        wasched::read_manifests_with(
            &[file.clone().into()],
            &wasched::ReadOptions {
                keep_stored,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let pruned = read(false);
    assert!(
        pruned
            .warnings
            .iter()
            .any(|w| w.contains("status.allocatabel")),
        "{:?}",
        pruned.warnings
    );
    let node = |m: &wasched::manifest::Manifests| match &m.objects[0].1 {
        wasched::manifest::Object::Node(node) => node.clone(),
        other => panic!("{other:?}"),
    };
    let lean = node(&pruned);
    assert!(lean.metadata.managed_fields.is_none());
    assert!(lean.status.as_ref().unwrap().images.is_none());
    let whole = node(&read(true));
    assert!(whole.metadata.managed_fields.is_some());
    assert!(whole.status.as_ref().unwrap().images.is_some());
}
