//! What-if over time (`wasched compare --trace`): one cluster and trace
//! replayed under two plugin sets or configurations, and what differs —
//! the aggregates, each with its ratio, and the jobs whose start moved
//! most.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use serde::Serialize;

use super::report::{JobRow, Sink, Summary, Times};
use super::{Inputs, Options, Progress};
use crate::PluginSet;

/// How many jobs whose start moved are listed.
pub const MOVED: usize = 10;

/// One side of a comparison over time: its label, plugins and options.
pub struct Side<'a> {
    /// As the user wrote it.
    pub label: String,
    /// Its plugins, configured.
    pub plugins: &'a mut PluginSet,
    /// Its queue and horizon.
    pub options: Options,
}

/// An aggregate that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Aggregate {
    /// What it measures (`mean wait`, `evictions`, …).
    pub name: String,
    /// On side A.
    pub a: f64,
    /// On side B.
    pub b: f64,
    /// `b / a` (`None` when `a` is zero).
    pub ratio: Option<f64>,
}

/// One job on one side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobSide {
    /// When it started (`None`: never).
    pub start: Option<f64>,
    /// When it ended.
    pub end: f64,
    /// How it ended.
    pub result: &'static str,
    /// Times its pods were preempted.
    pub preempted: u32,
}

impl JobSide {
    fn of(row: &JobRow) -> Self {
        Self {
            start: row.start,
            end: row.end,
            result: row.result,
            preempted: row.preempted,
        }
    }
}

/// A job whose start moved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moved {
    /// `namespace/name`.
    pub job: String,
    /// On side A.
    pub a: JobSide,
    /// On side B.
    pub b: JobSide,
    /// B's start minus A's, seconds (`None`: it started on one side only).
    pub shift: Option<f64>,
}

/// Two replays of one trace, and what differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// Side A's label.
    pub a: String,
    /// Side B's label.
    pub b: String,
    /// Aggregates that differ, in a fixed order.
    pub aggregates: Vec<Aggregate>,
    /// Jobs whose start, end or result differs.
    pub jobs_differing: u64,
    /// The [`MOVED`] jobs whose start moved most (a job that started on
    /// one side only first), then by name.
    pub moved: Vec<Moved>,
    /// Each side's aggregates, A then B.
    pub summaries: [Summary; 2],
    /// Each side's pictures, A then B (`compare --trace --html`).
    #[serde(skip)]
    pub pictures: Vec<super::pictures::Run>,
}

/// Rows of a side, by job.
#[derive(Default)]
struct Rows(BTreeMap<String, JobSide>);

impl Sink for Rows {
    fn job(&mut self, row: &JobRow) -> Result<()> {
        self.0.insert(row.job.clone(), JobSide::of(row));
        Ok(())
    }
}

/// Replays `inputs` under each side (A, then B; the inputs read afresh for
/// each, so each starts from the same cluster), and compares.
/// `progress` hears each side's progress with the side's index.
pub fn compare(
    inputs: &Inputs,
    sides: [Side<'_>; 2],
    progress: &mut dyn FnMut(usize, Progress),
) -> Result<Comparison> {
    let names = ["A", "B"];
    let mut rows: [Rows; 2] = Default::default();
    let mut summaries: Vec<Summary> = Vec::new();
    let mut labels = Vec::new();
    let mut pictures = Vec::new();
    for (i, side) in sides.into_iter().enumerate() {
        let mut collector = super::pictures::Collector::new(&mut rows[i]);
        let summary = super::replay_files(
            inputs,
            side.plugins,
            &side.options,
            &mut collector,
            &mut |p| progress(i, p),
        )
        .with_context(|| format!("side {} ({})", names[i], side.label))?;
        pictures.push(collector.finish(&side.label, &summary));
        summaries.push(summary);
        labels.push(side.label);
    }
    let [a, b]: [Summary; 2] = summaries.try_into().expect("two sides");
    let [rows_a, rows_b] = rows;
    let mut moved = Vec::new();
    let mut jobs_differing = 0;
    // A job on one side only (inputs that changed between the reads)
    // differs.
    jobs_differing += rows_a
        .0
        .keys()
        .filter(|j| !rows_b.0.contains_key(*j))
        .count() as u64;
    jobs_differing += rows_b
        .0
        .keys()
        .filter(|j| !rows_a.0.contains_key(*j))
        .count() as u64;
    for (job, side_a) in &rows_a.0 {
        let Some(side_b) = rows_b.0.get(job) else {
            continue;
        };
        if side_a.start != side_b.start
            || side_a.end != side_b.end
            || side_a.result != side_b.result
        {
            jobs_differing += 1;
        }
        if side_a.start != side_b.start {
            moved.push(Moved {
                job: job.clone(),
                a: side_a.clone(),
                b: side_b.clone(),
                shift: side_a
                    .start
                    .zip(side_b.start)
                    .map(|(a, b)| super::stats::round(b - a)),
            });
        }
    }
    // Started on one side only first, then the largest shift, then name.
    moved.sort_by(|x, y| {
        let size = |m: &Moved| m.shift.map_or(f64::INFINITY, f64::abs);
        size(y).total_cmp(&size(x)).then_with(|| x.job.cmp(&y.job))
    });
    moved.truncate(MOVED);
    let [label_a, label_b]: [String; 2] = labels.try_into().expect("two sides");
    Ok(Comparison {
        a: label_a,
        b: label_b,
        aggregates: aggregates(&a, &b),
        jobs_differing,
        moved,
        summaries: [a, b],
        pictures,
    })
}

/// The aggregates of both sides that differ, named, in a fixed order.
fn aggregates(a: &Summary, b: &Summary) -> Vec<Aggregate> {
    let mut all: Vec<(String, f64, f64)> = Vec::new();
    let mut add = |name: &str, of: &dyn Fn(&Summary) -> f64| {
        all.push((name.to_string(), of(a), of(b)));
    };
    add("jobs succeeded", &|s| s.succeeded as f64);
    add("jobs failed", &|s| s.failed as f64);
    add("jobs never schedulable", &|s| s.never_schedulable as f64);
    add("jobs unfinished", &|s| s.unfinished as f64);
    add("makespan (s)", &|s| s.makespan);
    add("pods started", &|s| s.pod_starts as f64);
    add("scheduling attempts", &|s| s.attempts as f64);
    add("pods evicted", &|s| s.evictions as f64);
    add("pending flaps", &|s| s.pending_flaps as f64);
    add("GPU-seconds lost", &|s| s.gpu_seconds_lost);
    add("mean GPUs allocated (share)", &|s| mean_gpu_share(s));
    times(&mut all, "all jobs", &a.all, &b.all);
    let classes: std::collections::BTreeSet<&String> =
        a.by_priority.keys().chain(b.by_priority.keys()).collect();
    for class in classes {
        let name = if class.is_empty() {
            "priority (no class)".to_string()
        } else {
            format!("priority {class}")
        };
        let none = Times::default();
        times(
            &mut all,
            &name,
            a.by_priority.get(class).unwrap_or(&none),
            b.by_priority.get(class).unwrap_or(&none),
        );
    }
    let sizes: std::collections::BTreeSet<&String> =
        a.by_gang_size.keys().chain(b.by_gang_size.keys()).collect();
    for size in sizes {
        let none = Times::default();
        times(
            &mut all,
            &format!("size {size}"),
            a.by_gang_size.get(size).unwrap_or(&none),
            b.by_gang_size.get(size).unwrap_or(&none),
        );
    }
    all.into_iter()
        .filter(|(_, a, b)| a != b)
        .map(|(name, a, b)| Aggregate {
            name,
            a,
            b,
            ratio: (a != 0.0).then(|| (b / a * 1000.0).round() / 1000.0),
        })
        .collect()
}

/// Wait and completion figures of a class.
fn times(all: &mut Vec<(String, f64, f64)>, class: &str, a: &Times, b: &Times) {
    for (what, pick) in [
        (
            "mean wait (s)",
            (|t: &Times| t.wait.mean) as fn(&Times) -> f64,
        ),
        ("p50 wait (s)", |t| t.wait.p50),
        ("p95 wait (s)", |t| t.wait.p95),
        ("p99 wait (s)", |t| t.wait.p99),
        ("mean completion (s)", |t| t.completion.mean),
    ] {
        all.push((format!("{class}: {what}"), pick(a), pick(b)));
    }
}

/// The time-weighted mean of the allocated GPU share over the replay.
fn mean_gpu_share(summary: &Summary) -> f64 {
    if summary.replayed <= 0.0 || summary.series.is_empty() {
        return 0.0;
    }
    let mut total = 0.0;
    for (i, point) in summary.series.iter().enumerate() {
        let end = summary
            .series
            .get(i + 1)
            .map_or(summary.replayed, |next| next.start);
        total += point.gpu_share * (end - point.start).max(0.0);
    }
    (total / summary.replayed * 10_000.0).round() / 10_000.0
}

impl Comparison {
    /// Whether anything differs.
    pub fn differs(&self) -> bool {
        !self.aggregates.is_empty() || self.jobs_differing > 0
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("comparison serialises")
    }

    /// The aggregates that differ and the jobs that moved most, as
    /// aligned tables, then one line of totals.
    pub fn to_table(&self) -> String {
        let number = |v: f64| {
            if v.fract() == 0.0 && v.abs() < 1e15 {
                format!("{v:.0}")
            } else {
                format!("{v:.3}")
            }
        };
        let mut out = format!("A: {}\nB: {}\n\n", self.a, self.b);
        if self.aggregates.is_empty() {
            out.push_str("No aggregate differs.\n");
        } else {
            let mut rows = vec![["AGGREGATE", "A", "B", "B/A"].map(String::from).to_vec()];
            for agg in &self.aggregates {
                rows.push(vec![
                    agg.name.clone(),
                    number(agg.a),
                    number(agg.b),
                    agg.ratio.map_or_else(|| "-".into(), |r| format!("{r:.3}")),
                ]);
            }
            out.push_str(&crate::table::render(&rows));
        }
        if !self.moved.is_empty() {
            out.push('\n');
            let mut rows = vec![
                ["JOB", "A START", "B START", "SHIFT", "A RESULT", "B RESULT"]
                    .map(String::from)
                    .to_vec(),
            ];
            let start = |s: Option<f64>| s.map_or_else(|| "-".into(), |v| format!("{v:.1}"));
            for m in &self.moved {
                rows.push(vec![
                    m.job.clone(),
                    start(m.a.start),
                    start(m.b.start),
                    m.shift.map_or_else(|| "-".into(), |v| format!("{v:+.1}")),
                    m.a.result.to_string(),
                    m.b.result.to_string(),
                ]);
            }
            out.push_str(&crate::table::render(&rows));
        }
        out.push_str(&format!(
            "\n{} of {} jobs differ (start, end or result); {} aggregate(s) differ.\n",
            self.jobs_differing,
            self.summaries[0].jobs,
            self.aggregates.len()
        ));
        out
    }
}
