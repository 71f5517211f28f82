//! `TopologyPlacement`: topology-aware placement of PodGroups and
//! CompositePodGroups (Kubernetes v1.37, KEP-5732 single level, KEP-6012
//! multi-level).
//!
//! Extension points:
//!
//! - **PlacementGenerate** (upstream `TopologyPlacementGenerator`): a unit
//!   with a topology key (a PodGroup's or a CompositePodGroup's
//!   `schedulingConstraints.topology[0].key`) gets one placement per distinct
//!   value of that node label among the parent placement's nodes, named
//!   `<key>=<value>` and ordered by value text (byte order). Nodes without
//!   the label are in no placement. If members are already bound (for a
//!   composite: members of any PodGroup in its subtree), only their domain is
//!   a candidate; see [`pinned_value`]. A unit without a key is skipped (the
//!   host keeps the parent placement). Composite units also get the
//!   configured search budget.
//! - **PlacementScore** (upstream `NodeResourcesFit` most-allocated plus
//!   `PodGroupPodsCount`): `0 ..= 100`, the weighted mean of
//!   [`most_allocated_score`] over the placement's nodes and
//!   [`pods_count_score`] of the unit; see [`combined_score`].
//!
//! Args (all optional):
//!
//! | field | default | meaning |
//! |---|---|---|
//! | `searchBudget` | `10000` | placements the host may try for one composite tree in total; ≥ 1 |
//! | `resourceFitWeight` | `1` | weight of the most-allocated score |
//! | `podsCountWeight` | `1` | weight of the pod-count score (not both weights 0) |
//!
//! ```json
//! {"searchBudget": 10000, "resourceFitWeight": 1, "podsCountWeight": 1}
//! ```
//!
//! Details:
//!
//! - "Bound" members are the PodGroups' `bound` lists (running pods); pods
//!   assumed in this cycle do not pin. Bound pods on unlabelled nodes pin
//!   nothing; if no bound pod is on a labelled node, every domain is a
//!   candidate. A pinned domain with no node in the parent yields no
//!   candidate (the host reports it).
//! - A unit whose spec is missing (PodGroup object absent, unknown id) is
//!   skipped like a unit without a key.
//! - Pod count: the unit's members are its PodGroups' pending pods plus the
//!   assigned pods (a pod counted once); an unknown unit's members are just
//!   the assigned pods. A score with weight 0 is not computed (no cluster
//!   calls).
//!
//! The decisions are plain functions ([`topology_placements`],
//! [`group_by_value`], [`bound_domain_counts`], [`pinned_value`],
//! [`resources_to_score`], [`most_allocated_score`], [`pods_count_score`],
//! [`combined_score`]); [`TopologyPlacement`] gathers their inputs from the
//! [`Cluster`] view.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde::Deserialize;
use wasched_sdk::scoring::{MAX_SCORE, ResourceUse, most_allocated};
use wasched_sdk::{
    Assignment, Cluster, Code, Composite, CompositeId, Level, NodeId, Placement, Placements,
    Plugin, PodGroup, PodGroupId, PodId, ResourceId, Status, Symbol, Unit,
};

/// The name this plugin registers under.
pub const NAME: &str = "TopologyPlacement";

/// Default of `searchBudget`: placements the host may try for one composite
/// tree in total.
pub const DEFAULT_SEARCH_BUDGET: u32 = 10_000;

/// Composite trees are at most 4 levels deep; deeper (or cyclic) input is
/// not walked further than this.
const MAX_DEPTH: u32 = 8;

/// Resource columns always scored: `cpu` and `memory`.
const BASE_SCORED: [ResourceId; 2] = [0, 1];

/// The first extended-resource column (after `cpu`, `memory`, `pods`).
const FIRST_EXTENDED: ResourceId = 3;

// ---------------------------------------------------------------------------
// Args
// ---------------------------------------------------------------------------

/// The plugin's configuration (`args` of its configuration entry); every
/// field is optional.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Args {
    /// `searchBudget`: how many placements the host may try for one
    /// composite tree in total (returned with a composite unit's
    /// placements). Default [`DEFAULT_SEARCH_BUDGET`]; must be ≥ 1.
    pub search_budget: u32,
    /// `resourceFitWeight`: weight of the most-allocated score. Default 1.
    pub resource_fit_weight: u32,
    /// `podsCountWeight`: weight of the pod-count score. Default 1.
    pub pods_count_weight: u32,
}

impl Default for Args {
    fn default() -> Self {
        Self {
            search_budget: DEFAULT_SEARCH_BUDGET,
            resource_fit_weight: 1,
            pods_count_weight: 1,
        }
    }
}

impl Args {
    /// Checks the args: `searchBudget` ≥ 1, and not both weights 0.
    pub fn validate(&self) -> Result<(), String> {
        if self.search_budget == 0 {
            return Err(format!(
                "{NAME}: searchBudget must be >= 1, got 0 (omit it for the default {DEFAULT_SEARCH_BUDGET})"
            ));
        }
        if self.resource_fit_weight == 0 && self.pods_count_weight == 0 {
            return Err(format!(
                "{NAME}: resourceFitWeight and podsCountWeight are both 0; at least one must be >= 1"
            ));
        }
        Ok(())
    }

    /// The scoring weights.
    pub fn weights(&self) -> Weights {
        Weights {
            resource_fit: self.resource_fit_weight,
            pods_count: self.pods_count_weight,
        }
    }
}

/// Weights of the two placement scores in [`combined_score`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weights {
    /// Weight of [`most_allocated_score`].
    pub resource_fit: u32,
    /// Weight of [`pods_count_score`].
    pub pods_count: u32,
}

impl Default for Weights {
    fn default() -> Self {
        Args::default().weights()
    }
}

// ---------------------------------------------------------------------------
// PlacementGenerate
// ---------------------------------------------------------------------------

/// Groups `nodes` by their value in `column` (a node label column indexed by
/// node id): value → its nodes, ascending and without duplicates. Nodes
/// without the label (or outside the column) are left out.
pub fn group_by_value(
    nodes: &[NodeId],
    column: &[Option<Symbol>],
) -> BTreeMap<Symbol, Vec<NodeId>> {
    let mut domains: BTreeMap<Symbol, Vec<NodeId>> = BTreeMap::new();
    for &node in nodes {
        if let Some(&Some(value)) = column.get(node as usize) {
            domains.entry(value).or_default().push(node);
        }
    }
    for nodes in domains.values_mut() {
        nodes.sort_unstable();
        nodes.dedup();
    }
    domains
}

/// How many bound pods each domain holds, given the nodes of the bound pods
/// (one entry per pod, repeats allowed). Pods on unlabelled nodes count for
/// no domain.
pub fn bound_domain_counts(
    bound_nodes: &[NodeId],
    column: &[Option<Symbol>],
) -> BTreeMap<Symbol, u32> {
    let mut counts: BTreeMap<Symbol, u32> = BTreeMap::new();
    for &node in bound_nodes {
        if let Some(&Some(value)) = column.get(node as usize) {
            let count = counts.entry(value).or_default();
            *count = count.saturating_add(1);
        }
    }
    counts
}

/// The domain the bound members pin a unit to: the value holding the most
/// bound pods; ties go to the smallest value text (byte order). `None`
/// when no bound pod is on a labelled node (the unit is not pinned).
///
/// Bound members normally share one domain; several can only arise when
/// the constraint was added or node labels changed after they were bound.
/// Keeping the majority domain moves the fewest pods' worth of placement.
/// `text` is called only to break ties.
pub fn pinned_value(
    counts: &BTreeMap<Symbol, u32>,
    mut text: impl FnMut(Symbol) -> String,
) -> Option<Symbol> {
    let most = counts.values().copied().max()?;
    let tied: Vec<Symbol> = counts
        .iter()
        .filter(|&(_, &count)| count == most)
        .map(|(&value, _)| value)
        .collect();
    match tied.as_slice() {
        [only] => Some(*only),
        _ => tied
            .into_iter()
            .map(|value| (text(value), value))
            .min()
            .map(|(_, value)| value),
    }
}

/// The candidate placements of a unit whose topology key is `key` (text
/// `key_text`): one per distinct value of `column` (the key's node label
/// column) among `parent_nodes`, restricted to the [`pinned_value`] of
/// `bound_nodes` (the nodes of the unit's bound members, one per pod) when
/// there is one.
///
/// Each placement is named `<key>=<value>`, has the domain `(key, value)`
/// and its nodes ascending; placements are ordered by value text (byte
/// order). The result is empty when no parent node carries the label, or
/// when the pinned domain has no node in the parent. `text` resolves
/// symbols (once per domain, plus ties).
pub fn topology_placements(
    key: Symbol,
    key_text: &str,
    parent_nodes: &[NodeId],
    column: &[Option<Symbol>],
    bound_nodes: &[NodeId],
    mut text: impl FnMut(Symbol) -> String,
) -> Vec<Placement> {
    let mut domains = group_by_value(parent_nodes, column);
    let counts = bound_domain_counts(bound_nodes, column);
    if let Some(pinned) = pinned_value(&counts, &mut text) {
        domains.retain(|&value, _| value == pinned);
    }
    let mut named: Vec<(String, Symbol, Vec<NodeId>)> = domains
        .into_iter()
        .map(|(value, nodes)| (text(value), value, nodes))
        .collect();
    named.sort_unstable();
    named
        .into_iter()
        .map(|(value_text, value, nodes)| Placement {
            name: format!("{key_text}={value_text}"),
            nodes,
            domain: Some((key, value)),
        })
        .collect()
}

// ---------------------------------------------------------------------------
// PlacementScore
// ---------------------------------------------------------------------------

/// One resource summed over a placement's nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResourceTotal {
    /// Requests of the pods bound or assumed on the nodes.
    pub requested: u128,
    /// Allocatable amount of the nodes.
    pub allocatable: u128,
}

impl ResourceTotal {
    /// Sums the `requested` and `allocatable` columns (indexed by node id)
    /// over `nodes`; ids outside a column count 0.
    pub fn over(requested: &[u64], allocatable: &[u64], nodes: &[NodeId]) -> Self {
        let sum = |column: &[u64]| -> u128 {
            nodes
                .iter()
                .filter_map(|&node| column.get(node as usize))
                .map(|&amount| u128::from(amount))
                .sum()
        };
        Self {
            requested: sum(requested),
            allocatable: sum(allocatable),
        }
    }
}

/// The resource columns the most-allocated score looks at: `cpu` and
/// `memory` always, plus every extended resource (column ≥ 3) that at
/// least one of the assigned pods requests. `requests` holds each assigned
/// pod's requests, indexed by resource id. Ascending.
pub fn resources_to_score(requests: &[Vec<u64>]) -> Vec<ResourceId> {
    let mut resources: BTreeSet<ResourceId> = BASE_SCORED.into_iter().collect();
    for pod in requests {
        for (resource, &amount) in pod.iter().enumerate() {
            let Ok(resource) = ResourceId::try_from(resource) else {
                break;
            };
            if resource >= FIRST_EXTENDED && amount > 0 {
                resources.insert(resource);
            }
        }
    }
    resources.into_iter().collect()
}

/// `NodeResourcesFit`'s most-allocated strategy over a whole placement, in
/// `0 ..= 100`: per resource `requested * 100 / allocatable` (integer,
/// requested capped at allocatable), averaged (integer, equal weights) over
/// the resources with `allocatable > 0`; 0 when there is none.
pub fn most_allocated_score(totals: &[ResourceTotal]) -> u64 {
    let resources: Vec<ResourceUse> = totals
        .iter()
        .map(|total| ResourceUse {
            requested: total.requested,
            allocatable: total.allocatable,
            weight: 1,
        })
        .collect();
    most_allocated(&resources)
}

/// `PodGroupPodsCount`, normalised to `0 ..= 100`: `assigned * 100 /
/// members` (integer), capped at 100; 0 when the unit has no members.
/// `members` is the number of the unit's pending plus assigned pods.
pub fn pods_count_score(assigned: u64, members: u64) -> u64 {
    if members == 0 {
        return 0;
    }
    let score = u128::from(assigned) * u128::from(MAX_SCORE) / u128::from(members);
    u64::try_from(score).map_or(MAX_SCORE, |score| score.min(MAX_SCORE))
}

/// The placement score: `(w_fit * fit + w_count * count) / (w_fit +
/// w_count)` (integer), clamped to `0 ..= 100`; 0 when both weights are 0
/// (which [`Args::validate`] refuses).
pub fn combined_score(fit: u64, count: u64, weights: Weights) -> i64 {
    let (w_fit, w_count) = (
        u128::from(weights.resource_fit),
        u128::from(weights.pods_count),
    );
    let total = w_fit + w_count;
    if total == 0 {
        return 0;
    }
    let weighted = (w_fit * u128::from(fit) + w_count * u128::from(count)) / total;
    i64::try_from(weighted.min(u128::from(MAX_SCORE))).unwrap_or(0)
}

// ---------------------------------------------------------------------------
// The plugin
// ---------------------------------------------------------------------------

/// The plugin: validated [`Args`], no other state.
#[derive(Debug)]
pub struct TopologyPlacement {
    args: Args,
}

impl TopologyPlacement {
    /// The args the plugin was configured with.
    pub fn args(&self) -> Args {
        self.args
    }
}

/// A unit as the cluster view returns it.
enum UnitView {
    Group(PodGroup),
    Composite(Composite),
}

impl UnitView {
    /// `None` for an unknown id.
    fn of(cluster: &impl Cluster, unit: Unit) -> Option<Self> {
        match unit {
            Unit::PodGroup(id) => cluster.pod_group(id).map(Self::Group),
            Unit::Composite(id) => cluster.composite(id).map(Self::Composite),
        }
    }

    fn name(&self) -> &str {
        match self {
            Self::Group(group) => &group.name,
            Self::Composite(composite) => &composite.name,
        }
    }

    /// The unit's topology key; `None` also for a PodGroup whose object
    /// does not exist.
    fn key(&self) -> Option<Symbol> {
        match self {
            Self::Group(group) => group.spec.as_ref()?.topology_key,
            Self::Composite(composite) => composite.spec.topology_key,
        }
    }

    /// The unit's PodGroups: itself, or every PodGroup in the composite's
    /// subtree (walked at most [`MAX_DEPTH`] levels deep), by id.
    fn groups(self, cluster: &impl Cluster) -> Vec<PodGroup> {
        match self {
            Self::Group(group) => alloc::vec![group],
            Self::Composite(root) => {
                let mut groups = BTreeSet::new();
                let mut seen = BTreeSet::new();
                collect_groups(cluster, &root, 0, &mut groups, &mut seen);
                groups
                    .into_iter()
                    .filter_map(|group| cluster.pod_group(group))
                    .collect()
            }
        }
    }
}

fn collect_groups(
    cluster: &impl Cluster,
    composite: &Composite,
    depth: u32,
    groups: &mut BTreeSet<PodGroupId>,
    seen: &mut BTreeSet<CompositeId>,
) {
    if !seen.insert(composite.id) {
        return;
    }
    groups.extend(composite.child_groups.iter().copied());
    if depth >= MAX_DEPTH {
        return;
    }
    for &child in &composite.child_composites {
        if let Some(child) = cluster.composite(child) {
            collect_groups(cluster, &child, depth + 1, groups, seen);
        }
    }
}

fn len(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

impl Plugin for TopologyPlacement {
    type Args = Args;
    const NAME: &'static str = NAME;

    fn new(args: Args) -> Result<Self, String> {
        args.validate()?;
        Ok(Self { args })
    }

    fn generate_placements(
        &mut self,
        cluster: &impl Cluster,
        unit: Unit,
        parent: &Placement,
    ) -> Result<Placements, Status> {
        let Some(view) = UnitView::of(cluster, unit) else {
            return Err(Status::new(Code::Skip, "unit not found"));
        };
        let Some(key) = view.key() else {
            return Err(Status::new(
                Code::Skip,
                format!("{} has no topology constraint", view.name()),
            ));
        };
        let name = String::from(view.name());
        let column = cluster.node_label_column(key);
        let key_text = cluster.symbol_text(key);
        let bound_nodes: Vec<NodeId> = view
            .groups(cluster)
            .iter()
            .flat_map(|group| &group.bound)
            .filter_map(|&pod| cluster.pod(pod)?.node)
            .collect();
        let candidates = topology_placements(
            key,
            &key_text,
            &parent.nodes,
            &column,
            &bound_nodes,
            |symbol| cluster.symbol_text(symbol),
        );
        let spread = bound_domain_counts(&bound_nodes, &column).len();
        if spread > 1 {
            let kept = candidates.first().map_or("none", |p| p.name.as_str());
            wasched_sdk::log(
                Level::Warn,
                &format!(
                    "bound members of {name} span {spread} domains of {key_text}; candidates limited to the one with the most ({kept})"
                ),
            );
        }
        let search_budget = matches!(unit, Unit::Composite(_)).then_some(self.args.search_budget);
        Ok(Placements {
            candidates,
            search_budget,
        })
    }

    fn score_placement(
        &mut self,
        cluster: &impl Cluster,
        unit: Unit,
        placement: &Placement,
        assignments: &[Assignment],
    ) -> Result<i64, Status> {
        let weights = self.args.weights();
        let assigned: BTreeSet<PodId> = assignments.iter().map(|a| a.pod).collect();

        let fit = if weights.resource_fit == 0 {
            0
        } else {
            let requests: Vec<Vec<u64>> = assigned
                .iter()
                .map(|&pod| cluster.pod_requests(pod))
                .collect();
            let totals: Vec<ResourceTotal> = resources_to_score(&requests)
                .into_iter()
                .map(|resource| {
                    ResourceTotal::over(
                        &cluster.requested(resource),
                        &cluster.allocatable(resource),
                        &placement.nodes,
                    )
                })
                .collect();
            most_allocated_score(&totals)
        };

        let count = if weights.pods_count == 0 {
            0
        } else {
            let mut members = assigned.clone();
            if let Some(view) = UnitView::of(cluster, unit) {
                for group in view.groups(cluster) {
                    members.extend(group.pending);
                }
            }
            pods_count_score(len(assigned.len()), len(members.len()))
        };

        Ok(combined_score(fit, count, weights))
    }
}

wasched_sdk::register_plugin!(TopologyPlacement: placement_generate, placement_score);

#[cfg(test)]
mod tests;
