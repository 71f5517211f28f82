//! Extension points, and what happens when a plugin fails at one.

use std::fmt;

use serde::Deserialize;

/// A kube-scheduler extension point a plugin can implement, named after the
/// WIT interface that carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExtensionPoint {
    /// `pre-enqueue`.
    PreEnqueue,
    /// `filter`.
    Filter,
    /// `score`.
    Score,
    /// `permit`.
    Permit,
    /// `placement-generate`.
    PlacementGenerate,
    /// `placement-score`.
    PlacementScore,
    /// `pod-group-post-filter`.
    PodGroupPostFilter,
}

impl ExtensionPoint {
    /// Every extension point, in cycle order.
    pub const ALL: [ExtensionPoint; 7] = [
        Self::PreEnqueue,
        Self::PlacementGenerate,
        Self::Filter,
        Self::Score,
        Self::Permit,
        Self::PlacementScore,
        Self::PodGroupPostFilter,
    ];

    /// The WIT interface name.
    pub fn interface(self) -> &'static str {
        match self {
            Self::PreEnqueue => "pre-enqueue",
            Self::Filter => "filter",
            Self::Score => "score",
            Self::Permit => "permit",
            Self::PlacementGenerate => "placement-generate",
            Self::PlacementScore => "placement-score",
            Self::PodGroupPostFilter => "pod-group-post-filter",
        }
    }
}

impl fmt::Display for ExtensionPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.interface())
    }
}

/// What happens to a pod or group when a plugin call fails (traps, exceeds a
/// bound, or returns an invalid result).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
pub enum FailurePolicy {
    /// The pod or group stays pending with the plugin's error as reason.
    #[default]
    Fail,
    /// The plugin is skipped for that call and a warning is counted.
    Ignore,
}

/// Why a plugin call did not return a usable answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FailureCause {
    /// Ran out of fuel (the deterministic CPU budget).
    Cpu,
    /// Passed its wall-clock deadline.
    Timeout,
    /// Tried to grow its memory past the limit.
    Memory,
    /// Overflowed the wasm call stack.
    Stack,
    /// Panicked or hit another trap.
    Trap,
    /// Returned an answer that breaks the contract (unknown node, bad score, ...).
    InvalidResult,
    /// Could not be re-instantiated after an earlier failure.
    Instantiation,
}

impl FailureCause {
    /// The `cause` label of `wasched_plugin_errors_total`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Timeout => "timeout",
            Self::Memory => "memory",
            Self::Stack => "stack",
            Self::Trap => "trap",
            Self::InvalidResult => "invalid-result",
            Self::Instantiation => "instantiation",
        }
    }
}

/// A plugin call that did not return a usable answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginError {
    /// The plugin's name.
    pub plugin: String,
    /// Where it failed.
    pub point: ExtensionPoint,
    /// The kind of failure.
    pub cause: FailureCause,
    /// What happened, for people (`exceeded its CPU budget of 1000 fuel`).
    pub message: String,
    /// The plugin's failure policy.
    pub policy: FailurePolicy,
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "plugin {}: {} in {}",
            self.plugin, self.message, self.point
        )
    }
}
