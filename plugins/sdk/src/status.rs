//! kube-scheduler's status vocabulary, as plain Rust.

use alloc::string::String;

/// kube-scheduler's status codes (`framework.Code`), mirroring WIT `types.code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    /// The plugin is satisfied.
    Success,
    /// Something unexpected went wrong inside the plugin.
    Error,
    /// Not schedulable now; preemption might help.
    Unschedulable,
    /// Not schedulable, and preemption cannot help.
    UnschedulableAndUnresolvable,
    /// Not decided yet.
    Wait,
    /// The plugin has nothing to say here.
    Skip,
}

/// A plugin verdict: a code plus a human-readable reason (empty on success).
///
/// ```
/// use wasched_sdk::{Code, Status};
///
/// let waiting = Status::new(Code::Wait, "waiting for minCount 4: 2 placed");
/// assert!(!waiting.is_success());
/// assert_eq!(waiting.reason, "waiting for minCount 4: 2 placed");
/// assert!(Status::success().is_success());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The verdict.
    pub code: Code,
    /// Why, in kube-scheduler's message style.
    pub reason: String,
}

impl Status {
    /// `success` with no reason.
    pub fn success() -> Self {
        Self::new(Code::Success, "")
    }

    /// A status with the given code and reason.
    pub fn new(code: Code, reason: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.into(),
        }
    }

    /// Whether the code is [`Code::Success`].
    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }

    /// Success or skip: the plugin does not object.
    pub fn passes(&self) -> bool {
        matches!(self.code, Code::Success | Code::Skip)
    }
}
