//! Preemptors waiting for their victims: which pods of a queued entity are
//! pending, and whether it may start another preemption while victims it
//! caused are still terminating (kube-scheduler's
//! `PodEligibleToPreemptOthers`). Used wherever the cycle runs over a
//! cluster that keeps time: the live shadow, and the replay of a trace.

use std::collections::BTreeSet;

use super::Entity;
use crate::model::Snapshot;

/// The pending pods of an entity.
pub fn pending_pods(snapshot: &Snapshot, entity: Entity) -> Vec<u32> {
    let groups = match entity {
        Entity::Pod(p) => return vec![p],
        Entity::Group(g) => vec![g],
        Entity::Tree(c) => snapshot.subtree_groups(c),
    };
    groups
        .into_iter()
        .flat_map(|g| snapshot.groups[g as usize].members.iter().copied())
        .filter(|&p| snapshot.pods[p as usize].pending)
        .collect()
}

/// Whether a preemptor may not start another preemption: one of its pods
/// (`pods`) is nominated to a node where a pod of lower priority that the
/// scheduler preempted (`preempted`: keys of pods being deleted as victims)
/// is still terminating. It is still scheduled meanwhile.
pub fn victims_terminating(
    snapshot: &Snapshot,
    pods: &[u32],
    preempted: &BTreeSet<String>,
) -> bool {
    pods.iter().any(|&p| {
        let pod = &snapshot.pods[p as usize];
        pod.nominated_node.is_some_and(|node| {
            snapshot.pods_on_node(node).iter().any(|&other| {
                let other = &snapshot.pods[other as usize];
                other.terminating && other.priority < pod.priority && preempted.contains(&other.key)
            })
        })
    })
}
