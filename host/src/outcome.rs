//! What a run decided, in the shape scripts consume (`--output json|yaml`)
//! and as an aligned table for people.

use serde::Serialize;

/// A pending pod the run bound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Binding {
    /// `namespace/name`.
    pub pod: String,
    /// Node name.
    pub node: String,
}

/// A pending pod left pending.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unschedulable {
    /// `namespace/name`.
    pub pod: String,
    /// Why, in kube-scheduler's style.
    pub reason: String,
    /// For a lone pod that tried to preempt: why it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemption: Option<String>,
}

/// A topology domain: a value of a node label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Domain {
    /// The node label (`topology.kubernetes.io/zone`).
    pub key: String,
    /// Its value (`eu-west-1a`).
    pub value: String,
}

/// Placements generated and evaluated in a run
/// (`scheduler_generated_placements_total`,
/// `scheduler_placement_evaluations_total{result}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlacementStats {
    /// Placements returned by placement-generate plugins.
    pub generated: u64,
    /// Placement attempts that admitted the group (not counting
    /// preemption trials).
    pub feasible: u64,
    /// Placement attempts that did not.
    pub infeasible: u64,
    /// Placement attempts of preemption trials that admitted the group.
    pub trial_feasible: u64,
    /// Placement attempts of preemption trials that did not.
    pub trial_infeasible: u64,
    /// CompositePodGroup trees placed by the tree search (preemption trials
    /// included).
    pub tree_searches: u64,
    /// Searches for a node answered from the misfits remembered
    /// ([`Reuse::misfits`](crate::scheduler::Reuse::misfits)) instead of
    /// walked.
    pub remembered_misfits: u64,
    /// Nodes counted short of a pod's requests from what an earlier walk
    /// found of them in the same state
    /// ([`Reuse::short_nodes`](crate::scheduler::Reuse::short_nodes))
    /// instead of checked.
    pub known_short_nodes: u64,
    /// Nodes whose default score parts were taken from what an earlier
    /// scoring of a pod of the same shape worked out in the same state
    /// ([`Reuse::node_scores`](crate::scheduler::Reuse::node_scores))
    /// instead of worked out again.
    pub known_node_scores: u64,
    /// Placement-generate answers handed to a unit from the ones a plugin
    /// marked reusable ([`Reuse::placements`](crate::scheduler::Reuse::placements))
    /// instead of asked.
    pub reused_placements: u64,
}

/// A preemption attempt of a PodGroup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreemptionOutcome {
    /// `preempted`, or `failed` (nothing evicted).
    pub result: String,
    /// The domain the group was placed in by preempting (a placement name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Pods evicted.
    pub victims: u32,
    /// Why it failed (`preemptionPolicy Never`, `no lower-priority
    /// victims`, `even evicting every candidate would not make room`, a
    /// plugin error); empty when it preempted.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// A PodGroup that lost pods to a preemptor: its `DisruptionTarget` condition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Disruption {
    /// `DisruptionTarget`.
    pub condition: String,
    /// `PreemptionByScheduler`.
    pub reason: String,
    /// The preemptors (PodGroups or pods), in order.
    pub by: Vec<String>,
    /// Its pods evicted.
    pub evicted: u32,
}

/// A pod evicted by preemption.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Eviction {
    /// The victim, `namespace/name`.
    pub pod: String,
    /// The preemptor (pod or PodGroup), `namespace/name`.
    pub by: String,
}

/// The verdict on one PodGroup that had pending members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupDecision {
    /// `namespace/name`.
    pub pod_group: String,
    /// Whether the group was admitted (its pods bound) in this run: the
    /// `PodGroupInitiallyScheduled` condition's status.
    pub scheduled: bool,
    /// Why not, or what stayed pending although admitted; empty otherwise.
    pub reason: String,
    /// `minCount` for gang groups.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_count: Option<u32>,
    /// Member pods bound by this run.
    pub bound: u32,
    /// Member pods still pending after this run.
    pub pending: u32,
    /// The placement the group was admitted into (`cluster` without topology).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    /// The topology domains it was placed in, outermost first (one per level
    /// of a CompositePodGroup tree); empty without topology constraints.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub domains: Vec<Domain>,
    /// The reason of the `PodGroupInitiallyScheduled` condition a failed
    /// attempt sets: `Unschedulable`, or `SchedulerError` when a plugin
    /// failed; empty when admitted or when PreEnqueue held the group back
    /// (no attempt was made).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub condition_reason: String,
    /// The group's preemption attempt, if it made one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemption: Option<PreemptionOutcome>,
    /// Set when preemption evicted pods of this group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disruption: Option<Disruption>,
}

/// Everything a run decided.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// Pods bound, in the order they were bound.
    pub placements: Vec<Binding>,
    /// Pods left pending, in scheduling order.
    pub unschedulable: Vec<Unschedulable>,
    /// Pods evicted by preemption, in eviction order.
    pub evictions: Vec<Eviction>,
    /// Preemptors' pods nominated to the nodes their victims free, waiting
    /// for the victims to go (live runs only: a snapshot's victims stop at
    /// once and their preemptors are bound).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nominations: Vec<Binding>,
    /// One entry per PodGroup with pending members, in scheduling order;
    /// then one per running PodGroup that preemption disrupted; then one
    /// per PodGroup no pod of the snapshot joins.
    pub pod_groups: Vec<PodGroupDecision>,
    /// How the snapshot was read and what the run could not model.
    pub warnings: Vec<String>,
    /// How objects written in other dialects, and Jobs, were read.
    pub notes: Vec<String>,
    /// Plugin calls that failed, counted by plugin, extension point and cause.
    pub plugin_errors: Vec<PluginErrorCount>,
    /// Workload objects whose controllers make no pods (suspended, zero
    /// replicas, a missing runtime), and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub without_pods: Vec<crate::manifest::WithoutPods>,
    /// Placements generated and evaluated (metrics only).
    #[serde(skip)]
    pub placement_stats: PlacementStats,
    /// The plugins that rejected each lone pod no node could take in this
    /// run, left pending or preempting, by `namespace/name` (the queue's:
    /// they decide which cluster events requeue it).
    #[serde(skip)]
    pub rejectors: std::collections::BTreeMap<String, crate::filters::Rejectors>,
}

/// How often one plugin failed at one extension point for one cause
/// (`wasched_plugin_errors_total`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginErrorCount {
    /// The plugin's name.
    pub plugin: String,
    /// The WIT interface (`permit`, `filter`, ...).
    pub extension_point: String,
    /// `cpu`, `timeout`, `memory`, `stack`, `trap`, `invalid-result` or `instantiation`.
    pub cause: String,
    /// Failed calls.
    pub count: u64,
}

/// What a run did not attempt and the output must still show, whichever
/// engine decided: a PodGroup that no pod of the snapshot joins (pending,
/// with the reason), and the workload objects that make no pods.
pub fn record_unattempted(snapshot: &crate::Snapshot, outcome: &mut Outcome) {
    for group in &snapshot.groups {
        let Some(spec) = &group.spec else { continue };
        if !group.members.is_empty() || group.parent.is_some() {
            continue;
        }
        let wait = match spec.policy {
            crate::model::Policy::Gang { min_count } => {
                format!(": PreEnqueue holds it until minCount ({min_count}) pods exist")
            }
            crate::model::Policy::Basic => String::new(),
        };
        outcome.pod_groups.push(PodGroupDecision {
            pod_group: group.key.clone(),
            scheduled: false,
            reason: format!(
                "no pod of the snapshot joins it (spec.schedulingGroup.podGroupName){wait}"
            ),
            min_count: group.min_count(),
            bound: 0,
            pending: 0,
            placement: None,
            domains: Vec::new(),
            condition_reason: String::new(),
            preemption: None,
            disruption: None,
        });
    }
    outcome
        .without_pods
        .extend(snapshot.without_pods.iter().cloned());
}

/// The reason a member of a PodGroup that was not admitted is left
/// pending with: the group's verdict.
pub fn member_reason(group: &str, verdict: &str) -> String {
    format!("PodGroup {group} not admitted: {verdict}")
}

impl Outcome {
    /// The JSON object scripts read (one line per field is not promised).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("outcome serialises")
    }

    /// The same object as YAML.
    pub fn to_yaml(&self) -> String {
        serde_norway::to_string(self).expect("outcome serialises")
    }

    /// An aligned table: groups first, then pods ([`Outcome::diagnostics`]
    /// are apart), whole.
    pub fn to_table(&self) -> String {
        self.to_table_for(None)
    }

    /// The table for a terminal of `width` columns (`None`: a pipe or a
    /// file, cells whole). A pending group's verdict is given once, on its
    /// line; a member left pending for the same reason refers to it.
    pub fn to_table_for(&self, width: Option<usize>) -> String {
        // A member's reason that is its group's verdict, as the cycle
        // words it (or the verdict itself).
        // A bare verdict counts only when one group has it: sibling groups
        // of a tree may share one.
        let mut group_of_reason: std::collections::HashMap<String, Option<&str>> =
            std::collections::HashMap::new();
        for g in self.pod_groups.iter().filter(|g| !g.reason.is_empty()) {
            let name = g.pod_group.as_str();
            group_of_reason.insert(member_reason(name, &g.reason), Some(name));
            group_of_reason
                .entry(g.reason.clone())
                .and_modify(|shared| *shared = None)
                .or_insert(Some(name));
        }
        let mut rows: Vec<[String; 4]> = vec![[
            "KIND".into(),
            "NAME".into(),
            "RESULT".into(),
            "DETAIL".into(),
        ]];
        for g in &self.pod_groups {
            let result = if g.scheduled { "admitted" } else { "pending" };
            let counts = match g.min_count {
                Some(min) => format!("{} bound, {} pending, minCount {min}", g.bound, g.pending),
                None => format!("{} bound, {} pending", g.bound, g.pending),
            };
            let mut detail = counts;
            if let Some(p) = &g.placement {
                detail.push_str(&format!(", placement {p}"));
            }
            if g.domains.len() > 1 {
                let path: Vec<String> = g
                    .domains
                    .iter()
                    .map(|d| format!("{}={}", d.key, d.value))
                    .collect();
                detail.push_str(&format!(" ({})", path.join(" > ")));
            }
            if !g.reason.is_empty() {
                detail.push_str(&format!(": {}", g.reason));
            }
            if let Some(p) = &g.preemption {
                match p.domain.as_deref() {
                    Some(domain) => {
                        detail.push_str(&format!("; preempted {} pod(s) in {domain}", p.victims))
                    }
                    None => detail.push_str(&format!("; preemption: {}", p.reason)),
                }
            }
            if let Some(d) = &g.disruption {
                detail.push_str(&format!(
                    "; {} ({}): {} pod(s) evicted by {}",
                    d.condition,
                    d.reason,
                    d.evicted,
                    d.by.join(", ")
                ));
            }
            rows.push([
                "PodGroup".into(),
                g.pod_group.clone(),
                result.into(),
                detail,
            ]);
        }
        for b in &self.placements {
            rows.push([
                "Pod".into(),
                b.pod.clone(),
                "bound".into(),
                format!("node {}", b.node),
            ]);
        }
        for u in &self.unschedulable {
            let mut detail = match group_of_reason.get(&u.reason) {
                Some(Some(group)) => format!("see PodGroup {group}"),
                _ => u.reason.clone(),
            };
            if let Some(why) = &u.preemption {
                detail.push_str(&format!("; preemption: {why}"));
            }
            rows.push(["Pod".into(), u.pod.clone(), "pending".into(), detail]);
        }
        for e in &self.evictions {
            rows.push([
                "Pod".into(),
                e.pod.clone(),
                "evicted".into(),
                format!("by {}", e.by),
            ]);
        }
        for w in &self.without_pods {
            rows.push([
                w.kind.clone(),
                w.name.clone(),
                "no pods".into(),
                format!("{}: its controller makes none", w.reason),
            ]);
        }
        crate::table::render_within(&rows, width)
    }

    /// How the snapshot was read and what the run could not model, one
    /// `note:` or `warning:` line each: what the CLI prints on stderr in
    /// every output mode (the JSON and YAML forms carry them too).
    pub fn diagnostics(&self) -> String {
        let mut out = String::new();
        for n in &self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        for w in &self.warnings {
            out.push_str(&format!("warning: {w}\n"));
        }
        out
    }
}
