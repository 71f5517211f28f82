//! The visual report (`--html FILE`): the cluster before and after one or
//! two runs, and every decision, as one self-contained HTML page.
//!
//! [`ClusterView`] is captured from the snapshot before the run (nodes, their
//! topology labels and capacity, pods and their groups); [`RunView::of`]
//! reads one run's [`Outcome`] against it; [`Report`] is the JSON the page
//! renders ([`html::render`]).

pub mod html;

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::model::Snapshot;
use crate::outcome::Outcome;

/// Node label keys tried, in order, for each level of the map when no
/// `--group-by` is given: zone, block, rack. A level none of whose keys
/// any node carries is left out.
pub const DEFAULT_GROUP_BY: [&[&str]; 3] = [
    &["topology.kubernetes.io/zone"],
    &[
        "topology.wasched.io/block",
        "network.topology.kubernetes.io/block",
        "cloud.provider.com/topology-block",
    ],
    &[
        "topology.wasched.io/rack",
        "network.topology.kubernetes.io/rack",
        "cloud.provider.com/topology-rack",
        "nvidia.com/gpu.clique",
    ],
];

/// The resource column the model keeps for pod counts; not drawn.
const PODS_RESOURCE: &str = "pods";

/// A node as the map draws it.
#[derive(Debug, Clone, Serialize)]
pub struct NodeView {
    /// `metadata.name`.
    pub name: String,
    /// The value of each `groupBy` key, `None` where the node lacks it.
    pub path: Vec<Option<String>>,
    /// Allocatable amount per shown resource.
    pub allocatable: Vec<u64>,
    /// `spec.unschedulable`.
    pub cordoned: bool,
    /// `key=value:Effect` per taint.
    pub taints: Vec<String>,
    /// `metadata.labels` (not serialized; used to find domains).
    #[serde(skip)]
    pub labels: BTreeMap<String, String>,
}

/// A pod of the snapshot as it was before the run.
#[derive(Debug, Clone, Serialize)]
pub struct PodView {
    /// `namespace/name`.
    pub name: String,
    /// Index into [`ClusterView::groups`].
    pub group: Option<usize>,
    /// Requests per shown resource.
    pub requests: Vec<u64>,
    /// The node it was bound to before the run.
    pub node: Option<usize>,
    /// Whether it was waiting to be scheduled.
    pub pending: bool,
}

/// The cluster before a run: what the map draws and what outcomes are read
/// against. Terminating pods are left out (they hold no resources).
#[derive(Debug, Clone, Serialize)]
pub struct ClusterView {
    /// Label keys the map groups nodes by, outermost first.
    #[serde(rename = "groupBy")]
    pub group_by: Vec<String>,
    /// Shown resources: `cpu` (millicores), `memory` (bytes), then extended
    /// resources.
    pub resources: Vec<String>,
    /// Nodes, by name.
    pub nodes: Vec<NodeView>,
    /// PodGroup keys.
    pub groups: Vec<String>,
    /// Pods, by `namespace/name`.
    pub pods: Vec<PodView>,
    /// Per PodGroup, the root CompositePodGroup of its tree (a tree
    /// preempts under its root's name).
    #[serde(skip)]
    pub roots: Vec<Option<String>>,
    #[serde(skip)]
    pod_index: HashMap<String, usize>,
    #[serde(skip)]
    node_index: HashMap<String, usize>,
}

impl ClusterView {
    /// Captures `snapshot` (before the run). `group_by` empty: the levels of
    /// [`DEFAULT_GROUP_BY`] the nodes carry.
    pub fn capture(snapshot: &Snapshot, group_by: &[String]) -> Self {
        let group_by = if group_by.is_empty() {
            default_group_by(snapshot)
        } else {
            group_by.to_vec()
        };
        let columns: Vec<usize> = (0..snapshot.resource_names.len())
            .filter(|&r| snapshot.resource_names[r] != PODS_RESOURCE)
            .collect();
        let nodes: Vec<NodeView> = snapshot
            .nodes
            .iter()
            .enumerate()
            .map(|(n, node)| NodeView {
                name: node.name.clone(),
                path: group_by
                    .iter()
                    .map(|k| node.labels.get(k).cloned())
                    .collect(),
                allocatable: columns
                    .iter()
                    .map(|&r| snapshot.allocatable(r)[n])
                    .collect(),
                cordoned: node.unschedulable,
                taints: node
                    .taints
                    .iter()
                    .map(|t| match &t.value {
                        Some(v) if !v.is_empty() => format!("{}={v}:{}", t.key, t.effect),
                        _ => format!("{}:{}", t.key, t.effect),
                    })
                    .collect(),
                labels: (*node.labels).clone(),
            })
            .collect();
        let pods: Vec<PodView> = snapshot
            .pods
            .iter()
            .filter(|p| !p.terminating)
            .map(|p| PodView {
                name: p.key.clone(),
                group: p.group.map(|g| g as usize),
                requests: columns.iter().map(|&r| p.requests[r]).collect(),
                node: p.node.map(|n| n as usize),
                pending: p.pending,
            })
            .collect();
        Self {
            group_by,
            resources: columns
                .iter()
                .map(|&r| snapshot.resource_names[r].clone())
                .collect(),
            pod_index: pods
                .iter()
                .enumerate()
                .map(|(i, p)| (p.name.clone(), i))
                .collect(),
            node_index: nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (n.name.clone(), i))
                .collect(),
            nodes,
            groups: snapshot.groups.iter().map(|g| g.key.clone()).collect(),
            roots: (0..snapshot.groups.len() as u32)
                .map(|g| {
                    snapshot
                        .root_of(g)
                        .map(|c| snapshot.composites[c as usize].key.clone())
                })
                .collect(),
            pods,
        }
    }

    /// The index of pod `name` (`namespace/name`).
    pub fn pod(&self, name: &str) -> Option<usize> {
        self.pod_index.get(name).copied()
    }

    /// The index of node `name`.
    pub fn node(&self, name: &str) -> Option<usize> {
        self.node_index.get(name).copied()
    }

    /// GPUs the pods in `states` hold: requests of resources named `gpu` or
    /// `<vendor>/gpu` by pods running or bound after the run.
    pub fn gpus_used(&self, states: &[PodState]) -> u64 {
        let gpu_columns: Vec<usize> = (0..self.resources.len())
            .filter(|&r| is_gpu(&self.resources[r]))
            .collect();
        states
            .iter()
            .zip(&self.pods)
            .filter(|(s, _)| s.state.holds_node())
            .map(|(_, p)| gpu_columns.iter().map(|&r| p.requests[r]).sum::<u64>())
            .sum()
    }
}

/// Whether a resource name counts as GPUs (`nvidia.com/gpu`, `amd.com/gpu`).
pub fn is_gpu(resource: &str) -> bool {
    resource == "gpu" || resource.ends_with("/gpu")
}

fn default_group_by(snapshot: &Snapshot) -> Vec<String> {
    DEFAULT_GROUP_BY
        .iter()
        .filter_map(|keys| {
            keys.iter()
                .find(|k| snapshot.nodes.iter().any(|n| n.labels.contains_key(**k)))
                .map(|k| k.to_string())
        })
        .collect()
}

/// Where a pod is after a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fate {
    /// Bound before the run and still there.
    Running,
    /// Bound by the run.
    Bound,
    /// Left pending.
    Pending,
    /// Evicted by the run's preemption.
    Evicted,
}

impl Fate {
    /// The word for it, as in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Fate::Running => "running",
            Fate::Bound => "bound",
            Fate::Pending => "pending",
            Fate::Evicted => "evicted",
        }
    }

    /// Whether the pod occupies a node after the run.
    pub fn holds_node(self) -> bool {
        matches!(self, Fate::Running | Fate::Bound)
    }
}

/// One pod after a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PodState {
    /// Its fate.
    pub state: Fate,
    /// Its node after the run (for an evicted pod: the node it left).
    pub node: Option<usize>,
}

/// The run's totals (`compare`'s summary line).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Pending pods bound.
    pub bound: usize,
    /// Pending pods left pending.
    pub pending: usize,
    /// Pods evicted.
    pub evicted: usize,
    /// GPUs held by pods after the run ([`ClusterView::gpus_used`]).
    pub gpus: u64,
}

/// A plugin of a run, for the header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PluginInfo {
    /// The name it registered.
    pub name: String,
    /// Where it came from (`bundled:gang-permit`, a file).
    pub source: String,
    /// `wasched:scheduler@0.2.0`, or `native`.
    pub contract: String,
}

impl PluginInfo {
    /// What the header says of `plugin`.
    pub fn of(plugin: &dyn crate::framework::Plugin) -> Self {
        Self {
            name: plugin.name().to_string(),
            source: plugin.source().to_string(),
            contract: plugin.contract_version().map_or_else(
                || "native".into(),
                |v| format!("{}@{v}", crate::runtime::PACKAGE),
            ),
        }
    }
}

/// One decision as the panel lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DecisionView {
    /// `PodGroup` or `Pod`.
    pub kind: &'static str,
    /// `namespace/name`.
    pub name: String,
    /// `admitted`, `pending`, `disrupted` (PodGroups); `bound`, `pending`,
    /// `evicted` (pods).
    pub result: &'static str,
    /// Why (pending), or what else happened.
    pub reason: String,
    /// The placement it was admitted into.
    pub placement: Option<String>,
    /// Its preemption, in words.
    pub preemption: Option<String>,
    /// Its pods (indices into [`ClusterView::pods`]).
    pub pods: Vec<usize>,
    /// The nodes of its innermost topology domain.
    pub nodes: Vec<usize>,
    /// Pods it evicted.
    pub evictions: Vec<usize>,
}

impl DecisionView {
    /// `kind/name`: how comparisons and the page name a decision.
    pub fn key(&self) -> String {
        format!("{}/{}", self.kind, self.name)
    }
}

/// One run read against the cluster.
#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    /// What was loaded: `bundled`, a plugin directory, a config file.
    pub label: String,
    /// The plugins that ran.
    pub plugins: Vec<PluginInfo>,
    /// The run's warnings.
    pub warnings: Vec<String>,
    /// Totals.
    pub summary: Summary,
    /// Every pod after the run, parallel to [`ClusterView::pods`].
    pub pods: Vec<PodState>,
    /// Every PodGroup decision, then every lone pod's.
    pub decisions: Vec<DecisionView>,
}

impl RunView {
    /// Reads `outcome` against `cluster`.
    pub fn of(
        cluster: &ClusterView,
        outcome: &Outcome,
        label: &str,
        plugins: Vec<PluginInfo>,
    ) -> Self {
        let mut pods: Vec<PodState> = cluster
            .pods
            .iter()
            .map(|p| PodState {
                state: if p.pending {
                    Fate::Pending
                } else {
                    Fate::Running
                },
                node: p.node,
            })
            .collect();
        for b in &outcome.placements {
            if let Some(i) = cluster.pod(&b.pod) {
                pods[i] = PodState {
                    state: Fate::Bound,
                    node: cluster.node(&b.node),
                };
            }
        }
        for e in &outcome.evictions {
            if let Some(i) = cluster.pod(&e.pod) {
                pods[i].state = Fate::Evicted;
            }
        }
        let summary = Summary {
            bound: outcome.placements.len(),
            pending: outcome.unschedulable.len(),
            evicted: outcome.evictions.len(),
            gpus: cluster.gpus_used(&pods),
        };
        Self {
            label: label.to_string(),
            plugins,
            warnings: outcome.warnings.clone(),
            summary,
            decisions: decisions(cluster, outcome),
            pods,
        }
    }
}

/// The panel's decisions: PodGroups in the outcome's order, then lone pods
/// (bound, pending, evicted) in the outcome's order.
fn decisions(cluster: &ClusterView, outcome: &Outcome) -> Vec<DecisionView> {
    let mut members: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, pod) in cluster.pods.iter().enumerate() {
        if let Some(g) = pod.group {
            members
                .entry(cluster.groups[g].as_str())
                .or_default()
                .push(i);
        }
    }
    let mut evictions: HashMap<&str, Vec<usize>> = HashMap::new();
    for e in &outcome.evictions {
        if let Some(pod) = cluster.pod(&e.pod) {
            evictions.entry(e.by.as_str()).or_default().push(pod);
        }
    }
    let evicted_by = |name: &str| evictions.get(name).cloned().unwrap_or_default();
    let in_group = |pod: &str| {
        cluster
            .pod(pod)
            .is_some_and(|i| cluster.pods[i].group.is_some())
    };
    let group_index: HashMap<&str, usize> = cluster
        .groups
        .iter()
        .enumerate()
        .map(|(i, g)| (g.as_str(), i))
        .collect();
    let mut out = Vec::new();
    for g in &outcome.pod_groups {
        let result = if g.disruption.is_some() && g.pending == 0 && g.bound == 0 {
            "disrupted"
        } else if g.scheduled {
            "admitted"
        } else {
            "pending"
        };
        let mut reason = g.reason.clone();
        if let Some(d) = &g.disruption {
            let text = format!(
                "{} ({}): {} pod(s) evicted by {}",
                d.condition,
                d.reason,
                d.evicted,
                d.by.join(", ")
            );
            reason = if reason.is_empty() {
                text
            } else {
                format!("{reason}; {text}")
            };
        }
        let nodes = g.domains.last().map_or_else(Vec::new, |d| {
            (0..cluster.nodes.len())
                .filter(|&n| cluster.nodes[n].labels.get(&d.key) == Some(&d.value))
                .collect()
        });
        out.push(DecisionView {
            kind: "PodGroup",
            name: g.pod_group.clone(),
            result,
            reason,
            placement: g.placement.clone(),
            preemption: g.preemption.as_ref().map(|p| match &p.domain {
                Some(domain) => format!("preempted {} pod(s) in {domain}", p.victims),
                None => format!("failed: {}", p.reason),
            }),
            pods: members
                .get(g.pod_group.as_str())
                .cloned()
                .unwrap_or_default(),
            nodes,
            // A PodGroup in a CompositePodGroup tree preempts as the tree,
            // under the root's name.
            evictions: match group_index
                .get(g.pod_group.as_str())
                .and_then(|&i| cluster.roots[i].as_deref())
            {
                Some(root) => evicted_by(root),
                None => evicted_by(&g.pod_group),
            },
        });
    }
    let lone = |pod: &str, result: &'static str, reason: String, preemption: Option<String>| {
        let index = cluster.pod(pod);
        DecisionView {
            kind: "Pod",
            name: pod.to_string(),
            result,
            reason,
            placement: None,
            preemption,
            pods: index.into_iter().collect(),
            nodes: Vec::new(),
            evictions: evicted_by(pod),
        }
    };
    for b in outcome.placements.iter().filter(|b| !in_group(&b.pod)) {
        let evictions = evicted_by(&b.pod);
        let preemption =
            (!evictions.is_empty()).then(|| format!("preempted {} pod(s)", evictions.len()));
        out.push(lone(
            &b.pod,
            "bound",
            format!("node {}", b.node),
            preemption,
        ));
    }
    for u in outcome.unschedulable.iter().filter(|u| !in_group(&u.pod)) {
        let preemption = u.preemption.as_ref().map(|p| format!("failed: {p}"));
        out.push(lone(&u.pod, "pending", u.reason.clone(), preemption));
    }
    for e in outcome.evictions.iter().filter(|e| !in_group(&e.pod)) {
        out.push(lone(&e.pod, "evicted", format!("by {}", e.by), None));
    }
    out
}

/// The pods and decisions whose results differ between two runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Differences {
    /// Pods with a different fate or node.
    pub pods: Vec<usize>,
    /// Decisions (`kind/name`) with a different result, placement or
    /// evictions, or present in one run only.
    pub decisions: Vec<String>,
}

/// The JSON document the page renders.
#[derive(Debug, Clone, Serialize)]
pub struct Report<'a> {
    /// The snapshot's name(s).
    pub title: String,
    /// `wasched <version>`.
    pub tool: String,
    /// The cluster before the run(s).
    #[serde(flatten)]
    pub cluster: &'a ClusterView,
    /// One run, or A and B.
    pub runs: Vec<&'a RunView>,
    /// For two runs: what differs.
    pub differences: Option<&'a Differences>,
}

impl<'a> Report<'a> {
    /// The report of `runs` over `cluster`, titled `title`.
    pub fn new(
        title: &str,
        cluster: &'a ClusterView,
        runs: Vec<&'a RunView>,
        differences: Option<&'a Differences>,
    ) -> Self {
        Self {
            title: title.to_string(),
            tool: format!("wasched {}", env!("CARGO_PKG_VERSION")),
            cluster,
            runs,
            differences,
        }
    }
}
