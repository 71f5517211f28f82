//! The JSON protocol of [`wasched_call`](crate::wasched_call): requests
//! and responses, objects by name. These types are the protocol's one
//! definition on this side; the Go package `kube/wasm` (`protocol.go`)
//! mirrors them, and both sides decode the same golden fixtures
//! (`testdata/abi/requests.json`, `testdata/abi/responses.json`) strictly
//! and write them back unchanged; Go also checks that every field it has
//! is set by some fixture. A list Go may leave out when empty is optional
//! here.

use serde::{Deserialize, Serialize};

/// What is asked, objects by name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(tag = "point", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Request {
    /// `pre-enqueue` for a unit.
    PreEnqueue {
        /// The unit.
        unit: UnitRef,
    },
    /// `filter` of one pod over nodes.
    Filter {
        /// `namespace/name`.
        pod: String,
        /// Absent: every node of the view, in name order.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nodes: Option<Vec<String>>,
    },
    /// `score` of one pod over nodes.
    Score {
        /// `namespace/name`.
        pod: String,
        /// Absent: every node of the view, in name order.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nodes: Option<Vec<String>>,
    },
    /// `permit` for a unit at a progress.
    Permit {
        /// The unit.
        unit: UnitRef,
        /// How far its placement got.
        progress: Progress,
    },
    /// `placement-generate` inside a parent placement.
    PlacementGenerate {
        /// The unit.
        unit: UnitRef,
        /// The placement to divide.
        parent: Placement,
    },
    /// `placement-score` of a placement with its assignments.
    PlacementScore {
        /// The unit.
        unit: UnitRef,
        /// The placement.
        placement: Placement,
        /// (pod, node) pairs; absent: none (no member placed yet — Go
        /// leaves an empty list out).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        assignments: Vec<(String, String)>,
    },
    /// `pod-group-post-filter`'s victim order.
    OrderVictims {
        /// Who preempts.
        preemptor: PreemptorRef,
        /// The victim units (absent: none; Go leaves an empty list out).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        units: Vec<Victim>,
    },
    /// `pod-group-post-filter`'s choice among candidates.
    SelectCandidate {
        /// Who preempts.
        preemptor: PreemptorRef,
        /// The ways to make room (absent: none; Go leaves an empty list
        /// out).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        candidates: Vec<Candidate>,
    },
}

/// A PodGroup or a CompositePodGroup, by `namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UnitRef {
    /// A PodGroup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_group: Option<String>,
    /// A CompositePodGroup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composite_pod_group: Option<String>,
}

/// A unit or a lone pod.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PreemptorRef {
    /// A PodGroup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_group: Option<String>,
    /// A CompositePodGroup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composite_pod_group: Option<String>,
    /// A lone pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
}

/// How far a unit's placement got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Progress {
    /// Pods placed.
    pub scheduled: u32,
    /// Pods left to try.
    pub remaining: u32,
}

/// A candidate node set.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// Its name.
    pub name: String,
    /// Its nodes; in a request, absent: every node of the view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<String>>,
    /// The (label key, value) it is a domain of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<(String, String)>,
}

/// One unit a preemption would evict.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Victim {
    /// Its pods, `namespace/name`.
    pub pods: Vec<String>,
    /// Its PodGroup, if it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Its priority.
    pub priority: i32,
    /// When it started (Unix seconds).
    #[serde(default)]
    pub start_time: i64,
    /// Whether evicting it violates a PodDisruptionBudget.
    #[serde(default)]
    pub violates_budget: bool,
}

/// One way to make room.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    /// The domain it frees room in.
    pub domain: String,
    /// What it evicts (absent: nothing; Go leaves an empty list out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub victims: Vec<Victim>,
    /// Where the preemptor's pods would go.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assignments: Vec<(String, String)>,
}

/// A call's answer: the fields the point gives are set.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Response {
    /// The verdict.
    pub status: Status,
    /// A contained plugin failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// `filter`: the nodes rejected, by reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejections: Option<Vec<Rejection>>,
    /// `score`: one per node asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<Vec<i64>>,
    /// `permit`: how far the verdict may be reused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reuse: Option<ProgressBounds>,
    /// `placement-generate`: the placements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placements: Option<Vec<Placement>>,
    /// `placement-generate`: how many placements to try at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_budget: Option<u32>,
    /// `placement-score`: the score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<i64>,
    /// `order-victims`: the units' indices in eviction order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Vec<u32>>,
    /// `select-candidate`: the chosen candidate's index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<u32>,
    /// What the plugin logged during the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<Vec<LogLine>>,
    /// The plugin's circuit breaker changed with this call: `opened` (the
    /// caller reports it once, as an Event and a metric), `reopened` (a
    /// trial call failed) or `closed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breaker: Option<String>,
}

impl Response {
    /// A response with only a status.
    pub fn of(status: Status) -> Self {
        Self {
            status,
            failure: None,
            rejections: None,
            scores: None,
            reuse: None,
            placements: None,
            search_budget: None,
            score: None,
            order: None,
            candidate: None,
            logs: None,
            breaker: None,
        }
    }
}

/// A verdict, with kube-scheduler's code names (`Success`, `Error`,
/// `Unschedulable`, `UnschedulableAndUnresolvable`, `Wait`, `Skip`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Status {
    /// The code.
    pub code: String,
    /// Why.
    pub reason: String,
}

/// A contained plugin failure.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    /// The plugin.
    pub plugin: String,
    /// cpu, timeout, memory, stack, trap, invalid-result, instantiation.
    pub cause: String,
    /// What happened.
    pub message: String,
}

/// The nodes a filter rejected for one reason.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Rejection {
    /// Why.
    pub reason: String,
    /// Which nodes.
    pub nodes: Vec<String>,
}

/// How far a permit verdict may be reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProgressBounds {
    /// Least pods scheduled it holds for.
    pub min_scheduled: u32,
    /// Most pods scheduled it holds for.
    pub max_scheduled: u32,
    /// Least pods possible it holds for.
    pub min_possible: u32,
    /// Most pods possible it holds for.
    pub max_possible: u32,
}

/// A line the plugin logged.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LogLine {
    /// debug, info, warn or error.
    pub level: String,
    /// The line.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The golden fixtures: `[{"name": ..., "value": {...}}, ...]`.
    fn fixtures(file: &str) -> Vec<(String, serde_json::Value)> {
        let path = format!("{}/../testdata/abi/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let list: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        list.into_iter()
            .map(|f| (f["name"].as_str().unwrap().to_string(), f["value"].clone()))
            .collect()
    }

    /// Each fixture decodes strictly and is written back unchanged.
    fn round_trip<T: serde::de::DeserializeOwned + Serialize>(file: &str) -> usize {
        let fixtures = fixtures(file);
        for (name, value) in &fixtures {
            let decoded: T = serde_path_to_error::deserialize(value.clone())
                .unwrap_or_else(|e| panic!("{file} {name}: field {}: {}", e.path(), e.inner()));
            assert_eq!(
                &serde_json::to_value(&decoded).unwrap(),
                value,
                "{file} {name}: written back otherwise"
            );
        }
        fixtures.len()
    }

    #[test]
    fn every_golden_request_decodes_and_round_trips() {
        assert!(
            round_trip::<Request>("requests.json") >= 8,
            "one per point at least"
        );
    }

    #[test]
    fn every_golden_response_decodes_and_round_trips() {
        assert!(round_trip::<Response>("responses.json") >= 8);
    }

    #[test]
    fn an_unknown_field_is_refused_by_name() {
        let bad = serde_json::json!({"point": "filter", "pod": "a/b", "node": ["n1"]});
        let err = serde_json::from_value::<Request>(bad)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `node`"), "{err}");
    }
}
