//! kube-scheduler v1.37's scheduling queue in virtual time, one entry per
//! queued entity (a PodGroup, a CompositePodGroup tree, a lone pod): the
//! active queue, the backoff queue and the unschedulable entities
//! (`pkg/scheduler/backend/queue`).
//!
//! - A new entity goes to the active queue. The active queue pops in
//!   `PrioritySort` order: priority descending, then the time of its last
//!   failed attempt (or of its arrival), then its key.
//! - A pod whose attempt fails joins the unschedulable pods; a cluster
//!   event that may help ([`Queue::on_event`]) moves it to the backoff
//!   queue while its backoff lasts, else to the active queue.
//! - A PodGroup whose attempt fails never waits for an event: it goes to
//!   the backoff queue (its error heap, which the scheduler never pops
//!   early) or, with its backoff over, to the active queue — it is retried
//!   whenever its backoff ends (`AddAttemptedPodGroupIfNeeded`).
//! - Backoff: `podInitialBackoffSeconds` doubled per unschedulable attempt
//!   after the first, at most `podMaxBackoffSeconds`; a PodGroup's maximum
//!   is multiplied by the square root of its pods still queued. An expiry
//!   falls in a 1-second window (`Truncate(1s)`) and the entity is released
//!   once the clock is past that window, by the flush that runs on every
//!   whole second.
//! - `SchedulerPopFromBackoffQ` (on by default): when the active queue is
//!   empty, the scheduler pops a pod from the backoff queue, backoff or
//!   not (never a PodGroup from the error heap). Off, expiries are not
//!   aligned to windows.
//! - Every 30 s, pods whose last attempt is more than 5 min old
//!   (`podMaxInUnschedulablePodsDuration`) are moved as if an event had
//!   come.
//!
//! Time is a [`Duration`] from the replay's start.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::requeue::Waiting;
use crate::config::QueueBackoff;
use crate::filters::Rejectors;

/// How often the unschedulable entities are checked for the flush.
pub const FLUSH_PERIOD: Duration = Duration::from_secs(30);
/// How often the backoff queue is emptied into the active queue, and the
/// width of the windows backoff expiries are aligned to.
pub const BACKOFF_WINDOW: Duration = Duration::from_secs(1);

/// How the queue behaves: the KubeSchedulerConfiguration's queue fields
/// and the feature gate that changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueConfig {
    /// `podInitialBackoffSeconds` and `podMaxBackoffSeconds`.
    pub backoff: QueueBackoff,
    /// `podMaxInUnschedulablePodsDuration` (5 min).
    pub max_in_unschedulable: Duration,
    /// The `SchedulerPopFromBackoffQ` feature gate (on by default).
    pub pop_from_backoff: bool,
}

impl Default for QueueConfig {
    fn default() -> Self {
        Self {
            backoff: QueueBackoff::default(),
            max_in_unschedulable: Duration::from_secs(300),
            pop_from_backoff: true,
        }
    }
}

/// Where an entity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Active,
    /// In the backoff queue until it is released at this time.
    Backoff(Duration),
    /// In the backoff queue's error heap (PodGroups) until this time.
    ErrorBackoff(Duration),
    Unschedulable,
    /// Popped: its attempt is under way.
    InFlight,
}

#[derive(Debug, Clone)]
struct Entry {
    priority: i32,
    /// When it was last queued (the active queue's order), and when it
    /// became unschedulable (the flush's clock).
    timestamp: Duration,
    /// Failed attempts, for the backoff.
    failures: u32,
    /// Its pods, for a PodGroup's backoff.
    pods: u32,
    group: bool,
    place: Place,
    /// The plugins that rejected its last attempt (a pod's).
    rejectors: Rejectors,
}

/// The queue (see the module documentation).
#[derive(Debug, Default)]
pub struct Queue {
    config: QueueConfig,
    entries: BTreeMap<String, Entry>,
    /// (priority descending, timestamp, key).
    active: BTreeSet<(Reverse<i32>, Duration, String)>,
    /// (release, priority descending, timestamp, key).
    backoff: BTreeSet<(Duration, Reverse<i32>, Duration, String)>,
    /// The error heap: (release, key), never popped early.
    error_backoff: BTreeSet<(Duration, String)>,
    /// Unschedulable keys by the time they became so.
    unschedulable: BTreeSet<(Duration, String)>,
}

impl Queue {
    /// An empty queue.
    pub fn new(config: QueueConfig) -> Self {
        Self {
            config,
            ..Self::default()
        }
    }

    /// Entities queued (in any place, in flight included).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the active queue holds anything to pop now.
    pub fn has_active(&self) -> bool {
        !self.active.is_empty()
    }

    /// Entities in the unschedulable place.
    pub fn unschedulable_len(&self) -> usize {
        self.unschedulable.len()
    }

    /// Whether `key` is queued.
    pub fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// An entity arrives (a pod created, a PodGroup's first pending pod);
    /// one already queued only has its size and priority updated.
    pub fn add(&mut self, key: &str, priority: i32, pods: u32, group: bool, now: Duration) {
        if let Some(entry) = self.entries.get_mut(key) {
            entry.pods = pods;
            entry.priority = priority;
            return;
        }
        let entry = Entry {
            priority,
            timestamp: now,
            failures: 0,
            pods,
            group,
            place: Place::Active,
            rejectors: Rejectors::default(),
        };
        self.active
            .insert((Reverse(priority), now, key.to_string()));
        self.entries.insert(key.to_string(), entry);
    }

    /// The entity is gone, or was scheduled with nothing left pending.
    pub fn remove(&mut self, key: &str) {
        if let Some(entry) = self.entries.remove(key) {
            self.unplace(key, &entry);
        }
    }

    fn unplace(&mut self, key: &str, entry: &Entry) {
        match entry.place {
            Place::Active => {
                self.active
                    .remove(&(Reverse(entry.priority), entry.timestamp, key.to_string()));
            }
            Place::Backoff(release) => {
                self.backoff.remove(&(
                    release,
                    Reverse(entry.priority),
                    entry.timestamp,
                    key.to_string(),
                ));
            }
            Place::ErrorBackoff(release) => {
                self.error_backoff.remove(&(release, key.to_string()));
            }
            Place::Unschedulable => {
                self.unschedulable
                    .remove(&(entry.timestamp, key.to_string()));
            }
            Place::InFlight => {}
        }
    }

    /// Pops every entity of the active queue, in order; if it is empty and
    /// `SchedulerPopFromBackoffQ` is on, every pod of the backoff queue in
    /// its order. They are in flight until [`Queue::failed`],
    /// [`Queue::admitted_with_leftovers`] or [`Queue::remove`].
    pub fn pop_all(&mut self) -> Vec<String> {
        let popped: Vec<String> = if !self.active.is_empty() {
            std::mem::take(&mut self.active)
                .into_iter()
                .map(|(.., key)| key)
                .collect()
        } else if self.config.pop_from_backoff {
            std::mem::take(&mut self.backoff)
                .into_iter()
                .map(|(.., key)| key)
                .collect()
        } else {
            Vec::new()
        };
        for key in &popped {
            if let Some(entry) = self.entries.get_mut(key) {
                entry.place = Place::InFlight;
            }
        }
        popped
    }

    /// An attempt of `key` at `now` did not schedule it; `pods` of it are
    /// still queued. A pod joins the unschedulable pods until an event
    /// that may help one of its `rejectors` comes; a PodGroup, or a pod no
    /// plugin rejected (a plugin failed: kube-scheduler's
    /// `determineSchedulingHintForInFlightPod` retries it), goes back to
    /// the backoff or active queue at once.
    pub fn failed(&mut self, key: &str, pods: u32, now: Duration, rejectors: Rejectors) {
        let Some(entry) = self.entries.get(key).cloned() else {
            return;
        };
        self.unplace(key, &entry);
        let entry = self.entries.get_mut(key).expect("present");
        entry.failures += 1;
        entry.timestamp = now;
        entry.pods = pods;
        let retry = entry.group || rejectors.is_empty();
        entry.rejectors = rejectors;
        if retry {
            self.requeue(key, now);
        } else {
            entry.place = Place::Unschedulable;
            self.unschedulable.insert((now, key.to_string()));
        }
    }

    /// A PodGroup's attempt bound some pods and left `pods` pending: they
    /// go back to the active queue at once, keeping the group's place
    /// (its timestamp), its backoff counts reset.
    pub fn admitted_with_leftovers(&mut self, key: &str, pods: u32) {
        let Some(entry) = self.entries.get(key).cloned() else {
            return;
        };
        self.unplace(key, &entry);
        let entry = self.entries.get_mut(key).expect("present");
        entry.failures = 0;
        entry.pods = pods;
        entry.place = Place::Active;
        self.active
            .insert((Reverse(entry.priority), entry.timestamp, key.to_string()));
    }

    /// A cluster event at `now`: every unschedulable entity `helps` says
    /// it may help moves to the backoff queue, or to the active queue if
    /// its backoff is over. Returns how many moved.
    pub fn on_event(&mut self, now: Duration, helps: impl Fn(&Waiting) -> bool) -> usize {
        let moving: Vec<String> = self
            .unschedulable
            .iter()
            .filter(|(_, key)| {
                let entry = &self.entries[key];
                helps(&Waiting {
                    rejectors: &entry.rejectors,
                    group: None,
                    priority: entry.priority,
                })
            })
            .map(|(_, key)| key.clone())
            .collect();
        for key in &moving {
            self.requeue(key, now);
        }
        moving.len()
    }

    /// Moves an entity to the backoff queue if its backoff lasts past
    /// `now`, else to the active queue.
    fn requeue(&mut self, key: &str, now: Duration) {
        let Some(entry) = self.entries.get(key).cloned() else {
            return;
        };
        self.unplace(key, &entry);
        let release = self.release(&entry);
        let entry = self.entries.get_mut(key).expect("present");
        if release > now {
            if entry.group {
                entry.place = Place::ErrorBackoff(release);
                self.error_backoff.insert((release, key.to_string()));
            } else {
                entry.place = Place::Backoff(release);
                self.backoff.insert((
                    release,
                    Reverse(entry.priority),
                    entry.timestamp,
                    key.to_string(),
                ));
            }
        } else {
            entry.place = Place::Active;
            self.active
                .insert((Reverse(entry.priority), entry.timestamp, key.to_string()));
        }
    }

    /// The backoff of an entry: the initial backoff doubled per failure
    /// after the first, at most the maximum (for a PodGroup, the maximum
    /// times the square root of its pods).
    pub fn backoff_of(&self, failures: u32, pods: u32, group: bool) -> Duration {
        let QueueBackoff { initial, max } = self.config.backoff;
        let max = if group && pods > 1 {
            max.mul_f64(f64::from(pods).sqrt())
        } else {
            max
        };
        let doublings = failures.saturating_sub(1).min(32);
        initial.saturating_mul(1u32 << doublings.min(31)).min(max)
    }

    /// When an entry leaves the backoff queue: with
    /// `SchedulerPopFromBackoffQ`, once the clock is past the 1-second
    /// window its expiry falls in (`Truncate(1s)`, then one window on);
    /// without, at the first whole second of the flush at or after it.
    fn release(&self, entry: &Entry) -> Duration {
        let expiry = entry.timestamp + self.backoff_of(entry.failures, entry.pods, entry.group);
        if self.config.pop_from_backoff {
            align_down(expiry, BACKOFF_WINDOW) + BACKOFF_WINDOW
        } else {
            align_up(expiry, BACKOFF_WINDOW)
        }
    }

    /// The queue's timers at `now`: entities whose backoff is over move to
    /// the active queue (the flush on every whole second), and on a
    /// 30-second tick, pods whose last attempt is more than the maximum
    /// ago move as if an event had come.
    pub fn tick(&mut self, now: Duration) {
        let mut released: Vec<String> = self
            .backoff
            .iter()
            .take_while(|(release, ..)| *release <= now)
            .map(|(.., key)| key.clone())
            .collect();
        released.extend(
            self.error_backoff
                .iter()
                .take_while(|(release, _)| *release <= now)
                .map(|(_, key)| key.clone()),
        );
        for key in released {
            let entry = self.entries.get(&key).cloned().expect("present");
            self.unplace(&key, &entry);
            let entry = self.entries.get_mut(&key).expect("present");
            entry.place = Place::Active;
            self.active
                .insert((Reverse(entry.priority), entry.timestamp, key.clone()));
        }
        if now.as_millis().is_multiple_of(FLUSH_PERIOD.as_millis()) {
            let limit = self.config.max_in_unschedulable;
            let stale: Vec<String> = self
                .unschedulable
                .iter()
                .take_while(|(since, _)| now.saturating_sub(*since) > limit)
                .map(|(_, key)| key.clone())
                .collect();
            for key in stale {
                self.requeue(&key, now);
            }
        }
    }

    /// The next instant at or after `now` at which [`Queue::tick`] changes
    /// something (if nothing else happens before).
    pub fn next_timer(&self, now: Duration) -> Option<Duration> {
        let backoff = [
            self.backoff.first().map(|(release, ..)| *release),
            self.error_backoff.first().map(|(release, _)| *release),
        ]
        .into_iter()
        .flatten()
        .min();
        let flush = self.unschedulable.first().map(|(since, _)| {
            // The first 30-second tick strictly more than the maximum
            // after `since`.
            let due = *since + self.config.max_in_unschedulable + Duration::from_nanos(1);
            align_up(due.max(now), FLUSH_PERIOD)
        });
        let next = match (backoff, flush) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        next.map(|t| t.max(now))
    }
}

/// `t` rounded down to a multiple of `window`.
pub fn align_down(t: Duration, window: Duration) -> Duration {
    let w = window.as_nanos();
    Duration::from_nanos((t.as_nanos() / w * w) as u64)
}

/// `t` rounded up to a multiple of `window`.
pub fn align_up(t: Duration, window: Duration) -> Duration {
    let w = window.as_nanos();
    let n = t.as_nanos().div_ceil(w) * w;
    Duration::from_nanos(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    /// NodeResourcesFit rejected it.
    fn fit() -> Rejectors {
        let mut rejectors = Rejectors::default();
        rejectors.add_in_tree(crate::filters::InTree::NodeResourcesFit);
        rejectors
    }

    #[test]
    fn a_pod_no_plugin_rejected_is_retried_after_its_backoff_without_an_event() {
        let mut q = Queue::new(QueueConfig::default());
        q.add("p", 0, 1, false, Duration::ZERO);
        q.pop_all();
        q.failed("p", 1, Duration::from_millis(300), Rejectors::default());
        assert_eq!(q.unschedulable_len(), 0);
        // In the backoff queue; with nothing active it may be popped early.
        assert_eq!(q.next_timer(S), Some(2 * S));
        assert_eq!(q.pop_all(), ["p"]);
    }

    #[test]
    fn pops_in_priority_then_queued_time_then_key_order() {
        let mut q = Queue::new(QueueConfig::default());
        q.add("Pod a/low", 1, 1, false, Duration::ZERO);
        q.add("Pod a/b", 10, 1, false, 2 * S);
        q.add("Pod a/a", 10, 1, false, 2 * S);
        q.add("Pod a/first", 10, 1, false, S);
        assert_eq!(
            q.pop_all(),
            ["Pod a/first", "Pod a/a", "Pod a/b", "Pod a/low"]
        );
        assert!(q.pop_all().is_empty(), "all in flight");
    }

    #[test]
    fn backoff_doubles_to_the_maximum_scaled_for_groups() {
        let q = Queue::new(QueueConfig::default());
        let secs: Vec<u64> = (1..=6)
            .map(|f| q.backoff_of(f, 1, false).as_secs())
            .collect();
        assert_eq!(secs, [1, 2, 4, 8, 10, 10]);
        // A group of 16 pods: at most 10 s × 4.
        assert_eq!(q.backoff_of(10, 16, true), 40 * S);
        assert_eq!(q.backoff_of(10, 16, false), 10 * S);
    }

    #[test]
    fn an_event_moves_an_unschedulable_pod_through_backoff() {
        let mut q = Queue::new(QueueConfig::default());
        q.add("p", 0, 1, false, Duration::ZERO);
        q.pop_all();
        q.failed("p", 1, Duration::from_millis(300), fit());
        assert_eq!(q.unschedulable_len(), 1);
        // Nothing helps: it waits for the flush.
        assert_eq!(q.on_event(Duration::from_millis(500), |_| false), 0);
        assert_eq!(q.next_timer(S), Some(Duration::from_secs(330)));
        // An event: 1 s from 0.3 s is in the window [1, 2): released at 2.
        assert_eq!(
            q.on_event(Duration::from_millis(500), |w| w.priority == 0),
            1
        );
        assert_eq!(q.next_timer(S), Some(2 * S));
        q.tick(2 * S);
        assert_eq!(q.pop_all(), ["p"]);
    }

    #[test]
    fn a_rejected_group_backs_off_without_waiting_for_an_event() {
        let mut q = Queue::new(QueueConfig::default());
        q.add("g", 0, 4, true, Duration::ZERO);
        q.pop_all();
        q.failed("g", 4, Duration::from_millis(300), fit());
        assert_eq!(q.unschedulable_len(), 0);
        // Never popped early, even with nothing active.
        assert!(q.pop_all().is_empty());
        assert_eq!(q.next_timer(S), Some(2 * S));
        q.tick(2 * S);
        assert_eq!(q.pop_all(), ["g"]);
        // Admitted with pods left: back at once, counts reset.
        q.admitted_with_leftovers("g", 2);
        assert_eq!(q.pop_all(), ["g"]);
    }

    #[test]
    fn pop_from_backoff_takes_backing_off_pods_when_nothing_is_active() {
        let mut q = Queue::new(QueueConfig::default());
        q.add("p", 0, 1, false, Duration::ZERO);
        q.pop_all();
        q.failed("p", 1, Duration::ZERO, fit());
        q.on_event(Duration::ZERO, |_| true);
        assert_eq!(q.pop_all(), ["p"]);
        // Off, it waits for its release (not aligned: 1 s).
        let mut q = Queue::new(QueueConfig {
            pop_from_backoff: false,
            ..QueueConfig::default()
        });
        q.add("p", 0, 1, false, Duration::ZERO);
        q.pop_all();
        q.failed("p", 1, Duration::ZERO, fit());
        q.on_event(Duration::ZERO, |_| true);
        assert!(q.pop_all().is_empty());
        assert_eq!(q.next_timer(Duration::ZERO), Some(S));
    }

    #[test]
    fn the_flush_moves_entities_unschedulable_for_five_minutes_on_a_30s_tick() {
        let mut q = Queue::new(QueueConfig::default());
        q.add("p", 0, 1, false, Duration::ZERO);
        q.pop_all();
        q.failed("p", 1, Duration::from_secs(10), fit());
        // Strictly more than 5 min after 10 s, on a 30 s tick: 330 s.
        assert_eq!(
            q.next_timer(Duration::from_secs(11)),
            Some(Duration::from_secs(330))
        );
        q.tick(Duration::from_secs(300));
        assert_eq!(q.unschedulable_len(), 1);
        q.tick(Duration::from_secs(330));
        assert_eq!(q.pop_all(), ["p"]);
    }
}
