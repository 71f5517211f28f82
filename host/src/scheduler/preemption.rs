//! Workload-aware preemption (KEP-5710), run by the host; the policy is the
//! `pod-group-post-filter` plugin's.
//!
//! For a unit (PodGroup, CompositePodGroup tree) or lone pod that could not
//! be placed, per domain — the whole cluster for a unit (as kube-scheduler
//! v1.37's `PodGroupEvaluator`: a topology-constrained group's placement is
//! chosen by the trial, among all its placements), each node for a lone
//! pod (`DefaultPreemption`'s per-node dry run):
//!
//! 1. the candidates are the **victim units** with a pod in the domain and a
//!    priority strictly below the preemptor's: a running PodGroup with
//!    `disruptionMode: all` (or in a CompositePodGroup tree whose root-most
//!    `all` composite makes the whole tree one unit) is one unit of all its
//!    bound pods; any other running pod is a unit of its own;
//! 2. all candidates are removed and the group algorithm runs once (a
//!    [trial](super::trial)); if the preemptor still does not fit, the
//!    domain is out;
//! 3. the plugin orders the units for reprieve (`order-victims`); each unit
//!    is put back in that order and kept if every assigned preemptor pod
//!    still passes its node's checks (upstream re-runs Filter for the
//!    assigned pods; the placement found in step 2 stays fixed);
//! 4. what stays out are the domain's victims.
//!
//! The plugin then chooses among the domains that work
//! (`select-candidate`: the nodes of a lone pod; a unit has the one); the
//! host checks every answer, evicts the victims and binds the preemptor's
//! pods in the same run (a one-pass simulation assumes the victims
//! terminate before the retry). Where the trial chooses among equally
//! scored nodes or placements, the cheapest in victims wins
//! ([`super::costs`]).

use std::collections::BTreeMap;

use super::Cycle;
use super::costs::VictimCosts;
use super::tree::{Placed, TreeResult};
use super::trial::TrialBudget;
use crate::filters;
use crate::framework::{
    Code, ExtensionPoint, Placement, PreemptionCandidate, Preemptor, VictimUnit,
};
use crate::model::{CompositeId, GroupId, NodeId, PodId, Snapshot};

/// What a preemption attempt decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preemption {
    /// Room is made: evict `victims`, then bind `assignments`.
    Chosen {
        /// The domain the preemptor goes to (a placement or node name).
        domain: String,
        /// Victim units evicted.
        units: usize,
        /// Pods to evict, ascending.
        victims: Vec<PodId>,
        /// Where the preemptor's pods go.
        assignments: Vec<(PodId, NodeId)>,
    },
    /// Nothing is evicted, for this reason (`no lower-priority victims`,
    /// `even evicting every candidate would not make room`, a plugin error).
    Failed(String),
}

/// A domain that works: its name, the units to evict, where the preemptor goes.
type Found = (String, Vec<VictimUnit>, Vec<(PodId, NodeId)>);

/// Why preemption does not run at all for a preemptor.
pub const NEVER: &str = "preemptionPolicy Never";
/// No unit of lower priority in any domain.
pub const NO_VICTIMS: &str = "no lower-priority victims";
/// Every node rules the pod out for something evictions cannot change.
pub const CANNOT_HELP: &str = "evictions cannot help: every node is ruled out by its taints, cordon or the pod's node selector or affinity";
/// Why a preemption failed when its trial did not finish (a plugin error
/// under `failurePolicy: Fail`, or the search budget reached): not "no
/// room", which the trial could not tell.
fn unfinished(reason: &str) -> String {
    format!("the preemption trial did not finish: {reason}")
}

/// Evicting every candidate of every domain would not make room.
pub const NO_ROOM: &str = "even evicting every candidate would not make room";
/// The trial budget ran out.
pub const BUDGET_EXHAUSTED: &str = "the trial budget was exhausted";

/// Which victim unit a running pod belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum UnitKey {
    /// A CompositePodGroup tree under an `all` composite.
    Tree(CompositeId),
    /// A PodGroup with `disruptionMode: all`.
    Group(GroupId),
    /// A pod on its own.
    Pod(PodId),
}

/// The root-most composite with `disruptionMode: all` above `group`.
fn disrupting_ancestor(snapshot: &Snapshot, group: GroupId) -> Option<CompositeId> {
    let mut current = snapshot.groups[group as usize].parent;
    let mut found = None;
    for _ in 0..=snapshot.composites.len() {
        let Some(c) = current else { break };
        let composite = &snapshot.composites[c as usize];
        if composite.spec.disrupt_all {
            found = Some(c);
        }
        current = composite.parent;
    }
    found
}

/// Every running pod grouped into victim units (in unit-key order), with
/// each pod's unit: computed once per preemption attempt, then asked per
/// domain.
pub(super) struct RunningUnits {
    /// Units: their key, their pods (a range of `pods`) and priority.
    units: Vec<(UnitKey, std::ops::Range<usize>, i32)>,
    /// Every running pod, unit after unit.
    pods: Vec<PodId>,
    /// Pod → index into `units` ([`NOT_RUNNING`] for pods that do not run).
    of_pod: Vec<u32>,
    /// The lowest priority of a unit (`i32::MAX` with none): a preemptor
    /// of at most this priority has no candidate anywhere.
    lowest: i32,
}

/// [`RunningUnits::of_pod`] of a pod that does not run.
const NOT_RUNNING: u32 = u32::MAX;

impl RunningUnits {
    fn of(snapshot: &Snapshot) -> Self {
        // A group's unit kind is fixed for the run; worked out once per
        // group here rather than per pod.
        let mut group_unit: Vec<Option<Option<UnitKey>>> = vec![None; snapshot.groups.len()];
        // The running pods by unit key, in key order without sorting: one
        // bucket per tree, then per group, then the pods on their own,
        // each in pod id order (the order pods are met).
        let trees = snapshot.composites.len();
        let mut buckets: Vec<Vec<PodId>> = vec![Vec::new(); trees + snapshot.groups.len()];
        let mut alone: Vec<PodId> = Vec::new();
        for (id, pod) in snapshot.pods.iter().enumerate() {
            let id = id as PodId;
            if pod.node.is_none() || !snapshot.is_running(id) {
                continue;
            }
            let shared = pod.group.and_then(|g| {
                *group_unit[g as usize].get_or_insert_with(|| {
                    match disrupting_ancestor(snapshot, g) {
                        Some(c) => Some(UnitKey::Tree(c)),
                        None => snapshot.groups[g as usize]
                            .spec
                            .as_ref()
                            .is_some_and(|s| s.disrupt_all)
                            .then_some(UnitKey::Group(g)),
                    }
                })
            });
            match shared {
                Some(UnitKey::Tree(c)) => buckets[c as usize].push(id),
                Some(UnitKey::Group(g)) => buckets[trees + g as usize].push(id),
                _ => alone.push(id),
            }
        }
        let keyed = buckets
            .iter()
            .enumerate()
            .flat_map(|(b, pods)| {
                let key = match b.checked_sub(trees) {
                    None => UnitKey::Tree(b as CompositeId),
                    Some(g) => UnitKey::Group(g as GroupId),
                };
                pods.iter().map(move |&pod| (key, pod))
            })
            .chain(alone.iter().map(|&pod| (UnitKey::Pod(pod), pod)));
        let mut of_pod = vec![NOT_RUNNING; snapshot.pods.len()];
        let mut units: Vec<(UnitKey, std::ops::Range<usize>, i32)> = Vec::new();
        let mut pods: Vec<PodId> = Vec::new();
        for (at, (key, pod)) in keyed.enumerate() {
            if units.last().is_none_or(|(last, _, _)| *last != key) {
                units.push((key, at..at, i32::MIN));
            }
            let index = units.len() - 1;
            let (_, range, priority) = &mut units[index];
            range.end = at + 1;
            *priority = (*priority).max(snapshot.pods[pod as usize].priority);
            of_pod[pod as usize] = index as u32;
            pods.push(pod);
        }
        debug_assert!(units.is_sorted_by(|a, b| a.0 < b.0));
        let lowest = units.iter().map(|u| u.2).min().unwrap_or(i32::MAX);
        Self {
            units,
            pods,
            of_pod,
            lowest,
        }
    }

    /// Whether any unit has a priority strictly lower than `priority`.
    fn any_lower_than(&self, priority: i32) -> bool {
        self.lowest < priority
    }

    /// Whether a unit of strictly lower priority than `priority` runs a
    /// pod on `node` (what [`RunningUnits::candidates`] of the node
    /// needs to find any).
    fn any_below(&self, snapshot: &Snapshot, node: NodeId, priority: i32) -> bool {
        snapshot.pods_on_node(node).iter().any(|&p| {
            let unit = self.of_pod[p as usize];
            unit != NOT_RUNNING && self.units[unit as usize].2 < priority
        })
    }

    /// The candidate units of a preemptor of `priority`: strictly lower
    /// priority, with a pod on one of `nodes` (`None`: anywhere), and no pod
    /// of the preemptor's own groups `own` (a tree never evicts itself).
    fn candidates(
        &self,
        snapshot: &Snapshot,
        priority: i32,
        nodes: Option<&[NodeId]>,
        own: &[GroupId],
    ) -> Vec<VictimUnit> {
        if !self.any_lower_than(priority) {
            return Vec::new();
        }
        let chosen: Vec<usize> = match nodes {
            None => (0..self.units.len()).collect(),
            Some(nodes) => {
                let mut chosen: Vec<usize> = nodes
                    .iter()
                    .flat_map(|&n| snapshot.pods_on_node(n))
                    .map(|&p| self.of_pod[p as usize])
                    .filter(|&u| u != NOT_RUNNING)
                    .map(|u| u as usize)
                    .collect();
                chosen.sort_unstable();
                chosen.dedup();
                chosen
            }
        };
        let mut out = Vec::new();
        let mut ranks = Vec::new();
        for u in chosen {
            let (key, range, unit_priority) = &self.units[u];
            let pods = &self.pods[range.clone()];
            if *unit_priority >= priority {
                continue;
            }
            let of_preemptor = pods.iter().any(|&p| {
                snapshot.pods[p as usize]
                    .group
                    .is_some_and(|g| own.contains(&g))
            });
            if of_preemptor {
                continue;
            }
            let group = match *key {
                UnitKey::Group(g) => Some(g),
                UnitKey::Tree(_) => snapshot.pods[pods[0] as usize].group,
                UnitKey::Pod(_) => None,
            };
            // kube-scheduler's victimRank: a CompositePodGroup's unit, a
            // PodGroup's (a whole group or one pod of a single group), a pod.
            ranks.push(match *key {
                UnitKey::Tree(_) => 3,
                UnitKey::Group(_) => 2,
                UnitKey::Pod(p) if snapshot.pods[p as usize].group.is_some() => 2,
                UnitKey::Pod(_) => 1,
            });
            out.push(VictimUnit {
                index: out.len() as u32,
                violates_budget: false,
                start_time: pods
                    .iter()
                    .map(|&p| snapshot.pods[p as usize].started)
                    .min()
                    .unwrap_or(0),
                priority: *unit_priority,
                group,
                pods: pods.to_vec(),
            });
        }
        mark_budget_violations(snapshot, &mut out, &ranks);
        out
    }
}

/// Marks the units whose eviction would violate a PodDisruptionBudget, the
/// way kube-scheduler does (`util.go` `FilterVictimsWithPDBViolation`):
/// walking the candidates most important first (`MoreImportantVictim`:
/// higher priority, higher rank, larger unit, older start), each pod takes
/// one of its budgets' allowed disruptions; a unit with a pod that finds
/// none left violates. `ranks` are the units' `victimRank`s.
fn mark_budget_violations(snapshot: &Snapshot, units: &mut [VictimUnit], ranks: &[u8]) {
    let budgeted = |u: &VictimUnit| u.pods.iter().any(|&p| !snapshot.pod_budgets(p).is_empty());
    if !units.iter().any(budgeted) {
        return;
    }
    let mut allowed: Vec<u32> = snapshot
        .budgets
        .iter()
        .map(|b| b.disruptions_allowed)
        .collect();
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by_key(|&u| {
        (
            std::cmp::Reverse(units[u].priority),
            std::cmp::Reverse(ranks[u]),
            std::cmp::Reverse(units[u].pods.len()),
            units[u].start_time,
            u,
        )
    });
    for u in order {
        let mut violates = false;
        for &pod in &units[u].pods {
            for &budget in snapshot.pod_budgets(pod) {
                let left = &mut allowed[budget as usize];
                if *left == 0 {
                    violates = true;
                } else {
                    *left -= 1;
                }
            }
        }
        units[u].violates_budget = violates;
    }
}

impl Cycle<'_> {
    /// The running units of the snapshot as it is: computed again only
    /// when the snapshot's generation moved (a rollback puts it back, so
    /// the preemption attempts of a cycle that changed nothing share one).
    fn running_units(&mut self) -> std::rc::Rc<RunningUnits> {
        let generation = self.snapshot.identity().generation();
        if let Some((at, units)) = &self.caches.running
            && *at == generation
            && self.caches.reuse.running_units
        {
            return units.clone();
        }
        let units = std::rc::Rc::new(RunningUnits::of(self.snapshot));
        self.caches.running = Some((generation, units.clone()));
        units
    }

    /// Preemption for PodGroup `group` whose `pending` pods did not fit in
    /// `placements`, at `priority`, as kube-scheduler v1.37's
    /// `PodGroupEvaluator` does it (`podgrouppreemption.go`): the domain is
    /// the whole cluster; every candidate unit is removed and the group
    /// algorithm runs once over all of `placements` — so a
    /// topology-constrained group is placed in the placement the default
    /// scores prefer with the room freed, placing as many of its pods as
    /// fit — then the units are reprieved, most important first. Where that
    /// trial has to choose among equally scored nodes or placements (which
    /// kube-scheduler breaks arbitrarily or at random), the one whose
    /// victims cost least wins ([`super::costs`]).
    pub fn preempt_for_group(
        &mut self,
        group: GroupId,
        pending: &[PodId],
        placements: &[Placement],
        priority: i32,
    ) -> Preemption {
        let preemptor = Preemptor::Unit(crate::framework::Unit::Group(group));
        let units = self
            .running_units()
            .candidates(self.snapshot, priority, None, &[group]);
        if units.is_empty() {
            return self.choose(preemptor, Vec::new(), false);
        }
        let costs = VictimCosts::of(self.snapshot, &units);
        let removed: Vec<PodId> = units.iter().flat_map(|u| u.pods.iter().copied()).collect();
        let attempt = match self.trial(group, pending, placements, &removed, costs) {
            Ok(attempt) => attempt,
            Err(Some(reason)) => return Preemption::Failed(unfinished(&reason)),
            Err(None) => return self.choose(preemptor, Vec::new(), true),
        };
        match self.reprieve(preemptor, units, &attempt.assigned) {
            Ok(victims) => self.choose(
                preemptor,
                vec![(attempt.placement.name, victims, attempt.assigned)],
                true,
            ),
            Err(reason) => Preemption::Failed(reason),
        }
    }

    /// Preemption for the CompositePodGroup tree under `root`, at the
    /// root's priority; the whole cluster is the domain. A trial places the
    /// whole tree (its search included) with every candidate removed; the
    /// layout it found is returned with the victims, to be bound as is.
    pub fn preempt_for_tree(&mut self, root: CompositeId) -> (Preemption, Vec<Placed>) {
        let preemptor = Preemptor::Unit(crate::framework::Unit::Composite(root));
        let priority = self.snapshot.composites[root as usize].spec.priority;
        let own = self.snapshot.subtree_groups(root);
        let units = self
            .running_units()
            .candidates(self.snapshot, priority, None, &own);
        if units.is_empty() {
            return (self.choose(preemptor, Vec::new(), false), Vec::new());
        }
        let checkpoint = self.snapshot.checkpoint();
        let costs = VictimCosts::of(self.snapshot, &units);
        for unit in &units {
            for &pod in &unit.pods {
                self.snapshot.remove(pod);
            }
        }
        let layout = self.while_costing(costs, |cycle| cycle.place_tree(root));
        self.snapshot.rollback(checkpoint);
        let layout = match layout {
            TreeResult::Admitted(layout) => layout,
            TreeResult::Rejected {
                reason,
                inconclusive: true,
            } => return (Preemption::Failed(unfinished(&reason)), Vec::new()),
            TreeResult::Rejected { .. } => {
                return (self.choose(preemptor, Vec::new(), true), Vec::new());
            }
        };
        let assignments: Vec<(PodId, NodeId)> = layout
            .iter()
            .flat_map(|p| p.assigned.iter().copied())
            .collect();
        let chosen = match self.reprieve(preemptor, units, &assignments) {
            Ok(victims) => self.choose(
                preemptor,
                vec![("cluster".into(), victims, assignments)],
                true,
            ),
            Err(reason) => Preemption::Failed(reason),
        };
        (chosen, layout)
    }

    /// Preemption for lone pod `pod`: each node is a domain.
    pub fn preempt_for_pod(&mut self, pod: PodId) -> Preemption {
        let preemptor = Preemptor::Pod(pod);
        let priority = self.snapshot.pods[pod as usize].priority;
        let mut budget = TrialBudget::DEFAULT;
        let mut found = Vec::new();
        let mut any_victims = false;
        let mut any_helpable = false;
        let mut exhausted = false;
        let running = self.running_units();
        let state = filters::PreFilter::for_pod(self.snapshot, pod);
        // Evictions free resources, spread counts and running pods'
        // anti-affinity; they cannot lift a taint, a selector or a cordon
        // (the static checks, whose verdicts the run keeps).
        let statics = self.static_verdicts(pod);
        for &node in statics.passing() {
            let helpable = match filters::dynamic_check(self.snapshot, pod, node, &state) {
                Ok(()) => true,
                Err(rejection) => matches!(
                    rejection,
                    filters::Rejection::Resources(_)
                        | filters::Rejection::Spread
                        | filters::Rejection::ExistingAntiAffinity
                ),
            };
            if !helpable {
                continue;
            }
            any_helpable = true;
            // No unit anywhere is below the preemptor: no node has victims
            // (what every remaining node's `any_below` would say).
            if !running.any_lower_than(priority) {
                break;
            }
            if !running.any_below(self.snapshot, node, priority) {
                continue;
            }
            let units = running.candidates(self.snapshot, priority, Some(&[node]), &[]);
            if units.is_empty() {
                continue;
            }
            any_victims = true;
            if budget.remaining == 0 {
                exhausted = true;
                break;
            }
            budget.remaining -= 1;
            let checkpoint = self.snapshot.checkpoint();
            for unit in &units {
                for &victim in &unit.pods {
                    self.snapshot.remove(victim);
                }
            }
            // Filter only, as DefaultPreemption's per-node check.
            let failed_before = self.failures.failed;
            let fits = self.feasible_nodes(pod, &[node]);
            self.snapshot.rollback(checkpoint);
            match fits {
                Ok(_) => {}
                Err(unfit) if self.failures.failed > failed_before => {
                    return Preemption::Failed(unfinished(&unfit.reason));
                }
                Err(_) => continue,
            }
            let assignments = vec![(pod, node)];
            match self.reprieve(preemptor, units, &assignments) {
                Ok(victims) => {
                    let name = self.snapshot.nodes[node as usize].name.clone();
                    found.push((name, victims, assignments));
                }
                Err(reason) => return Preemption::Failed(reason),
            }
        }
        if !any_helpable {
            return Preemption::Failed(CANNOT_HELP.into());
        }
        if found.is_empty() && exhausted {
            return Preemption::Failed(format!(
                "{BUDGET_EXHAUSTED} ({} trials) before any node made room",
                TrialBudget::DEFAULT.remaining
            ));
        }
        self.choose(preemptor, found, any_victims)
    }

    /// Puts candidate units back in the plugin's order while every assigned
    /// preemptor pod still fits its node (a check of the assigned pods'
    /// nodes, not a trial); returns the units that must go.
    fn reprieve(
        &mut self,
        preemptor: Preemptor,
        units: Vec<VictimUnit>,
        assignments: &[(PodId, NodeId)],
    ) -> Result<Vec<VictimUnit>, String> {
        let order = self.order_victims(preemptor, &units)?;
        let checkpoint = self.snapshot.checkpoint();
        let homes: BTreeMap<PodId, NodeId> = units
            .iter()
            .flat_map(|u| u.pods.iter())
            .filter_map(|&p| self.snapshot.pods[p as usize].node.map(|n| (p, n)))
            .collect();
        for unit in &units {
            for &pod in &unit.pods {
                self.snapshot.remove(pod);
            }
        }
        for &(pod, node) in assignments {
            self.snapshot.assume(pod, node);
        }
        // A unit with no pod on an assigned node can only matter to the
        // assigned pods through spread constraints or filter plugins; with
        // neither, putting it back needs no check (the cluster-wide domain
        // of a group makes most candidates such units).
        let assigned_nodes: std::collections::BTreeSet<NodeId> =
            assignments.iter().map(|&(_, n)| n).collect();
        let local_only = !self.plugins.any_at(ExtensionPoint::Filter)
            && assignments
                .iter()
                .all(|&(p, _)| self.snapshot.pods[p as usize].spread.is_empty());
        let mut victims = Vec::new();
        for index in order {
            let unit = &units[index as usize];
            let before = self.snapshot.checkpoint();
            for &pod in &unit.pods {
                self.snapshot.assume(pod, homes[&pod]);
            }
            let elsewhere = unit
                .pods
                .iter()
                .all(|p| !assigned_nodes.contains(&homes[p]));
            if local_only && elsewhere {
                continue;
            }
            if !self.assignments_fit(assignments) {
                self.snapshot.rollback(before);
                victims.push(unit.clone());
            }
        }
        self.snapshot.rollback(checkpoint);
        victims.sort_by_key(|u| u.index);
        Ok(victims)
    }

    /// Whether every assigned pod passes its node's checks (native and
    /// filter plugins) with everything else in place.
    fn assignments_fit(&mut self, assignments: &[(PodId, NodeId)]) -> bool {
        assignments.iter().all(|&(pod, node)| {
            let checkpoint = self.snapshot.checkpoint();
            self.snapshot.remove(pod);
            let fits = self.feasible_nodes(pod, &[node]).is_ok();
            self.snapshot.rollback(checkpoint);
            fits
        })
    }

    /// Runs one preemption (`run`) with each `pod-group-post-filter`
    /// plugin in turn, in order, until one carries it through: a plugin
    /// that declines (`unschedulable`) or is skipped by `failurePolicy:
    /// Ignore` passes to the next; any other end (a choice, a failure of
    /// the trial itself, `unschedulable-and-unresolvable`, an error) stops
    /// there, as kube-scheduler's PostFilter loop does.
    pub fn in_post_filter_order<T>(&mut self, mut run: impl FnMut(&mut Self) -> T) -> T {
        let plugins = self.plugins.count_at(ExtensionPoint::PodGroupPostFilter);
        let mut turn = 0;
        loop {
            self.post_filter = turn;
            self.post_filter_declined = false;
            let outcome = run(self);
            turn += 1;
            if !self.post_filter_declined || turn >= plugins {
                self.post_filter = 0;
                return outcome;
            }
        }
    }

    /// The reprieve order from the `pod-group-post-filter` plugin whose
    /// turn it is.
    fn order_victims(
        &mut self,
        preemptor: Preemptor,
        units: &[VictimUnit],
    ) -> Result<Vec<u32>, String> {
        let turn = self.post_filter;
        let Some(mut plugin) = self
            .plugins
            .at(ExtensionPoint::PodGroupPostFilter)
            .nth(turn)
        else {
            return Err("no pod-group-post-filter plugin is loaded".into());
        };
        let answer = plugin.order_victims(self.snapshot, preemptor, units);
        match self.failures.under_policy(answer)? {
            None => {
                self.post_filter_declined = true;
                Err(format!("plugin {} was skipped", plugin.name()))
            }
            Some(Ok(order)) => Ok(order),
            Some(Err(status)) => {
                self.post_filter_declined = status.code == Code::Unschedulable;
                Err(format!("plugin {}: {}", plugin.name(), status.reason))
            }
        }
    }

    /// The plugin's choice among the domains that work.
    fn choose(&mut self, preemptor: Preemptor, found: Vec<Found>, any_victims: bool) -> Preemption {
        if found.is_empty() {
            return Preemption::Failed(if any_victims { NO_ROOM } else { NO_VICTIMS }.into());
        }
        let candidates: Vec<PreemptionCandidate> = found
            .into_iter()
            .enumerate()
            .map(|(i, (domain, victims, assignments))| PreemptionCandidate {
                index: i as u32,
                domain,
                victims,
                assignments,
            })
            .collect();
        let turn = self.post_filter;
        let Some(mut plugin) = self
            .plugins
            .at(ExtensionPoint::PodGroupPostFilter)
            .nth(turn)
        else {
            return Preemption::Failed("no pod-group-post-filter plugin is loaded".into());
        };
        let answer = plugin.select_candidate(self.snapshot, preemptor, &candidates);
        let chosen = match self.failures.under_policy(answer) {
            Err(reason) => return Preemption::Failed(reason),
            Ok(None) => {
                self.post_filter_declined = true;
                return Preemption::Failed(format!("plugin {} was skipped", plugin.name()));
            }
            Ok(Some(Err(status))) => {
                self.post_filter_declined = status.code == Code::Unschedulable;
                return Preemption::Failed(format!("plugin {}: {}", plugin.name(), status.reason));
            }
            Ok(Some(Ok(i))) => i,
        };
        let candidate = candidates
            .into_iter()
            .nth(chosen as usize)
            .expect("the answer check keeps the index in range");
        let mut victims: Vec<PodId> = candidate
            .victims
            .iter()
            .flat_map(|u| u.pods.iter().copied())
            .collect();
        victims.sort_unstable();
        Preemption::Chosen {
            domain: candidate.domain,
            units: candidate.victims.len(),
            victims,
            assignments: candidate.assignments,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_allowances_are_taken_most_important_first() {
        // A budget allowing one disruption over three running pods: the
        // most important candidate takes the allowance, the others violate.
        let text = r#"
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "8"}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db, namespace: t}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: db}}}
"#
        .to_string()
            + &[("a", 30, "08:00"), ("b", 20, "08:00"), ("c", 20, "07:00")]
                .iter()
                .map(|(name, priority, start)| {
                    format!(
                        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: t, labels: {{app: db}}}}\nspec: {{nodeName: n0, priority: {priority}, containers: [{{name: c, image: x}}]}}\nstatus: {{startTime: \"2026-11-20T{start}:00Z\"}}\n"
                    )
                })
                .collect::<String>();
        let mut manifests = crate::manifest::Manifests::default();
        crate::manifest::load_str(&mut manifests, "t.yaml", &text).unwrap();
        let snapshot = Snapshot::build(&manifests).unwrap();
        let units = RunningUnits::of(&snapshot).candidates(&snapshot, 100, None, &[]);
        let violates: Vec<(&str, bool)> = units
            .iter()
            .map(|u| {
                (
                    snapshot.pods[u.pods[0] as usize].key.as_str(),
                    u.violates_budget,
                )
            })
            .collect();
        assert_eq!(violates, [("t/a", false), ("t/b", true), ("t/c", true)]);
        assert!(
            RunningUnits::of(&snapshot)
                .candidates(&snapshot, 25, None, &[])
                .iter()
                .all(|u| u.priority < 25),
            "only lower priorities are candidates"
        );
    }
}
