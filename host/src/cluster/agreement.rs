//! Does wasched decide what the real kube-scheduler decides? Pod by pod:
//! the same pods bound, left pending and evicted (by the same preemptor),
//! and bound pods on the same node — or, where kube-scheduler chose among
//! nodes of equal score, on a node of that same top-score class (taken
//! from kube-scheduler's own scores).
//!
//! kube-scheduler breaks ties between equally scored nodes arbitrarily and
//! between equally scored placements at random. So that one such tie does
//! not make every later decision differ, the harness can break them toward
//! wasched's choices ([`preferences`]): wherever wasched's node (or the
//! placement holding it) is among kube-scheduler's tied best, kube-scheduler
//! takes it. Its decision is still one kube-scheduler makes on its own
//! scores; a choice outside its top class stays a difference.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use super::KubeRun;
use super::harness::Preferences;
use crate::Outcome;
use crate::model::Snapshot;

/// Where a pod ended up.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Fate {
    Bound(String),
    Pending,
    Evicted(String),
    Running,
}

impl fmt::Display for Fate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fate::Bound(node) => write!(f, "bound on {node}"),
            Fate::Pending => write!(f, "pending"),
            Fate::Evicted(by) => write!(f, "evicted by {by}"),
            Fate::Running => write!(f, "running"),
        }
    }
}

/// One pod on which the engines disagree.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Disagreement {
    /// `namespace/name`.
    pub pod: String,
    /// `fate` (bound, pending, evicted, running) or `node`.
    pub field: String,
    /// What wasched decided.
    pub wasched: String,
    /// What kube-scheduler decided.
    #[serde(rename = "kubeScheduler")]
    pub kube_scheduler: String,
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: wasched {}, kube-scheduler {}",
            self.pod, self.field, self.wasched, self.kube_scheduler
        )
    }
}

fn fates(snapshot: &Snapshot, outcome: &Outcome) -> BTreeMap<String, Fate> {
    let mut fates: BTreeMap<String, Fate> = snapshot
        .pods
        .iter()
        .filter(|p| !p.terminating)
        .map(|p| {
            let fate = if p.pending {
                Fate::Pending
            } else {
                Fate::Running
            };
            (p.key.clone(), fate)
        })
        .collect();
    for b in &outcome.placements {
        fates.insert(b.pod.clone(), Fate::Bound(b.node.clone()));
    }
    for e in &outcome.evictions {
        fates.insert(e.pod.clone(), Fate::Evicted(e.by.clone()));
    }
    fates
}

/// wasched's choices in `outcome` (a run over `snapshot`) as tie-breaks
/// for kube-scheduler: each bound pod's node; for each PodGroup and
/// CompositePodGroup, the node of its first bound member, which picks the
/// placement holding it.
pub fn preferences(snapshot: &Snapshot, outcome: &Outcome) -> Preferences {
    let nodes: BTreeMap<String, String> = outcome
        .placements
        .iter()
        .map(|b| (b.pod.clone(), b.node.clone()))
        .collect();
    let first_node = |groups: &[u32]| {
        groups
            .iter()
            .flat_map(|&g| snapshot.groups[g as usize].members.iter())
            .find_map(|&p| nodes.get(&snapshot.pods[p as usize].key).cloned())
    };
    let mut groups = BTreeMap::new();
    for (id, group) in snapshot.groups.iter().enumerate() {
        if let Some(node) = first_node(&[id as u32]) {
            groups.insert(group.key.clone(), node);
        }
    }
    for (id, composite) in snapshot.composites.iter().enumerate() {
        if let Some(node) = first_node(&snapshot.subtree_groups(id as u32)) {
            groups.insert(composite.key.clone(), node);
        }
    }
    Preferences {
        nodes,
        groups,
        ..Preferences::default()
    }
}

/// A kind of nondeterminism of kube-scheduler that explains a difference,
/// identified from kube-scheduler's own recorded scores. kube-scheduler's
/// other source of nondeterminism, the race of its parallel filter workers
/// to find the first feasible nodes, cannot arise where every node is
/// filtered (`percentageOfNodesToScore: 100`, as the harness runs it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Nondeterminism {
    /// kube-scheduler chose among nodes (or placements) of equal top score
    /// (`selectHost` takes one of them at random), and wasched's node is
    /// one of them.
    TieAmongEqualScores,
}

impl fmt::Display for Nondeterminism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Nondeterminism::TieAmongEqualScores => f.write_str("tie among equal scores"),
        }
    }
}

/// One pod on which the engines decided differently, and the upstream
/// nondeterminism that explains it, if one does.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Difference {
    /// What each engine decided.
    #[serde(flatten)]
    pub disagreement: Disagreement,
    /// The kind of kube-scheduler nondeterminism it is; `None`: unexplained.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explained: Option<Nondeterminism>,
}

/// Every pod of `snapshot` (the cluster before either run) on which
/// `wasched` and `kube` disagree and no [`Nondeterminism`] explains it,
/// sorted by pod.
pub fn disagreements(snapshot: &Snapshot, wasched: &Outcome, kube: &KubeRun) -> Vec<Disagreement> {
    differences(snapshot, wasched, kube)
        .into_iter()
        .filter(|d| d.explained.is_none())
        .map(|d| d.disagreement)
        .collect()
}

/// Every pod of `snapshot` that `wasched` and `kube` decided differently,
/// each with the nondeterminism that explains it if one does, sorted by
/// pod.
pub fn differences(snapshot: &Snapshot, wasched: &Outcome, kube: &KubeRun) -> Vec<Difference> {
    let ours = fates(snapshot, wasched);
    let theirs = fates(snapshot, &kube.outcome);
    let ties = kube.result.pods_by_key();
    let mut found = Vec::new();
    for (pod, mine) in &ours {
        let Some(other) = theirs.get(pod) else {
            continue;
        };
        let differ = |field: &str, explained| Difference {
            disagreement: Disagreement {
                pod: pod.clone(),
                field: field.into(),
                wasched: mine.to_string(),
                kube_scheduler: other.to_string(),
            },
            explained,
        };
        match (mine, other) {
            (Fate::Bound(a), Fate::Bound(b)) if a != b => {
                let tied = ties
                    .get(pod)
                    .and_then(|p| p.tie.as_ref())
                    .is_some_and(|tie| tie.choices.iter().any(|c| c == a));
                let explained = tied.then_some(Nondeterminism::TieAmongEqualScores);
                found.push(differ("node", explained));
            }
            (Fate::Bound(_), Fate::Bound(_)) => {}
            (a, b) if a != b => found.push(differ("fate", None)),
            _ => {}
        }
    }
    found
}
