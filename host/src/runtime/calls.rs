//! Typed calls at each extension point, with the guest's answers checked
//! before the host uses them: node ids must be among the candidates, lists
//! must have the promised length, scores must be in range. A violation is
//! that plugin's error, never a host panic.

use super::bindings::types;
use super::plugin::{ExtensionPoint, Plugin, PluginError};
use super::state::pod_group_record;
use crate::snapshot::{GroupId, NodeId, PodId, Snapshot};

/// Highest score a `score` or `placement-score` plugin may give.
pub const MAX_SCORE: i64 = 100;

/// A candidate node set for a group, host side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// Display name (`cluster`, `rack=r1`).
    pub name: String,
    /// Nodes, ascending.
    pub nodes: Vec<NodeId>,
}

/// A node a filter plugin rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRejection {
    /// The node.
    pub node: NodeId,
    /// Why.
    pub reason: String,
}

fn invalid(plugin: &Plugin, point: ExtensionPoint, what: String) -> PluginError {
    PluginError {
        plugin: plugin.name().to_string(),
        point,
        cause: format!("returned an invalid result ({what})"),
    }
}

fn to_wit(placement: &Placement) -> types::Placement {
    types::Placement {
        name: placement.name.clone(),
        nodes: placement.nodes.clone(),
    }
}

impl Plugin {
    /// `pre-enqueue` for group `group`.
    pub fn pre_enqueue(
        &mut self,
        snapshot: &mut Snapshot,
        group: GroupId,
    ) -> Result<types::Status, PluginError> {
        let record = pod_group_record(snapshot, group, &snapshot.groups[group as usize]);
        self.call(
            snapshot,
            ExtensionPoint::PreEnqueue,
            |exports, store, snap| {
                exports
                    .pre_enqueue
                    .as_ref()
                    .expect("wired only if exported")
                    .call_pre_enqueue(store, snap, &record)
            },
        )
    }

    /// `permit` for `group` after a pod was tried.
    pub fn permit(
        &mut self,
        snapshot: &mut Snapshot,
        group: GroupId,
        scheduled: u32,
        remaining: u32,
    ) -> Result<types::Status, PluginError> {
        let progress = types::PlacementProgress {
            scheduled,
            remaining,
        };
        self.call(snapshot, ExtensionPoint::Permit, |exports, store, snap| {
            exports
                .permit
                .as_ref()
                .expect("wired only if exported")
                .call_permit(store, snap, group, progress)
        })
    }

    /// `filter` of `pod` over `nodes`: the rejected nodes, validated to be
    /// among `nodes` and listed once.
    pub fn filter(
        &mut self,
        snapshot: &mut Snapshot,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Result<Vec<NodeRejection>, PluginError> {
        let rejections = self.call(snapshot, ExtensionPoint::Filter, |exports, store, snap| {
            exports
                .filter
                .as_ref()
                .expect("wired only if exported")
                .call_filter(store, snap, pod, nodes)
        })?;
        let mut seen = std::collections::HashSet::new();
        rejections
            .into_iter()
            .map(|r| {
                if nodes.binary_search(&r.node).is_err() {
                    return Err(invalid(
                        self,
                        ExtensionPoint::Filter,
                        format!("node {} was not a candidate", r.node),
                    ));
                }
                if !seen.insert(r.node) {
                    return Err(invalid(
                        self,
                        ExtensionPoint::Filter,
                        format!("node {} rejected twice", r.node),
                    ));
                }
                Ok(NodeRejection {
                    node: r.node,
                    reason: r.status.reason,
                })
            })
            .collect()
    }

    /// `score` of `pod` on `nodes`: one score in `0..=100` per node.
    pub fn score(
        &mut self,
        snapshot: &mut Snapshot,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Result<Result<Vec<i64>, types::Status>, PluginError> {
        let scores = self.call(snapshot, ExtensionPoint::Score, |exports, store, snap| {
            exports
                .score
                .as_ref()
                .expect("wired only if exported")
                .call_score(store, snap, pod, nodes)
        })?;
        if let Ok(scores) = &scores {
            if scores.len() != nodes.len() {
                return Err(invalid(
                    self,
                    ExtensionPoint::Score,
                    format!("{} scores for {} nodes", scores.len(), nodes.len()),
                ));
            }
            if let Some(bad) = scores.iter().find(|s| !(0..=MAX_SCORE).contains(*s)) {
                return Err(invalid(
                    self,
                    ExtensionPoint::Score,
                    format!("score {bad} outside 0..={MAX_SCORE}"),
                ));
            }
        }
        Ok(scores)
    }

    /// `placement-generate` for `group` within `parent`. `Ok(None)` means
    /// the plugin skipped (keep `parent`); placements are checked to be
    /// subsets of `parent`.
    pub fn generate_placements(
        &mut self,
        snapshot: &mut Snapshot,
        group: GroupId,
        parent: &Placement,
    ) -> Result<Result<Option<Vec<Placement>>, types::Status>, PluginError> {
        let record = pod_group_record(snapshot, group, &snapshot.groups[group as usize]);
        let parent_wit = to_wit(parent);
        let result = self.call(
            snapshot,
            ExtensionPoint::PlacementGenerate,
            |exports, store, snap| {
                exports
                    .placement_generate
                    .as_ref()
                    .expect("wired only if exported")
                    .call_generate_placements(store, snap, &record, &parent_wit)
            },
        )?;
        let placements = match result {
            Ok(placements) => placements,
            Err(status) if status.code == types::Code::Skip => return Ok(Ok(None)),
            Err(status) => return Ok(Err(status)),
        };
        let mut out = Vec::with_capacity(placements.len());
        for p in placements {
            let mut nodes = p.nodes;
            nodes.sort_unstable();
            nodes.dedup();
            if let Some(bad) = nodes
                .iter()
                .find(|n| parent.nodes.binary_search(n).is_err())
            {
                return Err(invalid(
                    self,
                    ExtensionPoint::PlacementGenerate,
                    format!("placement {} has node {bad} outside its parent", p.name),
                ));
            }
            out.push(Placement {
                name: p.name,
                nodes,
            });
        }
        Ok(Ok(Some(out)))
    }

    /// `placement-score` of a feasible placement with its assignments.
    pub fn score_placement(
        &mut self,
        snapshot: &mut Snapshot,
        group: GroupId,
        placement: &Placement,
        assignments: &[(PodId, NodeId)],
    ) -> Result<Result<i64, types::Status>, PluginError> {
        let placement_wit = to_wit(placement);
        let assignments: Vec<types::Assignment> = assignments
            .iter()
            .map(|&(pod, node)| types::Assignment { pod, node })
            .collect();
        let score = self.call(
            snapshot,
            ExtensionPoint::PlacementScore,
            |exports, store, snap| {
                exports
                    .placement_score
                    .as_ref()
                    .expect("wired only if exported")
                    .call_score_placement(store, snap, group, &placement_wit, &assignments)
            },
        )?;
        if let Ok(s) = score
            && !(0..=MAX_SCORE).contains(&s)
        {
            return Err(invalid(
                self,
                ExtensionPoint::PlacementScore,
                format!("score {s} outside 0..={MAX_SCORE}"),
            ));
        }
        Ok(score)
    }
}
