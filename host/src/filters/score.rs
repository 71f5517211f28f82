//! kube-scheduler's default node scores, for what wasched models: the
//! default profile's `Score` plugins with their weights,
//!
//! - `NodeResourcesFit` (weight 1), strategy `LeastAllocated` over cpu and
//!   memory (weights 1): the share left free once the pod is placed,
//!   counting containers that request no cpu or memory at 100m / 200Mi;
//! - `NodeResourcesBalancedAllocation` (weight 1): how evenly cpu and
//!   memory are used with the pod, against without it (real requests;
//!   skipped for pods that request neither);
//! - `TaintToleration` (weight 3): fewer untolerated `PreferNoSchedule`
//!   taints is better, normalized over the nodes scored;
//! - `NodeAffinity` (weight 2): the weights of the pod's preferred node
//!   affinity terms the node matches, normalized over the nodes scored.
//!
//! and the default profile's `PlacementScore` plugins, which rank the
//! placements a PodGroup (or CompositePodGroup) fits in:
//!
//! - `NodeResourcesFit` (weight 1), `MostAllocated` over the placement's
//!   nodes together, cpu and memory (weights 1), requests counted as for
//!   node scoring ([`placement_fit`]);
//! - `PodGroupPodsCount` (weight 1): the unit's pods scheduled there,
//!   normalized to the most any placement takes ([`pods_count`]).
//!
//! The arithmetic is upstream's (`noderesources/least_allocated.go`,
//! `balanced_allocation.go`, `tainttoleration`, `nodeaffinity`,
//! `helper.DefaultNormalizeScore`), integer where it is integer, `f64`
//! where it is `float64`, so totals equal kube-scheduler's and ties fall
//! where its ties fall. `ImageLocality`, soft `PodTopologySpread` and
//! `InterPodAffinity` scores are not modelled (see the book's
//! "Differences from kube-scheduler", `docs/src/semantics/not-modelled.md`).

use k8s_openapi::api::core::v1::Toleration;

use crate::model::{NodeId, PodId, Snapshot};

/// `framework.MaxNodeScore`.
const MAX_NODE_SCORE: i64 = 100;
/// Weights of the default profile.
const FIT_WEIGHT: i64 = 1;
const BALANCED_WEIGHT: i64 = 1;
const TAINT_WEIGHT: i64 = 3;
const AFFINITY_WEIGHT: i64 = 2;

/// The total default score of `pod` on each of `nodes` (the nodes that
/// passed the filters, over which scores are normalized); with `memo`,
/// the per-node parts that depend on the pod's shape and the node's state
/// alone are taken from it for a node whose change value is the one they
/// were worked out at ([`NodeScores`]).
pub fn default_scores(
    snapshot: &Snapshot,
    pod: PodId,
    nodes: &[NodeId],
    memo: Option<&mut NodeScores>,
) -> Vec<i64> {
    let info = &snapshot.pods[pod as usize];
    let tolerations: Vec<&Toleration> = info
        .tolerations
        .iter()
        .filter(|t| {
            matches!(
                t.effect.as_deref(),
                None | Some("") | Some("PreferNoSchedule")
            )
        })
        .collect();
    let parts = NodeParts::new(snapshot, pod, &tolerations);
    let (mut totals, taints): (Vec<i64>, Vec<i64>) = match memo {
        Some(memo) => {
            memo.hold_for(info.scoring_requests);
            let changes = snapshot.identity().node_changes();
            nodes
                .iter()
                .map(|&node| memo.parts(&parts, node, changes[node as usize]))
                .unzip()
        }
        None => nodes.iter().map(|&node| parts.of(node)).unzip(),
    };
    for (total, score) in totals.iter_mut().zip(normalize(taints, true)) {
        *total += TAINT_WEIGHT * score;
    }
    if !info.preferred_node_affinity.is_empty() {
        let affinity: Vec<i64> = nodes
            .iter()
            .map(|&n| {
                let node = &snapshot.nodes[n as usize];
                info.preferred_node_affinity
                    .iter()
                    .filter(|(weight, term)| {
                        *weight != 0 && super::node_affinity::term_matches(term, node)
                    })
                    .map(|(weight, _)| i64::from(*weight))
                    .sum()
            })
            .collect();
        for (total, score) in totals.iter_mut().zip(normalize(affinity, false)) {
            *total += AFFINITY_WEIGHT * score;
        }
    }
    totals
}

/// What one node's default score needs of a pod and the snapshot: the
/// parts of the score that depend on the pod's shape (its requests,
/// scoring requests and tolerations) and the node's state alone.
struct NodeParts<'a> {
    snapshot: &'a Snapshot,
    request: [u64; 2],
    scoring: [u64; 2],
    balanced: bool,
    allocatable: [&'a [u64]; 2],
    tolerations: &'a [&'a Toleration],
}

impl<'a> NodeParts<'a> {
    fn new(snapshot: &'a Snapshot, pod: PodId, tolerations: &'a [&'a Toleration]) -> Self {
        let info = &snapshot.pods[pod as usize];
        let request = [info.requests[0], info.requests[1]];
        Self {
            snapshot,
            request,
            scoring: info.scoring_requests,
            balanced: request != [0, 0],
            // The allocatable columns taken once: node scores are the
            // scheduling cycle's most frequent arithmetic.
            allocatable: [snapshot.allocatable(0), snapshot.allocatable(1)],
            tolerations,
        }
    }

    /// The node's weighted resource scores (`NodeResourcesFit`,
    /// `NodeResourcesBalancedAllocation`) and its untolerated
    /// `PreferNoSchedule` taints, before normalization.
    fn of(&self, node: NodeId) -> (i64, i64) {
        let capacity = self
            .allocatable
            .map(|column| column.get(node as usize).copied().unwrap_or(0));
        let used = self.snapshot.scoring_requested(node);
        let mut total = FIT_WEIGHT * least_allocated(capacity, used, self.scoring);
        if self.balanced {
            let allocated = self.snapshot.requested_without_nominated(node);
            total += BALANCED_WEIGHT * balanced_allocation(capacity, allocated, self.request);
        }
        let taints = intolerable_prefer_no_schedule(self.snapshot, self.tolerations, node);
        (total, taints)
    }
}

/// The per-node parts of the default score of one pod shape, each with
/// the node's change value
/// ([`Identity::node_changes`](crate::model::identity::Identity::node_changes))
/// it was worked out at. A node's resource scores and untolerated taints
/// depend on the pod's requests, scoring requests and tolerations and on
/// the node's state alone, and any change of the node (a pod placed or
/// taken off, the node object updated) gives it a new value; a rollback
/// puts back the value of the state it returns to. So the parts of a node
/// still at its value are those of now: the next member of a gang of one
/// template scores anew only the nodes that changed since, such as the
/// one the member before it was placed on. The shape's
/// holder keys it by the pod's requests and tolerations (its static
/// verdicts); the scoring requests are checked here.
#[derive(Debug, Clone)]
pub struct NodeScores {
    /// The scoring requests the parts were worked out for.
    scoring: [u64; 2],
    /// Per node, the change value its parts were worked out at (0: never;
    /// clock values start at 1).
    at: Vec<u64>,
    /// Per node, its weighted resource scores and untolerated
    /// `PreferNoSchedule` taints.
    parts: Vec<(i64, i64)>,
    /// Nodes whose parts were taken from here instead of worked out.
    known: u64,
}

impl NodeScores {
    /// Nothing known of `nodes` nodes.
    pub fn new(nodes: usize) -> Self {
        Self {
            scoring: [0; 2],
            at: vec![0; nodes],
            parts: vec![(0, 0); nodes],
            known: 0,
        }
    }

    /// How many nodes' parts were taken from here instead of worked out.
    pub fn known(&self) -> u64 {
        self.known
    }

    /// Forgets every node when the parts were worked out for other
    /// scoring requests.
    fn hold_for(&mut self, scoring: [u64; 2]) {
        if self.scoring != scoring {
            self.scoring = scoring;
            self.at.fill(0);
        }
    }

    /// The node's parts at change value `change`.
    #[inline]
    fn parts(&mut self, parts: &NodeParts, node: NodeId, change: u64) -> (i64, i64) {
        let n = node as usize;
        if self.at[n] == change {
            self.known += 1;
            return self.parts[n];
        }
        let worked_out = parts.of(node);
        self.at[n] = change;
        self.parts[n] = worked_out;
        worked_out
    }
}

/// `NodeResourcesFit.ScorePlacement` (`scorePlacement` with the
/// `MostAllocated` scorer): cpu and memory requested over all of
/// `nodes` (the pods being placed assumed on them, containers without
/// requests at the scoring defaults) against their allocatable, per
/// resource `min(requested, allocatable) * 100 / allocatable`, averaged
/// over the resources the nodes have.
pub fn placement_fit(snapshot: &Snapshot, nodes: &[NodeId]) -> i64 {
    let (mut score, mut weights) = (0i64, 0i64);
    for r in 0..2 {
        let (mut capacity, mut requested) = (0i64, 0i64);
        let allocatable = snapshot.allocatable(r);
        for &node in nodes {
            let a = allocatable[node as usize] as i64;
            if a == 0 {
                continue;
            }
            capacity += a;
            requested += snapshot.scoring_requested(node)[r] as i64;
        }
        if capacity == 0 {
            continue;
        }
        score += requested.min(capacity) * MAX_NODE_SCORE / capacity;
        weights += 1;
    }
    if weights == 0 { 0 } else { score / weights }
}

/// `PodGroupPodsCount` over the feasible placements of one unit: each
/// placement's count of the unit's scheduled pods (already running plus
/// placed there) times 100 over the largest count; all 0 when no placement
/// schedules a pod (upstream returns an error there; the gang rule never
/// lets such a placement through).
pub fn pods_count(counts: &[i64]) -> Vec<i64> {
    let max = counts.iter().copied().max().unwrap_or(0);
    if max <= 0 {
        return vec![0; counts.len()];
    }
    counts.iter().map(|c| c * MAX_NODE_SCORE / max).collect()
}

/// The default profile's placement scores of feasible placements given
/// each one's [`placement_fit`] and pod count: `fit + pods_count`
/// (weights 1).
pub fn default_placement_scores(fits: &[i64], counts: &[i64]) -> Vec<i64> {
    fits.iter()
        .zip(pods_count(counts))
        .map(|(fit, count)| fit + count)
        .collect()
}

/// `leastResourceScorer` over cpu and memory, weight 1 each, on a node of
/// `capacity` with `used` requested (as `NodeResourcesFit` counts them)
/// for a pod requesting `request`; resources the node has none of are
/// left out.
fn least_allocated(capacity: [u64; 2], used: [u64; 2], request: [u64; 2]) -> i64 {
    let (mut score, mut weights) = (0i64, 0i64);
    for r in 0..2 {
        let capacity = capacity[r] as i64;
        if capacity == 0 {
            continue;
        }
        let wanted = used[r].saturating_add(request[r]) as i64;
        score += if wanted > capacity {
            0
        } else {
            (capacity - wanted) * MAX_NODE_SCORE / capacity
        };
        weights += 1;
    }
    if weights == 0 { 0 } else { score / weights }
}

/// `balancedResourceScorer` on a node of `capacity` with `allocated`
/// requested (its pods not nominated) for a pod requesting `request`: the
/// balance of cpu and memory use with the pod against without it, mapped
/// to 50..=100 (75: unchanged). A node with one of the two resources, or
/// none, is balanced either way (no deviation over fewer than two).
fn balanced_allocation(capacity: [u64; 2], allocated: [u64; 2], request: [u64; 2]) -> i64 {
    let (score_with, score_without) = match capacity {
        [0, _] | [_, 0] => (MAX_NODE_SCORE, MAX_NODE_SCORE),
        _ => {
            let with = [0, 1].map(|r| (allocated[r].saturating_add(request[r]), capacity[r]));
            let without = [0, 1].map(|r| (allocated[r], capacity[r]));
            (balance(with), balance(without))
        }
    };
    MAX_NODE_SCORE / 2 + (MAX_NODE_SCORE / 2 + score_with - score_without) / 2
}

/// `balancedResourceScore` of two resources' (requested, capacity):
/// `(1 - std) * 100` of the used fractions, where the standard deviation
/// of two is half their difference.
fn balance(used: [(u64, u64); 2]) -> i64 {
    let fraction = |(requested, capacity): (u64, u64)| {
        (requested as i64 as f64 / capacity as i64 as f64).min(1.0)
    };
    let [a, b] = used.map(fraction);
    ((1.0 - ((a - b) / 2.0).abs()) * MAX_NODE_SCORE as f64) as i64
}

/// `countIntolerableTaintsPreferNoSchedule`, given the pod's tolerations
/// that apply to `PreferNoSchedule`.
fn intolerable_prefer_no_schedule(
    snapshot: &Snapshot,
    tolerations: &[&Toleration],
    node: NodeId,
) -> i64 {
    snapshot.nodes[node as usize]
        .taints
        .iter()
        .filter(|taint| taint.effect == "PreferNoSchedule")
        .filter(|taint| {
            !tolerations.iter().any(|t| {
                super::taint_toleration::tolerates(
                    t,
                    &taint.key,
                    taint.value.as_deref().unwrap_or_default(),
                    &taint.effect,
                )
            })
        })
        .count() as i64
}

/// `helper.DefaultNormalizeScore(MaxNodeScore, reverse, scores)`.
fn normalize(mut scores: Vec<i64>, reverse: bool) -> Vec<i64> {
    let max = scores.iter().copied().max().unwrap_or(0).max(0);
    if max == 0 {
        if reverse {
            scores.iter_mut().for_each(|s| *s = MAX_NODE_SCORE);
        }
        return scores;
    }
    for score in &mut scores {
        *score = MAX_NODE_SCORE * *score / max;
        if reverse {
            *score = MAX_NODE_SCORE - *score;
        }
    }
    scores
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balance_is_one_minus_half_the_difference_of_two_fractions() {
        // cpu 50%, memory 10%: std 0.2, score 80.
        assert_eq!(balance([(4000, 8000), (1, 10)]), 80);
        // Over capacity counts as full.
        assert_eq!(balance([(9, 8), (8, 8)]), 100);
    }

    #[test]
    fn balanced_allocation_compares_the_balance_with_and_without_the_pod() {
        // The pod evens the node out: cpu 25% → 50%, memory 50%; 87 → 100,
        // score 50 + (50 + 100 - 87) / 2.
        assert_eq!(balanced_allocation([8, 8], [2, 4], [2, 0]), 81);
        // It unbalances it: cpu 50% → 100%, memory 50%; 100 → 75.
        assert_eq!(balanced_allocation([8, 8], [4, 4], [4, 0]), 62);
        // One resource, or none: no deviation either way, score 75.
        assert_eq!(balanced_allocation([0, 8], [0, 4], [0, 2]), 75);
        assert_eq!(balanced_allocation([8, 0], [7, 0], [1, 0]), 75);
        assert_eq!(balanced_allocation([0, 0], [0, 0], [1, 1]), 75);
    }

    #[test]
    fn least_allocated_averages_the_free_share_over_the_resources_a_node_has() {
        // cpu (8 - 2 - 2) / 8 = 50, memory (8 - 0 - 2) / 8 = 75: 62.
        assert_eq!(least_allocated([8, 8], [2, 0], [2, 2]), 62);
        // No memory on the node: cpu alone.
        assert_eq!(least_allocated([8, 0], [2, 0], [2, 2]), 50);
        // Over capacity scores 0 for that resource.
        assert_eq!(least_allocated([8, 8], [8, 0], [1, 0]), 50);
        assert_eq!(least_allocated([0, 0], [0, 0], [1, 1]), 0);
    }

    #[test]
    fn pods_count_is_relative_to_the_largest() {
        assert_eq!(pods_count(&[2, 4, 3]), vec![50, 100, 75]);
        assert_eq!(pods_count(&[0, 0]), vec![0, 0]);
        assert_eq!(default_placement_scores(&[41, 40], &[4, 4]), vec![141, 140]);
    }

    #[test]
    fn normalize_maps_the_largest_to_100_and_reverses() {
        assert_eq!(normalize(vec![0, 1, 2], false), vec![0, 50, 100]);
        assert_eq!(normalize(vec![0, 1, 2], true), vec![100, 50, 0]);
        assert_eq!(normalize(vec![0, 0], true), vec![100, 100]);
        assert_eq!(normalize(vec![0, 0], false), vec![0, 0]);
    }

    /// 24 nodes of 2 to 5 cpu and 4 to 8 GiB, every third with a
    /// `PreferNoSchedule` taint; pods of 1 cpu and 1 GiB (one tolerating
    /// the taint), one asking for nothing (scored at the defaults), and
    /// 16 to place.
    fn scored_cluster() -> crate::model::Snapshot {
        let mut text = String::new();
        for n in 0..24 {
            let taints = match n % 3 {
                0 => "[{key: k, value: v, effect: PreferNoSchedule}]",
                _ => "[]",
            };
            text.push_str(&format!(
                "apiVersion: v1\nkind: Node\nmetadata: {{name: n{n:02}}}\nspec: {{taints: {taints}}}\nstatus: {{allocatable: {{cpu: \"{}\", memory: {}Gi}}}}\n---\n",
                n % 4 + 2,
                n % 5 + 4,
            ));
        }
        let pods = [
            ("a", "[]", "{cpu: \"1\", memory: 1Gi}"),
            (
                "b",
                "[{key: k, operator: Exists}]",
                "{cpu: \"1\", memory: 1Gi}",
            ),
            ("c", "[]", "{}"),
        ];
        let placed = (0..16).map(|p| (format!("x{p:02}"), "[]", "{cpu: 500m, memory: 2Gi}"));
        for (name, tolerations, requests) in pods
            .into_iter()
            .map(|(n, t, r)| (n.to_string(), t, r))
            .chain(placed)
        {
            text.push_str(&format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: t}}\nspec:\n  tolerations: {tolerations}\n  containers: [{{name: c, image: x, resources: {{requests: {requests}}}}}]\n---\n"
            ));
        }
        let mut manifests = crate::manifest::Manifests::default();
        crate::manifest::load_str(&mut manifests, "test.yaml", &text).unwrap();
        crate::model::Snapshot::build(&manifests).unwrap()
    }

    /// Scores with a memo of node parts equal scores worked out afresh,
    /// as pods are placed, placements rolled back, and one memo serves
    /// pods of different scoring requests in turn.
    #[test]
    fn known_node_parts_score_as_parts_worked_out_afresh() {
        let mut snapshot = scored_cluster();
        let key = |s: &crate::model::Snapshot, name: &str| {
            s.pods
                .iter()
                .position(|p| p.key == format!("t/{name}"))
                .unwrap() as PodId
        };
        let scored: Vec<PodId> = ["a", "b", "c"].map(|n| key(&snapshot, n)).to_vec();
        let placed: Vec<PodId> = (0..16)
            .map(|p| key(&snapshot, &format!("x{p:02}")))
            .collect();
        let count = snapshot.node_count();
        let all: Vec<NodeId> = (0..count as NodeId).collect();
        // One memo per scored pod, and one `a` and `c` share (one
        // tolerations, other scoring requests).
        let mut memos: Vec<NodeScores> = (0..3).map(|_| NodeScores::new(count)).collect();
        let mut shared = NodeScores::new(count);
        let mut compare = |snapshot: &crate::model::Snapshot, step: usize| {
            for (i, &pod) in scored.iter().enumerate() {
                let nodes: Vec<NodeId> = all
                    .iter()
                    .copied()
                    .filter(|n| !(*n as usize + step).is_multiple_of(5))
                    .collect();
                let fresh = default_scores(snapshot, pod, &nodes, None);
                assert_eq!(
                    default_scores(snapshot, pod, &nodes, Some(&mut memos[i])),
                    fresh,
                    "pod {i}, step {step}"
                );
                if i != 1 {
                    let memo = Some(&mut shared);
                    let scores = default_scores(snapshot, pod, &nodes, memo);
                    assert_eq!(scores, fresh, "pod {i}, step {step}, shared");
                }
            }
        };
        compare(&snapshot, 0);
        for (step, &pod) in placed.iter().enumerate() {
            let checkpoint = snapshot.checkpoint();
            snapshot.assume(pod, (step * 7 % count) as NodeId);
            compare(&snapshot, step + 1);
            if step % 3 == 2 {
                snapshot.rollback(checkpoint);
                compare(&snapshot, step + 1);
            }
        }
        let known: u64 = memos.iter().map(NodeScores::known).sum();
        assert!(known > 500, "{known} node parts known");
    }
}
