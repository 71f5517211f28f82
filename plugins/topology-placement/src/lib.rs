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
//!
//! The plugin does not score placements: the host ranks the feasible ones
//! with kube-scheduler's default placement scores (`NodeResourcesFit`
//! most-allocated over the placement plus `PodGroupPodsCount`) and adds any
//! placement-score plugins' scores, so exporting `placement-score` here
//! would count them twice.
//!
//! Args (optional; unknown fields are refused):
//!
//! | field | default | meaning |
//! |---|---|---|
//! | `searchBudget` | `10000` | placements the host may try for one composite tree in total; ≥ 1 |
//!
//! ```json
//! {"searchBudget": 10000}
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
//!
//! The decisions are plain functions ([`topology_placements`],
//! [`bound_domain_counts`], [`pinned_value`]); the host groups the parent's
//! nodes by label value (`group-nodes-by-label`, since contract 0.3.0);
//! [`TopologyPlacement`] gathers their inputs from the [`Cluster`] view.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde::Deserialize;
use wasched_sdk::{
    Cluster, Code, Composite, CompositeId, LabelDomain, Level, NodeId, Placement, Placements,
    Plugin, PodGroup, PodGroupId, Status, Symbol, Unit,
};

/// The name this plugin registers under (`Wasched`-prefixed: it cannot
/// collide with a kube-scheduler in-tree plugin; `wasched config migrate`
/// renames the old unprefixed name).
pub const NAME: &str = "WaschedTopologyPlacement";

/// Default of `searchBudget`: placements the host may try for one composite
/// tree in total.
pub const DEFAULT_SEARCH_BUDGET: u32 = 10_000;

/// Composite trees are at most 4 levels deep; deeper (or cyclic) input is
/// not walked further than this.
const MAX_DEPTH: u32 = 8;

// ---------------------------------------------------------------------------
// Args
// ---------------------------------------------------------------------------

/// The plugin's configuration (`args` of its configuration entry); every
/// field is optional, unknown fields are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Args {
    /// `searchBudget`: how many placements the host may try for one
    /// composite tree in total (returned with a composite unit's
    /// placements). Default [`DEFAULT_SEARCH_BUDGET`]; must be ≥ 1.
    pub search_budget: u32,
}

impl Default for Args {
    fn default() -> Self {
        Self {
            search_budget: DEFAULT_SEARCH_BUDGET,
        }
    }
}

impl Args {
    /// Checks the args: `searchBudget` ≥ 1.
    pub fn validate(&self) -> Result<(), String> {
        if self.search_budget == 0 {
            return Err(format!(
                "{NAME}: searchBudget must be >= 1, got 0 (omit it for the default {DEFAULT_SEARCH_BUDGET})"
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// PlacementGenerate
// ---------------------------------------------------------------------------

/// How many bound pods each domain holds, given the nodes of the bound pods
/// (one entry per pod, repeats allowed). Pods on unlabelled nodes count for
/// no domain.
pub fn bound_domain_counts(
    bound_nodes: &[NodeId],
    value_of: impl Fn(NodeId) -> Option<Symbol>,
) -> BTreeMap<Symbol, u32> {
    let mut counts: BTreeMap<Symbol, u32> = BTreeMap::new();
    for &node in bound_nodes {
        if let Some(value) = value_of(node) {
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
/// `key_text`): one per domain of `domains` (the parent placement's nodes
/// grouped by their value of the key, as the host's
/// `group-nodes-by-label` returns them), restricted to the [`pinned_value`]
/// of `bound_counts` (bound pods per domain) when there is one.
///
/// Each placement is named `<key>=<value>`, has the domain `(key, value)`
/// and its nodes ascending; placements are ordered by value text (byte
/// order). The result is empty when no parent node carries the label, or
/// when the pinned domain has no node in the parent. The domains' own
/// `value_text` names them; `text` resolves only the values tied for the
/// most bound pods.
pub fn topology_placements(
    key: Symbol,
    key_text: &str,
    mut domains: Vec<LabelDomain>,
    bound_counts: &BTreeMap<Symbol, u32>,
    mut text: impl FnMut(Symbol) -> String,
) -> Vec<Placement> {
    if let Some(pinned) = pinned_value(bound_counts, &mut text) {
        domains.retain(|d| d.value == pinned);
    }
    // `domains` come by value text, as `group-nodes-by-label` answers.
    domains
        .into_iter()
        .map(|d| {
            // Built by hand: `format!` costs a component several times more.
            let mut name = String::with_capacity(key_text.len() + 1 + d.value_text.len());
            name.push_str(key_text);
            name.push('=');
            name.push_str(&d.value_text);
            Placement {
                name,
                nodes: d.nodes,
                domain: Some((key, d.value)),
            }
        })
        .collect()
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
        let key_text = cluster.symbol_text(key);
        let unknown = |_| Status::new(Code::Error, "the host refused the parent's node ids");
        let domains = cluster
            .group_nodes_by_label(key, &parent.nodes)
            .map_err(unknown)?;
        let bound_nodes: Vec<NodeId> = view
            .groups(cluster)
            .iter()
            .flat_map(|group| &group.bound)
            .filter_map(|&pod| cluster.pod(pod)?.node)
            .collect();
        // The bound members' domains: only their (few) nodes are looked up.
        let mut distinct = bound_nodes.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let bound_values: BTreeMap<NodeId, Symbol> = cluster
            .group_nodes_by_label(key, &distinct)
            .map_err(unknown)?
            .into_iter()
            .flat_map(|d| d.nodes.into_iter().map(move |n| (n, d.value)))
            .collect();
        let counts = bound_domain_counts(&bound_nodes, |n| bound_values.get(&n).copied());
        let spread = counts.len();
        let candidates = topology_placements(key, &key_text, domains, &counts, |symbol| {
            cluster.symbol_text(symbol)
        });
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
            // Without bound members the answer is the key's domains over
            // the parent's nodes, whatever the unit.
            reusable: bound_nodes.is_empty(),
        })
    }
}

wasched_sdk::register_plugin!(TopologyPlacement: placement_generate);

#[cfg(test)]
mod tests;
