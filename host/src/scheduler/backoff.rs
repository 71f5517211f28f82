//! When an entity (a PodGroup, a CompositePodGroup tree or a lone pod)
//! that did not fit is tried again: kube-scheduler's unschedulable queue.
//!
//! A new entity is tried at once. One that failed waits for two things: a
//! change that could help (a helpful-change count moved past the value it
//! failed at) and the end of its backoff ([`QueueBackoff`]: 1 s, doubling
//! per failed attempt, at most 10 s by default — kube-scheduler's
//! `podInitialBackoffSeconds` and `podMaxBackoffSeconds`). Without any
//! helpful change it is still retried after 5 minutes
//! (`podMaxInUnschedulablePodsDuration`), never sooner: an idle cluster
//! costs no attempts.
//!
//! Time is any clock with durations: [`Instant`] on a live cluster, or a
//! [`Duration`] since a start for a clock of one's own.

use std::collections::BTreeMap;
use std::ops::Add;
use std::time::{Duration, Instant};

pub use crate::config::QueueBackoff;

/// An unschedulable entity is retried after this even if nothing changed.
pub const FLUSH: Duration = Duration::from_secs(300);

/// One failed entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Failed<T> {
    attempts: u32,
    at: T,
    /// The helpful-change count its last attempt saw.
    helpful: u64,
}

impl<T: Copy + Ord + Add<Duration, Output = T>> Failed<T> {
    fn backoff(&self, policy: &QueueBackoff) -> Duration {
        let doublings = self.attempts.saturating_sub(1).min(16);
        policy
            .initial
            .saturating_mul(1u32 << doublings)
            .min(policy.max)
    }

    /// When it may be tried, given the helpful-change count.
    fn due(&self, helpful: u64, policy: &QueueBackoff) -> T {
        let flush = self.at + FLUSH;
        if helpful > self.helpful {
            // Never past the flush (nor, for a huge backoff, past the
            // clock's range).
            self.at + self.backoff(policy).min(FLUSH)
        } else {
            flush
        }
    }
}

/// The unschedulable entities, by key (`PodGroup ns/name`, ...).
#[derive(Debug)]
pub struct Backoff<T = Instant> {
    failed: BTreeMap<String, Failed<T>>,
    policy: QueueBackoff,
}

impl<T> Default for Backoff<T> {
    fn default() -> Self {
        Self::new(QueueBackoff::default())
    }
}

impl<T> Backoff<T> {
    /// An empty queue with this backoff.
    pub fn new(policy: QueueBackoff) -> Self {
        Self {
            failed: BTreeMap::new(),
            policy,
        }
    }
}

impl<T: Copy + Ord + Add<Duration, Output = T>> Backoff<T> {
    /// Whether `entity` may be tried at `now`.
    pub fn admits(&self, entity: &str, helpful: u64, now: T) -> bool {
        self.failed
            .get(entity)
            .is_none_or(|failed| failed.due(helpful, &self.policy) <= now)
    }

    /// `entity` did not fit in an attempt at `now` that saw `helpful`.
    pub fn failed(&mut self, entity: &str, helpful: u64, now: T) {
        let failed = self.failed.entry(entity.to_string()).or_insert(Failed {
            attempts: 0,
            at: now,
            helpful,
        });
        failed.attempts += 1;
        failed.at = now;
        failed.helpful = helpful;
    }

    /// `entity` was scheduled, or is gone.
    pub fn forget(&mut self, entity: &str) {
        self.failed.remove(entity);
    }

    /// Keeps only the entities `live` says still exist.
    pub fn retain(&mut self, live: impl Fn(&str) -> bool) {
        self.failed.retain(|entity, _| live(entity));
    }

    /// Entities waiting (the unschedulable queue's depth).
    pub fn len(&self) -> usize {
        self.failed.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.failed.is_empty()
    }

    /// The earliest time an entity becomes due, given `helpful`.
    pub fn next_due(&self, helpful: u64) -> Option<T> {
        self.failed
            .values()
            .map(|f| f.due(helpful, &self.policy))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_entity_waits_for_a_helpful_change_and_its_backoff() {
        let mut backoff = Backoff::default();
        let t0 = Instant::now();
        let QueueBackoff { initial, max } = QueueBackoff::default();
        assert!(backoff.admits("Pod a/x", 0, t0), "new entities go at once");
        backoff.failed("Pod a/x", 5, t0);
        // Nothing helpful: not before the flush, however long the backoff.
        assert!(!backoff.admits("Pod a/x", 5, t0 + Duration::from_secs(60)));
        assert_eq!(backoff.next_due(5), Some(t0 + FLUSH));
        assert!(backoff.admits("Pod a/x", 5, t0 + FLUSH));
        // A helpful change: after the 1 s backoff.
        assert!(!backoff.admits("Pod a/x", 6, t0 + Duration::from_millis(999)));
        assert!(backoff.admits("Pod a/x", 6, t0 + initial));
        // Backoff doubles per failure, up to 10 s.
        for _ in 0..6 {
            backoff.failed("Pod a/x", 6, t0);
        }
        assert_eq!(backoff.next_due(7), Some(t0 + max));
        backoff.forget("Pod a/x");
        assert!(backoff.is_empty());
        assert!(backoff.admits("Pod a/x", 0, t0));
    }

    #[test]
    fn backoff_doubles_from_one_second() {
        let mut backoff = Backoff::default();
        let t0 = Instant::now();
        let mut seen = Vec::new();
        for _ in 0..6 {
            backoff.failed("g", 0, t0);
            seen.push(backoff.next_due(1).unwrap() - t0);
        }
        let secs: Vec<u64> = seen.iter().map(Duration::as_secs).collect();
        assert_eq!(secs, [1, 2, 4, 8, 10, 10]);
    }

    #[test]
    fn the_configured_backoff_is_honoured_on_a_virtual_clock() {
        let policy = QueueBackoff {
            initial: Duration::from_secs(3),
            max: Duration::from_secs(20),
        };
        let mut backoff: Backoff<Duration> = Backoff::new(policy);
        let mut seen = Vec::new();
        for _ in 0..5 {
            backoff.failed("g", 0, Duration::ZERO);
            seen.push(backoff.next_due(1).unwrap().as_secs());
        }
        assert_eq!(seen, [3, 6, 12, 20, 20]);
        // However large the configured backoff, doubling and adding it
        // never overflow (on a live clock either).
        let huge = Duration::from_secs(u64::MAX / 4);
        let mut backoff: Backoff = Backoff::new(QueueBackoff {
            initial: huge,
            max: huge,
        });
        let t0 = Instant::now();
        for _ in 0..20 {
            backoff.failed("g", 0, t0);
        }
        assert_eq!(
            backoff.next_due(1),
            Some(t0 + FLUSH),
            "the flush comes first"
        );
    }
}
