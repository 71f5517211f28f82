//! The group algorithm: a PodGroup's pending pods placed one by one inside
//! each candidate placement, with `permit` after every pod (early abort),
//! feasible placements scored, the best one kept.
//!
//! Assumptions follow one rule: every attempt starts at a checkpoint of the
//! snapshot and rolls back to it unless it is the one kept, so attempts nest
//! at any depth (a preemption trial runs this algorithm with victims
//! removed, inside its own checkpoint).

use super::Cycle;
use super::costs::Cost;
use super::placement_memo::UnitShape;
use crate::filters;
use crate::framework::{
    Code, ExtensionPoint, PermitVerdict, Placement, Placements, Progress, Status, Unit,
};
use crate::model::{GroupId, NodeId, PodId, Snapshot};

/// The result of trying one placement for a group.
#[derive(Debug, Clone)]
pub struct Attempt {
    /// Where.
    pub placement: Placement,
    /// Pods assumed, in order.
    pub assigned: Vec<(PodId, NodeId)>,
    /// Pods that fit nowhere in the placement, with the diagnosis.
    pub unfit: Vec<(PodId, String)>,
    /// Whether the group may bind `assigned`.
    pub admitted: bool,
    /// Why not (the last permit verdict or a plugin error).
    pub reason: String,
    /// A plugin failed under `failurePolicy: Fail`, or returned an Error
    /// status, at filter, score, permit or placement-score: the attempt was
    /// aborted, as kube-scheduler aborts a pod group cycle on an Error
    /// status.
    pub errored: bool,
}

/// A feasible placement (an attempt, a tree layout) with what ranks it:
/// the placement-score plugins' total, its [`filters::placement_fit`] and
/// its pod count (running members plus the ones placed).
#[derive(Debug, Clone)]
pub struct Scored<T> {
    /// The placement's result.
    pub item: T,
    /// The placement-score plugins' total.
    pub plugins: i64,
    /// `NodeResourcesFit`'s placement score.
    pub fit: i64,
    /// Pods of the unit scheduled with this placement.
    pub count: i64,
    /// In a preemption trial, the candidate victims on the placement's
    /// nodes ([`costs`](super::costs)); free otherwise.
    pub cost: Cost,
}

/// The best of `scored` by the default placement scores plus the plugins';
/// among equals the cheapest in victims (in a preemption trial), then the
/// first. `None` if empty.
pub fn best<T>(scored: Vec<Scored<T>>) -> Option<T> {
    let at = ranking(&scored).into_iter().next()?;
    scored.into_iter().nth(at).map(|s| s.item)
}

/// The indices of `scored`, best first ([`best`]'s order).
pub fn ranking<T>(scored: &[Scored<T>]) -> Vec<usize> {
    let fits: Vec<i64> = scored.iter().map(|s| s.fit).collect();
    let counts: Vec<i64> = scored.iter().map(|s| s.count).collect();
    let totals: Vec<i64> = filters::default_placement_scores(&fits, &counts)
        .into_iter()
        .zip(scored)
        .map(|(default, s)| default + s.plugins)
        .collect();
    let mut order: Vec<usize> = (0..scored.len()).collect();
    order.sort_by(|&a, &b| {
        totals[b]
            .cmp(&totals[a])
            .then_with(|| scored[a].cost.cmp_cost(&scored[b].cost))
            .then_with(|| a.cmp(&b))
    });
    order
}

/// What the group algorithm decided.
#[derive(Debug, Clone)]
pub enum GroupResult {
    /// Admitted; the attempt's pods are assumed in the snapshot.
    Admitted(Attempt),
    /// Not admitted; nothing stays assumed. The attempt that got furthest.
    Rejected(Attempt),
}

impl Cycle<'_> {
    /// Places `pending` (members of `group`) in the best of `placements`:
    /// each feasible one is scored by the default profile's placement
    /// scores (`NodeResourcesFit` most-allocated over the placement, plus
    /// `PodGroupPodsCount` relative to the best placement) and the
    /// placement-score plugins; the highest total wins, ties going to the
    /// placement generated first.
    pub fn place_group(
        &mut self,
        group: GroupId,
        pending: &[PodId],
        placements: Vec<Placement>,
    ) -> GroupResult {
        let single = placements.len() == 1;
        let running = self.snapshot.groups[group as usize]
            .members
            .iter()
            .filter(|&&p| self.snapshot.is_running(p))
            .count() as i64;
        let mut feasible: Vec<Scored<Attempt>> = Vec::new();
        let mut closest_failure: Option<Attempt> = None;
        for placement in placements {
            let checkpoint = self.snapshot.checkpoint();
            let mut attempt = self.try_placement(group, pending, placement);
            if attempt.errored {
                // An Error ends the group's cycle, whatever other
                // placements could do (and is no evaluation result).
                return GroupResult::Rejected(attempt);
            }
            self.count_evaluation(attempt.admitted);
            if attempt.admitted && single {
                return GroupResult::Admitted(attempt);
            }
            // Several placements: score each admitted one with its pods
            // assumed, then roll back; the winner is assumed again below.
            if attempt.admitted {
                let plugins = self.score_placement(Unit::Group(group), &attempt);
                let fit = filters::placement_fit(self.snapshot, &attempt.placement.nodes);
                let count = running + attempt.assigned.len() as i64;
                let cost = self.placement_cost(&attempt.placement.nodes);
                self.snapshot.rollback(checkpoint);
                match plugins {
                    Ok(plugins) => {
                        feasible.push(Scored {
                            item: attempt,
                            plugins,
                            fit,
                            count,
                            cost,
                        });
                        continue;
                    }
                    Err(reason) => {
                        // A placement-score plugin failed (upstream's
                        // RunPlacementScorePlugins error ends the cycle).
                        attempt.admitted = false;
                        attempt.errored = true;
                        attempt.reason = reason;
                        return GroupResult::Rejected(attempt);
                    }
                }
            }
            if closest_failure
                .as_ref()
                .is_none_or(|f| attempt.assigned.len() > f.assigned.len())
            {
                closest_failure = Some(attempt);
            }
        }
        match best(feasible) {
            Some(attempt) => {
                for &(pod, node) in &attempt.assigned {
                    self.snapshot.assume(pod, node);
                }
                GroupResult::Admitted(attempt)
            }
            None => {
                GroupResult::Rejected(closest_failure.expect("at least one placement was tried"))
            }
        }
    }

    /// Places the pods one by one inside `placement`, asking the permit
    /// plugins after each pod. Leaves the pods assumed only if admitted.
    fn try_placement(
        &mut self,
        group: GroupId,
        pending: &[PodId],
        placement: Placement,
    ) -> Attempt {
        let checkpoint = self.snapshot.checkpoint();
        let bound = self.snapshot.groups[group as usize]
            .members
            .iter()
            .filter(|&&p| self.snapshot.is_running(p))
            .count();
        let mut attempt = Attempt {
            placement,
            assigned: Vec::new(),
            unfit: Vec::new(),
            admitted: false,
            reason: String::new(),
            errored: false,
        };
        let has_permit = self.plugins.any_at(ExtensionPoint::Permit);
        let mut verdict: Option<Status> = None;
        for (i, &pod) in pending.iter().enumerate() {
            let failed_before = self.failures.failed;
            match self.place_pod(pod, &attempt.placement.nodes) {
                Ok(node) => {
                    self.snapshot.assume(pod, node);
                    attempt.assigned.push((pod, node));
                }
                Err(unfit) if self.failures.failed > failed_before => {
                    // A filter or score plugin failed under Fail: the whole
                    // attempt ends (upstream: an Error status, not "does
                    // not fit").
                    attempt.errored = true;
                    verdict = Some(Status::new(Code::Error, unfit.reason));
                    break;
                }
                Err(unfit) => attempt.unfit.push((pod, unfit.reason)),
            }
            if !has_permit {
                continue;
            }
            let progress = Progress {
                scheduled: (bound + attempt.assigned.len()) as u32,
                remaining: (pending.len() - i - 1) as u32,
            };
            match self.permit(Unit::Group(group), progress) {
                Ok(status) if matches!(status.code, Code::Success | Code::Wait | Code::Skip) => {
                    verdict = Some(status)
                }
                Ok(status) => {
                    // An Error verdict ends the group's cycle, as
                    // upstream's RunPlacementFeasiblePlugins error does.
                    if status.code == Code::Error {
                        self.failures.failed += 1;
                        attempt.errored = true;
                    }
                    verdict = Some(status);
                    break;
                }
                Err(reason) => {
                    attempt.errored = true;
                    verdict = Some(Status::new(Code::Error, reason));
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
                status.passes() && !attempt.assigned.is_empty(),
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
            self.snapshot.rollback(checkpoint);
        }
        attempt
    }

    /// PreEnqueue: every plugin must answer success (or skip).
    pub fn pre_enqueue(&mut self, unit: Unit) -> Result<(), String> {
        for mut plugin in self.plugins.at(ExtensionPoint::PreEnqueue) {
            let answer = plugin.pre_enqueue(self.snapshot, unit);
            let Some(status) = self.failures.under_policy(answer)? else {
                continue;
            };
            if !status.passes() {
                return Err(status.reason);
            }
        }
        Ok(())
    }

    /// Permit: the strictest verdict of all plugins wins (a rejection over
    /// wait over success). A plugin's earlier verdict for `unit` in this
    /// cycle of it (any placement attempt) is reused while `progress`
    /// stays within the bounds it gave, instead of asking again.
    pub(super) fn permit(&mut self, unit: Unit, progress: Progress) -> Result<Status, String> {
        let mut verdict = Status::success();
        let keep_all = self.caches.reuse.permit_verdicts;
        let memo = self.caches.permits.entry(unit).or_default();
        for (i, mut plugin) in self.plugins.at(ExtensionPoint::Permit).enumerate() {
            if memo.0.len() <= i {
                memo.0.resize_with(i + 1, Vec::new);
            }
            let kept = &mut memo.0[i];
            // The newest verdict that holds for this progress; once reused,
            // it counts as the newest (the last to be evicted).
            let reusable = kept
                .iter()
                .rposition(|v| v.reuse.is_some_and(|b| b.contain(progress.into())));
            let status = match reusable {
                Some(at) => {
                    let earlier = kept.remove(at);
                    let status = earlier.status.clone();
                    kept.push(earlier);
                    status
                }
                None => {
                    let answer = plugin.permit(self.snapshot, unit, progress);
                    let Some(answer) = self.failures.under_policy(answer)? else {
                        kept.clear();
                        continue;
                    };
                    let status = answer.status.clone();
                    if !keep_all {
                        kept.clear();
                        kept.push(answer);
                    } else if answer.reuse.is_some() {
                        if kept.len() == PERMIT_VERDICTS_KEPT {
                            kept.remove(0);
                        }
                        kept.push(answer);
                    }
                    status
                }
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

    /// Warns once that `unit`'s topology constraint on `topology` was not
    /// applied because no placement-generate plugin split its placement,
    /// naming the failure `failurePolicy: Ignore` skipped, if that was why.
    pub(super) fn warn_topology_ignored(&mut self, unit: &str, topology: &str) {
        let why = match self.ignored_generate.take() {
            Some(error) => format!(
                "its placement-generate plugin failed and failurePolicy Ignore skipped it: {error}"
            ),
            None => "no placement-generate plugin generated placements for it (none is loaded, or every one skipped)".into(),
        };
        let warning =
            format!("{unit}: schedulingConstraints.topology key {topology} ignored: {why}");
        if !self.warnings.contains(&warning) {
            self.warnings.push(warning);
        }
    }

    /// PlacementGenerate: every plugin is asked with the same `parent`, in
    /// order; the placements of those that do not skip are intersected
    /// (see [`intersect`]). `None` when every plugin skipped (or there is
    /// none). With one plugin this is kube-scheduler's behaviour (v1.37.2
    /// allows one PlacementGenerate plugin per profile).
    pub fn generate_placements(
        &mut self,
        unit: Unit,
        parent: &Placement,
    ) -> Result<Option<Placements>, String> {
        let mut combined: Option<(Placements, String)> = None;
        // What a reusable answer for this unit is kept under; `None`: ask.
        let shape = self
            .caches
            .reuse
            .placements
            .then(|| UnitShape::of(self.snapshot, unit))
            .flatten();
        for (at, mut plugin) in self
            .plugins
            .at(ExtensionPoint::PlacementGenerate)
            .enumerate()
        {
            let kept = shape
                .as_ref()
                .and_then(|shape| self.caches.placement_memo.get(at, shape, &parent.nodes));
            let answer = match kept {
                Some(placements) => {
                    self.stats.reused_placements += 1;
                    Ok(Ok(Some(placements.clone())))
                }
                None => {
                    let answer = plugin.generate_placements(self.snapshot, unit, parent);
                    if let (Some(shape), Ok(Ok(Some(placements)))) = (&shape, &answer) {
                        let memo = &mut self.caches.placement_memo;
                        memo.insert(at, shape.clone(), &parent.nodes, placements);
                    }
                    answer
                }
            };
            let ignored = self.failures.ignored_calls;
            let Some(generated) = self.failures.under_policy(answer)? else {
                if self.failures.ignored_calls > ignored
                    && let Some(error) = self.failures.last_ignored.clone()
                {
                    self.ignored_generate = Some(error);
                }
                continue;
            };
            match generated {
                Ok(Some(placements)) if placements.candidates.is_empty() => {
                    return Err(no_placement(self.snapshot, unit, parent, plugin.name()));
                }
                Ok(Some(placements)) => {
                    combined = Some(match combined.take() {
                        None => (placements, plugin.name().to_string()),
                        Some((earlier, names)) => {
                            let names = format!("{names} and {}", plugin.name());
                            let both = intersect(earlier, placements);
                            if both.candidates.is_empty() {
                                return Err(format!(
                                    "plugins {names}: no placement of one overlaps a placement of the other"
                                ));
                            }
                            (both, names)
                        }
                    });
                }
                Ok(None) => continue,
                Err(status) => {
                    if status.code == Code::Error {
                        // An Error, not "no placement" (upstream propagates it).
                        self.failures.failed += 1;
                    }
                    return Err(format!("plugin {}: {}", plugin.name(), status.reason));
                }
            }
        }
        let combined = combined.map(|(placements, _)| placements);
        if let Some(placements) = &combined {
            self.stats.generated += placements.candidates.len() as u64;
        }
        Ok(combined)
    }

    /// The candidate victims on `nodes` in a preemption trial; free outside one.
    pub(super) fn placement_cost(&self, nodes: &[NodeId]) -> Cost {
        self.victim_costs
            .as_ref()
            .map_or(Cost::FREE, |costs| costs.nodes(nodes))
    }

    /// Counts one placement evaluation, the scheduler's own or a
    /// preemption trial's.
    pub(super) fn count_evaluation(&mut self, feasible: bool) {
        let stats = &mut self.stats;
        match (self.victim_costs.is_some(), feasible) {
            (false, true) => stats.feasible += 1,
            (false, false) => stats.infeasible += 1,
            (true, true) => stats.trial_feasible += 1,
            (true, false) => stats.trial_infeasible += 1,
        }
    }

    /// PlacementScore: the weighted sum over plugins; 0 when there are none.
    fn score_placement(&mut self, unit: Unit, attempt: &Attempt) -> Result<i64, String> {
        let mut total = 0;
        for mut plugin in self.plugins.at(ExtensionPoint::PlacementScore) {
            let answer =
                plugin.score_placement(self.snapshot, unit, &attempt.placement, &attempt.assigned);
            match self.failures.under_policy(answer)? {
                None => {}
                Some(Ok(score)) => total += score * plugin.weight(),
                Some(Err(status)) => {
                    // An error status is an Error, as a failure is.
                    self.failures.failed += 1;
                    return Err(format!("plugin {}: {}", plugin.name(), status.reason));
                }
            }
        }
        Ok(total)
    }

    /// Coscheduling's `minResources` (read from the Coscheduling and Volcano
    /// dialects): the cluster's free capacity must cover them.
    pub fn check_min_resources(&self, group: GroupId) -> Result<(), String> {
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
}

/// The group-level reason: the permit verdict plus the first pod that did
/// not fit, so the user sees both the gang rule and the node-level cause.
pub fn failure_reason(failure: &Attempt, pod_key: impl Fn(PodId) -> String) -> String {
    let mut reason = failure.reason.clone();
    if let Some((pod, why)) = failure.unfit.first() {
        reason.push_str(&format!("; {} does not fit: {why}", pod_key(*pod)));
    }
    if failure.placement.name != "cluster" {
        reason = format!("placement {}: {reason}", failure.placement.name);
    }
    reason
}

/// Why a placement-generate plugin found no placement for `unit` in
/// `parent`: no node there carrying the unit's topology key, said
/// exactly so, or else that the plugin found none.
fn no_placement(snapshot: &Snapshot, unit: Unit, parent: &Placement, plugin: &str) -> String {
    let key = match unit {
        Unit::Group(group) => snapshot.groups[group as usize]
            .spec
            .as_ref()
            .and_then(|spec| spec.topology_key.as_deref()),
        Unit::Composite(composite) => snapshot.composites[composite as usize]
            .spec
            .topology_key
            .as_deref(),
    };
    if let Some(key) = key {
        let column = snapshot.symbols.lookup(key);
        let column = column.map_or(&[][..], |key| snapshot.label_column(key));
        let labelled = parent
            .nodes
            .iter()
            .any(|&n| matches!(column.get(n as usize), Some(Some(_))));
        if !labelled {
            let within = if parent.nodes.len() == snapshot.nodes.len() {
                "no node"
            } else {
                "no node of its parent's domain"
            };
            // The key may come from an early dialect's topology policy, so
            // no field is named: the notes say how a dialect's was read.
            return format!("{within} carries the label {key}, the group's required topology key");
        }
    }
    format!("plugin {plugin}: no placement can hold the group")
}

impl Cycle<'_> {
    /// Why no domain of `key` can hold the group, one line naming every
    /// domain considered: how many of its pending pods each would hold
    /// (placed one by one with the node checks and filters, no permit) and
    /// how many nodes of `parent` lack the label.
    pub fn explain_domains(
        &mut self,
        group: GroupId,
        pending: &[PodId],
        placements: &[Placement],
        parent: &Placement,
        key: &str,
    ) -> String {
        const SHOWN: usize = 12;
        let info = &self.snapshot.groups[group as usize];
        let running = info
            .members
            .iter()
            .filter(|&&p| self.snapshot.is_running(p))
            .count() as u32;
        let need = info.min_count().unwrap_or(1).saturating_sub(running).max(1);
        let mut parts = Vec::new();
        // Only a message: the search's start stays where scheduling left it.
        let start = self.next_start_node;
        for placement in placements.iter().take(SHOWN) {
            let checkpoint = self.snapshot.checkpoint();
            let mut fits = 0;
            for &pod in pending {
                if let Ok(node) = self.place_pod(pod, &placement.nodes) {
                    self.snapshot.assume(pod, node);
                    fits += 1;
                }
            }
            self.snapshot.rollback(checkpoint);
            let value = placement
                .domain
                .as_ref()
                .map_or(placement.name.as_str(), |(_, v)| v.as_str());
            parts.push(format!("{value} fits {fits}"));
        }
        self.next_start_node = start;
        if placements.len() > SHOWN {
            parts.push(format!("and {} more", placements.len() - SHOWN));
        }
        // The key's column, not each node's label map: the parent is
        // often the whole cluster.
        let column = self.snapshot.symbols.lookup(key);
        let column = column.map_or(&[][..], |key| self.snapshot.label_column(key));
        let unlabelled = parent
            .nodes
            .iter()
            .filter(|&&n| !matches!(column.get(n as usize), Some(Some(_))))
            .count();
        let mut line = if placements.is_empty() {
            format!("no node has the label {key}")
        } else {
            format!("no {key} domain fits {need} pods: {}", parts.join(", "))
        };
        if unlabelled > 0 {
            line.push_str(&format!("; {unlabelled} node(s) lack the label"));
        }
        line
    }
}

/// The permit verdicts of one unit in its cycle, per permit plugin (in
/// order), least recently given or reused first, for reuse within the
/// bounds each plugin gave.
#[derive(Debug, Default)]
pub(super) struct PermitMemo(Vec<Vec<PermitVerdict>>);

/// How many permit verdicts per plugin a unit's cycle keeps
/// ([`Reuse::permit_verdicts`](super::caches::Reuse::permit_verdicts)); the one
/// least recently given or reused goes first. Enough for a gang's `wait` and the early aborts of the
/// placements it tries; few enough to search on every call.
pub const PERMIT_VERDICTS_KEPT: usize = 8;

/// The placements two placement-generate plugins agree on: every non-empty
/// intersection of one of `first`'s with one of `second`'s, `first`'s
/// order major; named `a & b`, with `second`'s domain (else `first`'s) and
/// the smaller search budget.
pub fn intersect(first: Placements, second: Placements) -> Placements {
    let mut candidates = Vec::new();
    for a in &first.candidates {
        for b in &second.candidates {
            let nodes: Vec<NodeId> = a
                .nodes
                .iter()
                .copied()
                .filter(|n| b.nodes.binary_search(n).is_ok())
                .collect();
            if !nodes.is_empty() {
                candidates.push(Placement {
                    name: format!("{} & {}", a.name, b.name),
                    nodes,
                    domain: b.domain.clone().or_else(|| a.domain.clone()),
                });
            }
        }
    }
    let search_budget = match (first.search_budget, second.search_budget) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    // Each plugin's own answer is what the host may reuse, not this.
    Placements {
        candidates,
        search_budget,
        reusable: false,
    }
}
