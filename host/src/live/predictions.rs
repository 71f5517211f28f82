//! The live compare: what the shadow predicted for each pending pod, held
//! against what the cluster's scheduler then did with it.
//!
//! Every pass records, for each pending pod it decided on (by UID, so a pod
//! deleted and recreated under its name is another pod), the node the plugin
//! set would bind or nominate it to, or that it would stay pending, or that
//! it needs what wasched does not model; and the pods the pass would evict.
//! The next pass first reads what the watch shows and compares, once per
//! decision the scheduler makes about a pod:
//!
//! - **bound**: the scheduler bound the pod (the prediction is then
//!   forgotten);
//! - **unschedulable**: the scheduler set `PodScheduled=False` with reason
//!   `Unschedulable` (with a `nominatedNodeName` when it preempts);
//! - **preempted**: the scheduler deleted the pod as a victim
//!   (`DisruptionTarget=True`, reason `PreemptionByScheduler`).
//!
//! A pod the scheduler decided on before any pass saw it pending is not
//! compared: the watch shows states, not every step between them.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;

use crate::Outcome;
use crate::model::Snapshot;

/// What the shadow predicted for one pending pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Predicted {
    /// Bound to this node.
    Bound(String),
    /// Nominated to this node while its victims go (a preemptor).
    Nominated(String),
    /// Left pending, for this reason.
    Pending(String),
    /// Not decided: it needs what wasched does not model (the message).
    NotModelled(String),
}

impl Predicted {
    /// The node it was predicted to go to (bound or nominated).
    fn node(&self) -> Option<&str> {
        match self {
            Self::Bound(node) | Self::Nominated(node) => Some(node),
            Self::Pending(_) | Self::NotModelled(_) => None,
        }
    }
}

impl fmt::Display for Predicted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bound(node) => write!(f, "bound to {node}"),
            Self::Nominated(node) => write!(f, "nominated to {node} (preempting)"),
            Self::Pending(reason) => write!(f, "pending: {reason}"),
            Self::NotModelled(message) => write!(f, "not modelled: {message}"),
        }
    }
}

/// What the cluster's scheduler decided about a pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerDecision {
    /// It bound the pod.
    Bound,
    /// It found no node (`PodScheduled=False`, reason `Unschedulable`).
    Unschedulable,
    /// It deleted the pod as a victim of preemption.
    Preempted,
}

impl SchedulerDecision {
    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            Self::Bound => "bound",
            Self::Unschedulable => "unschedulable",
            Self::Preempted => "preempted",
        }
    }
}

/// How a prediction compares with the scheduler's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agreement {
    /// The same decision (the same node when there is one).
    Agree,
    /// Both found a node for it, not the same one.
    OtherNode,
    /// One found a node (or a victim) where the other did not.
    Differ,
    /// The shadow did not decide: the pod needs what wasched does not model.
    NotModelled,
}

impl Agreement {
    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            Self::Agree => "agree",
            Self::OtherNode => "other-node",
            Self::Differ => "differ",
            Self::NotModelled => "not-modelled",
        }
    }
}

/// One comparison: a decision of the scheduler held against the shadow's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// The pod, `namespace/name`.
    pub pod: String,
    /// What the scheduler did.
    pub decision: SchedulerDecision,
    /// How the shadow's prediction compares.
    pub agreement: Agreement,
    /// The scheduler's decision in words (`bound to node-a`).
    pub scheduler: String,
    /// The shadow's prediction in words.
    pub shadow: String,
}

/// What a pass knew besides its decisions.
#[derive(Debug, Default)]
pub struct Pass {
    /// The watched scheduler's pending pods set aside as needing what
    /// wasched does not model: UID → (pod, message).
    pub not_modelled: BTreeMap<String, (String, String)>,
    /// Nodes holding a pod being deleted as a victim of preemption.
    pub victim_nodes: BTreeSet<String>,
}

/// One pod's standing prediction.
#[derive(Debug, Clone)]
struct Entry {
    pod: String,
    predicted: Predicted,
    /// Its `Unschedulable` condition was compared already.
    compared_unschedulable: bool,
}

/// The predictions standing, and the differences found lately.
#[derive(Debug, Default)]
pub struct Predictions {
    /// Pending pods by UID.
    pending: BTreeMap<String, Entry>,
    /// The last pass's victims: UID → (pod, its preemptor).
    victims: BTreeMap<String, (String, String)>,
    /// Victims whose deletion was compared (UIDs), until they are gone.
    compared_victims: BTreeSet<String>,
    /// The latest differences, newest last, at most [`Self::KEPT`].
    differences: VecDeque<Comparison>,
}

impl Predictions {
    /// How many differences are kept for `/differences`.
    pub const KEPT: usize = 256;

    /// Compares what the scheduler did with the pods the watch shows now
    /// (`pods`: every pod of the cluster) against the standing predictions;
    /// returns the comparisons made, each decision compared once. Forgets
    /// the pods that are gone.
    pub fn observe<'a>(&mut self, pods: impl IntoIterator<Item = &'a Pod>) -> Vec<Comparison> {
        let mut comparisons = Vec::new();
        let mut seen = BTreeSet::new();
        for pod in pods {
            let Some(uid) = pod.metadata.uid.as_deref() else {
                continue;
            };
            seen.insert(uid.to_string());
            if let Some(comparison) = self.compare_victim(uid, pod) {
                comparisons.push(comparison);
            }
            if let Some(comparison) = self.compare_pending(uid, pod) {
                comparisons.push(comparison);
            }
        }
        self.pending.retain(|uid, _| seen.contains(uid));
        self.victims.retain(|uid, _| seen.contains(uid));
        self.compared_victims.retain(|uid| seen.contains(uid));
        for comparison in &comparisons {
            if matches!(
                comparison.agreement,
                Agreement::OtherNode | Agreement::Differ
            ) {
                if self.differences.len() == Self::KEPT {
                    self.differences.pop_front();
                }
                self.differences.push_back(comparison.clone());
            }
        }
        comparisons
    }

    /// A predicted pod the scheduler bound or found unschedulable.
    fn compare_pending(&mut self, uid: &str, pod: &Pod) -> Option<Comparison> {
        let entry = self.pending.get_mut(uid)?;
        if pod.metadata.deletion_timestamp.is_some() {
            self.pending.remove(uid);
            return None;
        }
        let spec = pod.spec.as_ref();
        if let Some(node) = spec
            .and_then(|s| s.node_name.as_deref())
            .filter(|n| !n.is_empty())
        {
            let agreement = match &entry.predicted {
                Predicted::NotModelled(_) => Agreement::NotModelled,
                Predicted::Pending(_) => Agreement::Differ,
                predicted if predicted.node() == Some(node) => Agreement::Agree,
                _ => Agreement::OtherNode,
            };
            let entry = self.pending.remove(uid).expect("looked up above");
            return Some(Comparison {
                pod: entry.pod,
                decision: SchedulerDecision::Bound,
                agreement,
                scheduler: format!("bound to {node}"),
                shadow: entry.predicted.to_string(),
            });
        }
        if entry.compared_unschedulable {
            return None;
        }
        let status = pod.status.as_ref()?;
        let condition = status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "PodScheduled")?;
        if condition.status != "False" || condition.reason.as_deref() != Some("Unschedulable") {
            return None;
        }
        entry.compared_unschedulable = true;
        let nominated = status
            .nominated_node_name
            .as_deref()
            .filter(|n| !n.is_empty());
        let agreement = match (&entry.predicted, nominated) {
            (Predicted::NotModelled(_), _) => Agreement::NotModelled,
            (Predicted::Pending(_), None) => Agreement::Agree,
            (Predicted::Nominated(ours), Some(theirs)) if ours == theirs => Agreement::Agree,
            (Predicted::Nominated(_), Some(_)) => Agreement::OtherNode,
            _ => Agreement::Differ,
        };
        let message = condition.message.as_deref().unwrap_or_default();
        let scheduler = match nominated {
            Some(node) => format!("unschedulable, nominated to {node} (preempting): {message}"),
            None => format!("unschedulable: {message}"),
        };
        Some(Comparison {
            pod: entry.pod.clone(),
            decision: SchedulerDecision::Unschedulable,
            agreement,
            scheduler,
            shadow: entry.predicted.to_string(),
        })
    }

    /// A pod the scheduler deleted as a victim of preemption.
    fn compare_victim(&mut self, uid: &str, pod: &Pod) -> Option<Comparison> {
        if pod.metadata.deletion_timestamp.is_none()
            || !preempted_by_scheduler(pod)
            || self.compared_victims.contains(uid)
        {
            return None;
        }
        self.compared_victims.insert(uid.to_string());
        let key = format!(
            "{}/{}",
            pod.metadata.namespace.as_deref().unwrap_or("default"),
            pod.metadata.name.as_deref().unwrap_or_default()
        );
        let (agreement, shadow) = match self.victims.get(uid) {
            Some((_, by)) => (Agreement::Agree, format!("evicted by {by}")),
            None => (Agreement::Differ, "not a victim".to_string()),
        };
        Some(Comparison {
            pod: key,
            decision: SchedulerDecision::Preempted,
            agreement,
            scheduler: "evicted by preemption".into(),
            shadow,
        })
    }

    /// Records a pass's predictions: the decisions of `outcome` over the
    /// pending pods of `snapshot`, and the pods set aside as not modelled
    /// (`pass.not_modelled`). A pod no longer pending keeps the prediction
    /// it had until the watch shows what became of it.
    ///
    /// A preemptor waiting for its victims is predicted to go to the node
    /// it waits on, not pending: the scheduler binds it there once they are
    /// gone. That is a pod left pending whose nominated node (the
    /// scheduler's, or the one this shadow predicted) holds a victim being
    /// deleted (`pass.victim_nodes`).
    pub fn record(&mut self, snapshot: &Snapshot, outcome: &Outcome, pass: &Pass) {
        let mut uid_of: BTreeMap<&str, &str> = BTreeMap::new();
        let mut nominated_on: BTreeMap<&str, &str> = BTreeMap::new();
        for pod in &snapshot.pods {
            if let Some(uid) = pod.uid.as_deref() {
                uid_of.insert(pod.key.as_str(), uid);
            }
            if let Some(node) = pod.nominated_node {
                nominated_on.insert(
                    pod.key.as_str(),
                    snapshot.nodes[node as usize].name.as_str(),
                );
            }
        }
        for binding in &outcome.placements {
            if let Some(&uid) = uid_of.get(binding.pod.as_str()) {
                self.set(uid, &binding.pod, Predicted::Bound(binding.node.clone()));
            }
        }
        for nomination in &outcome.nominations {
            if let Some(&uid) = uid_of.get(nomination.pod.as_str()) {
                let predicted = Predicted::Nominated(nomination.node.clone());
                self.set(uid, &nomination.pod, predicted);
            }
        }
        for pending in &outcome.unschedulable {
            let Some(&uid) = uid_of.get(pending.pod.as_str()) else {
                continue;
            };
            let ours = match self.pending.get(uid).map(|e| &e.predicted) {
                Some(Predicted::Nominated(node)) => Some(node.as_str()),
                _ => None,
            };
            let waiting = [nominated_on.get(pending.pod.as_str()).copied(), ours]
                .into_iter()
                .flatten()
                .find(|node| pass.victim_nodes.contains(*node))
                .map(str::to_string);
            let predicted = match waiting {
                Some(node) => Predicted::Nominated(node),
                None => Predicted::Pending(pending.reason.clone()),
            };
            self.set(uid, &pending.pod, predicted);
        }
        self.victims = outcome
            .evictions
            .iter()
            .filter_map(|e| {
                let uid = uid_of.get(e.pod.as_str())?;
                Some((uid.to_string(), (e.pod.clone(), e.by.clone())))
            })
            .collect();
        for (uid, (pod, message)) in &pass.not_modelled {
            self.set(uid, pod, Predicted::NotModelled(message.clone()));
        }
    }

    fn set(&mut self, uid: &str, pod: &str, predicted: Predicted) {
        match self.pending.get_mut(uid) {
            Some(entry) => entry.predicted = predicted,
            None => {
                self.pending.insert(
                    uid.to_string(),
                    Entry {
                        pod: pod.to_string(),
                        predicted,
                        compared_unschedulable: false,
                    },
                );
            }
        }
    }

    /// The standing predictions, by pod (`namespace/name`), in words.
    pub fn standing(&self) -> BTreeMap<String, String> {
        self.pending
            .values()
            .map(|e| (e.pod.clone(), e.predicted.to_string()))
            .collect()
    }

    /// The latest differences, oldest first.
    pub fn differences(&self) -> Vec<Comparison> {
        self.differences.iter().cloned().collect()
    }

    /// How many predictions and victims it holds (they must not grow with
    /// churn).
    pub fn len(&self) -> usize {
        self.pending.len() + self.victims.len() + self.compared_victims.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Whether a pod carries `DisruptionTarget=True` with reason
/// `PreemptionByScheduler`: a victim the scheduler is deleting.
pub fn preempted_by_scheduler(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions.iter().any(|c| {
                c.type_ == "DisruptionTarget"
                    && c.status == "True"
                    && c.reason.as_deref() == Some("PreemptionByScheduler")
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{Binding, Eviction, Unschedulable};

    fn pod(name: &str, uid: &str) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "ns", "uid": uid},
            "spec": {"containers": [{"name": "c"}]},
        }))
        .unwrap()
    }

    fn bound(mut pod: Pod, node: &str) -> Pod {
        pod.spec.as_mut().unwrap().node_name = Some(node.into());
        pod
    }

    fn unschedulable(mut pod: Pod, nominated: Option<&str>) -> Pod {
        pod.status = Some(
            serde_json::from_value(serde_json::json!({
                "conditions": [{"type": "PodScheduled", "status": "False",
                                "reason": "Unschedulable", "message": "0/2 nodes are available"}],
                "nominatedNodeName": nominated,
            }))
            .unwrap(),
        );
        pod
    }

    fn victim(mut pod: Pod) -> Pod {
        pod.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                "2026-12-05T00:00:00Z".parse().unwrap(),
            ));
        pod.status = Some(
            serde_json::from_value(serde_json::json!({
                "conditions": [{"type": "DisruptionTarget", "status": "True",
                                "reason": "PreemptionByScheduler"}],
            }))
            .unwrap(),
        );
        pod
    }

    /// A snapshot holding these pods (pending, on no node).
    fn snapshot(pods: &[&Pod]) -> Snapshot {
        let mut manifests = crate::manifest::Manifests::default();
        for pod in pods {
            let object = crate::manifest::Object::Pod(Box::new((*pod).clone()));
            manifests
                .objects
                .push((crate::live::kinds::origin(&object), object));
        }
        Snapshot::build(&manifests).unwrap()
    }

    fn outcome(placed: &[(&str, &str)], pending: &[&str]) -> Outcome {
        Outcome {
            placements: placed
                .iter()
                .map(|(pod, node)| Binding {
                    pod: format!("ns/{pod}"),
                    node: node.to_string(),
                })
                .collect(),
            unschedulable: pending
                .iter()
                .map(|pod| Unschedulable {
                    pod: format!("ns/{pod}"),
                    reason: "no node fits".into(),
                    preemption: None,
                })
                .collect(),
            ..Outcome::default()
        }
    }

    fn verdicts(comparisons: &[Comparison]) -> Vec<(String, &'static str, &'static str)> {
        comparisons
            .iter()
            .map(|c| (c.pod.clone(), c.decision.label(), c.agreement.label()))
            .collect()
    }

    fn row(
        pod: &str,
        decision: &'static str,
        agreement: &'static str,
    ) -> (String, &'static str, &'static str) {
        (format!("ns/{pod}"), decision, agreement)
    }

    #[test]
    fn a_binding_is_compared_once_by_node() {
        let (a, b, c) = (pod("a", "1"), pod("b", "2"), pod("c", "3"));
        let mut predictions = Predictions::default();
        predictions.record(
            &snapshot(&[&a, &b, &c]),
            &outcome(&[("a", "n1"), ("b", "n1")], &["c"]),
            &Pass::default(),
        );
        // Nothing decided yet: nothing compared.
        assert!(predictions.observe([&a, &b, &c]).is_empty());
        let now = [bound(a, "n1"), bound(b, "n2"), bound(c, "n2")];
        assert_eq!(
            verdicts(&predictions.observe(&now)),
            [
                row("a", "bound", "agree"),
                row("b", "bound", "other-node"),
                row("c", "bound", "differ"),
            ]
        );
        assert!(predictions.observe(&now).is_empty(), "compared once");
        let differences = predictions.differences();
        assert_eq!(differences.len(), 2);
        assert_eq!(differences[0].scheduler, "bound to n2");
        assert_eq!(differences[0].shadow, "bound to n1");
        assert!(predictions.is_empty());
    }

    #[test]
    fn an_unschedulable_condition_is_compared_once_and_the_binding_after_it() {
        let (a, b) = (pod("a", "1"), pod("b", "2"));
        let mut predictions = Predictions::default();
        predictions.record(
            &snapshot(&[&a, &b]),
            &outcome(&[("b", "n1")], &["a"]),
            &Pass::default(),
        );
        let now = [
            unschedulable(a.clone(), None),
            unschedulable(b.clone(), None),
        ];
        assert_eq!(
            verdicts(&predictions.observe(&now)),
            [
                row("a", "unschedulable", "agree"),
                row("b", "unschedulable", "differ")
            ]
        );
        assert!(predictions.observe(&now).is_empty(), "compared once");
        // A later binding is a decision of its own.
        assert_eq!(
            verdicts(&predictions.observe([&bound(a, "n1"), &now[1]])),
            [row("a", "bound", "differ")]
        );
    }

    #[test]
    fn a_nomination_and_its_victims_are_compared() {
        let (p, v, w) = (pod("p", "1"), pod("v", "2"), pod("w", "3"));
        let mut predictions = Predictions::default();
        let mut decided = Outcome {
            nominations: vec![Binding {
                pod: "ns/p".into(),
                node: "n1".into(),
            }],
            evictions: vec![Eviction {
                pod: "ns/v".into(),
                by: "ns/p".into(),
            }],
            ..Outcome::default()
        };
        predictions.record(&snapshot(&[&p, &v, &w]), &decided, &Pass::default());
        let now = [
            unschedulable(p.clone(), Some("n1")),
            victim(v.clone()),
            victim(w.clone()),
        ];
        assert_eq!(
            verdicts(&predictions.observe(&now)),
            [
                row("p", "unschedulable", "agree"),
                row("v", "preempted", "agree"),
                row("w", "preempted", "differ"),
            ]
        );
        assert!(predictions.observe(&now).is_empty(), "compared once");
        // Nominated elsewhere by the scheduler: another node.
        let q = pod("q", "4");
        decided.evictions.clear();
        decided.nominations[0].pod = "ns/q".into();
        predictions.record(&snapshot(&[&q]), &decided, &Pass::default());
        assert_eq!(
            verdicts(&predictions.observe([&unschedulable(q, Some("n2"))])),
            [row("q", "unschedulable", "other-node")]
        );
        // Gone pods are forgotten.
        predictions.observe([]);
        assert!(predictions.is_empty());
    }

    #[test]
    fn a_preemptor_waiting_for_its_victims_stays_predicted_to_its_node() {
        let p = pod("p", "1");
        let mut predictions = Predictions::default();
        let nominated = Outcome {
            nominations: vec![Binding {
                pod: "ns/p".into(),
                node: "n1".into(),
            }],
            ..Outcome::default()
        };
        predictions.record(&snapshot(&[&p]), &nominated, &Pass::default());
        // The next pass finds no room while the victim terminates on n1:
        // still on its way to n1.
        let waiting = Pass {
            victim_nodes: BTreeSet::from(["n1".to_string()]),
            ..Pass::default()
        };
        predictions.record(&snapshot(&[&p]), &outcome(&[], &["p"]), &waiting);
        assert_eq!(
            predictions.standing()["ns/p"],
            "nominated to n1 (preempting)"
        );
        assert_eq!(
            verdicts(&predictions.observe([&bound(p.clone(), "n1")])),
            [row("p", "bound", "agree")]
        );
        // With no victim terminating there, pending is pending.
        predictions.record(&snapshot(&[&p]), &nominated, &Pass::default());
        predictions.record(&snapshot(&[&p]), &outcome(&[], &["p"]), &Pass::default());
        assert_eq!(predictions.standing()["ns/p"], "pending: no node fits");
    }

    #[test]
    fn a_pod_not_modelled_is_counted_apart_and_a_replaced_pod_is_another() {
        let (a, b) = (pod("a", "1"), pod("b", "2"));
        let mut predictions = Predictions::default();
        let pass = Pass {
            not_modelled: BTreeMap::from([(
                "1".to_string(),
                ("ns/a".to_string(), "host ports".to_string()),
            )]),
            ..Pass::default()
        };
        predictions.record(&snapshot(&[&b]), &outcome(&[("b", "n1")], &[]), &pass);
        assert_eq!(
            predictions.standing(),
            BTreeMap::from([
                ("ns/a".to_string(), "not modelled: host ports".to_string()),
                ("ns/b".to_string(), "bound to n1".to_string()),
            ])
        );
        // b deleted and created again under its name: not compared.
        let b_again = bound(pod("b", "9"), "n2");
        assert_eq!(
            verdicts(&predictions.observe([&bound(a, "n1"), &b_again])),
            [row("a", "bound", "not-modelled")]
        );
        assert!(predictions.differences().is_empty());
    }

    #[test]
    fn differences_kept_are_bounded() {
        let mut predictions = Predictions::default();
        for i in 0..Predictions::KEPT + 10 {
            let p = pod(&format!("p{i}"), &i.to_string());
            predictions.record(
                &snapshot(&[&p]),
                &outcome(&[], &[&format!("p{i}")]),
                &Pass::default(),
            );
            predictions.observe([&bound(p, "n1")]);
        }
        let differences = predictions.differences();
        assert_eq!(differences.len(), Predictions::KEPT);
        assert_eq!(differences[0].pod, "ns/p10");
    }
}
