//! `wasched replay` against the real kube-scheduler v1.37.2 in time: the
//! trace of `testdata/replay/differential/` (32 jobs of seconds on four
//! nodes of 4 GPUs: three gangs of four, two priorities, a workload-aware
//! preemption whose victims terminate for 3–4 s, a pod preemption, the Job
//! controller's replacements, a gang that starts only once others finish;
//! written so that same-instant races do not decide, see the book's
//! replay page) is replayed in virtual time, and played in real time on
//! the local control plane (`wasched-kube play`: kube-scheduler with its
//! own backoff, breaking its ties between equally scored nodes toward the
//! replay's choices, the kubelet
//! stand-in completing pods after their `wasched.io/run-for` and honouring
//! grace periods, upstream's Job controller making each Job's Workload and
//! PodGroup and replacing preempted pods), each job a `batch/v1` Job
//! written by `replay::manifests`.
//!
//! The two must hold the same start order except within one 1-second
//! window, each wait within max(2 s, 10 %) of the replay's, and the same
//! preemptions per job. Every other difference must be an entry of
//! `testdata/differential/replay.yaml`, which says why; the file is held
//! exact (each entry must still be a difference). The run is recorded in
//! `target/tmp/differential/replay/`.
//!
//! Needs the harness as `differential.rs` does: `WASCHED_KUBE`, or
//! `kube/bin/`, built there on first use; never skipped.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use wasched::ReadOptions;
use wasched::cluster::{Harness, PlayOptions, Preferences, Timeline};
use wasched::model::Snapshot;
use wasched::replay::{self, JobRow, Options};

/// The objects go to a real cluster: read whole.
fn keep_stored() -> ReadOptions {
    ReadOptions {
        keep_stored: true,
        ..ReadOptions::default()
    }
}

/// One way the two runs of a job differ.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
struct Difference {
    /// The job, `namespace/name`.
    job: String,
    /// `start-order` (with `after`: the job that started first in the
    /// replay but later on the cluster), `wait` or `preempted`.
    what: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    after: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Accepted {
    differences: Vec<AcceptedDifference>,
}

#[derive(Debug, Deserialize)]
struct AcceptedDifference {
    #[serde(flatten)]
    difference: Difference,
    /// Why it differs.
    #[allow(dead_code)]
    why: String,
}

/// Waits may differ by this much, or by 10 % of the replay's.
const WAIT_SLACK: f64 = 2.0;
/// Starts within this of each other may come in either order.
const ORDER_WINDOW: f64 = 1.0;

/// What differs between the replay's rows and the cluster's timelines.
fn differences(rows: &[JobRow], real: &BTreeMap<String, Timeline>) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut started = Vec::new();
    for row in rows {
        let timeline = &real[&row.job];
        let difference = |what: &str| Difference {
            job: row.job.clone(),
            what: what.into(),
            after: None,
        };
        match (row.start, timeline.wait()) {
            (Some(start), Some(real_wait)) => {
                let wait = start - row.submit;
                if (real_wait - wait).abs() > WAIT_SLACK.max(wait * 0.1) {
                    out.push(difference("wait"));
                }
                started.push((row.job.clone(), start, timeline.start.unwrap()));
            }
            (None, None) => {}
            _ => out.push(difference("wait")),
        }
        if row.preempted != timeline.preempted {
            out.push(difference("preempted"));
        }
    }
    for (a, replay_a, real_a) in &started {
        for (b, replay_b, real_b) in &started {
            // a started before b in the replay, after it on the cluster,
            // and neither run had them within one window.
            if replay_a < replay_b
                && real_a > real_b
                && replay_b - replay_a > ORDER_WINDOW
                && real_a - real_b > ORDER_WINDOW
            {
                out.push(Difference {
                    job: a.clone(),
                    what: "start-order".into(),
                    after: Some(b.clone()),
                });
            }
        }
    }
    out.sort();
    out
}

#[test]
fn replay_agrees_with_kube_scheduler_in_time() {
    let dir = common::testdata("replay/differential");
    let cluster = vec![dir.join("cluster.yaml")];
    let trace = vec![dir.join("trace.jsonl")];
    let jobs = replay::trace::read(&trace).expect("the trace reads");
    assert!(jobs.len() >= 30, "the trace has {} jobs", jobs.len());

    // The replay, with the bundled components.
    let model = replay::cluster_model(&cluster, &ReadOptions::default()).expect("the cluster");
    let (mut rows, _) = common::replay(model, jobs.clone(), &Options::default());
    rows.sort_by(|a, b| a.job.cmp(&b.job));
    // The trace shows what the test is about.
    let row = |name: &str| {
        rows.iter()
            .find(|r| r.job == format!("default/{name}"))
            .unwrap()
    };
    assert!(
        row("fill-a").preempted > 0 && row("gang-a").preempted > 0,
        "urgent preempts a basic group and a gang"
    );
    assert!(
        row("urgent").wait > 0.0,
        "the preemptor waits for its victims"
    );
    let first_end = rows.iter().map(|r| r.end).fold(f64::INFINITY, f64::min);
    assert!(
        row("gang-b").start.unwrap() >= first_end,
        "gang-b starts only once a job has finished"
    );

    // The same trace on the cluster.
    let manifests = wasched::read_manifests_with(&cluster, &keep_stored()).expect("the cluster");
    let snapshot = Snapshot::build(&manifests).expect("the snapshot");
    let objects = wasched::cluster::translate(&manifests, &snapshot).expect("translates");
    let records = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("differential/replay");
    let _ = std::fs::remove_dir_all(&records);
    std::fs::create_dir_all(&records).unwrap();
    let harness = Harness::locate()
        .unwrap_or_else(|e| panic!("the differential test needs the harness: {e:#}"));
    // Where several nodes (or placements) tie for the top score,
    // kube-scheduler takes one arbitrarily (or at random); it takes the
    // replay's instead, each Job's pods by the nodes the replay bound
    // them to.
    let prefer = Preferences {
        jobs: rows
            .iter()
            .map(|r| (r.job.clone(), r.nodes.clone()))
            .collect(),
        ..Preferences::default()
    };
    let options = PlayOptions {
        log: Some(records.join("play.log")),
        // The trace ends within two minutes; a stuck play fails sooner.
        until: std::time::Duration::from_secs(300),
        prefer: Some(prefer),
        ..PlayOptions::default()
    };
    let list = replay::manifests::list(&jobs).expect("the trace as Jobs");
    std::fs::write(
        records.join("trace.json"),
        serde_json::to_vec_pretty(&list).unwrap(),
    )
    .unwrap();
    let played = harness
        .play(&objects, &list, &options)
        .unwrap_or_else(|e| panic!("kube-scheduler: {e:#}"));
    std::fs::write(
        records.join("played.json"),
        serde_json::to_vec_pretty(&played).unwrap(),
    )
    .unwrap();
    let needed: BTreeMap<String, u32> = jobs
        .iter()
        .map(|j| (format!("{}/{}", j.namespace, j.name), j.needed()))
        .collect();
    let real = played.timelines(|job| needed.get(job).copied().unwrap_or(1));
    for row in &rows {
        assert!(
            real.contains_key(&row.job),
            "{} never reached the cluster",
            row.job
        );
        assert!(
            real[&row.job].end.is_some(),
            "{} did not finish on the cluster: {:?}",
            row.job,
            real[&row.job]
        );
    }

    let deviation = rows
        .iter()
        .filter_map(|r| Some((r.start? - r.submit - real[&r.job].wait()?).abs()))
        .fold(0.0, f64::max);
    eprintln!("the largest difference of a wait: {deviation:.3} s");
    let compared: Vec<_> = rows
        .iter()
        .map(|r| {
            let t = &real[&r.job];
            serde_json::json!({
                "job": r.job,
                "replay": {"submit": r.submit, "start": r.start, "end": r.end, "preempted": r.preempted},
                "kube-scheduler": {"submit": t.submit, "start": t.start, "end": t.end, "preempted": t.preempted},
            })
        })
        .collect();
    std::fs::write(
        records.join("compared.json"),
        serde_json::to_vec_pretty(&compared).unwrap(),
    )
    .unwrap();
    let found: BTreeSet<Difference> = differences(&rows, &real).into_iter().collect();
    let path = common::testdata("differential/replay.yaml");
    let accepted: Accepted = serde_norway::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let accepted: BTreeSet<Difference> = accepted
        .differences
        .into_iter()
        .map(|d| d.difference)
        .collect();
    let unexplained: Vec<_> = found.difference(&accepted).collect();
    let stale: Vec<_> = accepted.difference(&found).collect();
    assert!(
        unexplained.is_empty() && stale.is_empty(),
        "differences no entry of {} explains: {unexplained:#?}\nentries that no longer differ: {stale:#?}\n(the runs: {})",
        path.display(),
        records.join("compared.json").display()
    );
}
