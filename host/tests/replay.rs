//! `wasched replay`'s event loop on hand-computed timelines, with the
//! bundled components: a gang that waits for a finishing job, the backoff
//! of a large group, a preemption with a grace period, the Job
//! controller's replacements, checkpoints, a job that never fits, and
//! invariants after every event over generated traces.

mod common;

use std::time::Duration;

use proptest::prelude::*;
use wasched::replay::{self, JobRow, Options, QueueConfig, Summary};

/// Two PriorityClasses and `nodes` nodes of 8 GPUs in racks of two.
fn cluster(nodes: usize) -> String {
    let mut text = String::from(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n\
         apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 10\n",
    );
    for i in 0..nodes {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-{i}\n  labels: {{topology.wasched.io/rack: r{}, nvidia.com/gpu.product: H100}}\nstatus:\n  allocatable: {{cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"8\", pods: \"110\"}}\n",
            i / 2
        ));
    }
    text
}

fn run_with(nodes: usize, trace: &str, options: &Options) -> (Vec<JobRow>, Summary) {
    let manifests =
        wasched::read_manifests_text("cluster.yaml", &cluster(nodes), &Default::default())
            .expect("the cluster reads");
    let model = replay::model_of(manifests).expect("the cluster models");
    let jobs = replay::trace::finish(replay::trace::parse("trace.jsonl", trace).expect("reads"))
        .expect("valid");
    common::replay(model, jobs, options)
}

fn run(nodes: usize, trace: &str) -> (Vec<JobRow>, Summary) {
    run_with(nodes, trace, &checked())
}

/// Default options, invariants checked after every instant.
fn checked() -> Options {
    Options {
        check_invariants: true,
        ..Options::default()
    }
}

fn row<'a>(rows: &'a [JobRow], name: &str) -> &'a JobRow {
    rows.iter()
        .find(|r| r.job == format!("default/{name}"))
        .unwrap_or_else(|| panic!("no row for {name}: {rows:#?}"))
}

/// (start, end) of a job.
fn span(rows: &[JobRow], name: &str) -> (Option<f64>, f64) {
    let r = row(rows, name);
    (r.start, r.end)
}

#[test]
fn with_the_workload_api_off_a_partial_gang_holds_its_nodes() {
    let trace = r#"
{"name":"first","submit":0,"duration":100,"workers":2,"minCount":2,"gpu":8}
{"name":"second","submit":10,"duration":50,"workers":2,"minCount":2,"gpu":8}
{"name":"lone","submit":20,"duration":5,"gpu":8}
"#;
    // The gate on: the second gang waits whole, the lone job takes the
    // free node at once.
    let (rows, _) = run(3, trace);
    assert_eq!(span(&rows, "lone"), (Some(20.0), 25.0));
    // The gate off: no PodGroup; the second job's first pod takes the free
    // node at 10 and holds it while its second waits, so the lone job
    // waits for the first job to end; the second job runs once both of
    // its pods do.
    let off = Options {
        generic_workload_off: true,
        ..checked()
    };
    let (rows, summary) = run_with(3, trace, &off);
    let lone = row(&rows, "lone");
    assert!(lone.start.unwrap() >= 100.0, "{lone:?}");
    let second = row(&rows, "second");
    assert!(second.start.unwrap() >= 100.0, "{second:?}");
    assert_eq!(second.end - second.start.unwrap(), 50.0);
    assert_eq!(second.nodes.len(), 2);
    assert_eq!(summary.succeeded, 3);
}

#[test]
fn a_gang_waits_for_a_finishing_job() {
    let trace = r#"
{"name":"first","submit":0,"duration":100,"workers":2,"minCount":2,"gpu":8}
{"name":"second","submit":10,"duration":50,"workers":2,"minCount":2,"gpu":8}
{"name":"lone","submit":10,"duration":5,"gpu":8}
"#;
    let (rows, summary) = run(3, trace);
    assert_eq!(span(&rows, "first"), (Some(0.0), 100.0));
    // A rejected PodGroup is retried whenever its backoff ends, events or
    // not: 1, 2, 4, 8 s, then at most 10 s × √2 = 14.142 s, each released
    // on the whole second after the window its expiry falls in. Attempts
    // at 10 (rejected: the lone pod took the third node), 12, 15, 20, 29,
    // 44, 59, 74, 89 and 104, after the first job ended at 100.
    assert_eq!(span(&rows, "second"), (Some(104.0), 154.0));
    let second = row(&rows, "second");
    assert_eq!((second.wait, second.attempts), (94.0, 10));
    assert_eq!(second.result, "Succeeded");
    assert!(
        second.waited_for.contains("Insufficient nvidia.com/gpu"),
        "{second:?}"
    );
    assert_eq!(summary.makespan, 154.0);
    assert_eq!(summary.succeeded, 3);
    // Rows stream in the order jobs end.
    let order: Vec<&str> = rows.iter().map(|r| r.job.as_str()).collect();
    assert_eq!(order, ["default/lone", "default/first", "default/second"]);
}

#[test]
fn a_rejected_pod_waits_for_a_pod_to_go() {
    // A pod NodeResourcesFit rejected waits with the unschedulable pods
    // until a pod that held resources is deleted: the blocker ending at
    // 100 requeues it, and it runs at once.
    let trace = r#"
{"name":"blocker","submit":0,"duration":100,"gpu":8}
{"name":"waiter","submit":10,"duration":50,"gpu":8}
"#;
    let (rows, _) = run(1, trace);
    let waiter = row(&rows, "waiter");
    assert_eq!((waiter.start, waiter.end), (Some(100.0), 150.0));
    assert_eq!(waiter.attempts, 2, "{waiter:?}");
}

#[test]
fn a_pod_a_filter_component_rejected_moves_on_any_pod_event() {
    // WaschedGpuBinPacking (reserveForRequesters) keeps the CPU-only pods
    // off the GPU node, and NodeResourcesFit finds the CPU node full:
    // `late` is rejected by both at 10. A component with a filter
    // registers every pod event, so the GPU job created at 20 moves it
    // (attempt 2, rejected), and that job's binding moves it again: its
    // 2 s backoff is not over, but with nothing active the scheduler pops
    // it from the backoff queue (attempt 3). The GPU job's pod deleted at
    // 50 moves it for both plugins (attempt 4); `early`'s at 100 lets it
    // in (attempt 5). NodeResourcesFit alone would have moved it at 50
    // and 100 only (see `a_rejected_pod_waits_for_a_pod_to_go`).
    let mut text = cluster(1);
    text.push_str("---\napiVersion: v1\nkind: Node\nmetadata: {name: cpu-0}\nstatus:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n");
    let trace = r#"
{"name":"early","submit":0,"duration":100,"cpu":"4"}
{"name":"late","submit":10,"duration":10,"cpu":"4"}
{"name":"gpu","submit":20,"duration":30,"gpu":8}
"#;
    let manifests = wasched::read_manifests_text("cluster.yaml", &text, &Default::default())
        .expect("the cluster reads");
    let model = replay::model_of(manifests).expect("the cluster models");
    let jobs = replay::trace::finish(replay::trace::parse("trace.jsonl", trace).unwrap()).unwrap();
    let config = common::binpack_config(common::BINPACK_ARGS);
    let (rows, _) = common::replay_configured(model, jobs, &checked(), &config);
    let late = row(&rows, "late");
    assert_eq!((late.start, late.end), (Some(100.0), 110.0), "{late:?}");
    assert_eq!(late.attempts, 5, "{late:?}");
    assert_eq!(row(&rows, "gpu").start, Some(20.0));
}

#[test]
fn a_preemption_waits_for_the_victims_grace_period_and_the_job_controller_replaces_them() {
    // The low job's pods have 5 s to terminate; the high job is
    // nominated meanwhile; rejected at 10, its group is retried at 12
    // (victims still there) and 15, when they are gone. The Job controller
    // sees two failures and replaces both victims 20 s after them (30);
    // the replacements wait for the high job to end (35), and the low
    // job's work restarts from zero.
    let trace = r#"
{"name":"low","submit":0,"duration":100,"workers":2,"minCount":2,"gpu":8,"priorityClass":"low","gracePeriod":5}
{"name":"high","submit":10,"duration":20,"workers":2,"minCount":2,"gpu":8,"priorityClass":"high"}
"#;
    let (rows, summary) = run(2, trace);
    assert_eq!(span(&rows, "high"), (Some(15.0), 35.0));
    let high = row(&rows, "high");
    assert_eq!(
        high.waited_for,
        "nominated: waiting for its victims to terminate"
    );
    let low = row(&rows, "low");
    assert_eq!((low.start, low.end), (Some(0.0), 135.0));
    assert_eq!(low.preempted, 1);
    assert_eq!(low.pending_flaps, 1);
    assert_eq!(low.gpu_seconds_lost, 10.0 * 2.0 * 8.0);
    // Each binding's node: the low job's pods twice (replaced), the high
    // job's once, each pod filling a node.
    let sorted = |nodes: &[String]| {
        let mut nodes = nodes.to_vec();
        nodes.sort();
        nodes
    };
    assert_eq!(sorted(&low.nodes), ["gpu-0", "gpu-0", "gpu-1", "gpu-1"]);
    assert_eq!(sorted(&high.nodes), ["gpu-0", "gpu-1"]);
    assert_eq!(summary.evictions, 2);
    assert_eq!(summary.gpu_seconds_lost, 160.0);
}

#[test]
fn checkpoints_keep_saved_work_and_ignored_disruptions_are_replaced_once_gone() {
    // Saved every 4 s: preempted at 10, 8 s are kept and 2 lost per GPU.
    // The podFailurePolicy ignores DisruptionTarget: no counted failure,
    // no delay; the replacement is created when the old pod is gone (15).
    let trace = r#"
{"name":"low","submit":0,"duration":100,"workers":2,"minCount":2,"gpu":8,"priorityClass":"low","gracePeriod":5,"checkpoint":4,"ignoreDisruptions":true,"backoffLimit":0}
{"name":"high","submit":10,"duration":20,"workers":2,"minCount":2,"gpu":8,"priorityClass":"high"}
"#;
    let (rows, _) = run(2, trace);
    let low = row(&rows, "low");
    assert_eq!(low.result, "Succeeded", "an ignored failure never counts");
    assert_eq!(low.gpu_seconds_lost, 2.0 * 2.0 * 8.0);
    // 92 s of work left from 35.
    assert_eq!(low.end, 127.0);
}

#[test]
fn a_job_past_its_backoff_limit_fails() {
    let trace = r#"
{"name":"low","submit":0,"duration":100,"workers":2,"minCount":2,"gpu":8,"priorityClass":"low","gracePeriod":5,"backoffLimit":1}
{"name":"high","submit":10,"duration":20,"workers":2,"minCount":2,"gpu":8,"priorityClass":"high"}
"#;
    let (rows, summary) = run(2, trace);
    // Two pods preempted: two counted failures, one more than the limit.
    let low = row(&rows, "low");
    assert_eq!((low.result, low.end), ("Failed", 10.0));
    assert_eq!(summary.failed, 1);
    assert_eq!(span(&rows, "high"), (Some(15.0), 35.0));
}

#[test]
fn the_failure_backoff_doubles() {
    assert_eq!(replay::recreation_delay(0), Duration::ZERO);
    let secs: Vec<u64> = (1..=7)
        .map(|f| replay::recreation_delay(f).as_secs())
        .collect();
    assert_eq!(secs, [10, 20, 40, 80, 160, 320, 600]);
}

#[test]
fn a_job_that_can_never_fit_is_reported_and_the_rest_runs() {
    let trace = r#"
{"name":"huge","submit":0,"duration":10,"gpu":16}
{"name":"wrong-model","submit":0,"duration":10,"gpu":1,"gpuModel":"B200"}
{"name":"fine","submit":1,"duration":10,"gpu":8}
"#;
    let (rows, summary) = run(2, trace);
    let huge = row(&rows, "huge");
    assert_eq!((huge.result, huge.start), ("NeverSchedulable", None));
    assert!(
        huge.waited_for.contains("2 Insufficient nvidia.com/gpu"),
        "{huge:?}"
    );
    let model = row(&rows, "wrong-model");
    assert_eq!(model.result, "NeverSchedulable");
    assert!(model.waited_for.contains("node affinity"), "{model:?}");
    assert_eq!(span(&rows, "fine"), (Some(1.0), 11.0));
    assert_eq!(summary.never_schedulable, 2);
}

/// Whether a job can ever fit is known once per shape of job; jobs whose
/// pods are alike but that need more of them running are told apart.
#[test]
fn jobs_of_alike_pods_never_fit_only_when_they_need_more_than_the_nodes_hold() {
    let trace = r#"
{"name":"three","submit":0,"duration":10,"workers":3,"minCount":3,"gpu":8}
{"name":"two","submit":0,"duration":10,"workers":2,"minCount":2,"gpu":8}
{"name":"two-elsewhere","submit":0,"duration":10,"workers":2,"minCount":2,"gpu":8,"gpuModel":"B200"}
{"name":"three-again","submit":1,"duration":10,"workers":3,"minCount":3,"gpu":8}
{"name":"loose","submit":1,"duration":10,"workers":3,"minCount":2,"gpu":8}
{"name":"half","submit":40,"duration":10,"workers":3,"minCount":3,"gpu":4}
"#;
    let (rows, summary) = run(2, trace);
    for never in ["three", "three-again"] {
        let r = row(&rows, never);
        assert_eq!((r.result, r.start), ("NeverSchedulable", None), "{r:?}");
        assert!(r.waited_for.contains("never schedulable"), "{r:?}");
    }
    assert_eq!(span(&rows, "two"), (Some(0.0), 10.0));
    // Alike but for the GPU model it asks for, which no node has.
    let elsewhere = row(&rows, "two-elsewhere");
    assert_eq!(elsewhere.result, "NeverSchedulable", "{elsewhere:?}");
    assert!(
        elsewhere.waited_for.contains("node affinity"),
        "{elsewhere:?}"
    );
    // It needs two of its three pods: it fits, and starts once "two" is
    // done (after its backoff).
    let loose = row(&rows, "loose");
    assert_ne!(loose.result, "NeverSchedulable", "{loose:?}");
    assert!(loose.start.is_some_and(|s| s >= 10.0), "{loose:?}");
    // Three pods of 4 GPUs fit two nodes of 8.
    assert_eq!(span(&rows, "half"), (Some(40.0), 50.0));
    assert_eq!(summary.never_schedulable, 3);
}

#[test]
fn until_stops_the_replay_and_reports_what_is_left_unfinished() {
    let trace = r#"
{"name":"long","submit":0,"duration":1000,"gpu":8}
{"name":"late","submit":600,"duration":10,"gpu":8}
"#;
    let options = Options {
        until: Some(Duration::from_secs(300)),
        ..checked()
    };
    let (rows, summary) = run_with(1, trace, &options);
    assert_eq!(rows.len(), 1, "the late job never arrived: {rows:?}");
    assert_eq!((rows[0].result, rows[0].end), ("Unfinished", 300.0));
    assert_eq!(summary.replayed, 300.0);
}

#[test]
fn backoff_of_a_large_group() {
    // 16 pods: the maximum backoff is 10 s × √16 = 40 s. Attempts at 0, 2,
    // 5, 10, 19, 36, 69 (backoffs 1, 2, 4, 8, 16, 32, then 40 s, each
    // released after its 1-second window); the blocker ends at 100, and
    // the group's next attempt is at 69 + 40 s, released at 110.
    let trace = r#"
{"name":"blocker","submit":0,"duration":100,"gpu":1}
{"name":"big","submit":0,"duration":10,"workers":16,"minCount":16,"gpu":1}
"#;
    let (rows, _) = run(2, trace);
    let big = row(&rows, "big");
    assert_eq!((big.start, big.attempts), (Some(110.0), 8), "{big:?}");
    // Without SchedulerPopFromBackoffQ, expiries are not aligned to
    // windows: 0, 1, 3, 7, 15, 31, 63, then 103.
    let options = Options {
        queue: QueueConfig {
            pop_from_backoff: false,
            ..QueueConfig::default()
        },
        ..checked()
    };
    let (rows, _) = run_with(2, trace, &options);
    let big = row(&rows, "big");
    assert_eq!((big.start, big.attempts), (Some(103.0), 8), "{big:?}");
    // The configured backoff: 2 s doubling to at most 4 s × 4 = 16 s.
    let options = Options {
        queue: QueueConfig {
            backoff: wasched::config::QueueBackoff {
                initial: Duration::from_secs(2),
                max: Duration::from_secs(4),
            },
            ..QueueConfig::default()
        },
        ..checked()
    };
    let (rows, _) = run_with(2, trace, &options);
    // 0, 3, 8, 17, 34, 51, 68, 85, then 102.
    assert_eq!(row(&rows, "big").start, Some(102.0));
}

#[test]
fn the_same_trace_gives_the_same_rows() {
    let trace = generated_trace(&[(3, 40, 2, false), (1, 25, 1, true), (2, 5, 4, false)]);
    let a = run(4, &trace);
    let b = run(4, &trace);
    assert_eq!(a, b);
}

/// A trace taken job by job as the jobs arrive replays as the same trace
/// held whole; a job naming a PriorityClass the cluster lacks stops the
/// replay when it arrives, named.
#[test]
fn a_trace_taken_as_it_arrives_replays_as_the_whole_trace() {
    use wasched::replay::generate::{TraceOptions, jobs, trace};
    let options = TraceOptions {
        jobs: 40,
        mean_gap: Duration::from_secs(30),
        max_workers: 4,
        seed: 7,
    };
    let whole = trace(&options);
    assert_eq!(jobs(&options).len(), 40);
    let mut cluster_text = cluster(4);
    cluster_text.push_str(
        "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: training-high}\nvalue: 1000\n\
         ---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch}\nvalue: 10\n",
    );
    let model = || {
        let manifests =
            wasched::read_manifests_text("cluster.yaml", &cluster_text, &Default::default())
                .expect("the cluster reads");
        replay::model_of(manifests).expect("the cluster models")
    };
    let held = common::replay(model(), whole.clone(), &checked());
    let mut plugins = common::runtime()
        .bundled(&Default::default())
        .expect("bundled plugins");
    let mut rows = Vec::new();
    let streamed = replay::replay(
        model(),
        jobs(&options),
        &mut plugins,
        &checked(),
        &mut rows,
        &mut |_| {},
    )
    .expect("replays");
    assert!(held.1.pod_starts > 0, "{:?}", held.1);
    assert_eq!((rows, streamed), held);

    let mut unknown = whole;
    unknown[5].priority_class = Some("gold".into());
    unknown[5].priority_class_at = "trace.jsonl:6:40".into();
    let mut rows = Vec::new();
    let error = replay::replay(
        model(),
        unknown.clone(),
        &mut plugins,
        &checked(),
        &mut rows,
        &mut |_| {},
    )
    .expect_err("an unknown class stops the replay");
    assert_eq!(
        error.to_string(),
        format!(
            "trace.jsonl:6:40: job default/{}: field priorityClass: \"gold\" is not a PriorityClass of the cluster",
            unknown[5].name
        )
    );
    assert_eq!(
        replay::check_classes(&model(), &unknown)
            .expect_err("found before")
            .to_string(),
        error.to_string()
    );
}

/// A trace of jobs (workers, duration, submit gap, high priority).
fn generated_trace(jobs: &[(u32, u32, u32, bool)]) -> String {
    let mut submit = 0;
    let mut text = String::new();
    for (i, &(workers, duration, gap, high)) in jobs.iter().enumerate() {
        submit += gap;
        let class = if high { "high" } else { "low" };
        text.push_str(&format!(
            "{{\"name\":\"j{i}\",\"submit\":{submit},\"duration\":{duration},\"workers\":{workers},\"minCount\":{workers},\"gpu\":4,\"priorityClass\":\"{class}\",\"gracePeriod\":3}}\n"
        ));
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every job arrives and ends once, never before it arrived or started,
    /// and succeeds unless preemptions failed more of its pods than its
    /// backoffLimit allows; what is allocated never exceeds the cluster;
    /// the counts add up.
    #[test]
    fn invariants_hold_over_generated_traces(
        jobs in proptest::collection::vec((1u32..=4, 1u32..=60, 0u32..=20, any::<bool>()), 1..12)
    ) {
        let trace = generated_trace(&jobs);
        let (rows, summary) = run(4, &trace);
        prop_assert_eq!(rows.len(), jobs.len());
        prop_assert_eq!(summary.jobs as usize, jobs.len());
        prop_assert_eq!(
            summary.succeeded + summary.failed + summary.never_schedulable + summary.unfinished,
            summary.jobs
        );
        for row in &rows {
            prop_assert!(row.end >= row.submit, "{:?}", row);
            if let Some(start) = row.start {
                prop_assert!(start >= row.submit && row.end >= start, "{:?}", row);
            }
            // A job fails only past its backoffLimit (6): each preemption
            // of a gang fails every pod it runs.
            let past_limit = row.preempted * row.workers > 6;
            prop_assert!(
                row.result == "Succeeded" || (row.result == "Failed" && past_limit),
                "{:?}",
                row
            );
        }
        for point in &summary.series {
            prop_assert!(point.gpu_share <= 1.0 + 1e-9, "{:?}", point);
        }
    }
}

#[test]
fn gpu_jobs_tolerate_the_gpu_taint_and_nothing_else() {
    let cluster = "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-0}\nspec:\n  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]\nstatus:\n  allocatable: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"8\", pods: \"110\"}\n";
    let manifests = wasched::read_manifests_text("cluster.yaml", cluster, &Default::default())
        .expect("the cluster reads");
    let model = replay::model_of(manifests).expect("models");
    let trace = "{\"name\":\"gpu\",\"submit\":0,\"duration\":10,\"gpu\":8}\n{\"name\":\"cpu-only\",\"submit\":0,\"duration\":10,\"cpu\":\"1\"}\n";
    let jobs = replay::trace::parse("t.jsonl", trace).expect("reads");
    let (rows, _) = common::replay(model, jobs, &checked());
    assert_eq!(row(&rows, "gpu").start, Some(0.0));
    let cpu = row(&rows, "cpu-only");
    assert_eq!(cpu.result, "NeverSchedulable");
    assert!(cpu.waited_for.contains("untolerated taint"), "{cpu:?}");
}

/// `testdata/replay/spot-gpu/` is the generated spot-GPU-schema cluster
/// and trace the what-if figures are measured on, as
/// `replay::generate::spot_gpu` writes them (`WASCHED_BLESS=1` writes them
/// anew), and every row of it maps.
#[test]
fn the_generated_spot_gpu_trace_is_the_generators_and_maps_whole() {
    let options = replay::generate::TraceOptions {
        jobs: 300,
        mean_gap: Duration::from_secs(450),
        max_workers: 8,
        seed: 38,
    };
    let (nodes, jobs) = replay::generate::spot_gpu(&options, 32);
    for (name, text) in [("node_info_df.csv", &nodes), ("job_info_df.csv", &jobs)] {
        let path = common::testdata(&format!("replay/spot-gpu/{name}"));
        if std::env::var_os("WASCHED_BLESS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        assert_eq!(
            &std::fs::read_to_string(&path).unwrap(),
            text,
            "{} is not what the generator writes",
            path.display()
        );
    }
    // Strict reading: a row that did not map would be an error.
    let read = replay::trace::parse("job_info_df.csv", &jobs).expect("every row maps");
    assert_eq!(read.len(), 300);
    assert!(read.iter().any(|j| j.workers == 8) && read.iter().any(|j| j.workers == 1));
    let classes: std::collections::BTreeSet<_> = read
        .iter()
        .map(|j| j.priority_class.clone().unwrap())
        .collect();
    assert_eq!(classes.len(), 2, "{classes:?}");
}

/// `testdata/replay/jobs.yaml` is the bundled trace written as Jobs
/// (`replay::manifests::list`), and reads back as that trace
/// (`WASCHED_BLESS=1` writes it anew).
#[test]
fn the_bundled_trace_as_jobs_is_the_writers_and_reads_back() {
    let trace = replay::trace::read(&[common::testdata("replay/trace.jsonl")]).expect("reads");
    let list = replay::manifests::list(&trace).expect("writes");
    let mut text = String::from(
        "# testdata/replay/trace.jsonl as batch/v1 Jobs, as replay::manifests writes\n\
         # them (WASCHED_BLESS=1 cargo test -p wasched --test replay writes it anew).\n",
    );
    text.push_str(&serde_norway::to_string(&list).unwrap());
    let path = common::testdata("replay/jobs.yaml");
    if std::env::var_os("WASCHED_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "{} is not what the writer makes of trace.jsonl",
        path.display()
    );
    let read = replay::trace::read(&[&path]).expect("the Jobs read as a trace");
    assert_eq!(read.len(), trace.len());
    for (read, written) in read.iter().zip(&trace) {
        assert_eq!(
            (&read.name, read.submit, read.duration),
            (&written.name, written.submit, written.duration)
        );
        assert_eq!(
            (read.workers, read.grouping, &read.requests),
            (written.workers, written.grouping, &written.requests)
        );
        assert_eq!(
            (&read.priority_class, &read.topology_key, read.checkpoint),
            (
                &written.priority_class,
                &written.topology_key,
                written.checkpoint
            )
        );
        assert_eq!(
            (
                read.grace_period,
                read.backoff_limit,
                read.ignore_disruptions,
                read.disruption
            ),
            (
                written.grace_period,
                written.backoff_limit,
                written.ignore_disruptions,
                written.disruption
            )
        );
        assert_eq!(read.node_selector, written.node_selector);
    }
}

/// Pods with their PodGroup, written as a user creates them, replay as the
/// same jobs written as trace rows: a gang of two pods that must wait for
/// a lone pod to finish, and is preempted by nothing (bare pods are not
/// replaced, so their jobs' backoffLimit is 0).
#[test]
fn pods_with_their_podgroup_replay_as_the_rows_they_stand_for() {
    let manifests = "\
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train, annotations: {wasched.io/submit-at: 10s}}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
  schedulingConstraints: {topology: [{key: topology.wasched.io/rack}]}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: train-0, annotations: {wasched.io/run-for: 50s}},
   spec: {schedulingGroup: {podGroupName: train}, restartPolicy: Never,
          containers: [{name: main, image: trainer, resources: {limits: {nvidia.com/gpu: 8}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: train-1, annotations: {wasched.io/run-for: 50s}},
   spec: {schedulingGroup: {podGroupName: train}, restartPolicy: Never,
          containers: [{name: main, image: trainer, resources: {limits: {nvidia.com/gpu: 8}}}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: blocker, annotations: {wasched.io/submit-at: 0s, wasched.io/run-for: 100s}}
spec:
  restartPolicy: OnFailure
  containers: [{name: main, image: busybox, resources: {requests: {nvidia.com/gpu: 8}}}]
";
    let rows = r#"
{"name":"blocker","submit":0,"duration":100,"gpu":8,"backoffLimit":0}
{"name":"train","submit":10,"duration":50,"workers":2,"minCount":2,"gpu":8,"topologyKey":"topology.wasched.io/rack","backoffLimit":0}
"#;
    let replayed = |name: &str, text: &str| {
        let cluster =
            wasched::read_manifests_text("cluster.yaml", &cluster(2), &Default::default())
                .expect("the cluster reads");
        let model = replay::model_of(cluster).expect("the cluster models");
        let jobs =
            replay::trace::finish(replay::trace::parse(name, text).expect("reads")).expect("valid");
        common::replay(model, jobs, &checked()).0
    };
    let from_manifests = replayed("trace.yaml", manifests);
    assert_eq!(from_manifests, replayed("trace.jsonl", rows));
    // The gang waits for the rack's other node, which the blocker holds.
    let train = row(&from_manifests, "train");
    assert!(train.start.is_some_and(|s| s >= 100.0), "{train:?}");
    assert_eq!(train.workers, 2);
}

/// The row of the job whose name starts with `prefix` (`namespace/name`).
fn row_starting<'a>(rows: &'a [JobRow], prefix: &str) -> &'a JobRow {
    rows.iter()
        .find(|r| r.job.starts_with(prefix))
        .unwrap_or_else(|| panic!("no row for {prefix}: {rows:#?}"))
}

/// The objects users submit to workload controllers, written as a trace
/// (`testdata/replay/workloads.yaml`), replayed on the dialect examples'
/// 4 nodes as what their controllers make: a JobSet gang of a CPU driver
/// and GPU workers is one job of unlike pods, the PyTorchJob's lone pods
/// start as GPUs free up, the Volcano gang waits whole; with
/// training-operator's gang scheduling configured, the PyTorchJob waits
/// whole too.
#[test]
fn workload_objects_replay_as_what_their_controllers_make() {
    let replayed = |reading: &replay::trace::Reading| {
        let cluster = wasched::read_manifests_with(
            &[common::testdata("dialects/nodes.yaml")],
            &Default::default(),
        )
        .expect("the nodes read");
        let model = replay::model_of(cluster).expect("the cluster models");
        let mut notes = Vec::new();
        let jobs = replay::trace::read_noting(
            &[common::testdata("replay/workloads.yaml")],
            reading,
            &mut notes,
        )
        .expect("the objects read as a trace");
        // What each object was expanded as, as `simulate` says it.
        for object in [
            "JobSet ml/pretrain",
            "LeaderWorkerSet serving/serve",
            "PyTorchJob ml/finetune",
            "Job default/tf-dist",
        ] {
            assert!(
                notes
                    .iter()
                    .any(|n| n.contains(&format!("{object}: expanded as"))),
                "{object}: {notes:#?}"
            );
        }
        let rows = common::replay(model, jobs.clone(), &checked()).0;
        (jobs, rows)
    };
    let (jobs, rows) = replayed(&Default::default());
    // The JobSet's gang: the driver is a role of its own, the workers the
    // job's pods; the tightest backoffLimit of its Jobs.
    let pretrain = jobs
        .iter()
        .find(|j| j.name.starts_with("pretrain-"))
        .expect("the JobSet's group is a job");
    assert_eq!(pretrain.workers, 3);
    assert_eq!(pretrain.grouping, replay::trace::Grouping::Gang(3));
    assert_eq!(pretrain.requests["nvidia.com/gpu"], "4");
    assert_eq!(pretrain.roles.len(), 1);
    assert_eq!(pretrain.roles[0].workers, 1);
    assert_eq!(pretrain.roles[0].requests["cpu"], "2");
    assert!(!pretrain.roles[0].requests.contains_key("nvidia.com/gpu"));
    assert_eq!(pretrain.backoff_limit, 2);
    assert!(!pretrain.ignore_disruptions);
    assert_eq!(pretrain.duration, Duration::from_secs(600));
    assert_eq!(pretrain.gpus(), 8.0);
    // A LeaderWorkerSet's pods always restart: they run for the object's
    // run-for, and its controller replaces them without limit.
    let serve = jobs
        .iter()
        .find(|j| j.name == "serve-0")
        .expect("the leader");
    assert_eq!(
        (serve.workers, serve.grouping),
        (1, replay::trace::Grouping::None)
    );
    assert!(serve.ignore_disruptions);
    assert_eq!(serve.submit, Duration::from_secs(60));
    // A pod template's run-for: the PyTorchJob has none of its own.
    let master = jobs
        .iter()
        .find(|j| j.name == "finetune-master-0")
        .expect("the master");
    assert_eq!(master.duration, Duration::from_secs(300));

    let start = |rows: &[JobRow], prefix: &str| row_starting(rows, prefix).start;
    assert_eq!(start(&rows, "ml/pretrain-"), Some(0.0));
    assert_eq!(row_starting(&rows, "ml/pretrain-").gpus, 8.0);
    assert_eq!(start(&rows, "serving/serve-0"), Some(60.0));
    assert_eq!(start(&rows, "serving/serve-0-1"), Some(60.0));
    // 16 GPUs: pretrain 8, serve 4, the master the last 4; its workers
    // take the GPUs the master, then pretrain, give back.
    assert_eq!(start(&rows, "ml/finetune-master-0"), Some(120.0));
    assert_eq!(start(&rows, "ml/finetune-worker-0"), Some(420.0));
    assert!(start(&rows, "ml/finetune-worker-1").is_some_and(|s| s >= 600.0));
    let tf = row_starting(&rows, "default/tf-dist-");
    assert_eq!(tf.workers, 3);
    assert!(tf.start.is_some_and(|s| s >= 600.0), "{tf:?}");
    assert!(rows.iter().all(|r| r.result == "Succeeded"), "{rows:#?}");

    // training-operator run with --gang-scheduler-name: one gang of 3
    // that cannot start until pretrain's GPUs free up.
    let gang = replay::trace::Reading {
        controllers: wasched::manifest::ControllerOptions {
            gang_scheduling: [wasched::manifest::ControllerKind::PyTorchJob].into(),
        },
        ..Default::default()
    };
    let (jobs, rows) = replayed(&gang);
    let finetune = jobs
        .iter()
        .find(|j| j.name == "finetune")
        .expect("one gang");
    assert_eq!(
        (finetune.workers, finetune.grouping),
        (3, replay::trace::Grouping::Gang(3))
    );
    assert!(start(&rows, "ml/finetune").is_some_and(|s| s >= 600.0));
}

/// A job of unlike pods never fits when one kind of its pods fits no
/// node, even if the others would: here the JobSet's driver asks for more
/// CPU than a node has.
#[test]
fn a_job_whose_driver_fits_no_node_never_fits() {
    let text = std::fs::read_to_string(common::testdata("replay/workloads.yaml"))
        .expect("the trace")
        .replace("{cpu: \"2\", memory: 8Gi}", "{cpu: \"40\", memory: 8Gi}");
    let cluster = wasched::read_manifests_with(
        &[common::testdata("dialects/nodes.yaml")],
        &Default::default(),
    )
    .expect("the nodes read");
    let model = replay::model_of(cluster).expect("the cluster models");
    let jobs = replay::trace::finish(replay::trace::parse("workloads.yaml", &text).expect("reads"))
        .expect("valid");
    let rows = common::replay(model, jobs, &checked()).0;
    let pretrain = row_starting(&rows, "ml/pretrain-");
    assert_eq!(pretrain.result, "NeverSchedulable", "{pretrain:?}");
    assert!(
        pretrain.waited_for.contains("Insufficient cpu"),
        "{pretrain:?}"
    );
    // The rest run.
    assert_eq!(
        row_starting(&rows, "ml/finetune-master-0").start,
        Some(120.0)
    );
}

/// A basic group (here a LeaderWorkerSet's) whose leader fits no node
/// never fits, though its workers would: each of its pods must run.
#[test]
fn a_basic_group_whose_leader_fits_no_node_never_fits() {
    let trace = "\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: serve, annotations: {wasched.io/submit-at: 0s, wasched.io/run-for: 1m}}
spec:
  scheduling: {schedulingPolicy: {basic: {}}}
  leaderWorkerTemplate:
    size: 3
    leaderTemplate:
      spec:
        containers: [{name: leader, image: vllm, resources: {limits: {nvidia.com/gpu: \"6\"}}}]
    workerTemplate:
      spec:
        containers: [{name: worker, image: vllm, resources: {limits: {nvidia.com/gpu: \"1\"}}}]
";
    let cluster = wasched::read_manifests_with(
        &[common::testdata("dialects/nodes.yaml")],
        &Default::default(),
    )
    .expect("the nodes read");
    let model = replay::model_of(cluster).expect("the cluster models");
    let jobs = replay::trace::parse("serve.yaml", trace).expect("reads");
    assert_eq!(
        (jobs[0].workers, jobs[0].grouping),
        (3, replay::trace::Grouping::Basic)
    );
    assert_eq!(jobs.len(), 1, "{jobs:#?}");
    let rows = common::replay(model, jobs, &checked()).0;
    assert_eq!(rows[0].result, "NeverSchedulable", "{rows:?}");
    assert!(
        rows[0].waited_for.contains("Insufficient nvidia.com/gpu"),
        "{rows:?}"
    );
}
