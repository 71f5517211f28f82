//! A component's circuit breaker: a component that keeps failing (traps,
//! exhausted bounds, invalid answers) is not called for a while.
//!
//! Closed, it counts failures; `failures` of them within `window` open it.
//! Open, every call is refused without running the component (the caller
//! answers per the failure policy). Once `cool_down` has passed, one call
//! is let through as a trial (half-open): if it succeeds the breaker
//! closes and forgets the failures, if it fails it opens again for another
//! cool-down. Calls that arrive while the trial runs are refused.
//!
//! Time is passed in, so that the states are tested without waiting.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use wasched::config::BreakerSettings;

/// What the breaker lets a call do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Call the component.
    Call,
    /// Call it as the half-open trial.
    Trial,
    /// Do not call it: the breaker is open (or a trial is running).
    Refused,
}

/// A change of state a call's outcome made, for the caller to report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The breaker opened (from closed, or again after a failed trial).
    Opened,
    /// A trial succeeded: the breaker closed.
    Closed,
}

#[derive(Debug)]
enum State {
    Closed { failures: VecDeque<Instant> },
    Open { until: Instant },
    HalfOpen,
}

/// One component's breaker (shared by all its instances).
#[derive(Debug)]
pub struct Breaker {
    settings: BreakerSettings,
    state: Mutex<State>,
}

impl Breaker {
    /// A closed breaker.
    pub fn new(settings: BreakerSettings) -> Breaker {
        Breaker {
            settings,
            state: Mutex::new(State::Closed {
                failures: VecDeque::new(),
            }),
        }
    }

    /// Its settings.
    pub fn settings(&self) -> BreakerSettings {
        self.settings
    }

    /// Whether a call at `now` may run the component.
    pub fn admit(&self, now: Instant) -> Admission {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match &*state {
            State::Closed { .. } => Admission::Call,
            State::Open { until } if now >= *until => {
                *state = State::HalfOpen;
                Admission::Trial
            }
            State::Open { .. } | State::HalfOpen => Admission::Refused,
        }
    }

    /// Records the outcome of a call `admit` let through.
    pub fn record(&self, admission: Admission, failed: bool, now: Instant) -> Option<Transition> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let open = State::Open {
            until: now + self.settings.cool_down,
        };
        match (admission, &mut *state) {
            (Admission::Trial, State::HalfOpen) if failed => {
                *state = open;
                Some(Transition::Opened)
            }
            (Admission::Trial, State::HalfOpen) => {
                *state = State::Closed {
                    failures: VecDeque::new(),
                };
                Some(Transition::Closed)
            }
            (Admission::Call, State::Closed { failures }) if failed => {
                if self.settings.failures == 0 {
                    return None;
                }
                while failures
                    .front()
                    .is_some_and(|&at| now.duration_since(at) >= self.settings.window)
                {
                    failures.pop_front();
                }
                failures.push_back(now);
                if failures.len() >= self.settings.failures as usize {
                    *state = open;
                    return Some(Transition::Opened);
                }
                None
            }
            _ => None,
        }
    }

    /// A call at `now`: an [`Attempt`] to run the component, or the reason
    /// it may not ([`Breaker::refusal`]).
    pub fn attempt(&self, now: Instant) -> Result<Attempt<'_>, String> {
        match self.admit(now) {
            Admission::Refused => Err(self.refusal(now)),
            admission => Ok(Attempt {
                breaker: self,
                admission,
                done: false,
            }),
        }
    }

    /// A trial that ended without a verdict on the component (the request
    /// was wrong): the next call is the trial.
    fn abandon(&self, admission: Admission, now: Instant) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if admission == Admission::Trial && matches!(*state, State::HalfOpen) {
            *state = State::Open { until: now };
        }
    }

    /// What a refused call says: why, and until when.
    pub fn refusal(&self, now: Instant) -> String {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let BreakerSettings {
            failures, window, ..
        } = self.settings;
        let left = match &*state {
            State::Open { until } => until.saturating_duration_since(now),
            _ => Duration::ZERO,
        };
        format!(
            "circuit breaker open after {failures} failures within {}; not called for another {}",
            seconds(window),
            seconds(left)
        )
    }
}

/// A call the breaker let through. Its outcome is recorded once: by
/// [`Attempt::finish`], or as a failure if the call unwinds (a trial that
/// panicked must not leave the breaker half-open for ever).
#[derive(Debug)]
pub struct Attempt<'a> {
    breaker: &'a Breaker,
    admission: Admission,
    done: bool,
}

impl Attempt<'_> {
    /// Records the call's outcome: `Some(failed)`, or `None` when the call
    /// says nothing about the component (a request the caller got wrong).
    pub fn finish(mut self, failed: Option<bool>, now: Instant) -> Option<Transition> {
        self.done = true;
        match failed {
            Some(failed) => self.breaker.record(self.admission, failed, now),
            None => {
                self.breaker.abandon(self.admission, now);
                None
            }
        }
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.breaker.record(self.admission, true, Instant::now());
        }
    }
}

/// `30s` (whole seconds, rounded up), `300ms` below a second.
fn seconds(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        return format!("{}ms", duration.as_millis());
    }
    format!("{}s", duration.as_millis().div_ceil(1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn breaker() -> Breaker {
        Breaker::new(BreakerSettings {
            failures: 3,
            window: Duration::from_secs(10),
            cool_down: Duration::from_secs(30),
        })
    }

    fn fail(b: &Breaker, now: Instant) -> Option<Transition> {
        let admission = b.admit(now);
        assert_eq!(admission, Admission::Call);
        b.record(admission, true, now)
    }

    #[test]
    fn failures_within_the_window_open_it_and_older_ones_do_not_count() {
        let b = breaker();
        let t0 = Instant::now();
        assert_eq!(fail(&b, t0), None);
        assert_eq!(fail(&b, t0 + Duration::from_secs(5)), None);
        // The first has left the window.
        assert_eq!(fail(&b, t0 + Duration::from_secs(11)), None);
        assert_eq!(
            fail(&b, t0 + Duration::from_secs(12)),
            Some(Transition::Opened)
        );
        let open = t0 + Duration::from_secs(13);
        assert_eq!(b.admit(open), Admission::Refused);
        assert_eq!(
            b.refusal(open),
            "circuit breaker open after 3 failures within 10s; not called for another 29s"
        );
    }

    #[test]
    fn after_the_cool_down_one_trial_closes_or_reopens_it() {
        let b = breaker();
        let t0 = Instant::now();
        for _ in 0..3 {
            fail(&b, t0);
        }
        let later = t0 + Duration::from_secs(30);
        assert_eq!(b.admit(later), Admission::Trial);
        // Only one trial at a time.
        assert_eq!(b.admit(later), Admission::Refused);
        assert_eq!(
            b.record(Admission::Trial, true, later),
            Some(Transition::Opened)
        );
        assert_eq!(b.admit(later + Duration::from_secs(29)), Admission::Refused);
        let again = later + Duration::from_secs(30);
        assert_eq!(b.admit(again), Admission::Trial);
        assert_eq!(
            b.record(Admission::Trial, false, again),
            Some(Transition::Closed)
        );
        // Closed, with the failures forgotten.
        assert_eq!(fail(&b, again), None);
        assert_eq!(b.admit(again), Admission::Call);
    }

    #[test]
    fn a_trial_that_unwinds_counts_as_failed_and_one_without_a_verdict_is_retried() {
        let b = breaker();
        let t0 = Instant::now();
        for _ in 0..3 {
            fail(&b, t0);
        }
        let later = t0 + Duration::from_secs(30);
        let attempt = b.attempt(later).unwrap();
        assert_eq!(attempt.finish(None, later), None);
        let attempt = b.attempt(later).unwrap();
        drop(attempt); // as when the call panics: a failure, now
        assert!(b.attempt(Instant::now() + Duration::from_secs(1)).is_err());
    }

    #[test]
    fn successes_while_closed_change_nothing_and_zero_failures_never_opens() {
        let b = breaker();
        let now = Instant::now();
        assert_eq!(b.record(Admission::Call, false, now), None);
        let never = Breaker::new(BreakerSettings {
            failures: 0,
            ..BreakerSettings::default()
        });
        for _ in 0..100 {
            assert_eq!(fail(&never, now), None);
        }
    }
}
