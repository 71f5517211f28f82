//! `WaschedTaintToleration`: kube-scheduler v1.37's `NodeUnschedulable` and
//! `TaintToleration` filters as a component, over contract 0.3.0's
//! `nodes-facts` and `pod-facts`.
//!
//! It exists to show that a filter plugin can reproduce kube-scheduler's
//! own per-node checks from the contract's view, and as a model for
//! policy filters that read taints and tolerations. The host applies the
//! same checks natively before any filter plugin, so the plugin is off by
//! default (`multiPoint.enabled` turns it on) and, on the nodes that reach it,
//! rejects nothing the host did not; `host/tests/taint_toleration.rs`
//! holds it to the host's native check on every scenario, pod and node.
//!
//! Rules (upstream's `nodeunschedulable` and `tainttoleration` plugins):
//!
//! - a node with `spec.unschedulable` rejects a pod that does not tolerate
//!   `node.kubernetes.io/unschedulable:NoSchedule`:
//!   `node(s) were unschedulable` (UnschedulableAndUnresolvable);
//! - else the first `NoSchedule` or `NoExecute` taint no toleration
//!   tolerates rejects it: `node(s) had untolerated taint(s)`, as
//!   kube-scheduler v1.37 words it (UnschedulableAndUnresolvable);
//!   `PreferNoSchedule` taints never do;
//! - a toleration tolerates a taint when its effect is empty or equal, its
//!   key is empty or equal, and its operator is `Exists`, or `Equal` with an
//!   equal value (`Toleration.ToleratesTaint`).
//!
//! No args.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;
use wasched_sdk::{
    Cluster, Code, NoArgs, NodeFacts, NodeId, Plugin, PodId, RejectionGroup, Rejections, Taint,
    TaintEffect, Toleration, TolerationOperator,
};

/// The name this plugin registers under (`Wasched`-prefixed: it cannot
/// collide with kube-scheduler's in-tree `TaintToleration`).
pub const NAME: &str = "WaschedTaintToleration";

/// The taint a cordoned node is treated as having.
pub const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// `Toleration.ToleratesTaint`.
pub fn tolerates(toleration: &Toleration, key: &str, value: &str, effect: TaintEffect) -> bool {
    if toleration.effect.is_some_and(|e| e != effect) {
        return false;
    }
    if !toleration.key.is_empty() && toleration.key != key {
        return false;
    }
    match toleration.operator {
        TolerationOperator::Exists => true,
        TolerationOperator::Equal => toleration.value == value,
    }
}

/// The first `NoSchedule`/`NoExecute` taint of `taints` that no toleration
/// tolerates.
pub fn untolerated<'t>(taints: &'t [Taint], tolerations: &[Toleration]) -> Option<&'t Taint> {
    taints.iter().find(|taint| {
        matches!(
            taint.effect,
            TaintEffect::NoSchedule | TaintEffect::NoExecute
        ) && !tolerations
            .iter()
            .any(|t| tolerates(t, &taint.key, &taint.value, taint.effect))
    })
}

/// Why `node` cannot host a pod with `tolerations`, in upstream's words;
/// `None` if it can.
pub fn rejection(node: &NodeFacts, tolerations: &[Toleration]) -> Option<String> {
    if node.unschedulable
        && !tolerations
            .iter()
            .any(|t| tolerates(t, UNSCHEDULABLE_TAINT, "", TaintEffect::NoSchedule))
    {
        return Some("node(s) were unschedulable".into());
    }
    untolerated(&node.taints, tolerations).map(|_| "node(s) had untolerated taint(s)".into())
}

/// The plugin: stateless, no args.
#[derive(Debug, Default)]
pub struct TaintToleration;

impl Plugin for TaintToleration {
    type Args = NoArgs;
    const NAME: &'static str = NAME;

    fn new(_args: NoArgs) -> Result<Self, String> {
        Ok(Self)
    }

    fn filter(
        &mut self,
        cluster: &impl Cluster,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Vec<RejectionGroup> {
        let mut rejections = Rejections::new();
        let Ok(facts) = cluster.pod_facts(pod) else {
            return rejections.into_groups();
        };
        let Ok(nodes_facts) = cluster.nodes_facts(nodes) else {
            return rejections.into_groups();
        };
        for (&node, facts_of_node) in nodes.iter().zip(&nodes_facts) {
            if let Some(reason) = rejection(facts_of_node, &facts.tolerations) {
                rejections.reject(node, Code::UnschedulableAndUnresolvable, &reason);
            }
        }
        rejections.into_groups()
    }
}

wasched_sdk::register_plugin!(TaintToleration: filter);

#[cfg(test)]
mod tests;
