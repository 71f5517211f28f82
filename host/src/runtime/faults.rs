//! Faults tests inject into the next host call any plugin makes, to prove
//! what the callers of the runtime promise: that a panic in the middle of
//! a call leaves no state behind ([`inject_panic`]), and that a call in
//! flight holds nothing else back ([`hold_next_host_call`]). Never used in
//! production; each is armed once and strikes once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Set while a fault waits for the next host call.
static ARMED: AtomicBool = AtomicBool::new(false);

/// Which fault is armed, and where a held call is.
static STATE: Mutex<Fault> = Mutex::new(Fault::None);

/// Signalled when a call is held and when it is released.
static CHANGED: Condvar = Condvar::new();

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    Panic,
    Hold,
    Held,
}

fn state() -> std::sync::MutexGuard<'static, Fault> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Arms `fault` for the next host call; nothing while a call is held.
fn arm(fault: Fault) {
    let mut state = state();
    if *state != Fault::Held {
        *state = fault;
        ARMED.store(true, Ordering::SeqCst);
    }
}

/// Test hook: the next host call any plugin makes panics inside the host
/// (as a latent bug in the host would), once. Tests of the C ABI use it to
/// prove that a panic in the middle of a call leaves no state behind.
#[doc(hidden)]
pub fn inject_panic() {
    arm(Fault::Panic);
}

/// Test hook: the next host call any plugin makes stops inside the host,
/// in the middle of the guest's run, until [`release_held_call`]. Tests
/// use it to prove that updates of a view and other calls go on while a
/// call is in flight.
#[doc(hidden)]
pub fn hold_next_host_call() {
    arm(Fault::Hold);
}

/// Waits up to `timeout` for a call to be held; whether one is.
#[doc(hidden)]
pub fn wait_until_held(timeout: Duration) -> bool {
    let (state, _) = CHANGED
        .wait_timeout_while(state(), timeout, |f| *f != Fault::Held)
        .unwrap_or_else(|e| e.into_inner());
    *state == Fault::Held
}

/// Lets the held call go on, and disarms a fault no call has met yet: a
/// test calls it on every exit, failed or not, so that no later call is
/// held or panics.
#[doc(hidden)]
pub fn release_held_call() {
    let mut state = state();
    ARMED.store(false, Ordering::SeqCst);
    *state = Fault::None;
    CHANGED.notify_all();
}

/// Called at the start of every host call: strikes with the armed fault.
pub(super) fn strike() {
    if !ARMED.load(Ordering::Relaxed) || !ARMED.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut state = state();
    match std::mem::replace(&mut *state, Fault::None) {
        Fault::Panic => {
            drop(state);
            panic!("injected fault in a host call");
        }
        Fault::Hold => {
            *state = Fault::Held;
            CHANGED.notify_all();
            let _released = CHANGED
                .wait_while(state, |f| *f == Fault::Held)
                .unwrap_or_else(|e| e.into_inner());
        }
        Fault::None | Fault::Held => {}
    }
}
