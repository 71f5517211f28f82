//! What the real kube-scheduler decided, as `wasched-kube schedule` reads
//! it back, and the same decisions in wasched's [`Outcome`] shape.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::model::{GroupId, Snapshot};
use crate::outcome::{
    Binding, Disruption, Domain, Eviction, Outcome, PodGroupDecision, PreemptionOutcome,
    Unschedulable,
};

/// A status condition.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// `type`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `True` or `False`.
    pub status: String,
    /// `reason`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// `message`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// The class of equally scored choices kube-scheduler chose among.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Tie {
    /// The top total score.
    pub score: i64,
    /// Every node (or placement) with that score, sorted.
    pub choices: Vec<String>,
}

/// One pod at the end of the run.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubePod {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.nodeName`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node: String,
    /// `status.nominatedNodeName`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub nominated_node: String,
    /// Gone from the API server.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
    /// Its `DisruptionTarget` condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disruption: Option<Condition>,
    /// The preemptor the `Preempted` event named (`PodGroup ns/name`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub preempted_by: String,
    /// Its `PodScheduled` condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<Condition>,
    /// Order of its binding in the run (1 = first), 0 if not bound in it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bound_order: u64,
    /// The score class its node was chosen from (when asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tie: Option<Tie>,
}

/// Whether a count is zero (written as Go's `omitempty` writes it).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl KubePod {
    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// A PodGroup or CompositePodGroup at the end of the run.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubeGroup {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `status.conditions`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The top classes of its placement scorings, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement_ties: Vec<Tie>,
    /// The first `PodGroupInitiallyScheduled=True` it carried in the run,
    /// kept where a later cycle wrote `False` over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_scheduled: Option<Condition>,
}

/// Timings of the run, measured inside the harness.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubeStats {
    /// Scheduling cycles (pods and pod groups popped from the queue).
    pub cycles: i64,
    /// Seconds from the start of scheduling to the last decision.
    pub decided_seconds: f64,
    /// Seconds until kube-scheduler was seen quiet.
    pub quiet_seconds: f64,
    /// Terminating pods the harness finished in place of their kubelets.
    pub finished: i64,
}

/// Everything `wasched-kube schedule` prints (Go's `engine.Printed`; both
/// sides decode `testdata/abi/harness-result.json` strictly and write it
/// back unchanged, and a field either side does not know is an error).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubeResult {
    /// Objects created.
    pub loaded: usize,
    /// Every pod that existed during the run.
    pub pods: Vec<KubePod>,
    /// Every PodGroup.
    pub pod_groups: Vec<KubeGroup>,
    /// Every CompositePodGroup.
    pub composite_pod_groups: Vec<KubeGroup>,
    /// Timings.
    pub stats: KubeStats,
}

impl KubeResult {
    /// Pods by `namespace/name`.
    pub fn pods_by_key(&self) -> HashMap<String, &KubePod> {
        self.pods.iter().map(|p| (p.key(), p)).collect()
    }
}

/// The condition kube-scheduler sets on every attempted PodGroup.
const INITIALLY_SCHEDULED: &str = "PodGroupInitiallyScheduled";
/// What the DefaultPreemption plugin prefixes its PodGroupPostFilter
/// messages with.
const GROUP_PREEMPTION: &str = "pod group preemption: ";

/// Why a pod stayed pending, as kube-scheduler said it; `unknown` when it
/// said nothing (a pod it never attempted: held at PreEnqueue, waiting for
/// its PodGroup).
fn pending_reason(pod: Option<&&KubePod>) -> String {
    pod.and_then(|p| p.scheduled.as_ref())
        .filter(|c| c.status == "False" && !c.message.is_empty())
        .map_or_else(
            || "unknown: kube-scheduler reported no reason (never attempted: held at PreEnqueue or waiting for its PodGroup)".into(),
            |c| c.message.clone(),
        )
}

/// Why a lone pod's preemption failed: the `preemption: ...` part
/// kube-scheduler's PostFilter adds to the pod's condition message.
fn preemption_reason(message: &str) -> Option<String> {
    message
        .split_once("preemption: ")
        .map(|(_, why)| why.trim().to_string())
}

/// The preemptor's `namespace/name` in a `Kind namespace/name` text.
fn preemptor_name(by: &str) -> &str {
    by.split_once(' ').map_or(by, |(_, name)| name)
}

/// The topology domains the bound pods of `group` ended up in: one per
/// level of its CompositePodGroup tree (outermost first) and its own, from
/// the nodes' labels.
fn domains_of(snapshot: &Snapshot, group: GroupId, nodes: &[&str]) -> Vec<Domain> {
    let mut keys = Vec::new();
    let info = &snapshot.groups[group as usize];
    let mut parent = info.parent;
    let mut steps = 0;
    while let Some(c) = parent {
        steps += 1;
        if steps > snapshot.composites.len() {
            break;
        }
        let composite = &snapshot.composites[c as usize];
        keys.extend(composite.spec.topology_key.clone());
        parent = composite.parent;
    }
    keys.reverse();
    keys.extend(info.spec.as_ref().and_then(|s| s.topology_key.clone()));
    let Some(first) = nodes.first() else {
        return Vec::new();
    };
    let Some(node) = snapshot.nodes.iter().find(|n| n.name == *first) else {
        return Vec::new();
    };
    keys.into_iter()
        .filter_map(|key| {
            let value = node.labels.get(&key)?.clone();
            Some(Domain { key, value })
        })
        .collect()
}

/// kube-scheduler's decisions on `snapshot` in wasched's shape: the pods
/// the snapshot has pending and what became of them, the running pods it
/// evicted, and a decision per PodGroup with pending members (then per
/// running PodGroup it disrupted). Fields kube-scheduler does not report
/// are marked `unknown` in their text; `engine` names the run in its
/// warning (`kube-scheduler`, `kube-scheduler-wasm`).
pub fn outcome(snapshot: &Snapshot, result: &KubeResult, engine: &str) -> Outcome {
    let pods = result.pods_by_key();
    let conditions: HashMap<String, &KubeGroup> = result
        .pod_groups
        .iter()
        .map(|g| (format!("{}/{}", g.namespace, g.name), g))
        .collect();
    let mut outcome = Outcome {
        warnings: snapshot.warnings.to_vec(),
        notes: snapshot.notes.to_vec(),
        ..Outcome::default()
    };
    let mut bound: Vec<(u64, Binding)> = Vec::new();
    for info in snapshot.pods.iter().filter(|p| p.pending) {
        let pod = pods.get(&info.key);
        match pod {
            Some(p) if !p.node.is_empty() && !p.deleted => bound.push((
                p.bound_order,
                Binding {
                    pod: info.key.clone(),
                    node: p.node.clone(),
                },
            )),
            _ => {
                let reason = pending_reason(pod);
                outcome.unschedulable.push(Unschedulable {
                    pod: info.key.clone(),
                    preemption: info
                        .group
                        .is_none()
                        .then(|| preemption_reason(&reason))
                        .flatten(),
                    reason,
                })
            }
        }
    }
    bound.sort_by_key(|(order, _)| *order);
    outcome.placements = bound.into_iter().map(|(_, b)| b).collect();

    // Victims: pods running before the run that kube-scheduler disrupted.
    let mut disrupted: BTreeMap<GroupId, (Vec<String>, u32)> = BTreeMap::new();
    let mut preemptors: BTreeMap<String, u32> = BTreeMap::new();
    for (id, info) in snapshot.pods.iter().enumerate() {
        if info.pending || info.terminating {
            continue;
        }
        let Some(p) = pods.get(&info.key) else {
            continue;
        };
        if p.disruption.is_none() && !p.deleted {
            continue;
        }
        let by = if p.preempted_by.is_empty() {
            "unknown".to_string()
        } else {
            preemptor_name(&p.preempted_by).to_string()
        };
        *preemptors.entry(by.clone()).or_default() += 1;
        if let Some(group) = snapshot.pods[id].group {
            let entry = disrupted.entry(group).or_default();
            if !entry.0.contains(&by) {
                entry.0.push(by.clone());
            }
            entry.1 += 1;
        }
        outcome.evictions.push(Eviction {
            pod: info.key.clone(),
            by,
        });
    }

    for (id, group) in snapshot.groups.iter().enumerate() {
        let members: Vec<&crate::model::PodInfo> = group
            .members
            .iter()
            .map(|&p| &*snapshot.pods[p as usize])
            .collect();
        let pending: Vec<&crate::model::PodInfo> =
            members.iter().copied().filter(|p| p.pending).collect();
        let id = id as GroupId;
        let disruption = disrupted.remove(&id).map(|(by, evicted)| Disruption {
            condition: "DisruptionTarget".into(),
            reason: "PreemptionByScheduler".into(),
            by,
            evicted,
        });
        if pending.is_empty() && disruption.is_none() {
            continue;
        }
        let nodes: Vec<&str> = pending
            .iter()
            .filter_map(|p| pods.get(&p.key))
            .filter(|p| !p.node.is_empty() && !p.deleted)
            .map(|p| p.node.as_str())
            .collect();
        let bound = nodes.len() as u32;
        let kube_group = conditions.get(&group.key);
        let condition =
            kube_group.and_then(|g| g.conditions.iter().find(|c| c.kind == INITIALLY_SCHEDULED));
        // kube-scheduler means never to take the condition back to False
        // once it was True (`updatePodGroupCondition`), but a cycle for the
        // pods left over right after admission reads the group from its
        // cache before the True arrived there and writes False: the
        // harness keeps the first True, and it decides.
        let regressed = condition
            .filter(|c| c.status != "True")
            .filter(|_| kube_group.is_some_and(|g| g.first_scheduled.is_some()));
        let admitted =
            (condition.is_some_and(|c| c.status == "True") || regressed.is_some()) && bound > 0;
        // A tree preempts as one unit, in its root's name.
        let preemptor = snapshot
            .root_of(id)
            .map_or(&group.key, |root| &snapshot.composites[root as usize].key);
        let victims = preemptors.get(preemptor).copied().unwrap_or(0);
        let message = condition.map(|c| c.message.clone()).unwrap_or_default();
        let mut decision = PodGroupDecision {
            pod_group: group.key.clone(),
            scheduled: admitted || (pending.is_empty() && disruption.is_some()),
            reason: String::new(),
            min_count: group.min_count(),
            bound,
            pending: pending.len() as u32 - bound,
            placement: None,
            domains: Vec::new(),
            condition_reason: String::new(),
            preemption: None,
            disruption,
        };
        if admitted {
            decision.domains = domains_of(snapshot, id, &nodes);
            decision.placement = Some(match decision.domains.last() {
                Some(d) => format!("{}={}", d.key, d.value),
                None => "cluster".into(),
            });
            if victims > 0 {
                decision.reason = format!("admitted by preempting {victims} pod(s)");
                decision.preemption = Some(PreemptionOutcome {
                    result: "preempted".into(),
                    domain: Some("cluster".into()),
                    victims,
                    reason: String::new(),
                });
            } else if decision.pending > 0 {
                let first = pending
                    .iter()
                    .find(|p| pods.get(&p.key).is_none_or(|k| k.node.is_empty()))
                    .and_then(|p| pods.get(&p.key));
                decision.reason = format!(
                    "admitted with {bound} of {} pending pods; the rest did not fit: {}",
                    pending.len(),
                    pending_reason(first)
                );
            }
            if let Some(c) = regressed {
                decision.reason.push_str(&format!(
                    "{}kube-scheduler then wrote PodGroupInitiallyScheduled=False ({}: {}) from a cycle that read a stale copy of the group",
                    if decision.reason.is_empty() { "" } else { "; " },
                    c.reason,
                    c.message
                ));
            }
        } else if !pending.is_empty() {
            match condition {
                Some(c) => {
                    decision.condition_reason = c.reason.clone();
                    decision.reason = message.clone();
                    if let Some(at) = message.find(GROUP_PREEMPTION) {
                        decision.preemption = Some(PreemptionOutcome {
                            result: "failed".into(),
                            domain: None,
                            victims: 0,
                            reason: message[at + GROUP_PREEMPTION.len()..].to_string(),
                        });
                    }
                }
                None => {
                    decision.reason = "unknown: kube-scheduler set no PodGroupInitiallyScheduled condition (never attempted: held at PreEnqueue)".into();
                }
            }
        }
        outcome.pod_groups.push(decision);
    }
    crate::outcome::record_unattempted(snapshot, &mut outcome);
    outcome.warnings.push(format!(
        "engine {engine}: the real kube-scheduler v1.37.2 decided (wasched-kube); where it breaks ties between equal scores its choice may differ from run to run"
    ));
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The golden harness result decodes strictly and is written back
    /// unchanged (the Go side's `engine` test holds it to its types too).
    #[test]
    fn the_golden_harness_result_round_trips() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../testdata/abi/harness-result.json"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let result: KubeResult = serde_path_to_error::deserialize(value.clone())
            .unwrap_or_else(|e| panic!("{path}: field {}: {}", e.path(), e.inner()));
        assert_eq!(serde_json::to_value(&result).unwrap(), value);
        assert!(result.pods.iter().any(|p| p.tie.is_some()));
        let mut unknown = value;
        unknown["pods"][0]["nodeName"] = serde_json::json!("n1");
        let err = serde_json::from_value::<KubeResult>(unknown).unwrap_err();
        assert!(
            err.to_string().contains("unknown field `nodeName`"),
            "{err}"
        );
    }

    #[test]
    fn a_lone_pods_preemption_reason_is_the_part_postfilter_added() {
        let message = "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.";
        assert_eq!(
            preemption_reason(message).as_deref(),
            Some("0/2 nodes are available: 2 No preemption victims found for incoming pod.")
        );
        assert_eq!(
            preemption_reason("0/2 nodes are available: 2 Insufficient cpu."),
            None
        );
    }

    /// The basic-group scenario (PodGroup data/prep, pods prep-0..2) as
    /// kube-scheduler left it: two pods bound, one pending, and the
    /// group's condition as `last`, after `first` (if any) was True.
    fn read_back(first: Option<&str>, last: &str) -> PodGroupDecision {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../testdata/scenarios/basic-group.yaml"
        );
        let snapshot = crate::read_snapshot(&[path.into()]).unwrap();
        let json = format!(
            r#"{{"loaded": 6, "stats": {{"cycles": 3, "decidedSeconds": 0.1, "quietSeconds": 0.6, "finished": 0}},
              "pods": [
                {{"namespace": "data", "name": "prep-0", "node": "node-0", "boundOrder": 1}},
                {{"namespace": "data", "name": "prep-1", "node": "node-1", "boundOrder": 2}},
                {{"namespace": "data", "name": "prep-2",
                  "scheduled": {{"type": "PodScheduled", "status": "False", "message": "0/2 nodes are available: 2 Insufficient cpu."}}}}],
              "podGroups": [{{"namespace": "data", "name": "prep",
                "conditions": [{last}], "firstScheduled": {}}}],
              "compositePodGroups": []}}"#,
            first.unwrap_or("null")
        );
        let result: KubeResult = serde_json::from_str(&json).unwrap();
        let outcome = outcome(&snapshot, &result, "kube-scheduler");
        outcome
            .pod_groups
            .into_iter()
            .find(|g| g.pod_group == "data/prep")
            .unwrap()
    }

    const TRUE: &str =
        r#"{"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled"}"#;
    const FALSE: &str = r#"{"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable", "message": "pod group is unschedulable"}"#;

    #[test]
    fn an_admitted_group_stays_admitted_when_a_stale_cycle_wrote_false() {
        let kept = read_back(None, TRUE);
        assert!(kept.scheduled);
        assert_eq!((kept.bound, kept.pending), (2, 1));

        let regressed = read_back(Some(TRUE), FALSE);
        assert!(regressed.scheduled, "{regressed:?}");
        assert_eq!((regressed.bound, regressed.pending), (2, 1));
        assert!(
            regressed.reason.contains("PodGroupInitiallyScheduled=False (Unschedulable: pod group is unschedulable) from a cycle that read a stale copy"),
            "{}",
            regressed.reason
        );

        let refused = read_back(None, FALSE);
        assert!(!refused.scheduled, "never True: not admitted");
        assert_eq!(refused.condition_reason, "Unschedulable");
    }
}
