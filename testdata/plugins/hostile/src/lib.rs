//! Test fixture `Hostile`: a plugin that implements every extension point
//! and misbehaves on demand, to prove the host's sandbox bounds.
//!
//! Args: `{"point": "<extension point>", "misbehave": "<what>"}` (both
//! default to `""`; other fields are refused). It misbehaves only at `point`
//! (a WIT interface name: `pre-enqueue`, `filter`, `score`, `permit`,
//! `placement-generate`, `placement-score`, `pod-group-post-filter`), and only
//! for bad entities: pods and PodGroups whose PodGroup name contains `bad`,
//! composites whose name contains `bad`, and at `pod-group-post-filter`
//! preemptors whose PodGroup (or composite) name contains `bad`. Other
//! entities in the same run show that the host carries on unaffected.
//! `misbehave` is one of:
//!
//! - `loop`: spin forever (CPU bound);
//! - `alloc`: allocate 1 MiB chunks forever (memory cap);
//! - `recurse`: recurse without end (stack overflow);
//! - `panic`: panic (trap);
//! - `invalid`: answer outside the contract: filter rejects an unknown node,
//!   score 1000, a generated placement with a node outside its parent,
//!   placement score 1000, `order-victims` lists the first index twice,
//!   `select-candidate` returns an index past the end (pre-enqueue and
//!   permit have no invalid answer and answer neutrally);
//! - `huge-reason`: answer with a 4 MiB reason: `unschedulable` at
//!   pre-enqueue and permit, every node rejected at filter (4 MiB per node),
//!   an `err` status at score, the placement points and post-filter;
//! - `flood-logs`: log 16 MiB per call in 64 KiB lines (the host must cap
//!   it), then answer neutrally;
//! - `work:<MiB>`: allocate and touch that many MiB and spin 1M iterations,
//!   then answer neutrally (bounds obeyed by a plugin within them);
//! - `duplicate-ids`: ask the host for the facts, label domains and
//!   resources of 16 M node ids, all the same node (64 MiB of ids; give the
//!   fixture the memory for them), then answer neutrally if the host
//!   refused each list as `unknown`, invalidly if it answered any;
//! - `host-work:<N>`: ask the host for resource 0's allocatable column N
//!   times (cheap for the guest, a copy of a whole column for the host
//!   each time), then answer neutrally;
//! - `count` (placement-score only, for every unit, bad or not): score a
//!   placement by the pods on its nodes (at most 100), so a test sees which
//!   pods the host had assumed there.
//!
//! Neutral answers: success, no rejections, zero scores, `skip` for
//! placements — except that with `point` = `placement-score` it splits the
//! parent placement in two, `left` and `right`, so that scoring happens at
//! all — the identity reprieve order, and the first preemption candidate
//! (`unschedulable` if there is none).
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde::Deserialize;
use wasched_sdk::{
    Assignment, Cluster, Code, Level, NodeId, PermitVerdict, Placement, Placements, PodGroupId,
    PodId, PreemptionCandidate, Preemptor, Progress, RejectionGroup, Status, Unit, VictimUnit,
};

/// The reason of `huge-reason`: 4 MiB.
const HUGE_REASON_BYTES: usize = 4 << 20;
/// `duplicate-ids`: this many node ids in one host call.
const DUPLICATE_IDS: usize = 16 << 20;
/// `flood-logs`: this many lines ...
const FLOOD_LINES: usize = 256;
/// ... of this many bytes (16 MiB in total).
const FLOOD_LINE_BYTES: usize = 64 << 10;

/// Where and how to misbehave.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Args {
    /// The extension point (WIT interface name) to misbehave at.
    pub point: String,
    /// What to do there (see the crate docs).
    pub misbehave: String,
}

/// The plugin.
#[derive(Debug)]
pub struct Hostile {
    args: Args,
}

/// What an extension point should answer after [`Hostile::act`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    Neutral,
    Invalid,
    HugeReason,
}

fn huge_reason() -> Status {
    Status::new(Code::Unschedulable, "x".repeat(HUGE_REASON_BYTES))
}

fn group_is_bad(cluster: &impl Cluster, group: Option<PodGroupId>) -> bool {
    group
        .and_then(|g| cluster.pod_group(g))
        .is_some_and(|g| g.name.contains("bad"))
}

fn pod_is_bad(cluster: &impl Cluster, pod: PodId) -> bool {
    group_is_bad(cluster, cluster.pod(pod).and_then(|p| p.group))
}

fn unit_is_bad(cluster: &impl Cluster, unit: Unit) -> bool {
    match unit {
        Unit::PodGroup(group) => group_is_bad(cluster, Some(group)),
        Unit::Composite(id) => cluster
            .composite(id)
            .is_some_and(|c| c.name.contains("bad")),
    }
}

fn preemptor_is_bad(cluster: &impl Cluster, preemptor: Preemptor) -> bool {
    match preemptor {
        Preemptor::Unit(unit) => unit_is_bad(cluster, unit),
        Preemptor::Pod(pod) => pod_is_bad(cluster, pod),
    }
}

#[inline(never)]
fn recurse(depth: u64, keep: &mut [u64; 64]) -> u64 {
    keep[(depth % 64) as usize] = depth;
    if core::hint::black_box(depth) == u64::MAX {
        return 0;
    }
    recurse(depth + 1, keep) + keep[0]
}

impl Hostile {
    /// Misbehaves if this is the configured point and the entity is bad;
    /// returns what the caller should answer.
    fn act(&self, cluster: &impl Cluster, point: &str, bad: bool) -> Answer {
        if self.args.point != point || !bad {
            return Answer::Neutral;
        }
        match self.args.misbehave.as_str() {
            "loop" => loop {
                core::hint::black_box(0u64);
            },
            "alloc" => loop {
                // Leaked, so the memory stays in use.
                core::hint::black_box(vec![1u8; 1 << 20].leak());
            },
            "recurse" => {
                let mut keep = [0u64; 64];
                core::hint::black_box(recurse(0, &mut keep));
                Answer::Neutral
            }
            "panic" => panic!("hostile plugin panics at {point}"),
            "invalid" => Answer::Invalid,
            "duplicate-ids" => {
                let ids = vec![0; DUPLICATE_IDS];
                let refused = cluster.nodes_facts(&ids).is_err()
                    && cluster.group_nodes_by_label(0, &ids).is_err()
                    && cluster.node_resources(&[0], &ids).is_err();
                match refused {
                    true => Answer::Neutral,
                    false => Answer::Invalid,
                }
            }
            "huge-reason" => Answer::HugeReason,
            "flood-logs" => {
                let line = "x".repeat(FLOOD_LINE_BYTES);
                for _ in 0..FLOOD_LINES {
                    wasched_sdk::log(Level::Info, &line);
                }
                Answer::Neutral
            }
            work if work.starts_with("host-work:") => {
                let calls: usize = work["host-work:".len()..].parse().unwrap_or(1);
                for _ in 0..calls {
                    core::hint::black_box(cluster.allocatable(0));
                }
                Answer::Neutral
            }
            work if work.starts_with("work:") => {
                let mib: usize = work[5..].parse().unwrap_or(1);
                let chunk = vec![7u8; mib << 20];
                let mut sum = 0u64;
                for i in 0..1_000_000u64 {
                    sum = sum.wrapping_add(i ^ u64::from(chunk[(i as usize) % chunk.len()]));
                }
                core::hint::black_box(sum);
                Answer::Neutral
            }
            _ => Answer::Neutral,
        }
    }

    /// pre-enqueue and permit: no invalid answer exists.
    fn verdict(&self, cluster: &impl Cluster, point: &str, bad: bool) -> Status {
        match self.act(cluster, point, bad) {
            Answer::HugeReason => huge_reason(),
            Answer::Neutral | Answer::Invalid => Status::success(),
        }
    }
}

impl wasched_sdk::Plugin for Hostile {
    type Args = Args;
    const NAME: &'static str = "Hostile";

    fn new(args: Args) -> Result<Self, String> {
        Ok(Self { args })
    }

    fn pre_enqueue(&mut self, cluster: &impl Cluster, unit: Unit) -> Status {
        self.verdict(cluster, "pre-enqueue", unit_is_bad(cluster, unit))
    }

    fn filter(
        &mut self,
        cluster: &impl Cluster,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Vec<RejectionGroup> {
        match self.act(cluster, "filter", pod_is_bad(cluster, pod)) {
            Answer::Neutral => Vec::new(),
            Answer::Invalid => vec![RejectionGroup {
                nodes: vec![u32::MAX],
                status: Status::new(Code::Unschedulable, "no"),
            }],
            // One group per node, each with its own 4 MiB reason.
            Answer::HugeReason => nodes
                .iter()
                .map(|&node| RejectionGroup {
                    nodes: vec![node],
                    status: huge_reason(),
                })
                .collect(),
        }
    }

    fn score(
        &mut self,
        cluster: &impl Cluster,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Result<Vec<i64>, Status> {
        match self.act(cluster, "score", pod_is_bad(cluster, pod)) {
            Answer::Neutral => Ok(vec![0; nodes.len()]),
            Answer::Invalid => Ok(vec![1000; nodes.len()]),
            Answer::HugeReason => Err(huge_reason()),
        }
    }

    fn permit(&mut self, cluster: &impl Cluster, unit: Unit, _progress: Progress) -> PermitVerdict {
        self.verdict(cluster, "permit", unit_is_bad(cluster, unit))
            .into()
    }

    fn generate_placements(
        &mut self,
        cluster: &impl Cluster,
        unit: Unit,
        parent: &Placement,
    ) -> Result<Placements, Status> {
        match self.act(cluster, "placement-generate", unit_is_bad(cluster, unit)) {
            Answer::Invalid => {
                return Ok(Placements {
                    candidates: vec![Placement {
                        name: "outside".into(),
                        nodes: vec![cluster.node_count() + 7],
                        domain: None,
                    }],
                    search_budget: None,
                    reusable: false,
                });
            }
            Answer::HugeReason => return Err(huge_reason()),
            Answer::Neutral => {}
        }
        if self.args.point == "placement-score" {
            let (left, right) = parent.nodes.split_at(parent.nodes.len() / 2);
            let half = |name: &str, nodes: &[NodeId]| Placement {
                name: name.into(),
                nodes: nodes.to_vec(),
                domain: None,
            };
            return Ok(Placements {
                candidates: vec![half("left", left), half("right", right)],
                search_budget: None,
                reusable: false,
            });
        }
        Err(Status::new(Code::Skip, ""))
    }

    fn score_placement(
        &mut self,
        cluster: &impl Cluster,
        unit: Unit,
        placement: &Placement,
        _assignments: &[Assignment],
    ) -> Result<i64, Status> {
        if self.args.point == "placement-score" && self.args.misbehave == "count" {
            let pods: usize = placement
                .nodes
                .iter()
                .map(|&node| cluster.pods_on_node(node).len())
                .sum();
            return Ok(pods.min(100) as i64);
        }
        match self.act(cluster, "placement-score", unit_is_bad(cluster, unit)) {
            Answer::Neutral => Ok(0),
            Answer::Invalid => Ok(1000),
            Answer::HugeReason => Err(huge_reason()),
        }
    }

    fn order_victims(
        &mut self,
        cluster: &impl Cluster,
        preemptor: Preemptor,
        units: &[VictimUnit],
    ) -> Result<Vec<u32>, Status> {
        let mut order: Vec<u32> = units.iter().map(|unit| unit.index).collect();
        match self.act(
            cluster,
            "pod-group-post-filter",
            preemptor_is_bad(cluster, preemptor),
        ) {
            Answer::Neutral => {}
            Answer::Invalid => {
                // The first index twice (in place of the second, if any).
                if let Some(&first) = order.first() {
                    match order.get_mut(1) {
                        Some(second) => *second = first,
                        None => order.push(first),
                    }
                }
            }
            Answer::HugeReason => return Err(huge_reason()),
        }
        Ok(order)
    }

    fn select_candidate(
        &mut self,
        cluster: &impl Cluster,
        preemptor: Preemptor,
        candidates: &[PreemptionCandidate],
    ) -> Result<u32, Status> {
        match self.act(
            cluster,
            "pod-group-post-filter",
            preemptor_is_bad(cluster, preemptor),
        ) {
            Answer::Neutral => candidates
                .first()
                .map(|candidate| candidate.index)
                .ok_or_else(|| Status::new(Code::Unschedulable, "Hostile has no candidate")),
            Answer::Invalid => Ok(u32::try_from(candidates.len()).unwrap_or(u32::MAX)),
            Answer::HugeReason => Err(huge_reason()),
        }
    }
}

wasched_sdk::register_plugin!(
    Hostile: pre_enqueue,
    filter,
    score,
    permit,
    placement_generate,
    placement_score,
    pod_group_post_filter,
);
