//! `WaschedTeamGpuIsolation`: keeps each team's GPU pods off the nodes
//! whose GPUs other teams use. A team is a namespace. Shared GPU nodes are
//! where one team's job slows another's (PCIe and NVLink bandwidth, host
//! memory, a noisy neighbour's restarts) and where a preemption of one
//! team hits another; scoring by how much of a node's GPUs *other* teams
//! hold packs each team onto its own nodes and onto empty ones.
//!
//! The same policy is written in Python
//! (`plugins/python/team-gpu-isolation`) and JavaScript
//! (`plugins/javascript/team-gpu-isolation`); the three components decide
//! alike (`host/tests/polyglot.rs`), so this crate is also the reference
//! the other two are held to.
//!
//! A node plugin: **off by default**, enabled in the configuration
//! (`multiPoint: {enabled: [{name: WaschedTeamGpuIsolation}]}`).
//!
//! Extension point **Score**, per candidate node, for a pod that requests
//! the resource (default `nvidia.com/gpu`):
//!
//! ```text
//! others = the resource requested on the node by pods of other namespaces
//!          (bound, or assumed earlier in the cycle)
//! score  = (allocatable - min(others, allocatable)) * 100 / allocatable
//! ```
//!
//! in integers, rounded down. A node without the resource scores 0; a pod
//! that does not request it scores 0 everywhere (it is not steered).
//!
//! Args (all optional): `resource` (default `nvidia.com/gpu`), the
//! extended resource that marks a team's pods.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde::Deserialize;
use wasched_sdk::{Cluster, Code, NodeId, Plugin, PodId, ResourceId, Status, Symbol};

/// The name this plugin registers under.
pub const NAME: &str = "WaschedTeamGpuIsolation";

/// The highest score.
pub const MAX_SCORE: u64 = 100;

/// The plugin's configuration (`args` of its configuration entry).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Args {
    /// The resource whose use marks a node as a team's (as in
    /// `status.allocatable`).
    pub resource: String,
}

impl Default for Args {
    fn default() -> Self {
        Self {
            resource: "nvidia.com/gpu".into(),
        }
    }
}

/// The score of a node with `allocatable` of the resource, of which pods
/// of other teams request `others`.
pub fn isolation_score(allocatable: u64, others: u64) -> i64 {
    if allocatable == 0 {
        return 0;
    }
    let free_of_others = allocatable - others.min(allocatable);
    // At most 100, so the conversion is exact.
    (u128::from(free_of_others) * u128::from(MAX_SCORE) / u128::from(allocatable)) as i64
}

/// Team GPU isolation (see the crate docs).
#[derive(Debug)]
pub struct TeamGpuIsolation {
    args: Args,
}

impl TeamGpuIsolation {
    /// The amount of `resource` other teams than `team` request on `node`;
    /// `teams` remembers each pod's namespace within the call.
    fn others_on(
        cluster: &impl Cluster,
        node: NodeId,
        team: Symbol,
        resource: usize,
        teams: &mut BTreeMap<PodId, Option<Symbol>>,
    ) -> u64 {
        let mut others = 0u64;
        for pod in cluster.pods_on_node(node) {
            let namespace = *teams
                .entry(pod)
                .or_insert_with(|| cluster.pod(pod).map(|info| info.namespace));
            if namespace.is_some_and(|ns| ns != team) {
                let requests = cluster.pod_requests(pod);
                others = others.saturating_add(requests.get(resource).copied().unwrap_or(0));
            }
        }
        others
    }
}

impl Plugin for TeamGpuIsolation {
    type Args = Args;
    const NAME: &'static str = NAME;

    fn new(args: Args) -> Result<Self, String> {
        if args.resource.is_empty() {
            return Err(format!("{NAME}: resource is empty"));
        }
        Ok(Self { args })
    }

    fn score(
        &mut self,
        cluster: &impl Cluster,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Result<Vec<i64>, Status> {
        let names = cluster.resource_names();
        let Some(resource) = names.iter().position(|n| *n == self.args.resource) else {
            // No node has it.
            return Ok(vec![0; nodes.len()]);
        };
        let request = cluster
            .pod_requests(pod)
            .get(resource)
            .copied()
            .unwrap_or(0);
        if request == 0 {
            return Ok(vec![0; nodes.len()]);
        }
        let Some(info) = cluster.pod(pod) else {
            return Err(Status::new(Code::Error, format!("unknown pod {pod}")));
        };
        let id = ResourceId::try_from(resource).unwrap_or(ResourceId::MAX);
        let amounts = cluster.node_resources(&[id], nodes).map_err(|e| {
            Status::new(
                Code::Error,
                format!("node-resources refused the nodes asked: {e:?}"),
            )
        })?;
        let mut teams = BTreeMap::new();
        Ok(nodes
            .iter()
            .zip(amounts.allocatable(0))
            .map(|(&node, &allocatable)| {
                if allocatable == 0 {
                    return 0;
                }
                let others = Self::others_on(cluster, node, info.namespace, resource, &mut teams);
                isolation_score(allocatable, others)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests;

wasched_sdk::register_plugin!(TeamGpuIsolation: score);
