//! Real Kubernetes in the loop: a snapshot loaded into a real v1.37.2
//! control plane (`wasched cluster up`), and scheduled by the real
//! kube-scheduler (`simulate --engine kube-scheduler`), through the Go
//! harness in the repository's `kube/` module.
//!
//! - [`objects`] translates a snapshot into what a real cluster holds;
//! - [`harness`] finds, builds and runs `wasched-kube`;
//! - [`readback`] reads kube-scheduler's decisions back into an
//!   [`Outcome`](crate::Outcome);
//! - [`agreement`] compares them with wasched's, pod by pod, ties allowed
//!   for where kube-scheduler breaks them.

pub mod agreement;
pub mod harness;
pub mod objects;
pub mod played;
pub mod readback;

use anyhow::Result;

pub use harness::{Harness, PlayOptions, Preferences, ScheduleOptions, UpOptions, WasmComponents};
pub use objects::{ClusterObjects, translate};
pub use played::{Played, Timeline};
pub use readback::KubeResult;

use crate::Outcome;
use crate::manifest::Manifests;
use crate::model::Snapshot;

/// A run of the real kube-scheduler over a snapshot.
#[derive(Debug)]
pub struct KubeRun {
    /// Its decisions in wasched's shape.
    pub outcome: Outcome,
    /// What the harness read back, score classes included when asked.
    pub result: KubeResult,
}

/// Schedules `manifests` (whose model is `snapshot`) with the real
/// kube-scheduler.
pub fn schedule(
    harness: &Harness,
    manifests: &Manifests,
    snapshot: &Snapshot,
    options: &ScheduleOptions,
) -> Result<KubeRun> {
    let objects = translate(manifests, snapshot)?;
    let result = harness.schedule(&objects, options)?;
    let engine = match options.wasm {
        Some(_) => "kube-scheduler-wasm",
        None => "kube-scheduler",
    };
    let mut outcome = readback::outcome(snapshot, &result, engine);
    outcome.notes.extend(objects.notes);
    outcome.warnings.extend(objects.warnings);
    Ok(KubeRun { outcome, result })
}
