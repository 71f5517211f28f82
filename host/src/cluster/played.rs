//! What `wasched-kube play` saw a real cluster do with a trace, and each
//! job's timeline read from it with the replay's definitions.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One pod of a played trace; times in seconds from the play's start.
#[derive(Debug, Clone, serde::Serialize, Deserialize)]
pub struct PlayedPod {
    /// `namespace/name`.
    pub name: String,
    /// Its Job's name (the `batch.kubernetes.io/job-name` label).
    #[serde(default)]
    pub job: String,
    /// The node it was bound to.
    #[serde(default)]
    pub node: String,
    /// When it was first seen.
    pub created: f64,
    /// When it was first seen bound.
    pub bound: Option<f64>,
    /// When it was first seen running.
    pub running: Option<f64>,
    /// When it was first seen Succeeded or Failed.
    pub finished: Option<f64>,
    /// When it got the `DisruptionTarget` condition (preempted).
    pub disrupted: Option<f64>,
    /// When it was deleted.
    pub deleted: Option<f64>,
    /// Its last phase.
    #[serde(default)]
    pub phase: String,
}

/// One Job of a played trace.
#[derive(Debug, Clone, serde::Serialize, Deserialize)]
pub struct PlayedJob {
    /// `namespace/name`.
    pub name: String,
    /// When it was first seen.
    pub created: f64,
    /// When it got the `Complete` condition.
    pub complete: Option<f64>,
    /// When it got the `Failed` condition.
    pub failed: Option<f64>,
}

/// What `wasched-kube play` prints.
#[derive(Debug, Clone, serde::Serialize, Deserialize)]
pub struct Played {
    /// Every pod seen.
    pub pods: Vec<PlayedPod>,
    /// Every Job seen.
    pub jobs: Vec<PlayedJob>,
    /// When the play stopped.
    pub ended: f64,
}

/// A job's timeline on the cluster, with the replay's definitions.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// `namespace/name`.
    pub job: String,
    /// When the Job was created.
    pub submit: f64,
    /// When the `needed`-th of its pods was bound (a gang's `minCount`;
    /// one otherwise); `None`: never.
    pub start: Option<f64>,
    /// When it finished (`Complete` or `Failed`).
    pub end: Option<f64>,
    /// Times it was preempted: its pods' disruptions, those less than a
    /// second apart counted once (one preemption evicts its victims at
    /// once), as the replay counts them.
    pub preempted: u32,
}

impl Timeline {
    /// `start - submit`.
    pub fn wait(&self) -> Option<f64> {
        self.start.map(|s| s - self.submit)
    }
}

impl Played {
    /// Each Job's timeline, by name; `needed` gives how many pods of a
    /// job must be bound for it to start.
    pub fn timelines(&self, needed: impl Fn(&str) -> u32) -> BTreeMap<String, Timeline> {
        let mut pods: BTreeMap<String, Vec<&PlayedPod>> = BTreeMap::new();
        for pod in &self.pods {
            let namespace = pod.name.split('/').next().unwrap_or_default();
            pods.entry(format!("{namespace}/{}", pod.job))
                .or_default()
                .push(pod);
        }
        self.jobs
            .iter()
            .map(|job| {
                let own = pods.get(&job.name).map(Vec::as_slice).unwrap_or_default();
                let mut bound: Vec<f64> = own.iter().filter_map(|p| p.bound).collect();
                bound.sort_by(f64::total_cmp);
                let n = needed(&job.name).max(1) as usize;
                let timeline = Timeline {
                    job: job.name.clone(),
                    submit: job.created,
                    start: bound.get(n - 1).copied(),
                    end: job.complete.or(job.failed),
                    preempted: incidents(own.iter().filter_map(|p| p.disrupted)),
                };
                (job.name.clone(), timeline)
            })
            .collect()
    }
}

/// How many groups `times` fall into when those less than a second apart
/// are one.
fn incidents(times: impl Iterator<Item = f64>) -> u32 {
    let mut times: Vec<f64> = times.collect();
    times.sort_by(f64::total_cmp);
    let mut count = 0;
    let mut last = f64::NEG_INFINITY;
    for t in times {
        if t - last >= 1.0 {
            count += 1;
        }
        last = t;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, job: &str, bound: Option<f64>, disrupted: Option<f64>) -> PlayedPod {
        PlayedPod {
            name: format!("default/{name}"),
            job: job.into(),
            node: String::new(),
            created: 0.0,
            bound,
            running: None,
            finished: None,
            disrupted,
            deleted: None,
            phase: String::new(),
        }
    }

    #[test]
    fn a_job_starts_when_its_needed_pods_are_bound_and_is_preempted_once_per_instant() {
        let played = Played {
            pods: vec![
                pod("gang-x1", "gang", Some(3.0), Some(5.01)),
                pod("gang-x2", "gang", Some(3.2), Some(5.02)),
                pod("gang-x3", "gang", Some(9.0), Some(12.0)),
                pod("solo-x", "solo", Some(1.5), None),
                pod("never-x", "never", None, None),
            ],
            jobs: ["gang", "solo", "never"]
                .into_iter()
                .map(|j| PlayedJob {
                    name: format!("default/{j}"),
                    created: 1.0,
                    complete: (j != "never").then_some(20.0),
                    failed: None,
                })
                .collect(),
            ended: 20.0,
        };
        let t = played.timelines(|job| if job == "default/gang" { 2 } else { 1 });
        assert_eq!(t["default/gang"].start, Some(3.2));
        assert_eq!(t["default/gang"].preempted, 2);
        assert_eq!(t["default/solo"].wait(), Some(0.5));
        assert_eq!(t["default/never"].start, None);
        assert_eq!(t["default/never"].end, None);
    }
}
