//! A replay drawn (`replay --html`, `compare --trace --html`): allocated
//! GPUs and pending jobs over time, the distribution of wait per priority
//! class, and a timeline of the largest jobs; the runs of a comparison on
//! shared axes. One self-contained HTML file (JSON, CSS, JS inline; the
//! browser draws SVG).

use std::collections::BTreeMap;

use serde::Serialize;

use super::report::{JobRow, Sink, Summary};
use super::stats::Point;

/// How many of the largest jobs the timeline shows.
pub const LARGEST: usize = 20;
/// Most points of each wait distribution.
const CDF_POINTS: usize = 200;

/// The page template; the JSON goes where [`PLACEHOLDER`] is.
const TEMPLATE: &str = include_str!("pictures.html");
/// Where the template takes the JSON.
const PLACEHOLDER: &str = "__WASCHED_REPLAY__";

/// One job on the timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bar {
    /// `namespace/name`.
    pub job: String,
    /// Its pods.
    pub workers: u32,
    /// GPUs its pods ask for together.
    pub gpus: f64,
    /// Submit, start (if it started) and end, seconds.
    pub submit: f64,
    /// When it started.
    pub start: Option<f64>,
    /// When it ended.
    pub end: f64,
    /// How it ended.
    pub result: &'static str,
    /// When its pods were preempted.
    pub preemptions: Vec<f64>,
}

impl Bar {
    /// Larger first: GPUs, then pods, then the earlier submit, then name.
    fn before(&self, other: &Self) -> std::cmp::Ordering {
        other
            .gpus
            .total_cmp(&self.gpus)
            .then(other.workers.cmp(&self.workers))
            .then(self.submit.total_cmp(&other.submit))
            .then_with(|| self.job.cmp(&other.job))
    }
}

/// What one run contributes to the page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    /// Its label (the plugins or configuration).
    pub label: String,
    /// Seconds replayed.
    pub replayed: f64,
    /// Allocated GPU and CPU share and pending jobs over time.
    pub series: Vec<Point>,
    /// Per priority class (`""`: none), the distribution of wait of the
    /// jobs that started: `(seconds, share of the class's jobs that
    /// waited at most that long)`, rising.
    pub waits: BTreeMap<String, Vec<(f64, f64)>>,
    /// The largest jobs, largest first.
    pub largest: Vec<Bar>,
}

/// A sink that keeps what the pictures need (each job's wait, and the
/// [`LARGEST`] jobs), in front of another sink.
pub struct Collector<'a> {
    inner: &'a mut dyn Sink,
    waits: BTreeMap<String, Vec<f64>>,
    largest: Vec<Bar>,
}

impl<'a> Collector<'a> {
    /// Collects in front of `inner`.
    pub fn new(inner: &'a mut dyn Sink) -> Self {
        Self {
            inner,
            waits: BTreeMap::new(),
            largest: Vec::new(),
        }
    }

    /// The run, labelled, with the replay's `summary`.
    pub fn finish(self, label: &str, summary: &Summary) -> Run {
        let waits = self
            .waits
            .into_iter()
            .map(|(class, mut waits)| {
                waits.sort_by(f64::total_cmp);
                (class, cdf(&waits))
            })
            .collect();
        Run {
            label: label.to_string(),
            replayed: summary.replayed,
            series: summary.series.clone(),
            waits,
            largest: self.largest,
        }
    }
}

impl Sink for Collector<'_> {
    fn job(&mut self, row: &JobRow) -> anyhow::Result<()> {
        if row.start.is_some() {
            self.waits
                .entry(row.priority_class.clone())
                .or_default()
                .push(row.wait);
        }
        let bar = Bar {
            job: row.job.clone(),
            workers: row.workers,
            gpus: row.gpus,
            submit: row.submit,
            start: row.start,
            end: row.end,
            result: row.result,
            preemptions: row.preemptions.clone(),
        };
        let at = self
            .largest
            .partition_point(|b| b.before(&bar) == std::cmp::Ordering::Less);
        if at < LARGEST {
            self.largest.insert(at, bar);
            self.largest.truncate(LARGEST);
        }
        self.inner.job(row)
    }
}

/// The empirical distribution of sorted `waits`, at most [`CDF_POINTS`]
/// steps (the largest wait of each step kept, so the curve reaches 1 at
/// the largest wait).
fn cdf(waits: &[f64]) -> Vec<(f64, f64)> {
    let n = waits.len();
    if n == 0 {
        return Vec::new();
    }
    let step = n.div_ceil(CDF_POINTS);
    let mut points: Vec<(f64, f64)> = (1..=n)
        .filter(|i| i % step == 0 || *i == n)
        .map(|i| (waits[i - 1], i as f64 / n as f64))
        .collect();
    // One point per distinct wait: the highest share.
    points.dedup_by(|later, earlier| {
        if later.0 == earlier.0 {
            earlier.1 = later.1;
            true
        } else {
            false
        }
    });
    points
}

/// The page for `runs` (one, or the two of a comparison), titled `title`.
pub fn render(title: &str, runs: &[Run]) -> String {
    #[derive(Serialize)]
    struct Page<'a> {
        title: &'a str,
        runs: &'a [Run],
    }
    crate::report::html::fill(TEMPLATE, PLACEHOLDER, &Page { title, runs })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(job: &str, class: &str, workers: u32, gpus: f64, wait: f64) -> JobRow {
        JobRow {
            job: job.into(),
            priority_class: class.into(),
            workers,
            submit: 0.0,
            start: Some(wait),
            end: wait + 10.0,
            wait,
            result: "Succeeded",
            attempts: 1,
            preempted: 0,
            gpu_seconds_lost: 0.0,
            pending_flaps: 0,
            waited_for: String::new(),
            nodes: Vec::new(),
            gpus,
            preemptions: Vec::new(),
        }
    }

    #[test]
    fn the_collector_keeps_the_largest_jobs_and_each_classs_waits() {
        let mut rows: Vec<JobRow> = Vec::new();
        let mut collector = Collector::new(&mut rows);
        for i in 0..30u32 {
            let class = if i % 2 == 0 { "high" } else { "low" };
            collector
                .job(&row(
                    &format!("j{i:02}"),
                    class,
                    i,
                    f64::from(i % 7),
                    f64::from(i),
                ))
                .unwrap();
        }
        let run = collector.finish("A", &Summary::default());
        assert_eq!(rows.len(), 30, "every row passes through");
        assert_eq!(run.largest.len(), LARGEST);
        // Most GPUs first (6: j27, j20, j13, j06), then more pods.
        let first: Vec<&str> = run.largest.iter().take(4).map(|b| b.job.as_str()).collect();
        assert_eq!(first, ["j27", "j20", "j13", "j06"]);
        let high = &run.waits["high"];
        assert_eq!(high.first(), Some(&(0.0, 1.0 / 15.0)));
        assert_eq!(high.last(), Some(&(28.0, 1.0)));
    }

    #[test]
    fn a_long_distribution_is_thinned_and_still_ends_at_one() {
        let waits: Vec<f64> = (0..1000).map(f64::from).collect();
        let points = cdf(&waits);
        assert!(points.len() <= CDF_POINTS, "{}", points.len());
        assert_eq!(points.last(), Some(&(999.0, 1.0)));
        assert!(
            points
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1)
        );
        // Equal waits are one step.
        assert_eq!(cdf(&[5.0, 5.0, 5.0, 7.0]), [(5.0, 0.75), (7.0, 1.0)]);
    }

    #[test]
    fn the_page_is_self_contained_and_carries_the_runs() {
        assert_eq!(
            crate::report::html::is_self_contained(TEMPLATE, PLACEHOLDER),
            Ok(())
        );
        let page = render("t</script>", &[]);
        assert!(page.contains("t<\\/script>"));
    }
}
