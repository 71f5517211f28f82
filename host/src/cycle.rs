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
//! Decisions are applied to the snapshot as they are made, so later
//! entities see earlier placements.

use std::cmp::Reverse;

use crate::node_checks::{self, Diagnosis};
use crate::outcome::{Binding, Outcome, PodGroupDecision, Unschedulable};
use std::collections::BTreeMap;

use crate::config::FailurePolicy;
use crate::outcome::PluginErrorCount;
use crate::runtime::{Code, ExtensionPoint, Placement, PluginError, PluginSet, Status};
use crate::snapshot::{GroupId, NodeId, PodId, Snapshot};

/// Something the queue holds: a PodGroup (one entity for all its pending
/// members) or a pod that belongs to no group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entity {
    /// A PodGroup.
    Group(GroupId),
    /// A lone pod.
    Pod(PodId),
}

/// The queue in `PrioritySort` order: priority descending, then creation
/// time, then `namespace/name`.
pub fn queue(snapshot: &Snapshot) -> Vec<Entity> {
    let pending = |p: &PodId| snapshot.pods[*p as usize].pending;
    let mut entities: Vec<(i32, i64, &str, Entity)> = Vec::new();
    for (id, group) in snapshot.groups.iter().enumerate() {
        if !group.members.iter().any(pending) {
            continue;
        }
        let priority = match &group.spec {
            Some(spec) => spec.priority,
            None => group
                .members
                .iter()
                .map(|&p| snapshot.pods[p as usize].priority)
                .max()
                .unwrap_or(0),
        };
        entities.push((
            priority,
            group.created,
            &group.key,
            Entity::Group(id as GroupId),
        ));
    }
    for (id, pod) in snapshot.pods.iter().enumerate() {
        if pod.pending && pod.group.is_none() {
            entities.push((
                pod.priority,
                pod.created,
                &pod.key,
                Entity::Pod(id as PodId),
            ));
        }
    }
    entities.sort_by_key(|&(priority, created, key, _)| (Reverse(priority), created, key));
    entities.into_iter().map(|(.., e)| e).collect()
}

/// Runs every queued entity once over `snapshot` and returns what was decided.
pub fn run(snapshot: &mut Snapshot, plugins: &mut PluginSet) -> Outcome {
    let mut scheduler = Scheduler {
        snapshot,
        plugins,
        outcome: Outcome::default(),
        failures: PluginFailures::default(),
    };
    scheduler.outcome.warnings = scheduler.snapshot.warnings.clone();
    scheduler.outcome.notes = scheduler.snapshot.notes.clone();
    for entity in queue(scheduler.snapshot) {
        match entity {
            Entity::Group(group) => scheduler.schedule_group(group),
            Entity::Pod(pod) => scheduler.schedule_pod(pod),
        }
    }
    scheduler.failures.report(&mut scheduler.outcome);
    scheduler.outcome
}

/// Plugin failures of a run, applied under each plugin's failure policy.
#[derive(Default)]
struct PluginFailures {
    /// (plugin, extension point, cause) → count, for `wasched_plugin_errors_total`.
    counts: BTreeMap<(String, ExtensionPoint, &'static str), u64>,
    /// Plugins skipped under `failurePolicy: Ignore` → (count, first failure).
    ignored: BTreeMap<String, (u64, String)>,
    /// Failures under `failurePolicy: Fail` so far (tells `SchedulerError`
    /// from `Unschedulable`).
    failed: u64,
}

impl PluginFailures {
    /// A plugin call's result under its failure policy: `Ok(Some(v))` to use
    /// the answer, `Ok(None)` to skip the plugin (`Ignore`), `Err(reason)` to
    /// fail the pod or group (`Fail`).
    fn settle<T>(&mut self, result: Result<T, PluginError>) -> Result<Option<T>, String> {
        let error = match result {
            Ok(value) => return Ok(Some(value)),
            Err(error) => error,
        };
        *self
            .counts
            .entry((error.plugin.clone(), error.point, error.cause.label()))
            .or_default() += 1;
        match error.policy {
            FailurePolicy::Fail => {
                self.failed += 1;
                Err(error.to_string())
            }
            FailurePolicy::Ignore => {
                let entry = self
                    .ignored
                    .entry(error.plugin.clone())
                    .or_insert((0, error.to_string()));
                entry.0 += 1;
                Ok(None)
            }
        }
    }

    fn report(self, outcome: &mut Outcome) {
        for (plugin, (count, first)) in self.ignored {
            outcome.warnings.push(format!(
                "plugin {plugin} failed {count} time(s) and was skipped (failurePolicy: Ignore); first failure: {first}"
            ));
        }
        outcome.plugin_errors = self
            .counts
            .into_iter()
            .map(|((plugin, point, cause), count)| PluginErrorCount {
                plugin,
                extension_point: point.interface().to_string(),
                cause: cause.to_string(),
                count,
            })
            .collect();
    }
}

struct Scheduler<'a> {
    snapshot: &'a mut Snapshot,
    plugins: &'a mut PluginSet,
    outcome: Outcome,
    failures: PluginFailures,
}

/// The result of trying one placement for a group.
struct Attempt {
    placement: Placement,
    /// Pods assumed, in order (still assumed if `admitted`).
    assigned: Vec<(PodId, NodeId)>,
    /// Pods that fit nowhere in the placement, with the diagnosis.
    unfit: Vec<(PodId, String)>,
    /// Whether the group may bind `assigned`.
    admitted: bool,
    /// Why not (the last permit verdict or a plugin error).
    reason: String,
}

impl Scheduler<'_> {
    fn pod_key(&self, pod: PodId) -> String {
        self.snapshot.pods[pod as usize].key.clone()
    }

    fn bind(&mut self, pod: PodId, node: NodeId) {
        self.snapshot.pods[pod as usize].pending = false;
        let binding = Binding {
            pod: self.pod_key(pod),
            node: self.snapshot.nodes[node as usize].name.clone(),
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
        let all: Vec<NodeId> = (0..self.snapshot.node_count() as NodeId).collect();
        match self.place_pod(pod, &all) {
            Ok(node) => {
                self.snapshot.assume(pod, node);
                self.bind(pod, node);
            }
            Err(reason) => self.leave_pending(pod, reason),
        }
    }

    /// Filter and score one pod over `nodes`; the best node, or the diagnosis.
    fn place_pod(&mut self, pod: PodId, nodes: &[NodeId]) -> Result<NodeId, String> {
        let mut diagnosis = Diagnosis::over(nodes.len());
        let mut feasible = Vec::with_capacity(nodes.len());
        let spread = node_checks::SpreadState::for_pod(self.snapshot, pod);
        for &node in nodes {
            match node_checks::check(self.snapshot, pod, node, &spread) {
                Ok(()) => feasible.push(node),
                Err(rejection) => diagnosis.reject(rejection),
            }
        }
        for plugin in self.plugins.at(ExtensionPoint::Filter) {
            if feasible.is_empty() {
                break;
            }
            let Some(rejections) =
                self.failures
                    .settle(plugin.filter(self.snapshot, pod, &feasible))?
            else {
                continue;
            };
            for rejection in rejections {
                diagnosis.add(rejection.reason);
                feasible.retain(|&n| n != rejection.node);
            }
        }
        if feasible.is_empty() {
            return Err(diagnosis.render(self.snapshot));
        }
        let mut totals: Vec<i64> = feasible
            .iter()
            .map(|&n| node_checks::least_allocated_score(self.snapshot, pod, n))
            .collect();
        for plugin in self.plugins.at(ExtensionPoint::Score) {
            match self
                .failures
                .settle(plugin.score(self.snapshot, pod, &feasible))?
            {
                None => {}
                Some(Ok(scores)) => totals.iter_mut().zip(scores).for_each(|(t, s)| *t += s),
                Some(Err(status)) => {
                    return Err(format!("plugin {}: {}", plugin.name(), status.reason));
                }
            }
        }
        // Highest total; ties go to the lowest node id (= node name order).
        let best = (0..feasible.len())
            .max_by_key(|&i| (totals[i], Reverse(feasible[i])))
            .expect("feasible is not empty");
        Ok(feasible[best])
    }

    /// One PodGroup cycle, recorded with the reason of the
    /// `PodGroupInitiallyScheduled` condition a failed attempt sets. A group
    /// that PreEnqueue holds back never reaches an attempt and gets none.
    fn schedule_group(&mut self, group: GroupId) {
        let failed_before = self.failures.failed;
        let (mut decision, attempted) = self.group_cycle(group);
        let errored = self.failures.failed > failed_before;
        if !decision.scheduled && (attempted || errored) {
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
        let info = &self.snapshot.groups[group as usize];
        let key = info.key.clone();
        let min_count = info.min_count();
        let pending: Vec<PodId> = info
            .members
            .iter()
            .copied()
            .filter(|&p| self.snapshot.pods[p as usize].pending)
            .collect();
        let mut decision = PodGroupDecision {
            pod_group: key.clone(),
            scheduled: false,
            reason: String::new(),
            min_count,
            bound: 0,
            pending: pending.len() as u32,
            placement: None,
            condition_reason: String::new(),
        };

        if let Err(reason) = self.pre_enqueue(group) {
            for &pod in &pending {
                self.leave_pending(pod, reason.clone());
            }
            decision.reason = reason;
            return (decision, false);
        }

        if let Err(reason) = self.check_min_resources(group) {
            for &pod in &pending {
                self.leave_pending(pod, format!("PodGroup {key} not admitted: {reason}"));
            }
            decision.reason = reason;
            return (decision, true);
        }

        let placements = match self.generate_placements(group) {
            Ok(placements) => placements,
            Err(reason) => {
                for &pod in &pending {
                    self.leave_pending(pod, format!("PodGroup {key} not admitted: {reason}"));
                }
                decision.reason = reason;
                return (decision, true);
            }
        };

        let single = placements.len() == 1;
        let mut best: Option<(i64, Attempt)> = None;
        let mut closest_failure: Option<Attempt> = None;
        for placement in placements {
            let mut attempt = self.try_placement(group, &pending, placement);
            if attempt.admitted && single {
                best = Some((0, attempt));
                break;
            }
            // Several placements: score each admitted one with its pods
            // assumed, then forget them; the winner is assumed again below.
            let score = if attempt.admitted {
                let score = self.score_placement(group, &attempt);
                for &(pod, _) in &attempt.assigned {
                    self.snapshot.forget(pod);
                }
                score.map_err(|reason| {
                    attempt.admitted = false;
                    attempt.reason = reason;
                })
            } else {
                Err(())
            };
            match score {
                Ok(score) if best.as_ref().is_none_or(|(s, _)| score > *s) => {
                    best = Some((score, attempt))
                }
                Ok(_) => {}
                Err(())
                    if closest_failure
                        .as_ref()
                        .is_none_or(|f| attempt.assigned.len() > f.assigned.len()) =>
                {
                    closest_failure = Some(attempt)
                }
                Err(()) => {}
            }
        }

        match best {
            Some((_, attempt)) => {
                for &(pod, node) in &attempt.assigned {
                    if !single {
                        self.snapshot.assume(pod, node);
                    }
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
            None => {
                let failure = closest_failure.expect("at least one placement was tried");
                let reason = group_failure_reason(&failure, |p| self.pod_key(p));
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

    /// Coscheduling's `minResources` (read from the Coscheduling and Volcano
    /// dialects): the cluster's free capacity must cover them.
    fn check_min_resources(&self, group: GroupId) -> Result<(), String> {
        let snapshot = &*self.snapshot;
        let short: Vec<String> = snapshot.groups[group as usize]
            .min_resources
            .iter()
            .filter_map(|&(r, wanted)| {
                let free: u64 = snapshot
                    .allocatable(r)
                    .iter()
                    .zip(snapshot.requested(r))
                    .map(|(a, used)| a.saturating_sub(*used))
                    .fold(0u64, u64::saturating_add);
                let name = &snapshot.resource_names[r];
                let unit = if name == "cpu" { "m" } else { "" };
                (free < wanted).then(|| format!("{name} {wanted}{unit} wanted, {free}{unit} free"))
            })
            .collect();
        if short.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "minResources exceed the cluster's free capacity: {}",
                short.join(", ")
            ))
        }
    }

    /// PreEnqueue: every plugin must answer success (or skip).
    fn pre_enqueue(&mut self, group: GroupId) -> Result<(), String> {
        for plugin in self.plugins.at(ExtensionPoint::PreEnqueue) {
            let Some(status) = self
                .failures
                .settle(plugin.pre_enqueue(self.snapshot, group))?
            else {
                continue;
            };
            if !matches!(status.code, Code::Success | Code::Skip) {
                return Err(status.reason);
            }
        }
        Ok(())
    }

    /// PlacementGenerate: the first plugin that does not skip splits the
    /// cluster; with none, the whole cluster is the only placement.
    fn generate_placements(&mut self, group: GroupId) -> Result<Vec<Placement>, String> {
        let cluster = Placement {
            name: "cluster".into(),
            nodes: (0..self.snapshot.node_count() as NodeId).collect(),
        };
        for plugin in self.plugins.at(ExtensionPoint::PlacementGenerate) {
            let Some(generated) =
                self.failures
                    .settle(plugin.generate_placements(self.snapshot, group, &cluster))?
            else {
                continue;
            };
            match generated {
                Ok(Some(placements)) if placements.is_empty() => {
                    return Err(format!(
                        "plugin {}: no placement can hold the group",
                        plugin.name()
                    ));
                }
                Ok(Some(placements)) => return Ok(placements),
                Ok(None) => continue,
                Err(status) => return Err(format!("plugin {}: {}", plugin.name(), status.reason)),
            }
        }
        let info = &self.snapshot.groups[group as usize];
        if let Some(topology) = info.spec.as_ref().and_then(|s| s.topology_key.as_ref()) {
            let warning = format!(
                "PodGroup {}: schedulingConstraints.topology key {topology} ignored: no placement-generate plugin is loaded",
                info.key
            );
            self.outcome.warnings.push(warning);
        }
        Ok(vec![cluster])
    }

    /// Places the group's pending pods one by one inside `placement`, asking
    /// the permit plugins after each pod. Leaves the pods assumed only if the
    /// placement is admitted.
    fn try_placement(
        &mut self,
        group: GroupId,
        pending: &[PodId],
        placement: Placement,
    ) -> Attempt {
        let bound = self.snapshot.groups[group as usize].members.len() - pending.len();
        let mut attempt = Attempt {
            placement,
            assigned: Vec::new(),
            unfit: Vec::new(),
            admitted: false,
            reason: String::new(),
        };
        let has_permit = self.plugins.any_at(ExtensionPoint::Permit);
        let mut verdict: Option<Status> = None;
        for (i, &pod) in pending.iter().enumerate() {
            match self.place_pod(pod, &attempt.placement.nodes) {
                Ok(node) => {
                    self.snapshot.assume(pod, node);
                    attempt.assigned.push((pod, node));
                }
                Err(reason) => attempt.unfit.push((pod, reason)),
            }
            if !has_permit {
                continue;
            }
            let scheduled = (bound + attempt.assigned.len()) as u32;
            let remaining = (pending.len() - i - 1) as u32;
            match self.permit(group, scheduled, remaining) {
                Ok(status) if matches!(status.code, Code::Success | Code::Wait | Code::Skip) => {
                    verdict = Some(status)
                }
                Ok(status) => {
                    verdict = Some(status);
                    break;
                }
                Err(reason) => {
                    verdict = Some(Status {
                        code: Code::Error,
                        reason,
                    });
                    break;
                }
            }
        }
        let (admitted, reason) = match verdict {
            None => (
                !attempt.assigned.is_empty(),
                "no pod of the group fits".to_string(),
            ),
            Some(status) => (
                matches!(status.code, Code::Success | Code::Skip) && !attempt.assigned.is_empty(),
                status.reason,
            ),
        };
        attempt.admitted = admitted;
        attempt.reason = if admitted {
            String::new()
        } else if reason.is_empty() {
            "no pod of the group fits".into()
        } else {
            reason
        };
        if !admitted {
            for &(pod, _) in &attempt.assigned {
                self.snapshot.forget(pod);
            }
        }
        attempt
    }

    /// Permit: the strictest verdict of all plugins wins (a rejection over
    /// wait over success).
    fn permit(&mut self, group: GroupId, scheduled: u32, remaining: u32) -> Result<Status, String> {
        let mut verdict = Status {
            code: Code::Success,
            reason: String::new(),
        };
        for plugin in self.plugins.at(ExtensionPoint::Permit) {
            let result = plugin.permit(self.snapshot, group, scheduled, remaining);
            let Some(status) = self.failures.settle(result)? else {
                continue;
            };
            match status.code {
                Code::Success | Code::Skip => {}
                Code::Wait => {
                    if verdict.code == Code::Success {
                        verdict = status;
                    }
                }
                _ => return Ok(status),
            }
        }
        Ok(verdict)
    }

    /// PlacementScore: the sum over plugins; 0 when there are none.
    fn score_placement(&mut self, group: GroupId, attempt: &Attempt) -> Result<i64, String> {
        let mut total = 0;
        for plugin in self.plugins.at(ExtensionPoint::PlacementScore) {
            let result =
                plugin.score_placement(self.snapshot, group, &attempt.placement, &attempt.assigned);
            match self.failures.settle(result)? {
                None => {}
                Some(Ok(score)) => total += score,
                Some(Err(status)) => {
                    return Err(format!("plugin {}: {}", plugin.name(), status.reason));
                }
            }
        }
        Ok(total)
    }
}

/// The group-level reason: the permit verdict plus the first pod that did
/// not fit, so the user sees both the gang rule and the node-level cause.
fn group_failure_reason(failure: &Attempt, pod_key: impl Fn(PodId) -> String) -> String {
    let mut reason = failure.reason.clone();
    if let Some((pod, why)) = failure.unfit.first() {
        reason.push_str(&format!("; {} does not fit: {why}", pod_key(*pod)));
    }
    if failure.placement.name != "cluster" {
        reason = format!("placement {}: {reason}", failure.placement.name);
    }
    reason
}
