//! `WorkloadPreemption`: workload-aware preemption (KEP-5710, Kubernetes
//! v1.37), the ordering and choosing half of kube-scheduler's
//! `DefaultPreemption` `PodGroupPostFilter`
//! (`pkg/scheduler/framework/preemption/podgrouppreemption.go`).
//!
//! # Extension point
//!
//! **PodGroupPostFilter** (`pod-group-post-filter`, world
//! `workload-preemption`): called for a unit (a PodGroup or a
//! CompositePodGroup root) or a lone pod that did not fit.
//!
//! # Protocol: the host runs the trials, the plugin orders and chooses
//!
//! For each domain — the whole cluster for a unit (kube-scheduler v1.37's
//! `PodGroupEvaluator` has that one domain; a topology-constrained unit's
//! placement is chosen by the trial), each node for a lone pod — the host
//! collects the victim units of strictly lower priority than the preemptor,
//! removes them all and runs the group algorithm once. If the preemptor then
//! fits, the host asks [`Plugin::order_victims`] for the *reprieve order*
//! and puts the units back one by one in that order, keeping each one back
//! while the preemptor still fits; what stays out are the domain's victims.
//! It then asks [`Plugin::select_candidate`] which of the domains that work
//! (the candidates: a lone pod's nodes; a unit has one) to carry out. This
//! plugin runs no trial and evicts nothing: it only answers those two
//! questions.
//!
//! A victim unit is a PodGroup with `disruptionMode: all` (or inside a
//! CompositePodGroup tree with `all`), with all its bound pods; any other
//! pod is a unit of its own.
//!
//! # Reprieve order ([`order_victims`])
//!
//! Most important first (put back first); the answer is a permutation of the
//! units' `index` values. kube-scheduler v1.37.2's order, each rule with
//! its source:
//!
//! 1. units whose eviction would violate a PodDisruptionBudget
//!    (`violates_budget`) first (unless `budgetViolationsFirst: false`):
//!    `podgrouppreemption.go` `selectVictimsOnDomain` tries to reprieve the
//!    violating units before the others;
//! 2. higher priority first: `util.go` `MoreImportantVictim`;
//! 3. at equal priority, the higher [rank](victim_rank): a unit made whole
//!    by a CompositePodGroup with `disruptionMode: all` (3), then a unit of
//!    a PodGroup — the whole group, or one pod of a `single` group (2) —,
//!    then a pod of no group (1): `MoreImportantVictim`'s `victimRank`;
//!    so at equal priority a pod that belongs to a PodGroup outranks one
//!    that does not, whatever the group's disruption mode (upstream's
//!    `TestPodGroupEvaluator_Preempt_Victims`, "mix of no groups and pod
//!    groups");
//! 4. at equal rank, the larger unit (more pods) first: `MoreImportantVictim`;
//! 5. then the older (smaller `start_time`) first: `MoreImportantVictim`'s
//!    `EarliestStartTime`;
//! 6. finally the smaller `index`: upstream's `sort.Slice` leaves full ties
//!    in input order; wasched's answer is deterministic.
//!
//! # Candidate choice ([`select_candidate`])
//!
//! The candidate with the smallest cost wins, comparing ([`CandidateCost`]):
//!
//! 1. fewest victim units that violate a PodDisruptionBudget;
//! 2. lowest highest victim priority (a candidate without victims beats any);
//! 3. lowest sum of victim priorities, counted per victim pod as kube-scheduler
//!    does: each pod adds `priority + 2^31`, so that negative priorities
//!    never make more victims look cheaper;
//! 4. fewest victim pods;
//! 5. latest start among the highest-priority victims (the earliest start
//!    of the victims that have the highest priority; the later it is, the
//!    better: evict the younger);
//! 6. smallest candidate `index`.
//!
//! That is kube-scheduler's `pickOneNodeForPreemption` order (with victim
//! units in place of pods in step 1), used for group preemptors' domains and
//! lone pods' nodes alike. The `candidatePolicy` arg can put one criterion
//! before that whole order:
//!
//! - `FewestVictims` (default): none; the order above as it is.
//! - `FewestEvictedGpus`: fewest GPUs freed by eviction first: the sum, over
//!   the victim pods, of their request of `gpuResource`. A snapshot without
//!   that resource counts 0 for every candidate (the default order decides).
//! - `LowestPrioritySum`: lowest plain sum of victim priorities first (each
//!   victim pod adds its priority, without the offset of step 3).
//!
//! An empty candidate list is answered `Unschedulable` ("no candidate for
//! preemption").
//!
//! # Args
//!
//! All optional (`{}` or none selects the defaults); unknown fields are
//! refused.
//!
//! | field | type | default | meaning |
//! |---|---|---|---|
//! | `candidatePolicy` | string | `FewestVictims` | `FewestVictims`, `FewestEvictedGpus` or `LowestPrioritySum` (see above; exact spelling) |
//! | `gpuResource` | string | `nvidia.com/gpu` | the resource `FewestEvictedGpus` counts; must not be empty |
//! | `budgetViolationsFirst` | bool | `true` | reprieve PDB-violating units first. `false` ignores `violates_budget` in the reprieve order, which departs from kube-scheduler (budgets then only count when choosing a candidate) |
//! | `groupPreemption` | bool | `true` | `false`: a PodGroup or CompositePodGroup never preempts (declined `Unschedulable`, [`GROUP_PREEMPTION_OFF`]); lone pods still do. kube-scheduler v1.37 preempts for a group only at `PodGroupPostFilter`, so this is its behaviour with `DefaultPreemption` disabled there |
//!
//! ```yaml
//! - name: WorkloadPreemption
//!   args:
//!     candidatePolicy: FewestEvictedGpus
//!     gpuResource: nvidia.com/gpu
//! ```
//!
//! The decisions are plain functions ([`order_victims`], [`compare_victims`],
//! [`select_candidate`], [`compare_candidates`], [`CandidateCost::of`]);
//! [`WorkloadPreemption`] only gathers their inputs from the [`Cluster`] view.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cmp::Ordering;
use core::fmt;
use core::str::FromStr;

use serde::Deserialize;
use wasched_sdk::{
    Cluster, Code, Level, Plugin, PodId, PreemptionCandidate, Preemptor, Status, VictimUnit,
};

/// The name this plugin registers under (`Wasched`-prefixed: it cannot
/// collide with a kube-scheduler in-tree plugin; `wasched config migrate`
/// renames the old unprefixed name).
pub const NAME: &str = "WaschedWorkloadPreemption";

/// The default of the `gpuResource` arg.
pub const DEFAULT_GPU_RESOURCE: &str = "nvidia.com/gpu";

/// What every victim pod adds to [`CandidateCost::shifted_priority_sum`] on
/// top of its priority (kube-scheduler's `math.MaxInt32 + 1`).
pub const PRIORITY_OFFSET: i128 = 1 << 31;

/// The reason of the `Unschedulable` answer to an empty candidate list.
pub const NO_CANDIDATE: &str = "no candidate for preemption";

// ---------------------------------------------------------------------------
// Reprieve order
// ---------------------------------------------------------------------------

/// A victim unit's rank in the importance order (kube-scheduler's
/// `victimRank`): 3 for a unit made whole by a CompositePodGroup with
/// `disruptionMode: all`, 2 for a PodGroup's unit (the whole group, or one
/// pod of a `single` group), 1 for a pod of no group.
pub fn victim_rank(made_by_composite: bool, in_group: bool) -> u8 {
    match (made_by_composite, in_group) {
        (true, _) => 3,
        (false, true) => 2,
        (false, false) => 1,
    }
}

/// A victim unit with its [`victim_rank`].
#[derive(Clone, Copy, Debug)]
pub struct Ranked<'a> {
    /// The unit.
    pub unit: &'a VictimUnit,
    /// Its rank.
    pub rank: u8,
}

impl<'a> Ranked<'a> {
    /// `unit` ranked by what it carries alone: 2 if it names a group, else
    /// 1 (the plugin looks further, see [`WorkloadPreemption`]).
    pub fn by_group(unit: &'a VictimUnit) -> Self {
        Self {
            unit,
            rank: victim_rank(false, unit.group.is_some()),
        }
    }
}

/// Compares two victim units for the reprieve order: `Less` when `a` is more
/// important than `b` (is put back first). The order of the crate docs:
/// budget-violating first (only if `budget_violations_first`), higher
/// priority, higher rank, larger unit, older start, smaller `index`.
pub fn compare_victims(a: Ranked, b: Ranked, budget_violations_first: bool) -> Ordering {
    let (ra, rb) = (a.rank, b.rank);
    let (a, b) = (a.unit, b.unit);
    let budget = if budget_violations_first {
        b.violates_budget.cmp(&a.violates_budget)
    } else {
        Ordering::Equal
    };
    budget
        .then_with(|| b.priority.cmp(&a.priority))
        .then_with(|| rb.cmp(&ra))
        .then_with(|| b.pods.len().cmp(&a.pods.len()))
        .then_with(|| a.start_time.cmp(&b.start_time))
        .then_with(|| a.index.cmp(&b.index))
}

/// The reprieve order of `units`, most important first: their `index`
/// values sorted by [`compare_victims`]. Always a permutation of the input
/// indices; deterministic whatever the input order.
pub fn order_victims(units: &[Ranked], budget_violations_first: bool) -> Vec<u32> {
    let mut sorted: Vec<Ranked> = units.to_vec();
    sorted.sort_by(|a, b| compare_victims(*a, *b, budget_violations_first));
    sorted.into_iter().map(|ranked| ranked.unit.index).collect()
}

/// Whether group `group` sits under a CompositePodGroup with
/// `disruptionMode: all` (which then makes the unit, rank 3).
fn under_disrupting_composite(cluster: &impl Cluster, group: wasched_sdk::PodGroupId) -> bool {
    let mut parent = cluster.pod_group_spec(group).and_then(|s| s.parent);
    // Trees are at most 4 levels; the bound guards cycles.
    for _ in 0..8 {
        let Some(c) = parent.and_then(|c| cluster.composite(c)) else {
            return false;
        };
        if c.spec.disruption_mode == wasched_sdk::DisruptionMode::All {
            return true;
        }
        parent = c.spec.parent;
    }
    false
}

// ---------------------------------------------------------------------------
// Candidate choice
// ---------------------------------------------------------------------------

/// How [`select_candidate`] ranks candidates: the `candidatePolicy` arg.
/// Each policy but the default puts one criterion before the default order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CandidatePolicy {
    /// `FewestVictims` (default): kube-scheduler's `pickOneNodeForPreemption`
    /// order (see the crate docs).
    #[default]
    FewestVictims,
    /// `FewestEvictedGpus`: fewest GPUs requested by the victim pods first.
    FewestEvictedGpus,
    /// `LowestPrioritySum`: lowest plain sum of victim pod priorities first.
    LowestPrioritySum,
}

impl CandidatePolicy {
    /// Every policy, in documentation order.
    pub const ALL: [Self; 3] = [
        Self::FewestVictims,
        Self::FewestEvictedGpus,
        Self::LowestPrioritySum,
    ];

    /// The name used in the `candidatePolicy` arg.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FewestVictims => "FewestVictims",
            Self::FewestEvictedGpus => "FewestEvictedGpus",
            Self::LowestPrioritySum => "LowestPrioritySum",
        }
    }
}

impl fmt::Display for CandidatePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CandidatePolicy {
    type Err = String;

    /// Parses an exact policy name; the error names the valid ones.
    fn from_str(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|policy| policy.as_str() == name)
            .ok_or_else(|| {
                format!(
                    "unknown candidatePolicy {name:?}; expected one of FewestVictims, \
                     FewestEvictedGpus, LowestPrioritySum"
                )
            })
    }
}

/// What the candidate choice compares about one candidate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CandidateCost {
    /// The candidate's `index`.
    pub index: u32,
    /// Victim units whose eviction would violate a PodDisruptionBudget.
    pub budget_violations: u32,
    /// The highest victim priority; `None` without victims.
    pub highest_priority: Option<i32>,
    /// The earliest `start_time` among the victims of the highest priority;
    /// `None` without victims.
    pub highest_priority_start: Option<i64>,
    /// The plain sum of victim priorities, one term per victim pod.
    pub priority_sum: i128,
    /// Victim pods.
    pub pods: u64,
    /// GPUs requested by the victim pods (0 unless the policy counts them).
    pub gpus: u64,
}

impl CandidateCost {
    /// The cost of `candidate`, with `gpus` evicted GPUs (see
    /// [`evicted_gpus`]; pass 0 when the policy does not count them).
    pub fn of(candidate: &PreemptionCandidate, gpus: u64) -> Self {
        let victims = &candidate.victims;
        let highest_priority = victims.iter().map(|unit| unit.priority).max();
        let highest_priority_start = highest_priority.and_then(|highest| {
            victims
                .iter()
                .filter(|unit| unit.priority == highest)
                .map(|unit| unit.start_time)
                .min()
        });
        let mut cost = Self {
            index: candidate.index,
            highest_priority,
            highest_priority_start,
            gpus,
            ..Self::default()
        };
        for unit in victims {
            let pods = unit.pods.len() as u64;
            cost.budget_violations += u32::from(unit.violates_budget);
            cost.pods += pods;
            cost.priority_sum += i128::from(unit.priority) * i128::from(pods);
        }
        cost
    }

    /// kube-scheduler's priority sum: each victim pod adds
    /// `priority + 2^31` ([`PRIORITY_OFFSET`]).
    pub fn shifted_priority_sum(&self) -> i128 {
        self.priority_sum + PRIORITY_OFFSET * i128::from(self.pods)
    }
}

/// The GPUs evicted by `candidate`: the sum over its victim pods of
/// `pod_gpus(pod)` (their request of the GPU resource).
pub fn evicted_gpus(
    candidate: &PreemptionCandidate,
    mut pod_gpus: impl FnMut(PodId) -> u64,
) -> u64 {
    candidate
        .victims
        .iter()
        .flat_map(|unit| &unit.pods)
        .fold(0u64, |sum, &pod| sum.saturating_add(pod_gpus(pod)))
}

/// Compares two candidates under `policy`: `Less` when `a` is the better one
/// to carry out. The policy's own criterion (if any) first, then the default
/// order of the crate docs, ending with the smaller `index`.
pub fn compare_candidates(
    policy: CandidatePolicy,
    a: &CandidateCost,
    b: &CandidateCost,
) -> Ordering {
    let first = match policy {
        CandidatePolicy::FewestVictims => Ordering::Equal,
        CandidatePolicy::FewestEvictedGpus => a.gpus.cmp(&b.gpus),
        CandidatePolicy::LowestPrioritySum => a.priority_sum.cmp(&b.priority_sum),
    };
    first
        .then_with(|| a.budget_violations.cmp(&b.budget_violations))
        .then_with(|| a.highest_priority.cmp(&b.highest_priority))
        .then_with(|| a.shifted_priority_sum().cmp(&b.shifted_priority_sum()))
        .then_with(|| a.pods.cmp(&b.pods))
        // Later is better: reversed.
        .then_with(|| b.highest_priority_start.cmp(&a.highest_priority_start))
        .then_with(|| a.index.cmp(&b.index))
}

/// The `index` of the candidate to carry out under `policy` (the least by
/// [`compare_candidates`]). `pod_gpus(pod)` is a victim pod's GPU request;
/// it is called only under [`CandidatePolicy::FewestEvictedGpus`].
/// `Unschedulable` ([`NO_CANDIDATE`]) when `candidates` is empty.
pub fn select_candidate(
    policy: CandidatePolicy,
    candidates: &[PreemptionCandidate],
    mut pod_gpus: impl FnMut(PodId) -> u64,
) -> Result<u32, Status> {
    candidates
        .iter()
        .map(|candidate| {
            let gpus = match policy {
                CandidatePolicy::FewestEvictedGpus => evicted_gpus(candidate, &mut pod_gpus),
                _ => 0,
            };
            CandidateCost::of(candidate, gpus)
        })
        .min_by(|a, b| compare_candidates(policy, a, b))
        .map(|best| best.index)
        .ok_or_else(|| Status::new(Code::Unschedulable, NO_CANDIDATE))
}

// ---------------------------------------------------------------------------
// The plugin
// ---------------------------------------------------------------------------

/// The plugin's args (camelCase in JSON/YAML; all optional; unknown fields
/// are refused). See the crate docs for their meaning.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Args {
    /// `candidatePolicy`: `FewestVictims` (default), `FewestEvictedGpus` or
    /// `LowestPrioritySum`.
    pub candidate_policy: Option<String>,
    /// `gpuResource`: the resource `FewestEvictedGpus` counts; default
    /// [`DEFAULT_GPU_RESOURCE`].
    pub gpu_resource: Option<String>,
    /// `budgetViolationsFirst`: reprieve PDB-violating units first; default
    /// `true` (kube-scheduler's behaviour).
    pub budget_violations_first: Option<bool>,
    /// `groupPreemption`: whether a PodGroup or CompositePodGroup may
    /// preempt; default `true`. `false` declines a unit preemptor.
    pub group_preemption: Option<bool>,
}

/// The plugin: its validated configuration, no other state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadPreemption {
    policy: CandidatePolicy,
    gpu_resource: String,
    budget_violations_first: bool,
    group_preemption: bool,
}

impl Default for WorkloadPreemption {
    /// The configuration of empty args.
    fn default() -> Self {
        Self {
            policy: CandidatePolicy::default(),
            gpu_resource: DEFAULT_GPU_RESOURCE.to_string(),
            budget_violations_first: true,
            group_preemption: true,
        }
    }
}

impl WorkloadPreemption {
    /// The configured candidate policy.
    pub fn candidate_policy(&self) -> CandidatePolicy {
        self.policy
    }

    /// The configured GPU resource name.
    pub fn gpu_resource(&self) -> &str {
        &self.gpu_resource
    }

    /// Whether PDB-violating units are reprieved first.
    pub fn budget_violations_first(&self) -> bool {
        self.budget_violations_first
    }

    /// Whether a unit (PodGroup, CompositePodGroup) may preempt.
    pub fn group_preemption(&self) -> bool {
        self.group_preemption
    }

    /// Declines a unit preemptor when `groupPreemption` is off.
    fn admits(&self, preemptor: &Preemptor) -> Result<(), Status> {
        match preemptor {
            Preemptor::Unit(_) if !self.group_preemption => Err(Status {
                code: Code::Unschedulable,
                reason: GROUP_PREEMPTION_OFF.into(),
            }),
            _ => Ok(()),
        }
    }
}

/// Why a unit preemptor is declined with `groupPreemption: false`.
pub const GROUP_PREEMPTION_OFF: &str = "group preemption is off (groupPreemption: false)";

/// The column of resource `name` in the snapshot, if it has one.
fn resource_column(cluster: &impl Cluster, name: &str) -> Option<usize> {
    cluster.resource_names().iter().position(|n| n == name)
}

impl Plugin for WorkloadPreemption {
    type Args = Args;
    const NAME: &'static str = NAME;

    fn new(args: Args) -> Result<Self, String> {
        let mut plugin = Self::default();
        if let Some(name) = args.candidate_policy {
            plugin.policy = name.parse().map_err(|e| format!("{NAME}: {e}"))?;
        }
        if let Some(resource) = args.gpu_resource {
            if resource.trim().is_empty() {
                return Err(format!("{NAME}: gpuResource must not be empty"));
            }
            plugin.gpu_resource = resource;
        }
        if let Some(first) = args.budget_violations_first {
            plugin.budget_violations_first = first;
        }
        if let Some(on) = args.group_preemption {
            plugin.group_preemption = on;
        }
        Ok(plugin)
    }

    fn order_victims(
        &mut self,
        cluster: &impl Cluster,
        preemptor: Preemptor,
        units: &[VictimUnit],
    ) -> Result<Vec<u32>, Status> {
        self.admits(&preemptor)?;
        let ranked: Vec<Ranked> = units
            .iter()
            .map(|unit| {
                let rank = match unit.group {
                    Some(group) => victim_rank(under_disrupting_composite(cluster, group), true),
                    // A single pod: of a group (rank 2) or of none (1).
                    None => victim_rank(
                        false,
                        unit.pods
                            .first()
                            .and_then(|&p| cluster.pod(p))
                            .is_some_and(|p| p.group.is_some()),
                    ),
                };
                Ranked { unit, rank }
            })
            .collect();
        Ok(order_victims(&ranked, self.budget_violations_first))
    }

    fn select_candidate(
        &mut self,
        cluster: &impl Cluster,
        preemptor: Preemptor,
        candidates: &[PreemptionCandidate],
    ) -> Result<u32, Status> {
        self.admits(&preemptor)?;
        let chosen = if self.policy == CandidatePolicy::FewestEvictedGpus {
            let column = resource_column(cluster, &self.gpu_resource);
            if column.is_none() {
                wasched_sdk::log(
                    Level::Debug,
                    &format!(
                        "resource {} is not in the snapshot; every candidate evicts 0 of it",
                        self.gpu_resource
                    ),
                );
            }
            // Placements may overlap: ask the host once per pod.
            let mut requests: BTreeMap<PodId, u64> = BTreeMap::new();
            select_candidate(self.policy, candidates, |pod| {
                let Some(column) = column else { return 0 };
                *requests
                    .entry(pod)
                    .or_insert_with(|| cluster.pod_requests(pod).get(column).copied().unwrap_or(0))
            })?
        } else {
            select_candidate(self.policy, candidates, |_| 0)?
        };
        if let Some(candidate) = candidates.iter().find(|c| c.index == chosen) {
            let pods: usize = candidate.victims.iter().map(|unit| unit.pods.len()).sum();
            wasched_sdk::log(
                Level::Debug,
                &format!(
                    "{}: chose {} (candidate {chosen} of {}): {} victim units, {pods} pods",
                    self.policy,
                    candidate.domain,
                    candidates.len(),
                    candidate.victims.len(),
                ),
            );
        }
        Ok(chosen)
    }
}

wasched_sdk::register_plugin!(WorkloadPreemption: pod_group_post_filter);

#[cfg(test)]
mod tests;
