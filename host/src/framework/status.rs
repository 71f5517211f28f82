//! kube-scheduler's status vocabulary, host side.

/// kube-scheduler's status codes (`framework.Code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    /// Nothing to say here.
    Skip,
}

/// A verdict with a reason for people (empty on success).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The verdict.
    pub code: Code,
    /// Why, in kube-scheduler's message style.
    pub reason: String,
}

impl Status {
    /// `success` without a reason.
    pub fn success() -> Self {
        Self::new(Code::Success, "")
    }

    /// A status with `code` and `reason`.
    pub fn new(code: Code, reason: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.into(),
        }
    }

    /// Success or skip: the plugin does not object.
    pub fn passes(&self) -> bool {
        matches!(self.code, Code::Success | Code::Skip)
    }
}
