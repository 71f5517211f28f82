//! The scheduling cycle: queue order, one cycle per PodGroup or lone pod,
//! and every extension point in the order kube-scheduler v1.37 runs them.
//!
//! ```text
//! queue (PrioritySort) → per entity:
//!   PodGroup: pre-enqueue → placement-generate → per placement:
//!               per pending pod: node checks + filter → score → assume → permit
//!             → feasible placements: placement-score → best → bind
//!   lone pod: node checks + filter → score → bind
//! ```
//!
//! Plugins are reached only through [`PluginSet`], so the cycle runs the
//! same with wasm components and with native fakes. Decisions are applied
//! to the snapshot as they are made (and committed after each entity), so
//! later entities see earlier placements.
//!
//! - [`queue`] orders the queue (`PrioritySort`);
//! - [`backoff`] decides when an entity that did not fit is tried again;
//! - [`nomination`] holds a preemptor back while its victims terminate;
//! - `pod` places one pod inside a set of nodes;
//! - [`group`] runs the group algorithm inside placements, with checkpoints;
//! - [`tree`] places CompositePodGroup trees as one unit, by a search;
//! - [`trial`] runs the group algorithm with pods removed, for preemption;
//! - [`preemption`] is workload-aware preemption, run by the host;
//! - [`failures`] applies failure policy and counts errors.

pub mod backoff;
mod caches;
mod costs;
pub mod failures;
pub mod group;
pub mod misfits;
pub mod nomination;
pub mod placement_memo;
mod pod;
pub mod preemption;
pub mod queue;
mod shapes;
pub mod tree;
pub mod trial;

use std::collections::BTreeMap;

use failures::PluginFailures;
use group::{GroupResult, failure_reason};
use preemption::Preemption;
pub use queue::{Entity, queue};

pub use caches::Kept;
pub(crate) use caches::Reuse;
pub use pod::Unfit;

use crate::framework::{ExtensionPoint, Placement, PluginSet, Unit};
use crate::model::{CompositeId, GroupId, NodeId, PodId, Snapshot};
use crate::outcome::{
    Binding, Disruption, Domain, Eviction, Outcome, PlacementStats, PodGroupDecision,
    PreemptionOutcome, Unschedulable,
};

/// What a cycle works on: the snapshot, the plugins, and the failures and
/// warnings so far. The algorithm lives in `impl Cycle` blocks of the
/// submodules; recording decisions is [`run`]'s.
pub(crate) struct Cycle<'a> {
    /// The cluster, with assumptions of the cycle in progress.
    pub snapshot: &'a mut Snapshot,
    /// The plugins.
    pub plugins: &'a mut PluginSet,
    /// Plugin failures under their failure policies.
    pub failures: PluginFailures,
    /// Things the user should know about the run, in order.
    pub warnings: Vec<String>,
    /// Placements generated and evaluated, for the metrics.
    pub stats: PlacementStats,
    /// What the cycle keeps between attempts, and may reuse.
    caches: caches::Caches,
    /// Wall-clock time spent in the in-tree node checks.
    pub node_check_time: std::time::Duration,
    /// While a preemption trial runs: what each node's candidate victims
    /// cost, to break ties between equally scored choices ([`costs`]).
    victim_costs: Option<costs::VictimCosts>,
    /// The last placement-generate failure ignored under
    /// `failurePolicy: Ignore`, for the warning that says so.
    ignored_generate: Option<String>,
    /// Pods nominated to a node try it first ([`RunOptions::live`]).
    pub nominated_first: bool,
    /// Whose turn it is among the pod-group-post-filter plugins
    /// ([`Cycle::in_post_filter_order`]).
    post_filter: usize,
    /// Whether that plugin declined, so the next one is asked.
    post_filter_declined: bool,
    /// Where the next pod's search for feasible nodes starts
    /// (kube-scheduler's `nextStartNodeIndex`, [`Cycle::place_pod`]).
    next_start_node: usize,
}

impl<'a> Cycle<'a> {
    /// A cycle over `snapshot` with `plugins`.
    pub fn new(snapshot: &'a mut Snapshot, plugins: &'a mut PluginSet) -> Self {
        Self {
            snapshot,
            plugins,
            failures: PluginFailures::default(),
            warnings: Vec::new(),
            stats: PlacementStats::default(),
            caches: caches::Caches::default(),
            node_check_time: std::time::Duration::ZERO,
            victim_costs: None,
            ignored_generate: None,
            post_filter: 0,
            post_filter_declined: false,
            nominated_first: false,
            next_start_node: 0,
        }
    }
}

/// How a run treats the cluster it schedules, and who hears how it goes.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// A live cluster (`wasched shadow`): a victim of preemption keeps its
    /// resources until the API server has it gone, so a preemptor is not
    /// bound in the run that preempts; its pods are nominated
    /// ([`Outcome::nominations`]) and wait for a later run, as
    /// kube-scheduler's preemptors wait for their victims. Off, victims
    /// stop at once and preemptors are bound in the same run.
    pub live: bool,
    /// The queued entities this run may attempt; `None`: all. The others
    /// are left as they are (in backoff).
    pub admit: Option<&'a dyn Fn(Entity) -> bool>,
    /// The entities to attempt, in the order given (kube-scheduler's
    /// active queue as popped, `wasched replay`); `None`: every pending
    /// one in `PrioritySort` order. An entity with no pending pod is
    /// skipped.
    pub order: Option<&'a [Entity]>,
    /// The entities that may preempt if they do not fit; `None`: all. A
    /// preemptor whose victims are still terminating on its nominated node
    /// may not start another preemption (kube-scheduler's
    /// `PodEligibleToPreemptOthers`); it is still scheduled.
    pub may_preempt: Option<&'a dyn Fn(Entity) -> bool>,
    /// Where the first pod's search for feasible nodes starts, and where
    /// the run leaves it for the next (kube-scheduler's
    /// `nextStartNodeIndex` lives as long as the scheduler: `shadow` keeps
    /// it across runs); `None`: a run starts at the first node.
    pub search_start: Option<&'a std::cell::Cell<usize>>,
    /// Told of each entity's cycle as it ends, and of the run's end.
    pub observer: Option<&'a mut dyn Observer>,
    /// The caches the last run over the same nodes left, taken and left
    /// again for the next ([`Kept`]); `None`: the run starts empty.
    pub kept: Option<&'a mut Kept>,
}

/// What a run tells as it goes (progress on a terminal, timings); never
/// part of the decisions.
pub trait Observer {
    /// An entity's cycle ended: the `done`-th of `queued`, in `time`.
    fn entity(&mut self, time: EntityTime, done: usize, queued: usize) {
        let _ = (time, done, queued);
    }

    /// The run ended; `node_checks` is the time spent in the native node
    /// checks (zero unless the plugin set times calls,
    /// [`PluginSet::time_calls`]).
    fn finished(&mut self, node_checks: std::time::Duration) {
        let _ = node_checks;
    }
}

/// How long one queued entity's cycle took (preemption included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntityTime {
    /// The entity.
    pub entity: Entity,
    /// Its cycle's wall-clock time.
    pub elapsed: std::time::Duration,
}

/// Where a run's time went (never part of the decisions, which stay
/// deterministic).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunTimes {
    /// Each queued entity's cycle, in queue order.
    pub entities: Vec<EntityTime>,
    /// Time in the in-tree node checks, over the run (zero unless the plugin
    /// set times calls, [`PluginSet::time_calls`]).
    pub node_checks: std::time::Duration,
}

impl Observer for RunTimes {
    fn entity(&mut self, time: EntityTime, _done: usize, _queued: usize) {
        self.entities.push(time);
    }

    fn finished(&mut self, node_checks: std::time::Duration) {
        self.node_checks = node_checks;
    }
}

/// Runs every queued entity once over `snapshot`, as `options` say, and
/// returns what was decided. The one way in: `simulate`, `compare`, the
/// shadow and the C ABI all run the cycle through it.
pub fn run(snapshot: &mut Snapshot, plugins: &mut PluginSet, options: RunOptions) -> Outcome {
    run_with(snapshot, plugins, options, Reuse::default())
}

/// Runs with each reuse on or off (every choice decides the same), so
/// benchmarks can price each and a test can hold each off against on. Not
/// part of the stable API: present with the `reuse-ablation` feature.
#[cfg(feature = "reuse-ablation")]
pub mod ablation {
    pub use super::caches::Reuse;
    use super::{Outcome, PluginSet, RunOptions, Snapshot};

    /// [`run`](super::run), reusing only what `reuse` says.
    pub fn run_reusing(
        snapshot: &mut Snapshot,
        plugins: &mut PluginSet,
        options: RunOptions,
        reuse: Reuse,
    ) -> Outcome {
        super::run_with(snapshot, plugins, options, reuse)
    }
}

/// [`run`], reusing what `reuse` says.
pub(crate) fn run_with(
    snapshot: &mut Snapshot,
    plugins: &mut PluginSet,
    options: RunOptions,
    reuse: Reuse,
) -> Outcome {
    let RunOptions {
        live,
        admit,
        order,
        may_preempt,
        search_start,
        mut observer,
        mut kept,
    } = options;
    plugins.start_run();
    let mut outcome = Outcome {
        warnings: snapshot.warnings.to_vec(),
        notes: snapshot.notes.to_vec(),
        ..Outcome::default()
    };
    let mut entities = match order {
        Some(order) => queue::in_order(snapshot, order),
        None => queue::prioritized(snapshot),
    };
    if let Some(admit) = admit {
        entities.retain(|&(_, entity)| admit(entity));
    }
    let caches = match kept.as_deref_mut() {
        Some(kept) => kept.take(snapshot, reuse),
        None => caches::Caches::new(reuse),
    };
    let mut cycle = Cycle::new(snapshot, plugins);
    cycle.caches = caches;
    cycle.nominated_first = live;
    cycle.next_start_node = search_start.map_or(0, std::cell::Cell::get);
    let mut run = Run {
        cycle,
        outcome,
        disrupted: BTreeMap::new(),
        nominated: Vec::new(),
        nominated_priority: i32::MIN,
        live,
        preemption_allowed: true,
    };
    let total = entities.len();
    let mut carried = if live {
        nomination::Carried::of(run.cycle.snapshot)
    } else {
        nomination::Carried::default()
    };
    for (done, (priority, entity)) in entities.into_iter().enumerate() {
        if priority < run.nominated_priority {
            run.retry_preemptors();
        }
        if live {
            let own = nomination::pending_pods(run.cycle.snapshot, entity);
            carried.before(run.cycle.snapshot, priority, &own);
        }
        let start = std::time::Instant::now();
        run.preemption_allowed = may_preempt.is_none_or(|allowed| allowed(entity));
        match entity {
            Entity::Group(group) => run.schedule_group(group),
            Entity::Tree(root) => run.schedule_tree(root),
            Entity::Pod(pod) => run.schedule_pod(pod),
        }
        run.cycle.snapshot.commit();
        if let Some(observer) = observer.as_deref_mut() {
            let time = EntityTime {
                entity,
                elapsed: start.elapsed(),
            };
            observer.entity(time, done + 1, total);
        }
    }
    run.retry_preemptors();
    let own: Vec<PodId> = run.nominated.iter().map(|&(pod, _)| pod).collect();
    run.record_nominations();
    if live {
        carried.release(run.cycle.snapshot, &own);
    }
    run.record_disruptions();
    outcome = run.outcome;
    crate::outcome::record_unattempted(run.cycle.snapshot, &mut outcome);
    let mut cycle = run.cycle;
    if let Some(kept) = kept {
        kept.keep(std::mem::take(&mut cycle.caches));
    }
    if let Some(start) = search_start {
        start.set(cycle.next_start_node);
    }
    outcome.warnings.extend(cycle.warnings);
    let (warnings, errors) = cycle.failures.report();
    outcome.warnings.extend(warnings);
    outcome.warnings.extend(cycle.plugins.output_warnings());
    outcome.plugin_errors = errors;
    outcome.placement_stats = cycle.stats;
    if let Some(observer) = observer {
        observer.finished(cycle.node_check_time);
    }
    outcome
}

/// The topology domains of a path of placements, outermost first.
fn domains(path: &[&Placement]) -> Vec<Domain> {
    path.iter()
        .filter_map(|p| p.domain.as_ref())
        .map(|(key, value)| Domain {
            key: key.clone(),
            value: value.clone(),
        })
        .collect()
}

/// One run: the cycle and the decisions recorded so far.
struct Run<'a> {
    cycle: Cycle<'a>,
    outcome: Outcome,
    /// PodGroups that lost pods to preemption → (preemptors, pods evicted).
    disrupted: BTreeMap<GroupId, (Vec<String>, u32)>,
    /// Preemptors' pods nominated to the nodes their victims freed, in
    /// the order they preempted, waiting for their retry.
    nominated: Vec<(PodId, NodeId)>,
    /// The priority of the entities that preempted (`i32::MIN`: none
    /// waits).
    nominated_priority: i32,
    /// [`RunOptions::live`].
    live: bool,
    /// Whether the entity in its cycle may preempt
    /// ([`RunOptions::may_preempt`]).
    preemption_allowed: bool,
}

impl Run<'_> {
    fn pod_key(&self, pod: PodId) -> String {
        self.cycle.snapshot.pods[pod as usize].key.clone()
    }

    fn bind(&mut self, pod: PodId, node: NodeId) {
        let snapshot = &mut *self.cycle.snapshot;
        snapshot.bind(pod);
        let binding = Binding {
            pod: snapshot.pods[pod as usize].key.clone(),
            node: snapshot.nodes[node as usize].name.clone(),
        };
        self.outcome.placements.push(binding);
    }

    fn leave_pending(&mut self, pod: PodId, reason: String) {
        let pod = self.pod_key(pod);
        self.outcome.unschedulable.push(Unschedulable {
            pod,
            reason,
            preemption: None,
        });
    }

    /// Evicts `victims` for `by` (a PodGroup or pod key) and nominates
    /// `assignments` in their place.
    ///
    /// kube-scheduler does not bind a preemptor in the cycle that preempts:
    /// it sets the pods' `nominatedNodeName` and requeues the entity, with
    /// the time of that attempt, behind every entity of its priority
    /// already queued (`PrioritySort`). Those are scheduled first; their
    /// Filter counts the nominated pods on their nodes (nominated pods of
    /// at least the filtered pod's priority are added,
    /// `addGENominatedPods`), their scores do not. The retry then finds
    /// each pod's nominated node still fitting (`evaluateNominatedNode`)
    /// and binds it there: [`Run::retry_preemptors`], once the queue
    /// reaches a lower priority. Victims stop at once here, so the retry
    /// never waits for them.
    ///
    /// Live ([`RunOptions::live`]), victims keep their resources (they are
    /// only being deleted) and the preemptor stays nominated for the rest
    /// of the run: its retry is a later run's.
    fn carry_out(&mut self, by: &str, victims: &[PodId], assignments: &[(PodId, NodeId)]) {
        for &victim in victims {
            if !self.live {
                self.cycle.snapshot.remove(victim);
            }
            self.cycle.snapshot.pods.get_mut(victim as usize).evicted = true;
            let info = &self.cycle.snapshot.pods[victim as usize];
            if let Some(group) = info.group {
                let entry = self.disrupted.entry(group).or_default();
                if !entry.0.iter().any(|b| b == by) {
                    entry.0.push(by.to_string());
                }
                entry.1 += 1;
            }
            self.outcome.evictions.push(Eviction {
                pod: info.key.clone(),
                by: by.to_string(),
            });
        }
        self.nominate(assignments);
    }

    /// Nominates preemptor pods to their nodes until their retry.
    fn nominate(&mut self, assignments: &[(PodId, NodeId)]) {
        for &(pod, node) in assignments {
            let priority = self.cycle.snapshot.pods[pod as usize].priority;
            self.nominated_priority = self.nominated_priority.max(priority);
            self.cycle.snapshot.nominate(pod, node);
            self.nominated.push((pod, node));
        }
    }

    /// The retry of every preemptor waiting: each pod is bound on the node
    /// it was nominated to, in the order they preempted.
    fn retry_preemptors(&mut self) {
        if self.live {
            return;
        }
        for (pod, node) in std::mem::take(&mut self.nominated) {
            self.cycle.snapshot.confirm(pod);
            self.bind(pod, node);
        }
        self.cycle.snapshot.commit();
        self.nominated_priority = i32::MIN;
    }

    /// The nominations still waiting at the end of a live run.
    fn record_nominations(&mut self) {
        for (pod, node) in std::mem::take(&mut self.nominated) {
            let snapshot = &*self.cycle.snapshot;
            self.outcome.nominations.push(Binding {
                pod: snapshot.pods[pod as usize].key.clone(),
                node: snapshot.nodes[node as usize].name.clone(),
            });
        }
    }

    /// Whether an unschedulable entity may try preemption: a plugin
    /// implements it and nothing failed in this entity's cycle.
    fn may_preempt(&self, failed_before: u64) -> bool {
        self.preemption_allowed
            && self.cycle.failures.failed == failed_before
            && self
                .cycle
                .plugins
                .any_at(ExtensionPoint::PodGroupPostFilter)
    }

    fn schedule_pod(&mut self, pod: PodId) {
        let failed_before = self.cycle.failures.failed;
        let all: Vec<NodeId> = (0..self.cycle.snapshot.node_count() as NodeId).collect();
        let reason = match self.cycle.place_pod(pod, &all) {
            Ok(node) => {
                self.cycle.snapshot.assume(pod, node);
                self.bind(pod, node);
                return;
            }
            Err(unfit) => {
                let key = self.pod_key(pod);
                self.outcome.rejectors.insert(key, unfit.rejectors);
                unfit.reason
            }
        };
        if !self.may_preempt(failed_before) {
            return self.leave_pending(pod, reason);
        }
        let outcome = if self.cycle.snapshot.pods[pod as usize].never_preempt {
            Preemption::Failed(preemption::NEVER.into())
        } else {
            self.cycle.in_post_filter_order(|c| c.preempt_for_pod(pod))
        };
        match outcome {
            Preemption::Chosen {
                victims,
                assignments,
                ..
            } => {
                let by = self.pod_key(pod);
                self.carry_out(&by, &victims, &assignments);
            }
            Preemption::Failed(why) => {
                let pod = self.pod_key(pod);
                self.outcome.unschedulable.push(Unschedulable {
                    pod,
                    reason,
                    preemption: Some(why),
                });
            }
        }
    }

    /// A decision for `group` before its cycle: nothing bound yet.
    fn new_decision(&self, group: GroupId, pending: usize) -> PodGroupDecision {
        let info = &self.cycle.snapshot.groups[group as usize];
        PodGroupDecision {
            pod_group: info.key.clone(),
            scheduled: false,
            reason: String::new(),
            min_count: info.min_count(),
            bound: 0,
            pending: pending as u32,
            placement: None,
            domains: Vec::new(),
            condition_reason: String::new(),
            preemption: None,
            disruption: None,
        }
    }

    /// One CompositePodGroup tree, placed as one unit: every PodGroup in
    /// it with pending members gets a decision.
    fn schedule_tree(&mut self, root: CompositeId) {
        self.cycle.caches.permits.clear();
        let failed_before = self.cycle.failures.failed;
        let groups: Vec<(GroupId, Vec<PodId>)> = self
            .cycle
            .snapshot
            .subtree_groups(root)
            .into_iter()
            .map(|g| (g, self.cycle.pending_of(g)))
            .filter(|(_, pending)| !pending.is_empty())
            .collect();
        let mut decisions: Vec<PodGroupDecision> = groups
            .iter()
            .map(|(g, pending)| self.new_decision(*g, pending.len()))
            .collect();
        let (mut result, attempted) = match self.cycle.pre_enqueue(Unit::Composite(root)) {
            Err(reason) => (
                tree::TreeResult::Rejected {
                    reason,
                    inconclusive: false,
                },
                false,
            ),
            Ok(()) => (self.cycle.place_tree(root), true),
        };
        let root_key = self.cycle.snapshot.composites[root as usize].key.clone();
        let mut preemption = None;
        if attempted
            && matches!(result, tree::TreeResult::Rejected { .. })
            && self.may_preempt(failed_before)
        {
            let (outcome, layout) = if self.cycle.snapshot.composites[root as usize]
                .spec
                .never_preempt
            {
                (Preemption::Failed(preemption::NEVER.into()), Vec::new())
            } else {
                self.cycle
                    .in_post_filter_order(|c| c.preempt_for_tree(root))
            };
            preemption = Some(match outcome {
                Preemption::Failed(reason) => PreemptionOutcome {
                    result: "failed".into(),
                    domain: None,
                    victims: 0,
                    reason,
                },
                Preemption::Chosen {
                    domain, victims, ..
                } => {
                    // The victims go; the layout the trial found (and the
                    // reprieve kept feasible) is what binds.
                    let assigned: Vec<(PodId, NodeId)> = layout
                        .iter()
                        .flat_map(|placed| placed.assigned.iter().copied())
                        .collect();
                    self.carry_out(&root_key, &victims, &assigned);
                    result = tree::TreeResult::Admitted(layout);
                    PreemptionOutcome {
                        result: "preempted".into(),
                        domain: Some(domain),
                        victims: victims.len() as u32,
                        reason: String::new(),
                    }
                }
            });
        }
        for decision in &mut decisions {
            decision.preemption.clone_from(&preemption);
        }
        match result {
            tree::TreeResult::Admitted(layout) => {
                for ((group, pending), decision) in groups.iter().zip(&mut decisions) {
                    let Some(placed) = layout.iter().find(|p| p.group == *group) else {
                        let reason = format!(
                            "CompositePodGroup {root_key} was admitted without this PodGroup"
                        );
                        for &pod in pending {
                            self.leave_pending(pod, reason.clone());
                        }
                        decision.reason = reason;
                        decision.condition_reason = "Unschedulable".into();
                        continue;
                    };
                    if preemption.is_none() {
                        for &(pod, node) in &placed.assigned {
                            self.bind(pod, node);
                        }
                    }
                    for (pod, reason) in &placed.unfit {
                        self.leave_pending(*pod, reason.clone());
                    }
                    let bound = placed.assigned.len() as u32;
                    decision.scheduled = true;
                    decision.bound = bound;
                    decision.pending -= bound;
                    let path: Vec<&Placement> = placed.path.iter().collect();
                    decision.domains = domains(&path);
                    decision.placement = placed.path.last().map(|p| p.name.clone());
                    if decision.pending > 0 {
                        decision.reason = format!(
                            "admitted with {bound} of {} pending pods; the rest did not fit",
                            bound + decision.pending
                        );
                    }
                }
            }
            tree::TreeResult::Rejected { reason, .. } => {
                let errored = self.cycle.failures.failed > failed_before;
                for ((group, pending), decision) in groups.iter().zip(&mut decisions) {
                    let key = &self.cycle.snapshot.groups[*group as usize].key;
                    let text = if attempted {
                        crate::outcome::member_reason(key, &reason)
                    } else {
                        reason.clone()
                    };
                    for &pod in pending {
                        self.leave_pending(pod, text.clone());
                    }
                    decision.reason = reason.clone();
                    if attempted || errored {
                        decision.condition_reason = if errored {
                            "SchedulerError"
                        } else {
                            "Unschedulable"
                        }
                        .into();
                    }
                }
            }
        }
        self.outcome.pod_groups.extend(decisions);
    }

    /// PodGroups that lost pods get their `DisruptionTarget` condition: on
    /// their entry if they have one, else on a new entry after the others.
    fn record_disruptions(&mut self) {
        let disrupted = std::mem::take(&mut self.disrupted);
        for (group, (by, evicted)) in disrupted {
            let key = &self.cycle.snapshot.groups[group as usize].key;
            let disruption = Disruption {
                condition: "DisruptionTarget".into(),
                reason: "PreemptionByScheduler".into(),
                by,
                evicted,
            };
            match self
                .outcome
                .pod_groups
                .iter_mut()
                .find(|g| &g.pod_group == key)
            {
                Some(entry) => entry.disruption = Some(disruption),
                None => {
                    let mut entry = self.new_decision(group, 0);
                    entry.scheduled = true;
                    entry.disruption = Some(disruption);
                    self.outcome.pod_groups.push(entry);
                }
            }
        }
    }

    /// One PodGroup cycle, recorded with the reason of the
    /// `PodGroupInitiallyScheduled` condition a failed attempt sets. A group
    /// that PreEnqueue holds back never reaches an attempt and gets none.
    fn schedule_group(&mut self, group: GroupId) {
        self.cycle.caches.permits.clear();
        let failed_before = self.cycle.failures.failed;
        let (mut decision, attempted) = self.group_cycle(group, failed_before);
        let errored = self.cycle.failures.failed > failed_before;
        if !decision.scheduled && decision.condition_reason.is_empty() && (attempted || errored) {
            decision.condition_reason = if errored {
                "SchedulerError"
            } else {
                "Unschedulable"
            }
            .into();
        }
        self.outcome.pod_groups.push(decision);
    }

    /// The decision, and whether the group got past PreEnqueue.
    fn group_cycle(&mut self, group: GroupId, failed_before: u64) -> (PodGroupDecision, bool) {
        let snapshot = &*self.cycle.snapshot;
        let info = &snapshot.groups[group as usize];
        let key = info.key.clone();
        let pending: Vec<PodId> = info
            .members
            .iter()
            .copied()
            .filter(|&p| snapshot.pods[p as usize].pending)
            .collect();
        let invalid = info.invalid.clone();
        let mut decision = self.new_decision(group, pending.len());
        if let Some(invalid) = invalid {
            for &pod in &pending {
                self.leave_pending(pod, crate::outcome::member_reason(&key, &invalid));
            }
            decision.reason = invalid;
            decision.condition_reason = "Invalid".into();
            return (decision, false);
        }
        if let Err(reason) = self.cycle.pre_enqueue(Unit::Group(group)) {
            for &pod in &pending {
                self.leave_pending(pod, reason.clone());
            }
            decision.reason = reason;
            return (decision, false);
        }

        if let Err(reason) = self.cycle.check_min_resources(group) {
            for &pod in &pending {
                self.leave_pending(pod, crate::outcome::member_reason(&key, &reason));
            }
            decision.reason = reason;
            return (decision, true);
        }

        let cluster = Placement::cluster(self.cycle.snapshot.node_count());
        let mut generated = false;
        self.cycle.ignored_generate = None;
        let placements = match self.cycle.generate_placements(Unit::Group(group), &cluster) {
            Ok(Some(placements)) => {
                generated = true;
                placements.candidates
            }
            Ok(None) => {
                let info = &self.cycle.snapshot.groups[group as usize];
                if let Some(topology) = info.spec.as_ref().and_then(|s| s.topology_key.clone()) {
                    let unit = format!("PodGroup {}", info.key);
                    self.cycle.warn_topology_ignored(&unit, &topology);
                }
                vec![cluster.clone()]
            }
            Err(reason) => {
                for &pod in &pending {
                    self.leave_pending(pod, crate::outcome::member_reason(&key, &reason));
                }
                decision.reason = reason;
                return (decision, true);
            }
        };

        let result = self.cycle.place_group(group, &pending, placements.clone());
        let result = match result {
            GroupResult::Rejected(failure) if self.may_preempt(failed_before) => {
                match self.preempt(group, &pending, &placements, &mut decision) {
                    Some(admitted) => return (admitted, true),
                    None => GroupResult::Rejected(failure),
                }
            }
            other => other,
        };
        match result {
            GroupResult::Admitted(attempt) => {
                for &(pod, node) in &attempt.assigned {
                    self.bind(pod, node);
                }
                let mut bound = attempt.assigned.len() as u32;
                decision.scheduled = true;
                decision.domains = domains(&[&attempt.placement]);
                decision.placement = Some(attempt.placement.name.clone());
                let total = decision.pending;
                let mut unfit = attempt.unfit;
                if !unfit.is_empty() && self.may_preempt(failed_before) {
                    bound += self.preempt_for_leftovers(
                        group,
                        &attempt.placement,
                        &mut unfit,
                        &mut decision,
                    );
                }
                for (pod, reason) in unfit {
                    self.leave_pending(pod, reason);
                }
                decision.bound = bound;
                decision.pending = total - bound;
                if decision.pending > 0 && decision.reason.is_empty() {
                    decision.reason = format!(
                        "admitted with {bound} of {total} pending pods; the rest did not fit"
                    );
                }
            }
            GroupResult::Rejected(failure) => {
                let topology = self.cycle.snapshot.groups[group as usize]
                    .spec
                    .as_ref()
                    .and_then(|s| s.topology_key.clone());
                let reason = match topology {
                    Some(key) if generated => {
                        self.cycle
                            .explain_domains(group, &pending, &placements, &cluster, &key)
                    }
                    _ => failure_reason(&failure, |p| self.pod_key(p)),
                };
                for &pod in &pending {
                    let own = failure
                        .unfit
                        .iter()
                        .find(|(p, _)| *p == pod)
                        .map(|(_, r)| r.clone());
                    self.leave_pending(
                        pod,
                        own.unwrap_or_else(|| crate::outcome::member_reason(&key, &reason)),
                    );
                }
                decision.reason = reason;
            }
        }
        (decision, true)
    }

    /// Preemption for the members of an admitted `group` that did not fit
    /// (`unfit`, in queue order), inside the `placement` it was admitted to.
    /// kube-scheduler binds the members that fit first and requeues the
    /// rest at once; their next cycle, which places no pod, ends
    /// Unschedulable and runs PodGroupPostFilter for just those pods
    /// (`runRootSchedulingAlgorithm`, "Partial Preemption with basic policy"
    /// in upstream's integration tests). Those it places are bound (and
    /// taken out of `unfit`); returns how many.
    fn preempt_for_leftovers(
        &mut self,
        group: GroupId,
        placement: &Placement,
        unfit: &mut Vec<(PodId, String)>,
        decision: &mut PodGroupDecision,
    ) -> u32 {
        let Some(spec) = self.cycle.snapshot.groups[group as usize].spec.clone() else {
            return 0;
        };
        if spec.never_preempt {
            return 0;
        }
        let leftovers: Vec<PodId> = unfit.iter().map(|(p, _)| *p).collect();
        let priority = spec.priority;
        // The leftovers' own cycle: permit verdicts are asked for again.
        self.cycle.caches.permits.clear();
        let outcome = self.cycle.in_post_filter_order(|c| {
            c.preempt_for_group(group, &leftovers, std::slice::from_ref(placement), priority)
        });
        let Preemption::Chosen {
            units,
            victims,
            assignments,
            ..
        } = outcome
        else {
            return 0;
        };
        let key = decision.pod_group.clone();
        self.carry_out(&key, &victims, &assignments);
        unfit.retain(|(p, _)| !assignments.iter().any(|(a, _)| a == p));
        decision.reason = format!(
            "admitted; {} more pod(s) by preempting {} pod(s) in {units} unit(s) in {}",
            assignments.len(),
            victims.len(),
            placement.name
        );
        decision.preemption = Some(PreemptionOutcome {
            result: "preempted".into(),
            domain: Some(placement.name.clone()),
            victims: victims.len() as u32,
            reason: String::new(),
        });
        assignments.len() as u32
    }

    /// The group's preemption attempt: `Some(decision)` when it preempted
    /// and was admitted; otherwise the failure is noted on `decision`.
    fn preempt(
        &mut self,
        group: GroupId,
        pending: &[PodId],
        placements: &[Placement],
        decision: &mut PodGroupDecision,
    ) -> Option<PodGroupDecision> {
        let info = &self.cycle.snapshot.groups[group as usize];
        let spec = info.spec.as_ref()?;
        let outcome = if spec.never_preempt {
            Preemption::Failed(preemption::NEVER.into())
        } else {
            let priority = spec.priority;
            self.cycle
                .in_post_filter_order(|c| c.preempt_for_group(group, pending, placements, priority))
        };
        match outcome {
            Preemption::Failed(reason) => {
                decision.preemption = Some(PreemptionOutcome {
                    result: "failed".into(),
                    domain: None,
                    victims: 0,
                    reason,
                });
                None
            }
            Preemption::Chosen {
                domain,
                units,
                victims,
                assignments,
            } => {
                let key = decision.pod_group.clone();
                self.carry_out(&key, &victims, &assignments);
                let mut admitted = decision.clone();
                let bound = assignments.len() as u32;
                admitted.scheduled = true;
                admitted.bound = bound;
                admitted.pending -= bound;
                if let Some(placement) = placements.iter().find(|p| p.name == domain) {
                    admitted.domains = self::domains(&[placement]);
                }
                admitted.placement = Some(domain.clone());
                admitted.reason = format!(
                    "admitted by preempting {} pod(s) in {} unit(s) in {domain}",
                    victims.len(),
                    units
                );
                let assigned: Vec<PodId> = assignments.iter().map(|&(p, _)| p).collect();
                for &pod in pending.iter().filter(|p| !assigned.contains(p)) {
                    self.leave_pending(
                        pod,
                        format!("PodGroup {key} admitted without this pod: it did not fit"),
                    );
                }
                admitted.preemption = Some(PreemptionOutcome {
                    result: "preempted".into(),
                    domain: Some(domain),
                    victims: victims.len() as u32,
                    reason: String::new(),
                });
                Some(admitted)
            }
        }
    }
}

#[cfg(test)]
mod composition_tests;
#[cfg(test)]
mod sampling_tests;
#[cfg(test)]
mod tests;
