//! `NodeResourcesFit` (filter): what a pod requests (the larger of its
//! init containers' and the sum of its containers', plus overhead, as
//! `resourcehelper.PodRequests`) must fit in the node's allocatable less
//! what the pods on it request, for cpu, memory, pods and every extended
//! resource, as upstream's `pkg/scheduler/framework/plugins/noderesources`.

use super::Rejection;
use crate::model::{NodeId, PodId, Snapshot};

/// Upstream's `Filter`: every resource `pod` requests (its columns of the
/// snapshot) must fit in what is left of `node`; the rejection names every
/// resource that does not.
pub fn filter(snapshot: &Snapshot, pod: PodId, node: NodeId) -> Result<(), Rejection> {
    let pod = &snapshot.pods[pod as usize];
    let mut short = 0u128;
    for (r, &request) in pod.requests.iter().enumerate() {
        let free = snapshot.allocatable(r)[node as usize]
            .saturating_sub(snapshot.requested(r)[node as usize]);
        if request > free {
            short |= 1 << r;
        }
    }
    if short == 0 {
        Ok(())
    } else {
        Err(Rejection::Resources(short))
    }
}
