//! The active queue in `PrioritySort` order.

use std::cmp::Reverse;

use crate::model::{CompositeId, GroupId, PodId, Snapshot};

/// Something the queue holds: a PodGroup (one entity for all its pending
/// members), the root of a valid CompositePodGroup tree (one entity for the
/// whole tree), or a pod that belongs to no group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Entity {
    /// A PodGroup outside any valid tree.
    Group(GroupId),
    /// The root of a valid CompositePodGroup tree.
    Tree(CompositeId),
    /// A lone pod.
    Pod(PodId),
}

/// The queue in `PrioritySort` order: priority descending, then the time
/// the entity entered the queue, then `namespace/name`. A pod enters the
/// queue when it is created; a PodGroup or CompositePodGroup tree when its
/// first pending member does (kube-scheduler v1.37 gives a group entity the
/// queue timestamp of the first member pod it receives,
/// `newQueuedPodGroupInfoFromRootLookup` in `scheduling_queue.go`), so a
/// group sorts as its earliest pending member: by that pod's creation time
/// and `namespace/name`. A PodGroup's priority is its spec's (for a PodGroup
/// object that is missing: its highest member's).
pub fn queue(snapshot: &Snapshot) -> Vec<Entity> {
    prioritized(snapshot).into_iter().map(|(_, e)| e).collect()
}

/// [`queue`], each entity with its priority.
pub fn prioritized(snapshot: &Snapshot) -> Vec<(i32, Entity)> {
    let pending = |p: &PodId| snapshot.pods[*p as usize].pending;
    // The earliest pending member of some groups: (created, key).
    let first_member = |groups: &mut dyn Iterator<Item = GroupId>| {
        groups
            .flat_map(|g| snapshot.groups[g as usize].members.iter().copied())
            .filter(pending)
            .map(|p| {
                let pod = &snapshot.pods[p as usize];
                (pod.created, pod.key.as_str())
            })
            .min()
    };
    let mut entities: Vec<(i32, i64, &str, Entity)> = Vec::new();
    for (id, group) in snapshot.groups.iter().enumerate() {
        let in_valid_tree = group.parent.is_some() && group.invalid.is_none();
        if in_valid_tree || !group.members.iter().any(pending) {
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
        let (created, key) =
            first_member(&mut std::iter::once(id as GroupId)).expect("has a pending member");
        entities.push((priority, created, key, Entity::Group(id as GroupId)));
    }
    for (id, root) in snapshot.composites.iter().enumerate() {
        let id = id as CompositeId;
        if root.parent.is_some() || root.invalid.is_some() {
            continue;
        }
        if let Some((created, key)) = first_member(&mut snapshot.subtree_groups(id).into_iter()) {
            entities.push((root.spec.priority, created, key, Entity::Tree(id)));
        }
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
    entities
        .into_iter()
        .map(|(priority, .., e)| (priority, e))
        .collect()
}

/// The entities of `prioritized` that `order` names, in `order`'s order
/// (each once).
pub fn in_order(prioritized: Vec<(i32, Entity)>, order: &[Entity]) -> Vec<(i32, Entity)> {
    let priorities: std::collections::HashMap<Entity, i32> =
        prioritized.into_iter().map(|(p, e)| (e, p)).collect();
    let mut seen = std::collections::HashSet::new();
    order
        .iter()
        .filter(|e| seen.insert(**e))
        .filter_map(|e| Some((*priorities.get(e)?, *e)))
        .collect()
}
