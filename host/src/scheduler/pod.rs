//! One pod inside a set of nodes: the in-tree node checks, `filter` and
//! `score` plugins, and the best node.

use std::collections::HashMap;
use std::rc::Rc;

use super::Cycle;
use super::misfits::{NodesNow, Search};
use super::shapes::Shape as ShortShape;
use crate::filters::NodeScores;
use crate::filters::{self, Diagnosis, Rejectors};
use crate::framework::ExtensionPoint;
use crate::model::{NodeId, PodId};

/// Why a pod found no node: kube-scheduler's message (its `FitError`, or a
/// failed plugin's error) and the plugins that rejected it, which decide
/// the cluster events that requeue it (none when a plugin failed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfit {
    /// The message.
    pub reason: String,
    /// The plugins that rejected a node.
    pub rejectors: Rejectors,
}

impl From<String> for Unfit {
    /// A failure no plugin's rejection explains.
    fn from(reason: String) -> Self {
        Self {
            reason,
            rejectors: Rejectors::default(),
        }
    }
}

impl Cycle<'_> {
    /// The static node checks of `pod` on every node, computed once per
    /// pod signature in a run (nodes and pod specs do not change).
    pub(super) fn static_verdicts(&mut self, pod: PodId) -> Rc<filters::StaticVerdicts> {
        if let Some(Some(known)) = self.caches.statics.by_pod.get(pod as usize) {
            return known.clone();
        }
        let signature = filters::static_signature(&self.snapshot.pods[pod as usize]);
        let verdicts = self
            .caches
            .statics
            .by_signature
            .entry(signature)
            .or_insert_with(|| Rc::new(filters::StaticVerdicts::of(self.snapshot, pod)))
            .clone();
        let by_pod = &mut self.caches.statics.by_pod;
        if by_pod.len() <= pod as usize {
            by_pod.resize(self.snapshot.pods.len().max(pod as usize + 1), None);
        }
        by_pod[pod as usize] = Some(verdicts.clone());
        verdicts
    }

    /// Filters and scores `pod` over `nodes`: the best node, or the
    /// diagnosis of why none fits (or a failed plugin's error).
    ///
    /// As kube-scheduler's `findNodesThatFitPod`, the search walks `nodes`
    /// from where the last pod's search stopped and stops once it has
    /// [`PluginSet::feasible_nodes_to_find`] feasible nodes (every node
    /// below 100 nodes, or with `percentageOfNodesToScore: 100`); only
    /// those are scored. kube-scheduler walks them on parallel workers and
    /// keeps whichever it finds first; wasched walks them in order, as
    /// kube-scheduler does with one worker ([`Cycle::find_feasible`]).
    ///
    /// Live ([`Cycle::nominated_first`]), a pod nominated to one of `nodes`
    /// (`status.nominatedNodeName`) goes there if it fits, unscored, as
    /// kube-scheduler's `evaluateNominatedNode` does; otherwise it is
    /// placed as any pod.
    ///
    /// [`PluginSet::feasible_nodes_to_find`]: crate::PluginSet::feasible_nodes_to_find
    pub fn place_pod(&mut self, pod: PodId, nodes: &[NodeId]) -> Result<NodeId, Unfit> {
        let nominated = self.snapshot.pods[pod as usize]
            .nominated_node
            .filter(|n| self.nominated_first && nodes.contains(n));
        if let Some(node) = nominated
            && self.feasible_nodes(pod, &[node]).is_ok()
        {
            return Ok(node);
        }
        if nodes.is_empty() {
            return Err(Diagnosis::over(0).render(self.snapshot).into());
        }
        let wanted = self.plugins.feasible_nodes_to_find(nodes.len());
        let start = self.next_start_node % nodes.len();
        let found = self.find_feasible(pod, nodes, start, wanted);
        // kube-scheduler moves its start past every node it looked at,
        // whether or not one fit.
        let processed = found.as_ref().map_or(nodes.len(), |(_, walked)| *walked);
        self.next_start_node = (start + processed) % nodes.len();
        let (mut feasible, _) = found?;
        // The choice does not depend on the order (ties go to the lowest
        // node id); plugins see the nodes in id order, as with no sampling.
        sort_walked(&mut feasible);
        Ok(self.best_node(pod, feasible)?)
    }

    /// The nodes among `nodes` that pass the host's node checks and the
    /// filter plugins, or the diagnosis of why none does (or a failed
    /// plugin's error).
    pub fn feasible_nodes(&mut self, pod: PodId, nodes: &[NodeId]) -> Result<Vec<NodeId>, Unfit> {
        self.find_feasible(pod, nodes, 0, nodes.len())
            .map(|(feasible, _)| feasible)
    }

    /// The first `wanted` nodes that pass the host's node checks and the
    /// filter plugins, walking `nodes` from index `start` round to where it
    /// began, with how many nodes the walk took in; or the diagnosis of why
    /// none passes (or a failed plugin's error).
    ///
    /// As kube-scheduler with one worker, the walk takes in every node up
    /// to the next one that passes after the `wanted` found (that one is
    /// where it stops, not taken in), or every node if none does. With
    /// filter plugins, see [`Cycle::walk_with_plugins`]. A search
    /// [remembered](super::misfits) to find nothing is not walked again.
    fn find_feasible(
        &mut self,
        pod: PodId,
        nodes: &[NodeId],
        start: usize,
        wanted: usize,
    ) -> Result<(Vec<NodeId>, usize), Unfit> {
        let statics = self.static_verdicts(pod);
        let requests = &self.snapshot.pods[pod as usize].requests;
        let search = Search {
            statics: &statics,
            requests,
            nodes,
        };
        let now = NodesNow::of(self.snapshot.identity());
        let remember = self.caches.reuse.misfits;
        if let Some(unfit) = self.caches.misfits.get(search, now).filter(|_| remember) {
            self.stats.remembered_misfits += 1;
            return Err(unfit.clone());
        }
        let mut diagnosis = Diagnosis::over(nodes.len());
        let state = filters::PreFilter::for_pod(self.snapshot, pod);
        let (feasible, walked, asked) = if self.plugins.any_at(ExtensionPoint::Filter) {
            self.walk_with_plugins(pod, &statics, &state, nodes, start, wanted, &mut diagnosis)?
        } else {
            let clock = self.plugins.timing().then(std::time::Instant::now);
            // The host's checks alone: the walk stops at the first node
            // passing them after the `wanted` ones.
            let checks = filters::NodeChecks::new(self.snapshot, pod, &statics, &state);
            let mut feasible = Vec::with_capacity(wanted.min(nodes.len()));
            let mut walked = 0;
            let pass = |node, _| {
                if feasible.len() == wanted {
                    return Step::StopBefore;
                }
                feasible.push(node);
                Step::Next
            };
            let count = self.snapshot.node_count();
            match every_node(nodes, count) {
                true => {
                    let changes = self.snapshot.identity().node_changes();
                    let short = (self.caches.reuse.short_nodes && !checks.stateful())
                        .then(|| self.caches.shapes.shape(&statics, requests, count))
                        .map(|shape| (shape, changes));
                    let every = Every {
                        checks: &checks,
                        statics: &statics,
                        short,
                    };
                    let known = every.walk(start, &mut walked, &mut diagnosis, pass);
                    self.stats.known_short_nodes += known;
                }
                false => walk(&checks, nodes, start, &mut walked, &mut diagnosis, pass),
            }
            if let Some(clock) = clock {
                self.node_check_time += clock.elapsed();
            }
            (feasible, walked, 0)
        };
        if feasible.is_empty() {
            let node_local = diagnosis.node_local();
            let rejectors = diagnosis.rejectors();
            let unfit = Unfit {
                reason: self.caches.wordings.render(diagnosis, self.snapshot),
                rejectors,
            };
            if remember && asked == 0 && node_local {
                let search = Search {
                    statics: &statics,
                    requests: &self.snapshot.pods[pod as usize].requests,
                    nodes,
                };
                let now = NodesNow::of(self.snapshot.identity());
                self.caches.misfits.insert(search, now, &unfit);
            }
            return Err(unfit);
        }
        Ok((feasible, walked))
    }

    /// [`Cycle::find_feasible`]'s walk with filter plugins: the host's
    /// checks run node by node until enough nodes passed them to make up
    /// what is missing at the share the filter plugins have let through so
    /// far; the plugins are then asked about those in one call; and again
    /// while nodes are missing and left. With `wanted` at least
    /// `nodes.len()` the plugins are asked once. The feasible nodes, how
    /// many nodes the walk took in, and how many the plugins were asked
    /// about.
    #[allow(clippy::too_many_arguments)]
    fn walk_with_plugins(
        &mut self,
        pod: PodId,
        statics: &filters::StaticVerdicts,
        state: &filters::PreFilter,
        nodes: &[NodeId],
        start: usize,
        wanted: usize,
        diagnosis: &mut Diagnosis,
    ) -> Result<(Vec<NodeId>, usize, usize), String> {
        // The nodes wanted and the one the walk stops at.
        let goal = wanted.saturating_add(1);
        let mut feasible = Vec::with_capacity(goal.min(nodes.len()));
        let mut walked = 0;
        // (node, where the walk met it) of the nodes passing the host's
        // checks in this round, and how many of those the plugins passed
        // over all rounds.
        let mut candidates: Vec<(NodeId, usize)> = Vec::new();
        let mut survivors = Vec::new();
        let (mut asked, mut passed) = (0usize, 0usize);
        while walked < nodes.len() && feasible.len() < goal {
            let missing = goal - feasible.len();
            let round = match passed {
                0 if asked > 0 => missing.max(asked),
                0 => missing,
                _ => missing.saturating_mul(asked).div_ceil(passed),
            };
            candidates.clear();
            let clock = self.plugins.timing().then(std::time::Instant::now);
            let checks = filters::NodeChecks::new(self.snapshot, pod, statics, state);
            walk(&checks, nodes, start, &mut walked, diagnosis, |node, at| {
                candidates.push((node, at));
                match candidates.len() < round {
                    true => Step::Next,
                    false => Step::StopAfter,
                }
            });
            if let Some(clock) = clock {
                self.node_check_time += clock.elapsed();
            }
            survivors.clear();
            survivors.extend(candidates.iter().map(|&(node, _)| node));
            self.filter_plugins(pod, &mut survivors, diagnosis)?;
            asked += candidates.len();
            passed += survivors.len();
            if survivors.len() >= missing {
                // The walk stops at the node after the last one wanted.
                let stop = survivors[missing - 1];
                let (_, at) = candidates.iter().find(|(n, _)| *n == stop).unwrap();
                walked = *at;
                feasible.extend_from_slice(&survivors[..missing - 1]);
                break;
            }
            feasible.extend_from_slice(&survivors);
        }
        Ok((feasible, walked, asked))
    }

    /// Runs the filter plugins over `candidates`, keeping the nodes every
    /// one lets through and counting the others' reasons in `diagnosis`.
    fn filter_plugins(
        &mut self,
        pod: PodId,
        candidates: &mut Vec<NodeId>,
        diagnosis: &mut Diagnosis,
    ) -> Result<(), String> {
        for mut plugin in self.plugins.at(ExtensionPoint::Filter) {
            if candidates.is_empty() {
                break;
            }
            let answer = plugin.filter(self.snapshot, pod, candidates);
            let Some(rejections) = self.failures.under_policy(answer)? else {
                continue;
            };
            let mut rejected: Vec<NodeId> = Vec::new();
            for rejection in rejections {
                diagnosis.reject_by(plugin.name(), rejection.reason, rejection.nodes.len());
                rejected.extend(rejection.nodes);
            }
            rejected.sort_unstable();
            candidates.retain(|n| rejected.binary_search(n).is_err());
        }
        Ok(())
    }

    /// Scores `pod` on `feasible` (not empty): the highest total.
    fn best_node(&mut self, pod: PodId, feasible: Vec<NodeId>) -> Result<NodeId, String> {
        // The parts of the nodes' scores known for the pod's shape.
        let statics = self
            .caches
            .reuse
            .node_scores
            .then(|| self.static_verdicts(pod));
        let mut memo = statics.map(|statics| {
            let requests = &self.snapshot.pods[pod as usize].requests;
            let count = self.snapshot.node_count();
            self.caches.shapes.shape(&statics, requests, count).scores()
        });
        let known_before = memo.as_deref().map_or(0, NodeScores::known);
        let mut totals =
            filters::default_scores(self.snapshot, pod, &feasible, memo.as_deref_mut());
        self.stats.known_node_scores += memo.map_or(0, |memo| memo.known()) - known_before;
        for mut plugin in self.plugins.at(ExtensionPoint::Score) {
            let answer = plugin.score(self.snapshot, pod, &feasible);
            match self.failures.under_policy(answer)? {
                None => {}
                Some(Ok(scores)) => {
                    let weight = plugin.weight();
                    totals
                        .iter_mut()
                        .zip(scores)
                        .for_each(|(t, s)| *t += s * weight);
                }
                Some(Err(status)) => {
                    // A score plugin's error status is an Error, not "does
                    // not fit" (upstream's RunScorePlugins fails the cycle).
                    self.failures.failed += 1;
                    return Err(format!("plugin {}: {}", plugin.name(), status.reason));
                }
            }
        }
        // Highest total; ties go to the node whose freed room costs least
        // in a preemption trial, then to the lowest node id (= name order).
        let top = *totals.iter().max().expect("feasible is not empty");
        let tied = feasible
            .iter()
            .zip(&totals)
            .filter(|(_, t)| **t == top)
            .map(|(&n, _)| n);
        let best = match &self.victim_costs {
            None => tied.min(),
            Some(costs) => tied
                .map(|n| (costs.for_pod(self.snapshot, pod, n), n))
                .min_by(|(a, an), (b, bn)| a.cmp_cost(b).then_with(|| an.cmp(bn)))
                .map(|(_, n)| n),
        };
        Ok(best.expect("feasible is not empty"))
    }
}

/// Static node-check verdicts of a run, by pod signature and by pod.
#[derive(Debug, Default)]
pub struct StaticCache {
    by_signature: HashMap<std::sync::Arc<str>, Rc<filters::StaticVerdicts>>,
    by_pod: Vec<Option<Rc<filters::StaticVerdicts>>>,
}

impl StaticCache {
    /// Forgets which pod had which verdicts (pod ids move between runs);
    /// the verdicts stay, by signature.
    pub(super) fn forget_pods(&mut self) {
        self.by_pod.clear();
    }
}

/// What a walk does after a node that passed the host's checks.
enum Step {
    /// Goes on to the next node.
    Next,
    /// Stops; the node was taken in.
    StopAfter,
    /// Stops at the node, which was not taken in.
    StopBefore,
}

/// Walks `nodes` through `checks` from index `start` round to where it
/// began, resuming after the `walked` nodes already taken in: each node
/// that fails is counted in `diagnosis`, each one that passes goes to
/// `pass` (with where the walk met it), which says whether to go on.
/// `walked` ends at the number of nodes taken in.
fn walk(
    checks: &filters::NodeChecks,
    nodes: &[NodeId],
    start: usize,
    walked: &mut usize,
    diagnosis: &mut Diagnosis,
    mut pass: impl FnMut(NodeId, usize) -> Step,
) {
    let (before, after) = nodes.split_at(start);
    // The walk's order is `after`, then `before`: two plain loops (a
    // chained iterator costs a branch per node on the hottest loop).
    let mut skip = *walked;
    for half in [after, before] {
        let rest = half.get(skip..).unwrap_or_default();
        skip = skip.saturating_sub(half.len());
        for &node in rest {
            match checks.check(node) {
                Ok(()) => match pass(node, *walked) {
                    Step::Next => {}
                    Step::StopAfter => {
                        *walked += 1;
                        return;
                    }
                    Step::StopBefore => return,
                },
                Err(rejection) => diagnosis.reject(rejection),
            }
            *walked += 1;
        }
    }
}

/// Whether `nodes` is every one of a snapshot's `count` nodes, in id
/// order (the search of a pod or unit without a topology constraint).
fn every_node(nodes: &[NodeId], count: usize) -> bool {
    // Without an early exit the comparison runs in vector registers.
    nodes.len() == count
        && nodes
            .iter()
            .zip(0..)
            .fold(true, |every, (&node, id): (&NodeId, NodeId)| {
                every & (node == id)
            })
}

/// A walk of every node of the snapshot (in id order, see
/// [`every_node`]): the pod's checks, its static verdicts, and what is
/// known of the nodes short of its requests (with every node's change
/// value), when its checks depend on nothing else.
struct Every<'a> {
    checks: &'a filters::NodeChecks<'a>,
    statics: &'a filters::StaticVerdicts,
    short: Option<(&'a mut ShortShape, &'a [u64])>,
}

impl Every<'_> {
    /// [`walk`] from `start`, `walked` at 0: the same nodes taken in,
    /// passed and rejected, in the same order, but only the nodes that pass
    /// the static checks are visited; the others, which no placement
    /// changes, are counted in `diagnosis` from their totals when the walk
    /// takes in every node (only the diagnosis of a walk that took in every
    /// node is read). A node known short in its state is counted as found,
    /// not checked again ([`super::shapes`]); returns how many were.
    fn walk(
        mut self,
        start: usize,
        walked: &mut usize,
        diagnosis: &mut Diagnosis,
        pass: impl FnMut(NodeId, usize) -> Step,
    ) -> u64 {
        let known_before = self.short.as_ref().map_or(0, |(shape, _)| shape.known());
        self.walk_all(start, walked, diagnosis, pass);
        self.short.as_ref().map_or(0, |(shape, _)| shape.known()) - known_before
    }

    fn walk_all(
        &mut self,
        start: usize,
        walked: &mut usize,
        diagnosis: &mut Diagnosis,
        mut pass: impl FnMut(NodeId, usize) -> Step,
    ) {
        debug_assert_eq!(*walked, 0, "a walk of every node is not resumed");
        let count = diagnosis.total;
        let passing = self.statics.passing();
        let (before, after) = passing.split_at(passing.partition_point(|&n| (n as usize) < start));
        // Where the walk from `start` meets `node`.
        let at = |node: NodeId| (node as usize + count - start) % count;
        for half in [after, before] {
            for &node in half {
                let verdict = match &mut self.short {
                    Some((shape, changes)) => {
                        shape.check(self.checks, node, changes[node as usize])
                    }
                    None => self.checks.dynamic(node),
                };
                match verdict {
                    Ok(()) => match pass(node, at(node)) {
                        Step::Next => {}
                        Step::StopAfter => {
                            *walked = at(node) + 1;
                            return;
                        }
                        Step::StopBefore => {
                            *walked = at(node);
                            return;
                        }
                    },
                    Err(rejection) => diagnosis.reject(rejection),
                }
            }
        }
        self.statics.reject_failing(diagnosis);
        *walked = count;
    }
}

/// Sorts nodes met by a walk: the walk of nodes in id order from a start
/// gives two ascending runs, the second below the first, put in order by
/// one rotation; anything else is sorted.
fn sort_walked(nodes: &mut [NodeId]) {
    let Some(wrap) = nodes.windows(2).position(|w| w[0] > w[1]) else {
        return;
    };
    let (first, second) = nodes.split_at(wrap + 1);
    let runs = second.is_sorted() && second.last() < first.first();
    match runs {
        true => nodes.rotate_left(wrap + 1),
        false => nodes.sort_unstable(),
    }
}

#[cfg(test)]
mod tests {
    use super::{Every, Step, every_node, sort_walked, walk};
    use crate::filters::{Diagnosis, NodeChecks, PreFilter, StaticVerdicts};
    use crate::model::{NodeId, Snapshot};
    use crate::scheduler::shapes::Shapes;
    use std::rc::Rc;

    /// 60 nodes: every 4th tainted, every 7th cordoned, 1 to 3 cpu in
    /// turn; a pod of 2 cpu and one of 2 cpu tolerating the taint.
    fn mixed_cluster() -> Snapshot {
        let mut text = String::new();
        for n in 0..60 {
            let taints = match n % 4 {
                0 => "[{key: k, value: v, effect: NoSchedule}]",
                _ => "[]",
            };
            text.push_str(&format!(
                "apiVersion: v1\nkind: Node\nmetadata: {{name: n{n:02}}}\nspec: {{unschedulable: {}, taints: {taints}}}\nstatus: {{allocatable: {{cpu: \"{}\", memory: 8Gi}}}}\n---\n",
                n % 7 == 3,
                n % 3 + 1,
            ));
        }
        for (p, tolerations) in ["[]", "[{key: k, operator: Exists}]"].iter().enumerate() {
            text.push_str(&format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: p{p}, namespace: t}}\nspec:\n  tolerations: {tolerations}\n  containers: [{{name: c, image: x, resources: {{requests: {{cpu: \"2\"}}}}}}]\n---\n"
            ));
        }
        let mut manifests = crate::manifest::Manifests::default();
        crate::manifest::load_str(&mut manifests, "test.yaml", &text).unwrap();
        Snapshot::build(&manifests).unwrap()
    }

    #[test]
    fn a_walk_of_every_node_visits_the_passing_nodes_alike() {
        let snapshot = mixed_cluster();
        let count = snapshot.node_count();
        let every: Vec<NodeId> = (0..count as NodeId).collect();
        assert!(every_node(&every, count));
        assert!(!every_node(&every[1..], count));
        let mut swapped = every.clone();
        swapped.swap(3, 4);
        assert!(!every_node(&swapped, count));
        let (mut walks, mut whole) = (0, 0);
        for pod in 0..2 {
            let statics = Rc::new(StaticVerdicts::of(&snapshot, pod));
            let state = PreFilter::for_pod(&snapshot, pod);
            let checks = NodeChecks::new(&snapshot, pod, &statics, &state);
            let requests = snapshot.pods[pod as usize].requests.clone();
            let changes = snapshot.identity().node_changes();
            let mut short_nodes = Shapes::default();
            for start in 0..count {
                for (wanted, after) in
                    [(0, false), (1, true), (3, false), (5, true), (count, false)]
                {
                    let run = |all: Option<Option<&mut super::ShortShape>>| {
                        let (mut met, mut walked) = (Vec::new(), 0);
                        let mut diagnosis = Diagnosis::over(count);
                        let pass = |node, at| {
                            if met.len() == wanted && !after {
                                return Step::StopBefore;
                            }
                            met.push((node, at));
                            match met.len() == wanted {
                                true => Step::StopAfter,
                                false => Step::Next,
                            }
                        };
                        match all {
                            Some(short) => {
                                let every = Every {
                                    checks: &checks,
                                    statics: &statics,
                                    short: short.map(|shape| (shape, changes)),
                                };
                                every.walk(start, &mut walked, &mut diagnosis, pass);
                            }
                            None => walk(&checks, &every, start, &mut walked, &mut diagnosis, pass),
                        }
                        let reason = (walked == count).then(|| diagnosis.render(&snapshot));
                        (met, walked, reason)
                    };
                    let (met, walked, reason) = run(None);
                    let expected = (met.clone(), walked, reason.clone());
                    assert_eq!(
                        run(Some(None)),
                        expected,
                        "pod {pod} from {start}, {wanted} wanted"
                    );
                    // The short nodes the walks before found, counted
                    // without a check.
                    let shape = short_nodes.shape(&statics, &requests, count);
                    assert_eq!(
                        run(Some(Some(shape))),
                        expected,
                        "pod {pod} from {start}, {wanted} wanted, short nodes known"
                    );
                    walks += usize::from(walked < count && !met.is_empty());
                    if let Some(reason) = reason {
                        whole += 1;
                        assert!(reason.contains("unschedulable"), "{reason}");
                        assert!(reason.contains("Insufficient cpu"), "{reason}");
                        assert_eq!(reason.contains("taint"), pod == 0, "{reason}");
                    }
                }
            }
            let known = short_nodes.shape(&statics, &requests, count).known();
            assert!(known > 100, "pod {pod}: {known} nodes known short");
        }
        assert!(
            walks > 100 && whole > 100,
            "{walks} walks stopped early, {whole} took in every node"
        );
    }

    #[test]
    fn walked_nodes_come_out_in_id_order() {
        let cases: [(&[u32], &[u32]); 8] = [
            (&[], &[]),
            (&[4], &[4]),
            (&[1, 2, 5], &[1, 2, 5]),
            // A walk from node 5 round to node 2.
            (&[5, 7, 9, 0, 1, 2], &[0, 1, 2, 5, 7, 9]),
            (&[9, 0], &[0, 9]),
            // Not two runs of a walk: sorted all the same.
            (&[5, 1, 9, 0], &[0, 1, 5, 9]),
            (&[5, 6, 0, 5], &[0, 5, 5, 6]),
            (&[3, 3, 1, 2], &[1, 2, 3, 3]),
        ];
        for (walked, sorted) in cases {
            let mut nodes = walked.to_vec();
            sort_walked(&mut nodes);
            assert_eq!(nodes, sorted, "{walked:?}");
        }
    }
}
