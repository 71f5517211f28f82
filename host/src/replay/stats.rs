//! Statistics of a replay that stay the same size however long the trace:
//! a log-bucketed histogram for percentiles and a time series whose
//! buckets widen as time goes on.

use std::time::Duration;

use serde::Serialize;

/// Relative width of a histogram bucket: percentiles are exact to 1 %.
const GROWTH: f64 = 1.01;
/// Times under a millisecond share the first bucket.
const FLOOR_MS: f64 = 1.0;

/// Durations, counted in buckets 1 % wide (memory bounded by the range of
/// values, never by their number).
#[derive(Debug, Clone, Default)]
pub struct Histogram {
    /// Count per bucket index, and the largest value counted in it (ms).
    counts: Vec<(u64, f64)>,
    total: u64,
    sum_ms: f64,
    max_ms: f64,
}

impl Histogram {
    fn bucket(ms: f64) -> usize {
        if ms <= FLOOR_MS {
            0
        } else {
            1 + ((ms / FLOOR_MS).ln() / GROWTH.ln()) as usize
        }
    }

    /// Counts one duration.
    pub fn record(&mut self, value: Duration) {
        let ms = value.as_secs_f64() * 1000.0;
        let bucket = Self::bucket(ms);
        if self.counts.len() <= bucket {
            self.counts.resize(bucket + 1, (0, 0.0));
        }
        let (count, largest) = &mut self.counts[bucket];
        *count += 1;
        *largest = largest.max(ms);
        self.total += 1;
        self.sum_ms += ms;
        self.max_ms = self.max_ms.max(ms);
    }

    /// How many were counted.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The `q` quantile (0..=1) in seconds, within 1 %: the largest value
    /// counted in the bucket it falls in (exact when the values are apart).
    pub fn quantile(&self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for &(count, largest) in &self.counts {
            seen += count;
            if seen >= rank {
                return largest / 1000.0;
            }
        }
        self.max_ms / 1000.0
    }

    /// The mean in seconds.
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum_ms / self.total as f64 / 1000.0
        }
    }

    /// Mean, p50, p95 and p99 in seconds.
    pub fn summary(&self) -> Percentiles {
        Percentiles {
            count: self.total,
            mean: round(self.mean()),
            p50: round(self.quantile(0.50)),
            p95: round(self.quantile(0.95)),
            p99: round(self.quantile(0.99)),
        }
    }
}

/// Seconds to the millisecond.
pub fn round(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

/// Mean and percentiles of a set of durations, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Percentiles {
    /// How many.
    pub count: u64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// Most points a time series holds; when time runs past them, neighbours
/// merge and each point covers twice as long.
pub const POINTS: usize = 256;

/// One point of a time series: the time-weighted mean of each quantity
/// over `[start, start + width)`, and the largest value seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Point {
    /// Seconds from the trace's start.
    pub start: f64,
    /// Share of the cluster's GPUs allocated (0–1).
    pub gpu_share: f64,
    /// Share of the cluster's CPU allocated (0–1).
    pub cpu_share: f64,
    /// Jobs arrived and not started.
    pub pending_jobs: f64,
    /// The most jobs pending at once in the point.
    pub max_pending_jobs: u64,
}

/// What is measured at an instant, held until the next.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Level {
    /// Share of GPUs allocated.
    pub gpu_share: f64,
    /// Share of CPU allocated.
    pub cpu_share: f64,
    /// Jobs pending.
    pub pending_jobs: u64,
}

/// A step function of [`Level`]s over time, integrated into at most
/// [`POINTS`] points of equal width.
#[derive(Debug, Clone)]
pub struct Series {
    width: Duration,
    /// Integrals per point: (gpu·s, cpu·s, pending·s, max pending).
    sums: Vec<(f64, f64, f64, u64)>,
    level: Level,
    at: Duration,
}

impl Default for Series {
    fn default() -> Self {
        Self::new(Duration::from_secs(60))
    }
}

impl Series {
    /// A series whose points start `width` wide.
    pub fn new(width: Duration) -> Self {
        Self {
            width: width.max(Duration::from_millis(1)),
            sums: Vec::new(),
            level: Level::default(),
            at: Duration::ZERO,
        }
    }

    /// The level changes to `level` at `now` (not before the last change).
    pub fn set(&mut self, now: Duration, level: Level) {
        self.advance(now);
        self.level = level;
        let point = self.point(now);
        point.3 = point.3.max(level.pending_jobs);
    }

    fn point(&mut self, at: Duration) -> &mut (f64, f64, f64, u64) {
        let mut index = (at.as_nanos() / self.width.as_nanos()) as usize;
        while index >= POINTS {
            self.widen();
            index = (at.as_nanos() / self.width.as_nanos()) as usize;
        }
        if self.sums.len() <= index {
            self.sums.resize(index + 1, (0.0, 0.0, 0.0, 0));
        }
        &mut self.sums[index]
    }

    /// Integrates the current level from the last change to `now`.
    fn advance(&mut self, now: Duration) {
        while self.at < now {
            let index = (self.at.as_nanos() / self.width.as_nanos()) as u32;
            let end = (self.width * (index + 1)).min(now);
            let span = (end - self.at).as_secs_f64();
            let level = self.level;
            let at = self.at;
            let point = self.point(at);
            point.0 += level.gpu_share * span;
            point.1 += level.cpu_share * span;
            point.2 += level.pending_jobs as f64 * span;
            point.3 = point.3.max(level.pending_jobs);
            self.at = end;
        }
    }

    /// Merges neighbouring points: each covers twice as long.
    fn widen(&mut self) {
        self.width *= 2;
        self.sums = self
            .sums
            .chunks(2)
            .map(|pair| {
                pair.iter().fold((0.0, 0.0, 0.0, 0), |a, b| {
                    (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3.max(b.3))
                })
            })
            .collect();
    }

    /// The points up to `end`.
    pub fn points(&mut self, end: Duration) -> Vec<Point> {
        self.advance(end);
        let width = self.width;
        self.sums
            .iter()
            .enumerate()
            .map(|(i, &(gpu, cpu, pending, max))| {
                let start = width * i as u32;
                let span = (start + width).min(end).saturating_sub(start).as_secs_f64();
                let mean = |sum: f64| if span > 0.0 { sum / span } else { 0.0 };
                Point {
                    start: round(start.as_secs_f64()),
                    gpu_share: mean(gpu).clamp(0.0, 1.0),
                    cpu_share: mean(cpu).clamp(0.0, 1.0),
                    pending_jobs: round(mean(pending)),
                    max_pending_jobs: max,
                }
            })
            .map(|mut p| {
                p.gpu_share = (p.gpu_share * 10_000.0).round() / 10_000.0;
                p.cpu_share = (p.cpu_share * 10_000.0).round() / 10_000.0;
                p
            })
            .collect()
    }

    /// How wide each point is now.
    pub fn width(&self) -> Duration {
        self.width
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_within_one_percent() {
        let mut h = Histogram::default();
        for s in 1..=1000 {
            h.record(Duration::from_secs(s));
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert!((s.mean - 500.5).abs() < 1e-6, "{s:?}");
        for (got, want) in [(s.p50, 500.0), (s.p95, 950.0), (s.p99, 990.0)] {
            assert!((got - want).abs() <= want * 0.01, "{got} vs {want}");
        }
        assert_eq!(Histogram::default().summary(), Percentiles::default());
        let mut zero = Histogram::default();
        zero.record(Duration::ZERO);
        assert_eq!(zero.quantile(0.99), 0.0);
    }

    #[test]
    fn a_series_integrates_levels_and_widens_to_stay_bounded() {
        let mut series = Series::new(Duration::from_secs(10));
        let half = Level {
            gpu_share: 0.5,
            cpu_share: 0.25,
            pending_jobs: 4,
        };
        series.set(Duration::from_secs(5), half);
        let points = series.points(Duration::from_secs(20));
        assert_eq!(points.len(), 2);
        assert_eq!(points[0].gpu_share, 0.25, "half of the first 10 s at 0.5");
        assert_eq!(points[1].gpu_share, 0.5);
        assert_eq!(points[0].pending_jobs, 2.0);
        assert_eq!(points[0].max_pending_jobs, 4);
        // A thousand times longer: still at most POINTS points.
        series.set(
            Duration::from_secs(10 * POINTS as u64 * 1000),
            Level::default(),
        );
        let points = series.points(Duration::from_secs(10 * POINTS as u64 * 1000));
        assert!(points.len() <= POINTS, "{}", points.len());
        assert!(series.width() >= Duration::from_secs(10_000));
        assert!((points[0].gpu_share - 0.5).abs() < 0.01, "{:?}", points[0]);
    }
}
