//! What a replay reports: one row per job as it completes, and the
//! aggregates at the end.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use super::stats::{Histogram, Percentiles, Point, Series, round};

/// One job, as it ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobRow {
    /// `namespace/name`.
    pub job: String,
    /// Its priority class (`""`: none).
    pub priority_class: String,
    /// Its pods.
    pub workers: u32,
    /// Submit time, seconds from the trace's start.
    pub submit: f64,
    /// When the pods it needs first ran (`None`: never).
    pub start: Option<f64>,
    /// When it finished, failed or the replay ended.
    pub end: f64,
    /// `start - submit` (to the end if it never started).
    pub wait: f64,
    /// How it ended: `Succeeded`, `Failed` (its pods failed more often than
    /// its `backoffLimit`), `NeverSchedulable` (no node could ever hold a
    /// pod of it) or `Unfinished` (the replay ended first).
    pub result: &'static str,
    /// Scheduling attempts of its pods and group.
    pub attempts: u32,
    /// Times its pods were preempted.
    pub preempted: u32,
    /// GPU-seconds of work lost to preemption (redone, or never saved).
    pub gpu_seconds_lost: f64,
    /// Times it went back to pending after being admitted or nominated.
    pub pending_flaps: u32,
    /// The reason it waited longest (`""`: it did not wait).
    pub waited_for: String,
    /// The node of each binding of its pods, in the order they were bound
    /// (a pod recreated after preemption is bound again, and listed again).
    pub nodes: Vec<String>,
    /// GPUs its pods ask for together (for the pictures).
    #[serde(skip)]
    pub gpus: f64,
    /// When its pods were preempted, seconds (for the pictures).
    #[serde(skip)]
    pub preemptions: Vec<f64>,
}

/// Where each row goes as it completes.
pub trait Sink {
    /// One job ended.
    fn job(&mut self, row: &JobRow) -> anyhow::Result<()>;
}

/// Rows kept in memory (tests, and `-o json|yaml` of small traces).
impl Sink for Vec<JobRow> {
    fn job(&mut self, row: &JobRow) -> anyhow::Result<()> {
        self.push(row.clone());
        Ok(())
    }
}

/// Wait and completion times of a class of jobs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Times {
    /// From submit to start, seconds (jobs that started).
    pub wait: Percentiles,
    /// From submit to end, seconds (jobs that succeeded).
    pub completion: Percentiles,
}

/// The aggregates of a replay.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Jobs in the trace that arrived.
    pub jobs: u64,
    /// Jobs that succeeded.
    pub succeeded: u64,
    /// Jobs that failed (backoff limit).
    pub failed: u64,
    /// Jobs no node could ever hold.
    pub never_schedulable: u64,
    /// Jobs not finished when the replay ended.
    pub unfinished: u64,
    /// Seconds from the first arrival to the last job's end.
    pub makespan: f64,
    /// Virtual seconds replayed.
    pub replayed: f64,
    /// Per priority class (`""`: none).
    pub by_priority: BTreeMap<String, Times>,
    /// Per gang size: `1`, `2-7`, `8-31`, `32-127`, `128+` pods.
    pub by_gang_size: BTreeMap<String, Times>,
    /// Every job.
    pub all: Times,
    /// Pods evicted by preemption.
    pub evictions: u64,
    /// Times a job went back to pending after being admitted or nominated.
    pub pending_flaps: u64,
    /// GPU-seconds of work lost to preemption.
    pub gpu_seconds_lost: f64,
    /// Pods started.
    pub pod_starts: u64,
    /// Scheduling attempts (entities popped and tried).
    pub attempts: u64,
    /// Width of each point of `series`, seconds.
    pub resolution: f64,
    /// Allocated GPU and CPU share and pending jobs over time.
    pub series: Vec<Point>,
    /// How the inputs were read (rows of a public trace not mapped), and
    /// a replay that stalled.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The size bucket of a job of `workers` pods.
pub fn size_bucket(workers: u32) -> &'static str {
    match workers {
        0 | 1 => "1",
        2..=7 => "2-7",
        8..=31 => "8-31",
        32..=127 => "32-127",
        _ => "128+",
    }
}

#[derive(Debug, Clone, Default)]
struct Hists {
    wait: Histogram,
    completion: Histogram,
}

impl Hists {
    fn times(&self) -> Times {
        Times {
            wait: self.wait.summary(),
            completion: self.completion.summary(),
        }
    }
}

/// Gathers the aggregates as jobs end (bounded memory).
#[derive(Debug, Default)]
pub struct Recorder {
    summary: Summary,
    by_priority: BTreeMap<String, Hists>,
    by_size: BTreeMap<&'static str, Hists>,
    all: Hists,
    first_arrival: Option<Duration>,
    last_end: Duration,
    /// The time series.
    pub series: Series,
}

impl Recorder {
    /// A recorder keeping `series`.
    pub fn new(series: Series) -> Self {
        Self {
            series,
            ..Self::default()
        }
    }

    /// A job arrived at `at`.
    pub fn arrived(&mut self, at: Duration) {
        self.summary.jobs += 1;
        self.first_arrival.get_or_insert(at);
    }

    /// Jobs arrived so far.
    pub fn arrived_count(&self) -> u64 {
        self.summary.jobs
    }

    /// Counts what a row says.
    pub fn ended(&mut self, row: &JobRow) {
        let s = &mut self.summary;
        match row.result {
            "Succeeded" => s.succeeded += 1,
            "Failed" => s.failed += 1,
            "NeverSchedulable" => s.never_schedulable += 1,
            _ => s.unfinished += 1,
        }
        s.pending_flaps += u64::from(row.pending_flaps);
        s.gpu_seconds_lost += row.gpu_seconds_lost;
        let wait = row.start.map(|_| Duration::from_secs_f64(row.wait));
        let completion =
            (row.result == "Succeeded").then(|| Duration::from_secs_f64(row.end - row.submit));
        if row.result == "Succeeded" {
            self.last_end = self.last_end.max(Duration::from_secs_f64(row.end));
        }
        let classes = [
            self.by_priority
                .entry(row.priority_class.clone())
                .or_default(),
            self.by_size.entry(size_bucket(row.workers)).or_default(),
            &mut self.all,
        ];
        for hists in classes {
            if let Some(wait) = wait {
                hists.wait.record(wait);
            }
            if let Some(completion) = completion {
                hists.completion.record(completion);
            }
        }
    }

    /// Counts evicted pods, started pods and attempts.
    pub fn count(&mut self, evictions: u64, pod_starts: u64, attempts: u64) {
        self.summary.evictions += evictions;
        self.summary.pod_starts += pod_starts;
        self.summary.attempts += attempts;
    }

    /// Pods started and evicted so far (a change of the cluster).
    pub fn changes(&self) -> u64 {
        self.summary.pod_starts + self.summary.evictions
    }

    /// The aggregates, at the replay's end `end`.
    pub fn finish(mut self, end: Duration) -> Summary {
        let mut summary = std::mem::take(&mut self.summary);
        summary.makespan = round(
            self.last_end
                .saturating_sub(self.first_arrival.unwrap_or_default())
                .as_secs_f64(),
        );
        summary.replayed = round(end.as_secs_f64());
        summary.gpu_seconds_lost = round(summary.gpu_seconds_lost);
        summary.by_priority = self
            .by_priority
            .iter()
            .map(|(k, h)| (k.clone(), h.times()))
            .collect();
        summary.by_gang_size = self
            .by_size
            .iter()
            .map(|(k, h)| (k.to_string(), h.times()))
            .collect();
        summary.all = self.all.times();
        summary.series = self.series.points(end);
        summary.resolution = round(self.series.width().as_secs_f64());
        summary
    }
}

/// The header of the jobs table.
pub const JOB_COLUMNS: [&str; 10] = [
    "JOB",
    "SUBMIT",
    "START",
    "END",
    "WAIT",
    "RESULT",
    "ATTEMPTS",
    "PREEMPTED",
    "GPU-S LOST",
    "WAITED FOR",
];

/// A row as table cells.
pub fn job_cells(row: &JobRow) -> Vec<String> {
    let secs = |s: f64| format!("{s:.1}");
    vec![
        row.job.clone(),
        secs(row.submit),
        row.start.map_or_else(|| "-".into(), secs),
        secs(row.end),
        secs(row.wait),
        row.result.to_string(),
        row.attempts.to_string(),
        row.preempted.to_string(),
        format!("{:.0}", row.gpu_seconds_lost),
        row.waited_for.clone(),
    ]
}

/// The aggregates as text, for the table output.
pub fn summary_text(summary: &Summary) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "jobs: {} ({} succeeded, {} failed, {} never schedulable, {} unfinished); makespan {:.1} s; replayed {:.1} s",
        summary.jobs,
        summary.succeeded,
        summary.failed,
        summary.never_schedulable,
        summary.unfinished,
        summary.makespan,
        summary.replayed
    );
    let _ = writeln!(
        out,
        "pods started: {}; attempts: {}; evictions: {}; pending flaps: {}; GPU-seconds lost: {:.0}",
        summary.pod_starts,
        summary.attempts,
        summary.evictions,
        summary.pending_flaps,
        summary.gpu_seconds_lost
    );
    let mut rows = vec![
        [
            "CLASS",
            "JOBS",
            "WAIT MEAN",
            "P50",
            "P95",
            "P99",
            "DONE MEAN",
            "P50",
            "P95",
            "P99",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let mut add = |name: String, t: &Times| {
        let s = |v: f64| format!("{v:.1}");
        rows.push(vec![
            name,
            t.wait.count.max(t.completion.count).to_string(),
            s(t.wait.mean),
            s(t.wait.p50),
            s(t.wait.p95),
            s(t.wait.p99),
            s(t.completion.mean),
            s(t.completion.p50),
            s(t.completion.p95),
            s(t.completion.p99),
        ]);
    };
    add("all".into(), &summary.all);
    for (class, times) in &summary.by_priority {
        let name = if class.is_empty() {
            "(no class)"
        } else {
            class
        };
        add(format!("priority {name}"), times);
    }
    for (size, times) in &summary.by_gang_size {
        add(format!("size {size}"), times);
    }
    out.push_str(&crate::table::render(&rows));
    out
}
