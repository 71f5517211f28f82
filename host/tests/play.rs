//! A trace played in real time on the local control plane
//! (`wasched-kube play`: kube-scheduler v1.37.2 with its own backoff,
//! upstream's Job controller, the kubelet stand-in keeping time), each job
//! a `batch/v1` Job written by `replay::manifests`, against hand-computed
//! times, which `wasched replay` gives too: one node of 4 GPUs; a basic
//! job holds 2 GPUs for 3.5 s from 0.25 s; a gang of two 1-GPU pods
//! arrives at 1.25 s and starts at once; a 4-GPU job arriving at 1.25 s
//! starts only once both have finished (3.75 s and 4.75 s), at
//! kube-scheduler's next attempt: its backoff, 1 s then 2 s, is released
//! once the 1-second window of its expiry is over (3 s, then 6 s).
//!
//! Needs the harness as `differential.rs` does; never skipped.

mod common;

use std::collections::BTreeMap;

use wasched::ReadOptions;
use wasched::cluster::{Harness, PlayOptions};
use wasched::model::Snapshot;
use wasched::replay;

const CLUSTER: &str = "\
apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status:
  allocatable: {cpu: \"16\", memory: 64Gi, nvidia.com/gpu: \"4\", pods: \"110\"}
";

const TRACE: &str = r#"{"name":"hold","submit":0.25,"duration":3.5,"group":"basic","gpu":2,"cpu":"1","gracePeriod":1}
{"name":"pair","submit":1.25,"duration":3.5,"workers":2,"minCount":2,"gpu":1,"cpu":"1","gracePeriod":1}
{"name":"big","submit":1.25,"duration":1.5,"group":"basic","gpu":4,"cpu":"1","gracePeriod":1}
"#;

#[test]
fn a_trace_played_on_the_cluster_keeps_time() {
    let manifests = wasched::read_manifests_text(
        "cluster.yaml",
        CLUSTER,
        &ReadOptions {
            keep_stored: true,
            ..ReadOptions::default()
        },
    )
    .expect("the cluster");
    let snapshot = Snapshot::build(&manifests).expect("the snapshot");
    let objects = wasched::cluster::translate(&manifests, &snapshot).expect("translates");
    let jobs = replay::trace::finish(replay::trace::parse("trace.jsonl", TRACE).unwrap()).unwrap();
    let list = replay::manifests::list(&jobs).expect("the trace as Jobs");
    let harness = Harness::locate().unwrap_or_else(|e| panic!("the test needs the harness: {e:#}"));
    let played = harness
        .play(
            &objects,
            &list,
            &PlayOptions {
                until: std::time::Duration::from_secs(120),
                ..PlayOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("kube-scheduler: {e:#}"));
    let needed: BTreeMap<String, u32> = jobs
        .iter()
        .map(|j| (format!("default/{}", j.name), j.needed()))
        .collect();
    let timelines = played.timelines(|job| needed[job]);
    let near = |what: &str, got: Option<f64>, want: f64| {
        let got = got.unwrap_or_else(|| panic!("{what}: never; {played:#?}"));
        assert!(
            (got - want).abs() < 0.5,
            "{what}: {got:.2} s, expected {want} s; {timelines:#?}"
        );
    };
    let t = |name: &str| &timelines[&format!("default/{name}")];
    near("hold submitted", Some(t("hold").submit), 0.25);
    near("hold started", t("hold").start, 0.25);
    near("pair started", t("pair").start, 1.25);
    near("big started", t("big").start, 6.0);
    // Jobs complete once their pods have succeeded, within the Job
    // controller's 1-second batch.
    for (name, done) in [("hold", 3.75), ("pair", 4.75), ("big", 7.5)] {
        let end = t(name)
            .end
            .unwrap_or_else(|| panic!("{name} never finished"));
        assert!(
            (done..done + 1.5).contains(&end),
            "{name} finished at {end:.2} s, its pods at {done} s"
        );
    }
    assert_eq!(played.pods.len(), 4, "one pod per worker: {played:#?}");

    // The replay of the same trace gives the same times.
    let model = replay::model_of(manifests).expect("the model");
    let (rows, _) = common::replay(model, jobs, &Default::default());
    for row in &rows {
        near(
            &format!("{} in the replay", row.job),
            row.start,
            t(&row.job[8..]).start.unwrap(),
        );
    }
}
