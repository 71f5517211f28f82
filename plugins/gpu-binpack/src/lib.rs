//! `GpuBinPacking`: GPU bin-packing for single pods, kube-scheduler's
//! `NodeResourcesFit` `MostAllocated` scoring strategy over chosen
//! resources — what GPU clusters configure instead of the default
//! `LeastAllocated`, so that GPU pods fill partly used nodes and whole nodes
//! stay free for large jobs.
//!
//! Upstream, choosing `MostAllocated` replaces `LeastAllocated`; here the
//! host keeps its own `LeastAllocated` score of cpu and memory and adds this
//! one (score plugins sum). For GPU pods the GPU term decides between nodes
//! that differ in GPU use; give GPUs a weight and leave cpu and memory out
//! of `resources` to keep the host's spreading of cpu and memory.
//!
//! A node plugin (world `node-plugin`): it is **off by default** and enabled
//! in the configuration (`multiPoint: {enabled: [{name: WaschedGpuBinPacking}]}`).
//!
//! Extension points:
//!
//! - **Score**: per node, `MostAllocated` ([`most_allocated_over`], column
//!   by column over the candidates): for each configured resource, the
//!   share of its allocatable amount that would be requested once the pod
//!   is placed, weighted by the resource's weight (upstream
//!   `mostResourceScorer`). A resource the node does not have is left out;
//!   an extended resource (anything but `cpu` and `memory`) the pod does
//!   not request is left out too (upstream: "bypass scoring on this
//!   resource"), so pods without GPUs are not steered by GPU usage.
//! - **Filter** (only with `reserveForRequesters: true`): a pod that
//!   requests none of the configured extended resources is kept off nodes
//!   that have any of them, so GPU nodes stay for GPU pods
//!   (`UnschedulableAndUnresolvable`: no eviction changes it).
//!
//! Args (all optional):
//!
//! | field | default | meaning |
//! |---|---|---|
//! | `resources` | `[{name: nvidia.com/gpu, weight: 1}]` | resources to pack and their weights (`1 ..= 100`), as upstream's `scoringStrategy.resources` |
//! | `reserveForRequesters` | `false` | filter pods that request none of the configured extended resources off nodes that have them |
//!
//! Requests are taken as declared: upstream's non-zero defaults for pods
//! without cpu or memory requests (100m, 200Mi) are not applied.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde::Deserialize;
use wasched_sdk::scoring::{ResourceColumns, most_allocated_over};
use wasched_sdk::{Cluster, Code, NodeId, Plugin, PodId, RejectionGroup, ResourceId, Status};

/// The name this plugin registers under (`Wasched`-prefixed, so that it
/// cannot collide with a kube-scheduler in-tree plugin; `wasched config
/// migrate` renames the old name `GpuBinPacking`).
pub const NAME: &str = "WaschedGpuBinPacking";

/// The resources that are not "scalar" upstream (`IsScalarResourceName`):
/// always scored when configured, requested or not.
const BASE_RESOURCES: [&str; 3] = ["cpu", "memory", "ephemeral-storage"];

/// Upstream's bound on a resource's weight in a scoring strategy.
pub const MAX_WEIGHT: u64 = 100;

/// One resource to pack (`scoringStrategy.resources[]`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceSpec {
    /// The resource name as in `status.allocatable` (`nvidia.com/gpu`).
    pub name: String,
    /// Its weight, `1 ..= 100`. Default 1.
    #[serde(default = "one")]
    pub weight: u64,
}

fn one() -> u64 {
    1
}

/// The plugin's configuration (`args` of its configuration entry).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Args {
    /// Resources to pack and their weights.
    pub resources: Vec<ResourceSpec>,
    /// Keep pods requesting none of the configured extended resources off
    /// nodes that have them.
    pub reserve_for_requesters: bool,
}

impl Default for Args {
    fn default() -> Self {
        Self {
            resources: vec![ResourceSpec {
                name: "nvidia.com/gpu".into(),
                weight: 1,
            }],
            reserve_for_requesters: false,
        }
    }
}

impl Args {
    /// Checks the args: at least one resource, each named once with a
    /// non-empty name and a weight in `1 ..= 100` (as upstream validates).
    pub fn validate(&self) -> Result<(), String> {
        if self.resources.is_empty() {
            return Err(format!("{NAME}: resources is empty; name at least one"));
        }
        for (i, spec) in self.resources.iter().enumerate() {
            if spec.name.is_empty() {
                return Err(format!("{NAME}: resources[{i}].name is empty"));
            }
            if !(1..=MAX_WEIGHT).contains(&spec.weight) {
                return Err(format!(
                    "{NAME}: resources[{i}].weight must be in 1..={MAX_WEIGHT}, got {}",
                    spec.weight
                ));
            }
            if self.resources[..i].iter().any(|s| s.name == spec.name) {
                return Err(format!(
                    "{NAME}: resources[{i}]: {} is listed twice",
                    spec.name
                ));
            }
        }
        Ok(())
    }
}

/// Whether a resource is scalar upstream (extended resources, hugepages,
/// ...): scored only for pods that request it.
pub fn is_extended(name: &str) -> bool {
    !BASE_RESOURCES.contains(&name)
}

/// One configured resource resolved against a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column<'a> {
    /// The resource's name.
    pub name: &'a str,
    /// The resource's id in the snapshot.
    pub id: ResourceId,
    /// Its weight.
    pub weight: u64,
    /// Whether it is an extended resource.
    pub extended: bool,
}

/// The configured resources present in the snapshot (`names` is
/// [`Cluster::resource_names`]), in configuration order; resources the
/// snapshot does not know are left out (no node has them).
pub fn resolve<'a>(resources: &'a [ResourceSpec], names: &[String]) -> Vec<Column<'a>> {
    resources
        .iter()
        .filter_map(|spec| {
            let id = names.iter().position(|n| n == &spec.name)?;
            Some(Column {
                name: &spec.name,
                id: ResourceId::try_from(id).ok()?,
                weight: spec.weight,
                extended: is_extended(&spec.name),
            })
        })
        .collect()
}

/// GPU bin-packing (see the crate docs).
#[derive(Debug)]
pub struct GpuBinPacking {
    args: Args,
}

impl GpuBinPacking {
    /// The configured resources in the snapshot, with the pod's requests.
    fn columns(&self, cluster: &impl Cluster, pod: PodId) -> (Vec<Column<'_>>, Vec<u64>) {
        let columns = resolve(&self.args.resources, &cluster.resource_names());
        (columns, cluster.pod_requests(pod))
    }
}

impl Plugin for GpuBinPacking {
    type Args = Args;
    const NAME: &'static str = NAME;

    fn new(args: Args) -> Result<Self, String> {
        args.validate()?;
        Ok(Self { args })
    }

    fn filter(
        &mut self,
        cluster: &impl Cluster,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Vec<RejectionGroup> {
        if !self.args.reserve_for_requesters {
            return Vec::new();
        }
        let (columns, requests) = self.columns(cluster, pod);
        let extended: Vec<&Column> = columns.iter().filter(|c| c.extended).collect();
        let requests_any = extended
            .iter()
            .any(|c| requests.get(c.id as usize).copied().unwrap_or(0) > 0);
        if requests_any || extended.is_empty() {
            return Vec::new();
        }
        // One group per reserved resource: a node goes to the first
        // resource it has.
        let ids: Vec<ResourceId> = extended.iter().map(|c| c.id).collect();
        let Ok(amounts) = cluster.node_resources(&ids, nodes) else {
            // The host hands only nodes of the snapshot; nothing to judge.
            return Vec::new();
        };
        let mut groups: Vec<RejectionGroup> = extended
            .iter()
            .map(|c| RejectionGroup {
                status: Status::new(
                    Code::UnschedulableAndUnresolvable,
                    format!("node(s) had {} reserved for pods that request it", c.name),
                ),
                nodes: Vec::new(),
            })
            .collect();
        // Resource by resource, the nodes that have it and no earlier one,
        // gathered without a branch per node: every node is written at the
        // end of the list, which grows past the ones taken.
        let mut left = vec![true; nodes.len()];
        for (r, group) in groups.iter_mut().enumerate() {
            let mut taken = vec![0; nodes.len()];
            let mut count = 0;
            let column = amounts.allocatable(r);
            for ((&node, &amount), left) in nodes.iter().zip(column).zip(&mut left) {
                let take = *left && amount > 0;
                if let Some(slot) = taken.get_mut(count) {
                    *slot = node;
                }
                count += usize::from(take);
                *left &= !take;
            }
            taken.truncate(count);
            group.nodes = taken;
        }
        groups.retain(|g| !g.nodes.is_empty());
        groups
    }

    fn score(
        &mut self,
        cluster: &impl Cluster,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Result<Vec<i64>, Status> {
        let (columns, requests) = self.columns(cluster, pod);
        // The resources that count: every configured one the pod requests,
        // and the plain ones (cpu, memory) even when it does not.
        let counted: Vec<(&Column, u64)> = columns
            .iter()
            .filter_map(|c| {
                let request = requests.get(c.id as usize).copied().unwrap_or(0);
                (!c.extended || request > 0).then_some((c, request))
            })
            .collect();
        if counted.is_empty() {
            return Ok(vec![0; nodes.len()]);
        }
        // Only these nodes' amounts, one block per call.
        let ids: Vec<ResourceId> = counted.iter().map(|(c, _)| c.id).collect();
        let amounts = cluster.node_resources(&ids, nodes).map_err(|e| {
            Status::new(
                Code::Error,
                format!("node-resources refused the nodes asked: {e:?}"),
            )
        })?;
        let columns: Vec<ResourceColumns<'_>> = counted
            .iter()
            .enumerate()
            .map(|(i, &(c, request))| ResourceColumns {
                request,
                requested: amounts.requested(i),
                allocatable: amounts.allocatable(i),
                weight: c.weight,
            })
            .collect();
        // The amounts are indexed by position in `nodes`; scores are at
        // most `MAX_SCORE`, so they convert exactly.
        Ok(most_allocated_over(&columns, nodes.len())
            .into_iter()
            .map(|score| score as i64)
            .collect())
    }
}

#[cfg(test)]
mod tests;

wasched_sdk::register_plugin!(GpuBinPacking: filter, score);
