//! Typed calls at each extension point, with the guest's answers checked
//! before the host uses them: node ids must be among the candidates, lists
//! must have the promised length, scores must be in range. A violation is
//! that plugin's error, never a host panic.

use super::bindings::types;
use super::plugin::{ExtensionPoint, FailureCause, Plugin, PluginError};
use super::state::pod_group_record;
use super::validate::{self, NodeRejection, Placement};
use crate::snapshot::{GroupId, NodeId, PodId, Snapshot};

fn to_wit(placement: &Placement) -> types::Placement {
    types::Placement {
        name: placement.name.clone(),
        nodes: placement.nodes.clone(),
    }
}

impl Plugin {
    fn invalid(&self, point: ExtensionPoint, what: String) -> PluginError {
        self.error(
            point,
            FailureCause::InvalidResult,
            format!("returned an invalid result ({what})"),
        )
    }

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

    /// `filter` of `pod` over `nodes` (ascending): the rejected nodes.
    pub fn filter(
        &mut self,
        snapshot: &mut Snapshot,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Result<Vec<NodeRejection>, PluginError> {
        let rejected = self.call(snapshot, ExtensionPoint::Filter, |exports, store, snap| {
            exports
                .filter
                .as_ref()
                .expect("wired only if exported")
                .call_filter(store, snap, pod, nodes)
        })?;
        validate::rejections(
            nodes,
            rejected.into_iter().map(|r| (r.node, r.status.reason)),
        )
        .map_err(|e| self.invalid(ExtensionPoint::Filter, e))
    }

    /// `score` of `pod` on `nodes`: one score in `0..=100` per node, or the
    /// plugin's non-success status.
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
            validate::scores(nodes.len(), scores)
                .map_err(|e| self.invalid(ExtensionPoint::Score, e))?;
        }
        Ok(scores)
    }

    /// `placement-generate` for `group` within `parent`. `Ok(Ok(None))`
    /// means the plugin skipped (keep `parent`).
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
        match result {
            Ok(generated) => {
                validate::placements(parent, generated.into_iter().map(|p| (p.name, p.nodes)))
                    .map(|placements| Ok(Some(placements)))
                    .map_err(|e| self.invalid(ExtensionPoint::PlacementGenerate, e))
            }
            Err(status) if status.code == types::Code::Skip => Ok(Ok(None)),
            Err(status) => Ok(Err(status)),
        }
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
        if let Ok(s) = score {
            validate::score(s).map_err(|e| self.invalid(ExtensionPoint::PlacementScore, e))?;
        }
        Ok(score)
    }
}
