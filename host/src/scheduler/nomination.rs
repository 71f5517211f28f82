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
        Entity::Pod(p) if snapshot.pods[p as usize].pending => return vec![p],
        Entity::Pod(_) => return Vec::new(),
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

/// Pods nominated in earlier runs (`status.nominatedNodeName`), carried
/// into a live run: kube-scheduler's Filter counts the nominated pods of
/// at least the filtered pod's priority on their nodes
/// (`addGENominatedPods`), so before each entity's cycle every nominated
/// pod of at least its priority, but its own, is placed on its node as
/// nominated, and its own are taken off (its cycle tries those nodes
/// first). Entities come in non-increasing priority, so the placed set
/// only grows; [`Carried::release`] takes every nomination off again at
/// the run's end, leaving the snapshot as the objects say.
#[derive(Debug, Default)]
pub struct Carried {
    /// (priority, pod, node), highest priority first.
    waiting: Vec<(i32, u32, u32)>,
    /// How many of `waiting` have at least the current priority.
    eligible: usize,
}

impl Carried {
    /// The pending pods of `snapshot` nominated to a node.
    pub fn of(snapshot: &Snapshot) -> Self {
        let mut waiting: Vec<(i32, u32, u32)> = snapshot
            .pods
            .iter()
            .enumerate()
            .filter(|(_, p)| p.pending && p.node.is_none())
            .filter_map(|(id, p)| Some((p.priority, id as u32, p.nominated_node?)))
            .collect();
        waiting.sort_by_key(|&(priority, pod, _)| (std::cmp::Reverse(priority), pod));
        Self {
            waiting,
            eligible: 0,
        }
    }

    /// Before the cycle of an entity of `priority` whose pending pods are
    /// `own`.
    pub fn before(&mut self, snapshot: &mut Snapshot, priority: i32, own: &[u32]) {
        if self.waiting.is_empty() {
            return;
        }
        while self
            .waiting
            .get(self.eligible)
            .is_some_and(|&(p, ..)| p >= priority)
        {
            self.eligible += 1;
        }
        for &(_, pod, node) in &self.waiting[..self.eligible] {
            let info = &snapshot.pods[pod as usize];
            if info.pending && info.node.is_none() && !own.contains(&pod) {
                snapshot.nominate(pod, node);
            }
        }
        for &pod in own {
            let info = &snapshot.pods[pod as usize];
            if info.pending && info.nominated && info.node.is_some() {
                snapshot.remove(pod);
            }
        }
        snapshot.commit();
    }

    /// Takes every pending pod placed as nominated off its node: the
    /// carried ones, and `own`, the pods the run nominated itself (they
    /// are reported, and the next run carries them from the pods'
    /// `nominatedNodeName`). Only [`Carried::before`] and a run's own
    /// nominations place a pod as nominated, so these are all of them.
    pub fn release(&self, snapshot: &mut Snapshot, own: &[u32]) {
        let carried = self.waiting.iter().map(|&(_, pod, _)| pod);
        for pod in carried.chain(own.iter().copied()) {
            let info = &snapshot.pods[pod as usize];
            if info.pending && info.nominated && info.node.is_some() {
                snapshot.remove(pod);
            }
        }
        debug_assert!(
            snapshot
                .pods
                .iter()
                .all(|p| !(p.pending && p.nominated && p.node.is_some())),
            "a pod placed as nominated was neither carried nor the run's own"
        );
        snapshot.commit();
    }
}
