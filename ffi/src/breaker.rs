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

/// How the breaker lets a call run the component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Admission {
    /// As any call: the breaker is closed.
    Call,
    /// As the half-open trial.
    Trial,
}

/// A change of state a call's outcome made, for the caller to report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The breaker opened (it was closed).
    Opened,
    /// A trial failed: the breaker is open for another cool-down.
    Reopened,
    /// A trial succeeded: the breaker closed.
    Closed,
}

impl Transition {
    /// Its name in a response (`breaker`).
    pub fn label(self) -> &'static str {
        match self {
            Self::Opened => "opened",
            Self::Reopened => "reopened",
            Self::Closed => "closed",
        }
    }
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

    /// Whether a call at `now` may run the component, and if not, why.
    fn admit(&self, now: Instant) -> Result<Admission, String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match &*state {
            State::Closed { .. } => Ok(Admission::Call),
            State::Open { until } if now >= *until => {
                *state = State::HalfOpen;
                Ok(Admission::Trial)
            }
            State::Open { until } => Err(self.refusal(until.saturating_duration_since(now))),
            State::HalfOpen => Err(self.refusal(Duration::ZERO)),
        }
    }

    /// Open from `now` for the cool-down.
    fn open(&self, now: Instant) -> State {
        State::Open {
            until: now.checked_add(self.settings.cool_down).unwrap_or(now),
        }
    }

    /// Records the outcome of a call `admit` let through.
    fn record(&self, admission: Admission, failed: bool, now: Instant) -> Option<Transition> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match (admission, &mut *state) {
            (Admission::Trial, State::HalfOpen) if failed => {
                *state = self.open(now);
                Some(Transition::Reopened)
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
                    *state = self.open(now);
                    return Some(Transition::Opened);
                }
                None
            }
            _ => None,
        }
    }

    /// A call at `now`: an [`Attempt`] to run the component, or why it may
    /// not ([`Breaker::refusal`]).
    pub fn attempt(&self, now: Instant) -> Result<Attempt<'_>, String> {
        let admission = self.admit(now)?;
        Ok(Attempt {
            breaker: self,
            admission,
            done: false,
        })
    }

    /// A trial that ended without a verdict on the component (the request
    /// was wrong): the next call is the trial.
    fn abandon(&self, admission: Admission, now: Instant) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if admission == Admission::Trial && matches!(*state, State::HalfOpen) {
            *state = State::Open { until: now };
        }
    }

    /// What a refused call says: why, and for how much longer.
    fn refusal(&self, left: Duration) -> String {
        let BreakerSettings {
            failures, window, ..
        } = self.settings;
        match left.is_zero() {
            true => format!(
                "circuit breaker open after {failures} failures within {}; a trial call is running",
                seconds(window)
            ),
            false => format!(
                "circuit breaker open after {failures} failures within {}; not called for another {}",
                seconds(window),
                seconds(left)
            ),
        }
    }
}

/// A call the breaker let through. Its outcome is recorded once: by
/// [`Attempt::finish`], or, if the call unwinds (a panic in the host, not
/// the component's failure), as a call without a verdict, so that a trial
/// that panicked does not leave the breaker half-open for ever.
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
            self.breaker.abandon(self.admission, Instant::now());
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
        assert_eq!(admission, Ok(Admission::Call));
        b.record(Admission::Call, true, now)
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
        assert_eq!(
            b.admit(t0 + Duration::from_secs(13)),
            Err(
                "circuit breaker open after 3 failures within 10s; not called for another 29s"
                    .into()
            )
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
        assert_eq!(b.admit(later), Ok(Admission::Trial));
        // Only one trial at a time.
        assert_eq!(
            b.admit(later),
            Err("circuit breaker open after 3 failures within 10s; a trial call is running".into())
        );
        assert_eq!(
            b.record(Admission::Trial, true, later),
            Some(Transition::Reopened)
        );
        assert!(b.admit(later + Duration::from_secs(29)).is_err());
        let again = later + Duration::from_secs(30);
        assert_eq!(b.admit(again), Ok(Admission::Trial));
        assert_eq!(
            b.record(Admission::Trial, false, again),
            Some(Transition::Closed)
        );
        // Closed, with the failures forgotten.
        assert_eq!(fail(&b, again), None);
        assert_eq!(b.admit(again), Ok(Admission::Call));
    }

    #[test]
    fn a_trial_without_a_verdict_or_that_unwinds_leaves_the_next_call_the_trial() {
        let b = breaker();
        let t0 = Instant::now();
        for _ in 0..3 {
            fail(&b, t0);
        }
        let later = t0 + Duration::from_secs(30);
        let attempt = b.attempt(later).unwrap();
        assert_eq!(attempt.finish(None, later), None);
        let attempt = b.attempt(later).unwrap();
        drop(attempt); // as when the call panics in the host
        let attempt = b.attempt(Instant::now()).unwrap();
        assert_eq!(
            attempt.finish(Some(false), Instant::now()),
            Some(Transition::Closed)
        );
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

    #[test]
    fn a_cool_down_past_the_end_of_time_does_not_panic() {
        let b = Breaker::new(BreakerSettings {
            failures: 1,
            window: Duration::from_secs(1),
            cool_down: Duration::MAX,
        });
        assert_eq!(fail(&b, Instant::now()), Some(Transition::Opened));
    }
}
