//! The active queue in `PrioritySort` order.

use std::cmp::Reverse;

use crate::model::{GroupId, PodId, Snapshot};

/// Something the queue holds: a PodGroup (one entity for all its pending
/// members) or a pod that belongs to no group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entity {
    /// A PodGroup.
    Group(GroupId),
    /// A lone pod.
    Pod(PodId),
}

/// The queue in `PrioritySort` order: priority descending, then creation
/// time, then `namespace/name`. A PodGroup's priority is its spec's (for a
/// PodGroup object that is missing: its highest member's).
pub fn queue(snapshot: &Snapshot) -> Vec<Entity> {
    let pending = |p: &PodId| snapshot.pods[*p as usize].pending;
    let mut entities: Vec<(i32, i64, &str, Entity)> = Vec::new();
    for (id, group) in snapshot.groups.iter().enumerate() {
        if !group.members.iter().any(pending) {
            continue;
        }
        let priority = match &group.spec {
            Some(spec) => spec.priority,
            None => group
                .members
                .iter()
                .map(|&p| snapshot.pods[p as usize].priority)
                .max()
                .unwrap_or(0),
        };
        entities.push((
            priority,
            group.created,
            &group.key,
            Entity::Group(id as GroupId),
        ));
    }
    for (id, pod) in snapshot.pods.iter().enumerate() {
        if pod.pending && pod.group.is_none() {
            entities.push((
                pod.priority,
                pod.created,
                &pod.key,
                Entity::Pod(id as PodId),
            ));
        }
    }
    entities.sort_by_key(|&(priority, created, key, _)| (Reverse(priority), created, key));
    entities.into_iter().map(|(.., e)| e).collect()
}
