//! One pod's node checks made ready for a walk over many nodes: what
//! [`StaticVerdicts::get`] then [`dynamic_check`](super::dynamic_check)
//! decide, with the pod's part of the work done once.

use super::{PreFilter, Rejection, StaticVerdicts, verdict};
use crate::model::{NodeId, NodeInfo, PodId, Snapshot};

/// A pod's node checks against one state of a snapshot.
pub struct NodeChecks<'a> {
    statics: &'a [u32],
    /// (allocatable, requested, request, the column's bit in
    /// [`Rejection::Resources`]) of each resource the pod requests a
    /// non-zero amount of (a zero request fits every node).
    resources: Vec<(&'a [u64], &'a [u64], u64, u128)>,
    nodes: &'a [NodeInfo],
    state: &'a PreFilter,
    /// Whether `state` can reject a node (spread constraints, forbidden
    /// anti-affinity domains).
    stateful: bool,
}

impl<'a> NodeChecks<'a> {
    /// The checks of `pod` over `snapshot` as it is: `statics` are its
    /// static verdicts, `state` its [`PreFilter::for_pod`].
    pub fn new(
        snapshot: &'a Snapshot,
        pod: PodId,
        statics: &'a StaticVerdicts,
        state: &'a PreFilter,
    ) -> Self {
        let resources = snapshot.pods[pod as usize]
            .requests
            .iter()
            .enumerate()
            .filter(|&(_, &request)| request > 0)
            .map(|(r, &request)| {
                (
                    snapshot.allocatable(r),
                    snapshot.requested(r),
                    request,
                    1u128 << r,
                )
            })
            .collect();
        Self {
            statics: statics.codes(),
            resources,
            nodes: &snapshot.nodes,
            state,
            stateful: !state.is_empty(),
        }
    }

    /// Whether a check depends on other pods than the node's (spread
    /// constraints, forbidden anti-affinity domains): the verdicts then
    /// hold for this pod alone.
    pub fn stateful(&self) -> bool {
        self.stateful
    }

    /// Whether `node` passes every check, else the first failing one's
    /// rejection (the resources the pod lacks there, for resource fit).
    #[inline(always)]
    pub fn check(&self, node: NodeId) -> Result<(), Rejection> {
        verdict(self.statics[node as usize])?;
        self.dynamic(node)
    }

    /// [`NodeChecks::check`] of a node whose static verdict passes.
    #[inline(always)]
    pub fn dynamic(&self, node: NodeId) -> Result<(), Rejection> {
        let n = node as usize;
        // One plain pass (the hottest loop of a run): the bits of the
        // resources the pod does not fit into.
        let mut short = 0u128;
        for &(allocatable, requested, request, bit) in &self.resources {
            if request > free(allocatable, requested, n) {
                short |= bit;
            }
        }
        if short != 0 {
            return Err(Rejection::Resources(short));
        }
        if self.stateful {
            let node = &self.nodes[n];
            self.state.spread.check(node)?;
            self.state.anti_affinity.check(node)?;
        }
        Ok(())
    }
}

/// What is free of one resource on node `n`: allocatable less requested
/// (nothing when overcommitted).
#[inline(always)]
fn free(allocatable: &[u64], requested: &[u64], n: usize) -> u64 {
    let used = requested.get(n).copied().unwrap_or(0);
    allocatable
        .get(n)
        .copied()
        .unwrap_or(0)
        .saturating_sub(used)
}
