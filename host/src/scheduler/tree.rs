//! CompositePodGroup trees placed as one unit (KEP-6012), with a complete
//! search where upstream is greedy.
//!
//! A tree is queued as its root. Its placements are generated top-down: the
//! root's within the cluster, each child's within the placement chosen for
//! its parent (a composite's own topology key, or a PodGroup's). Inside a
//! placement the children are tried in creation order; a PodGroup child runs
//! the group algorithm (gang admission included) in one of its placements
//! and keeps its pods assumed, a composite child recurses.
//!
//! Upstream places siblings greedily with no backtracking, so a first
//! sibling can take the only domain in which the second fits. Here the
//! search is a depth-first search over the children's placements:
//!
//! - it tries each child's placements in the plugin's order and moves on as
//!   soon as one admits it, so a tree that fits greedily costs what greedy
//!   costs;
//! - when a later child cannot be placed, it backtracks (rolling the
//!   snapshot back to checkpoints) and tries the earlier children's other
//!   placements;
//! - a gang composite admits at least `minGroupCount` children, a basic
//!   composite at least one; the search runs in rounds that leave out at
//!   most 0, 1, 2, ... children, so a layout admitting more children is
//!   found before one admitting fewer, and leaving a child out never stands
//!   in for backtracking;
//! - a placement whose free capacity cannot hold `minCount` of the child's
//!   smallest pods is pruned without running the group algorithm;
//! - every group-algorithm run in a placement counts against the search
//!   budget (the placement plugin's `search-budget`, else
//!   [`DEFAULT_SEARCH_BUDGET`]); when it runs out the tree fails and says so.
//!
//! Root placements that admit the tree are scored with the placement-score
//! plugins and the best wins, as for a single PodGroup.

use super::Cycle;
use super::costs::Cost;
use super::group::{GroupResult, Scored, failure_reason};
use crate::filters;
use crate::framework::{Code, ExtensionPoint, Placement, Progress, Unit};
use crate::model::{CompositeId, CompositePolicy, GroupId, NodeId, PodId};

/// Placements the host may try per tree when the placement plugin names
/// no budget.
pub const DEFAULT_SEARCH_BUDGET: u32 = 10_000;

/// One PodGroup of a tree and where it went.
#[derive(Debug, Clone)]
pub struct Placed {
    /// The PodGroup.
    pub group: GroupId,
    /// Its admitted attempt (pods assumed).
    pub assigned: Vec<(PodId, NodeId)>,
    /// Pods that did not fit although the group was admitted.
    pub unfit: Vec<(PodId, String)>,
    /// Placements from the root down to the group's own.
    pub path: Vec<Placement>,
}

/// What placing a tree decided.
#[derive(Debug, Clone)]
pub enum TreeResult {
    /// Admitted: the groups that were placed (pods assumed).
    Admitted(Vec<Placed>),
    /// Not admitted: nothing stays assumed. `inconclusive` when the search
    /// did not finish (a plugin error under `failurePolicy: Fail`, or its
    /// budget reached), so a layout may exist that it did not see.
    Rejected {
        /// Why.
        reason: String,
        /// Whether the search ended before it had tried everything.
        inconclusive: bool,
    },
}

/// A child of a composite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Child {
    Group(GroupId),
    Composite(CompositeId),
}

/// The search's budget and what it learned.
#[derive(Debug)]
struct Search {
    budget: u32,
    explored: u32,
    cut: bool,
    /// A plugin failed under `failurePolicy: Fail`: the search stops (as
    /// kube-scheduler ends the cycle on an Error) with this reason.
    aborted: Option<String>,
    /// Why children could not be placed, first first.
    failures: Vec<String>,
}

impl Search {
    /// Takes one placement from the budget.
    fn spend(&mut self) -> bool {
        if self.explored >= self.budget {
            self.cut = true;
            return false;
        }
        self.explored += 1;
        true
    }

    /// Ends the search on an error (a plugin failure under `failurePolicy:
    /// Fail`): upstream ends the cycle there.
    fn abort(&mut self, error: String) {
        self.aborted.get_or_insert(error);
        self.cut = true;
    }
}

/// The placements from the root down to a child placed in `option` inside
/// `parent` (a child that does not split its parent adds none).
fn child_path(path: &[Placement], parent: &Placement, option: &Placement) -> Vec<Placement> {
    let mut own = path.to_vec();
    if option != parent {
        own.push(option.clone());
    }
    own
}

impl Cycle<'_> {
    /// The children of composite `c`, in creation order (then name).
    fn children(&self, c: CompositeId) -> Vec<Child> {
        let snapshot = &*self.snapshot;
        let composite = &snapshot.composites[c as usize];
        let mut children: Vec<(i64, &str, Child)> = composite
            .child_groups
            .iter()
            .map(|&g| {
                let group = &snapshot.groups[g as usize];
                (group.created, group.key.as_str(), Child::Group(g))
            })
            .chain(composite.child_composites.iter().map(|&k| {
                let child = &snapshot.composites[k as usize];
                (child.created, child.key.as_str(), Child::Composite(k))
            }))
            .collect();
        children.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        children.into_iter().map(|(.., c)| c).collect()
    }

    /// The pending members of `group`, in queue order.
    pub fn pending_of(&self, group: GroupId) -> Vec<PodId> {
        self.snapshot.groups[group as usize]
            .members
            .iter()
            .copied()
            .filter(|&p| self.snapshot.pods[p as usize].pending)
            .collect()
    }

    /// The placements of `unit` within `parent` (just `parent` when no
    /// plugin splits it), and the plugin's search budget.
    fn unit_placements(
        &mut self,
        unit: Unit,
        parent: &Placement,
    ) -> Result<(Vec<Placement>, Option<u32>), String> {
        self.ignored_generate = None;
        Ok(match self.generate_placements(unit, parent)? {
            Some(p) => (p.candidates, p.search_budget),
            None => {
                let (name, topology) = match unit {
                    Unit::Group(g) => {
                        let info = &self.snapshot.groups[g as usize];
                        let key = info.spec.as_ref().and_then(|s| s.topology_key.clone());
                        (format!("PodGroup {}", info.key), key)
                    }
                    Unit::Composite(c) => {
                        let info = &self.snapshot.composites[c as usize];
                        (
                            format!("CompositePodGroup {}", info.key),
                            info.spec.topology_key.clone(),
                        )
                    }
                };
                if let Some(topology) = topology {
                    self.warn_topology_ignored(&name, &topology);
                }
                (vec![parent.clone()], None)
            }
        })
    }

    /// Places the tree under `root` as one unit.
    pub fn place_tree(&mut self, root: CompositeId) -> TreeResult {
        self.stats.tree_searches += 1;
        let failed_before = self.failures.failed;
        let cluster = Placement::cluster(self.snapshot.node_count());
        let (placements, budget) = match self.unit_placements(Unit::Composite(root), &cluster) {
            Ok(p) => p,
            Err(reason) => {
                return TreeResult::Rejected {
                    reason,
                    inconclusive: self.failures.failed > failed_before,
                };
            }
        };
        if placements.is_empty() {
            return TreeResult::Rejected {
                reason: "no placement can hold the tree".into(),
                inconclusive: false,
            };
        }
        let mut search = Search {
            budget: budget.unwrap_or(DEFAULT_SEARCH_BUDGET),
            explored: 0,
            cut: false,
            aborted: None,
            failures: Vec::new(),
        };
        let single = placements.len() == 1;
        let mut admitted: Vec<Scored<Vec<Placed>>> = Vec::new();
        let mut tried = Vec::new();
        for placement in &placements {
            let checkpoint = self.snapshot.checkpoint();
            let before = search.failures.len();
            let path = vec![placement.clone()];
            match self.place_children(root, placement, &path, &mut search) {
                Some(_) if single && search.aborted.is_some() => {
                    self.snapshot.rollback(checkpoint);
                    break;
                }
                Some(layout) if single => {
                    admitted.push(Scored {
                        item: layout,
                        plugins: 0,
                        fit: 0,
                        count: 0,
                        cost: Cost::FREE,
                    });
                    break;
                }
                Some(layout) => {
                    let scored =
                        self.score_layout(Unit::Composite(root), placement, layout, &mut search);
                    self.snapshot.rollback(checkpoint);
                    admitted.push(scored);
                }
                None => {
                    self.snapshot.rollback(checkpoint);
                    let why = search
                        .failures
                        .get(before)
                        .cloned()
                        .unwrap_or_else(|| "no child could be placed".into());
                    tried.push(format!("{}: {why}", placement.name));
                }
            }
            if search.cut {
                break;
            }
        }
        // An error ends the cycle: nothing found before it is admitted (the
        // layouts of several placements were rolled back after scoring).
        if search.aborted.is_some() {
            admitted.clear();
        }
        let best = super::group::best(admitted);
        match best {
            Some(layout) => {
                if !single {
                    for placed in &layout {
                        for &(pod, node) in &placed.assigned {
                            self.snapshot.assume(pod, node);
                        }
                    }
                }
                TreeResult::Admitted(layout)
            }
            None => {
                let composite = &self.snapshot.composites[root as usize];
                let need = match composite.spec.policy {
                    CompositePolicy::Gang { min_group_count } => {
                        format!(" (minGroupCount {min_group_count})")
                    }
                    CompositePolicy::Basic => String::new(),
                };
                let mut reason = format!(
                    "CompositePodGroup {}{need} not admitted: {}",
                    composite.key,
                    tried.join("; ")
                );
                if let Some(error) = search.aborted {
                    return TreeResult::Rejected {
                        reason: format!(
                            "CompositePodGroup {}{need} not admitted: {error}",
                            composite.key
                        ),
                        inconclusive: true,
                    };
                }
                if search.cut {
                    reason.push_str(&format!(
                        "; search budget of {} placements reached",
                        search.budget
                    ));
                }
                TreeResult::Rejected {
                    reason,
                    inconclusive: search.cut,
                }
            }
        }
    }

    /// A layout of `unit` in `placement` (its pods assumed) with what ranks
    /// it among the unit's placements: the placement-score plugins' total,
    /// `NodeResourcesFit`'s placement score and the unit's pod count.
    fn score_layout(
        &mut self,
        unit: Unit,
        placement: &Placement,
        layout: Vec<Placed>,
        search: &mut Search,
    ) -> Scored<Vec<Placed>> {
        let assigned: Vec<(PodId, NodeId)> = layout
            .iter()
            .flat_map(|p| p.assigned.iter().copied())
            .collect();
        let mut plugins = 0;
        for mut plugin in self.plugins.at(ExtensionPoint::PlacementScore) {
            let answer = plugin.score_placement(self.snapshot, unit, placement, &assigned);
            match self.failures.under_policy(answer) {
                Ok(None) => {}
                Ok(Some(Ok(score))) => plugins += score * plugin.weight(),
                Ok(Some(Err(status))) => {
                    // An error status ends the cycle, as upstream's
                    // RunPlacementScorePlugins error does.
                    self.failures.failed += 1;
                    search.abort(format!("plugin {}: {}", plugin.name(), status.reason));
                }
                Err(reason) => search.abort(reason),
            }
        }
        let groups = match unit {
            Unit::Group(g) => vec![g],
            Unit::Composite(c) => self.snapshot.subtree_groups(c),
        };
        let running = groups
            .iter()
            .flat_map(|&g| self.snapshot.groups[g as usize].members.iter())
            .filter(|&&p| self.snapshot.is_running(p))
            .count() as i64;
        Scored {
            fit: filters::placement_fit(self.snapshot, &placement.nodes),
            count: running + assigned.len() as i64,
            cost: self.placement_cost(&placement.nodes),
            plugins,
            item: layout,
        }
    }

    /// The placements of child `child` of a tree (inside `placement`, the
    /// siblings before it assumed) that can hold it, ranked the way
    /// kube-scheduler picks among them: each is tried and scored (default
    /// placement scores and the plugins'), best first, ties in generation
    /// order. kube-scheduler takes the first and never looks back; the
    /// search falls back to the others only when a later sibling cannot
    /// be placed.
    fn ranked_options(
        &mut self,
        child: Child,
        options: Vec<Placement>,
        path: &[Placement],
        parent: &Placement,
        search: &mut Search,
    ) -> Vec<Placement> {
        if options.len() <= 1 {
            return options;
        }
        let mut scored = Vec::new();
        for option in options {
            if search.cut || !search.spend() {
                break;
            }
            let checkpoint = self.snapshot.checkpoint();
            let own_path = child_path(path, parent, &option);
            let (unit, layout) = match child {
                Child::Group(g) => (
                    Unit::Group(g),
                    self.place_child_group(g, &option, own_path, search),
                ),
                Child::Composite(k) => (
                    Unit::Composite(k),
                    self.place_children(k, &option, &own_path, search),
                ),
            };
            if let Some(layout) = layout {
                let mut ranked = self.score_layout(unit, &option, layout, search);
                ranked.item = Vec::new();
                scored.push((option, ranked));
            }
            self.snapshot.rollback(checkpoint);
        }
        let (options, scored): (Vec<Placement>, Vec<Scored<Vec<Placed>>>) =
            scored.into_iter().unzip();
        let order = super::group::ranking(&scored);
        let mut options: Vec<Option<Placement>> = options.into_iter().map(Some).collect();
        let order: Vec<Placement> = order
            .into_iter()
            .filter_map(|i| options[i].take())
            .collect();
        order
    }

    /// Places the children of composite `c` inside `placement` (the tree's
    /// placements down to `c` are `path`): a layout with pods assumed, or
    /// `None` with everything rolled back.
    fn place_children(
        &mut self,
        c: CompositeId,
        placement: &Placement,
        path: &[Placement],
        search: &mut Search,
    ) -> Option<Vec<Placed>> {
        let children = self.children(c);
        let need = match self.snapshot.composites[c as usize].spec.policy {
            CompositePolicy::Gang { min_group_count } => min_group_count as usize,
            CompositePolicy::Basic => 1,
        };
        // Rounds that leave out at most 0, 1, ... children: a layout that
        // admits more children is always found before one that admits fewer,
        // and leaving a child out never stands in for backtracking.
        for skips in 0..=children.len().saturating_sub(need) {
            let found =
                self.children_from(c, &children, 0, need, skips, 0, placement, path, search);
            if found.is_some() || search.cut {
                return found;
            }
        }
        None
    }

    /// The depth-first search over children `i..` of composite `c`, where
    /// at most `skips` more children may be left out.
    #[allow(clippy::too_many_arguments)]
    fn children_from(
        &mut self,
        c: CompositeId,
        children: &[Child],
        i: usize,
        need: usize,
        skips: usize,
        admitted: usize,
        placement: &Placement,
        path: &[Placement],
        search: &mut Search,
    ) -> Option<Vec<Placed>> {
        if search.cut || admitted + (children.len() - i) < need {
            return None;
        }
        if i == children.len() {
            let progress = Progress {
                scheduled: admitted as u32,
                remaining: 0,
            };
            return match self.permit(Unit::Composite(c), progress) {
                Ok(status) if status.passes() => Some(Vec::new()),
                Ok(status) if status.code == Code::Error => {
                    self.failures.failed += 1;
                    let key = &self.snapshot.composites[c as usize].key;
                    search.abort(format!("CompositePodGroup {key}: {}", status.reason));
                    None
                }
                Ok(status) => {
                    let key = &self.snapshot.composites[c as usize].key;
                    search.failures.push(format!(
                        "CompositePodGroup {key} not admitted: {}",
                        status.reason
                    ));
                    None
                }
                Err(reason) => {
                    search.abort(reason.clone());
                    search.failures.push(reason);
                    None
                }
            };
        }
        let failed_before = self.failures.failed;
        let options = match children[i] {
            Child::Group(g) => self.unit_placements(Unit::Group(g), placement),
            Child::Composite(k) => self.unit_placements(Unit::Composite(k), placement),
        };
        let options = match options {
            Ok((options, _)) => options,
            Err(reason) => {
                if self.failures.failed > failed_before {
                    search.abort(reason.clone());
                }
                search.failures.push(reason);
                Vec::new()
            }
        };
        let ranked = options.len() > 1;
        let options = self.ranked_options(children[i], options, path, placement, search);
        for option in &options {
            // A ranked option was tried (and paid for) while ranking.
            if !ranked && !search.spend() {
                return None;
            }
            if search.cut {
                return None;
            }
            let checkpoint = self.snapshot.checkpoint();
            let own_path = child_path(path, placement, option);
            let placed = match children[i] {
                Child::Group(g) => self.place_child_group(g, option, own_path, search),
                Child::Composite(k) => self.place_children(k, option, &own_path, search),
            };
            if let Some(mut layout) = placed
                && let Some(rest) = self.children_from(
                    c,
                    children,
                    i + 1,
                    need,
                    skips,
                    admitted + 1,
                    placement,
                    path,
                    search,
                )
            {
                layout.extend(rest);
                return Some(layout);
            }
            self.snapshot.rollback(checkpoint);
            if search.cut {
                return None;
            }
        }
        // Leave child i out, if this round allows it.
        if skips == 0 {
            return None;
        }
        self.children_from(
            c,
            children,
            i + 1,
            need,
            skips - 1,
            admitted,
            placement,
            path,
            search,
        )
    }

    /// One PodGroup child in one placement: the group algorithm, after a
    /// capacity bound.
    fn place_child_group(
        &mut self,
        group: GroupId,
        placement: &Placement,
        path: Vec<Placement>,
        search: &mut Search,
    ) -> Option<Vec<Placed>> {
        let pending = self.pending_of(group);
        let key = self.snapshot.groups[group as usize].key.clone();
        if pending.is_empty() {
            // Every member already runs (the placement plugin pins its domain).
            return Some(vec![Placed {
                group,
                assigned: Vec::new(),
                unfit: Vec::new(),
                path,
            }]);
        }
        if !self.capacity_allows(group, &pending, placement) {
            search.failures.push(format!(
                "child PodGroup {key} does not fit in {}: not enough free capacity",
                placement.name
            ));
            return None;
        }
        match self.place_group(group, &pending, vec![placement.clone()]) {
            GroupResult::Admitted(attempt) => Some(vec![Placed {
                group,
                assigned: attempt.assigned,
                unfit: attempt.unfit,
                path,
            }]),
            GroupResult::Rejected(failure) => {
                let reason =
                    failure_reason(&failure, |p| self.snapshot.pods[p as usize].key.clone());
                if failure.errored {
                    search.abort(format!("child PodGroup {key}: {reason}"));
                }
                search
                    .failures
                    .push(format!("child PodGroup {key} not admitted: {reason}"));
                None
            }
        }
    }

    /// Whether `placement`'s free capacity can hold the `minCount` smallest
    /// pending pods of `group`, resource by resource (a bound: passing it
    /// does not mean they fit).
    fn capacity_allows(&self, group: GroupId, pending: &[PodId], placement: &Placement) -> bool {
        let snapshot = &*self.snapshot;
        let info = &snapshot.groups[group as usize];
        let running = info
            .members
            .iter()
            .filter(|&&p| snapshot.is_running(p))
            .count();
        // Without a permit plugin a group is admitted with one pod.
        let min = if self
            .plugins
            .any_at(crate::framework::ExtensionPoint::Permit)
        {
            info.min_count().unwrap_or(1)
        } else {
            1
        };
        let need = (min as usize).saturating_sub(running);
        if need == 0 {
            return true;
        }
        if pending.len() < need {
            return false;
        }
        (0..snapshot.resource_names.len()).all(|r| {
            let mut requests: Vec<u64> = pending
                .iter()
                .map(|&p| snapshot.pods[p as usize].requests[r])
                .collect();
            requests.sort_unstable();
            let wanted: u64 = requests[..need].iter().sum();
            if wanted == 0 {
                return true;
            }
            let allocatable = snapshot.allocatable(r);
            let requested = snapshot.requested(r);
            let free: u64 = placement
                .nodes
                .iter()
                .map(|&n| allocatable[n as usize].saturating_sub(requested[n as usize]))
                .sum();
            free >= wanted
        })
    }
}
