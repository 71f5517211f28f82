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
//! - [`queue`]: `PrioritySort`;
//! - `pod`: one pod inside a set of nodes;
//! - [`group`]: the group algorithm inside placements, with checkpoints;
//! - [`trial`]: the group algorithm with pods removed, for preemption;
//! - [`failures`]: failure policy and error counts.

pub mod failures;
pub mod group;
mod pod;
pub mod queue;
pub mod trial;

use failures::PluginFailures;
use group::{GroupResult, failure_reason};
pub use queue::{Entity, queue};

use crate::framework::{Placement, PluginSet, Unit};
use crate::model::{GroupId, NodeId, PodId, Snapshot};
use crate::outcome::{Binding, Outcome, PodGroupDecision, Unschedulable};

/// What a cycle works on: the snapshot, the plugins, and the failures and
/// warnings so far. The algorithm lives in `impl Cycle` blocks of the
/// submodules; recording decisions is [`run`]'s.
pub struct Cycle<'a> {
    /// The cluster, with assumptions of the cycle in progress.
    pub snapshot: &'a mut Snapshot,
    /// The plugins.
    pub plugins: &'a mut PluginSet,
    /// Plugin failures under their failure policies.
    pub failures: PluginFailures,
    /// Things the user should know about the run, in order.
    pub warnings: Vec<String>,
}

impl<'a> Cycle<'a> {
    /// A cycle over `snapshot` with `plugins`.
    pub fn new(snapshot: &'a mut Snapshot, plugins: &'a mut PluginSet) -> Self {
        Self {
            snapshot,
            plugins,
            failures: PluginFailures::default(),
            warnings: Vec::new(),
        }
    }
}

/// Runs every queued entity once over `snapshot` and returns what was decided.
pub fn run(snapshot: &mut Snapshot, plugins: &mut PluginSet) -> Outcome {
    plugins.start_run();
    let mut outcome = Outcome {
        warnings: snapshot.warnings.clone(),
        notes: snapshot.notes.clone(),
        ..Outcome::default()
    };
    let entities = queue(snapshot);
    let mut run = Run {
        cycle: Cycle::new(snapshot, plugins),
        outcome,
    };
    for entity in entities {
        match entity {
            Entity::Group(group) => run.schedule_group(group),
            Entity::Pod(pod) => run.schedule_pod(pod),
        }
        run.cycle.snapshot.commit();
    }
    outcome = run.outcome;
    let cycle = run.cycle;
    outcome.warnings.extend(cycle.warnings);
    let (warnings, errors) = cycle.failures.report();
    outcome.warnings.extend(warnings);
    outcome.warnings.extend(cycle.plugins.output_warnings());
    outcome.plugin_errors = errors;
    outcome
}

/// One run: the cycle and the decisions recorded so far.
struct Run<'a> {
    cycle: Cycle<'a>,
    outcome: Outcome,
}

impl Run<'_> {
    fn pod_key(&self, pod: PodId) -> String {
        self.cycle.snapshot.pods[pod as usize].key.clone()
    }

    fn bind(&mut self, pod: PodId, node: NodeId) {
        let snapshot = &mut *self.cycle.snapshot;
        snapshot.pods[pod as usize].pending = false;
        let binding = Binding {
            pod: snapshot.pods[pod as usize].key.clone(),
            node: snapshot.nodes[node as usize].name.clone(),
        };
        self.outcome.placements.push(binding);
    }

    fn leave_pending(&mut self, pod: PodId, reason: String) {
        let pod = self.pod_key(pod);
        self.outcome
            .unschedulable
            .push(Unschedulable { pod, reason });
    }

    fn schedule_pod(&mut self, pod: PodId) {
        let all: Vec<NodeId> = (0..self.cycle.snapshot.node_count() as NodeId).collect();
        match self.cycle.place_pod(pod, &all) {
            Ok(node) => {
                self.cycle.snapshot.assume(pod, node);
                self.bind(pod, node);
            }
            Err(reason) => self.leave_pending(pod, reason),
        }
    }

    /// One PodGroup cycle, recorded with the reason of the
    /// `PodGroupInitiallyScheduled` condition a failed attempt sets. A group
    /// that PreEnqueue holds back never reaches an attempt and gets none.
    fn schedule_group(&mut self, group: GroupId) {
        let failed_before = self.cycle.failures.failed;
        let (mut decision, attempted) = self.group_cycle(group);
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
    fn group_cycle(&mut self, group: GroupId) -> (PodGroupDecision, bool) {
        let snapshot = &*self.cycle.snapshot;
        let info = &snapshot.groups[group as usize];
        let key = info.key.clone();
        let pending: Vec<PodId> = info
            .members
            .iter()
            .copied()
            .filter(|&p| snapshot.pods[p as usize].pending)
            .collect();
        let mut decision = PodGroupDecision {
            pod_group: key.clone(),
            scheduled: false,
            reason: String::new(),
            min_count: info.min_count(),
            bound: 0,
            pending: pending.len() as u32,
            placement: None,
            condition_reason: String::new(),
        };
        if let Some(invalid) = info.invalid.clone() {
            for &pod in &pending {
                self.leave_pending(pod, format!("PodGroup {key} not admitted: {invalid}"));
            }
            decision.reason = invalid;
            decision.condition_reason = "Invalid".into();
            return (decision, false);
        }
        if let Some(parent) = info.spec.as_ref().and_then(|s| s.parent.as_ref()) {
            let warning = format!(
                "PodGroup {key}: parentCompositePodGroupName {parent}: CompositePodGroup trees are not placed as one unit yet; the group is scheduled on its own"
            );
            self.cycle.warnings.push(warning);
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
                self.leave_pending(pod, format!("PodGroup {key} not admitted: {reason}"));
            }
            decision.reason = reason;
            return (decision, true);
        }

        let cluster = Placement::cluster(self.cycle.snapshot.node_count());
        let placements = match self.cycle.generate_placements(Unit::Group(group), &cluster) {
            Ok(Some(placements)) => placements,
            Ok(None) => {
                let info = &self.cycle.snapshot.groups[group as usize];
                if let Some(topology) = info.spec.as_ref().and_then(|s| s.topology_key.as_ref()) {
                    let warning = format!(
                        "PodGroup {}: schedulingConstraints.topology key {topology} ignored: no placement-generate plugin is loaded",
                        info.key
                    );
                    self.cycle.warnings.push(warning);
                }
                vec![cluster]
            }
            Err(reason) => {
                for &pod in &pending {
                    self.leave_pending(pod, format!("PodGroup {key} not admitted: {reason}"));
                }
                decision.reason = reason;
                return (decision, true);
            }
        };

        match self.cycle.place_group(group, &pending, placements) {
            GroupResult::Admitted(attempt) => {
                for &(pod, node) in &attempt.assigned {
                    self.bind(pod, node);
                }
                for (pod, reason) in attempt.unfit {
                    self.leave_pending(pod, reason);
                }
                let bound = attempt.assigned.len() as u32;
                decision.scheduled = true;
                decision.bound = bound;
                decision.pending -= bound;
                decision.placement = Some(attempt.placement.name);
                if decision.pending > 0 {
                    decision.reason = format!(
                        "admitted with {bound} of {} pending pods; the rest did not fit",
                        bound + decision.pending
                    );
                }
            }
            GroupResult::Rejected(failure) => {
                let reason = failure_reason(&failure, |p| self.pod_key(p));
                for &pod in &pending {
                    let own = failure
                        .unfit
                        .iter()
                        .find(|(p, _)| *p == pod)
                        .map(|(_, r)| r.clone());
                    self.leave_pending(
                        pod,
                        own.unwrap_or_else(|| format!("PodGroup {key} not admitted: {reason}")),
                    );
                }
                decision.reason = reason;
            }
        }
        (decision, true)
    }
}

#[cfg(test)]
mod tests;
