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
    let groups = (0..snapshot.groups.len() as GroupId).map(Entity::Group);
    let trees = (0..snapshot.composites.len() as CompositeId).map(Entity::Tree);
    let pods = (0..snapshot.pods.len() as PodId).map(Entity::Pod);
    let mut entities: Vec<(i32, i64, &str, Entity)> = groups
        .chain(trees)
        .chain(pods)
        .filter_map(|entity| {
            let (priority, created, key) = rank(snapshot, entity)?;
            Some((priority, created, key, entity))
        })
        .collect();
    entities.sort_by_key(|&(priority, created, key, _)| (Reverse(priority), created, key));
    entities
        .into_iter()
        .map(|(priority, .., e)| (priority, e))
        .collect()
}

/// The entities `order` names that the queue holds, in `order`'s order
/// (each once), each with its priority: what [`prioritized`] gives for
/// them, without ranking the whole queue.
pub fn in_order(snapshot: &Snapshot, order: &[Entity]) -> Vec<(i32, Entity)> {
    let mut seen = std::collections::HashSet::new();
    order
        .iter()
        .filter(|e| seen.insert(**e))
        .filter_map(|&e| Some((rank(snapshot, e)?.0, e)))
        .collect()
}

/// Where `entity` sorts in the queue: its priority, and the creation time
/// and `namespace/name` of its earliest pending member; `None` when the
/// queue does not hold it (no pending pod, a PodGroup inside a valid tree,
/// a tree that is not a valid root, a pod of a group).
fn rank(snapshot: &Snapshot, entity: Entity) -> Option<(i32, i64, &str)> {
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
    match entity {
        Entity::Group(id) => {
            let group = &snapshot.groups[id as usize];
            if group.parent.is_some() && group.invalid.is_none() {
                return None;
            }
            let (created, key) = first_member(&mut std::iter::once(id))?;
            let priority = match &group.spec {
                Some(spec) => spec.priority,
                None => group
                    .members
                    .iter()
                    .map(|&p| snapshot.pods[p as usize].priority)
                    .max()
                    .unwrap_or(0),
            };
            Some((priority, created, key))
        }
        Entity::Tree(id) => {
            let root = &snapshot.composites[id as usize];
            if root.parent.is_some() || root.invalid.is_some() {
                return None;
            }
            let (created, key) = first_member(&mut snapshot.subtree_groups(id).into_iter())?;
            Some((root.spec.priority, created, key))
        }
        Entity::Pod(id) => {
            let pod = &snapshot.pods[id as usize];
            (pod.pending && pod.group.is_none()).then_some((pod.priority, pod.created, &pod.key))
        }
    }
}
