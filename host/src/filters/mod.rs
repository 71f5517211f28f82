//! The in-tree node checks every kube-scheduler runs, as host code, one
//! module per upstream filter plugin, in the default profile's filter
//! order: [`node_unschedulable`], [`taint_toleration`], [`node_affinity`]
//! (nodeSelector + required node affinity), [`node_resources_fit`],
//! [`pod_topology_spread`] (hard constraints), [`inter_pod_affinity`] (the
//! running pods' required anti-affinity; a pending pod's own inter-pod
//! terms are not modelled). A node fails at its first failing check, and
//! the reasons use upstream's wording so that diagnoses read like
//! `0/12 nodes are available: 8 Insufficient cpu, ...`. This module runs
//! them in that order ([`check`]), split into the checks that read only
//! the pod's spec and the node ([`static_check`], cached per pod
//! signature by [`StaticVerdicts`]) and those that change as pods are
//! placed ([`dynamic_check`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::{NodeId, PodId, PodInfo, Snapshot};

mod checks;
pub mod inter_pod_affinity;
pub mod node_affinity;
pub mod node_resources_fit;
pub mod node_unschedulable;
pub mod pod_topology_spread;
mod rejectors;
mod score;
#[cfg(test)]
mod table;
pub mod taint_toleration;
mod wordings;
pub use checks::NodeChecks;
pub use inter_pod_affinity::{AntiAffinityState, pod_term_selects};
pub use pod_topology_spread::SpreadState;
pub use rejectors::{InTree, Rejectors};
pub use score::{NodeScores, default_placement_scores, default_scores, placement_fit, pods_count};
pub use wordings::Wordings;

/// Why one node cannot host a pod: the first failing check, in a form that
/// costs nothing to record (no strings); [`Diagnosis::render`] words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rejection {
    /// `spec.unschedulable` and no toleration for it.
    Unschedulable,
    /// An untolerated `NoSchedule`/`NoExecute` taint: its id in
    /// [`Snapshot::taint_texts`].
    Taint(u32),
    /// `nodeSelector` or required node affinity does not match.
    NodeAffinity,
    /// Resource columns (bit `r` = column `r`) where the pod does not fit.
    Resources(u128),
    /// The node lacks a topology key of the pod's spread constraints.
    SpreadMissingLabel,
    /// Placing the pod here would exceed a spread constraint's `maxSkew`.
    Spread,
    /// A pod running in the node's topology domain has a required
    /// anti-affinity term the pod matches.
    ExistingAntiAffinity,
}

impl Rejection {
    /// The in-tree filter plugin that rejects for this reason.
    pub fn plugin(self) -> InTree {
        match self {
            Rejection::Unschedulable => InTree::NodeUnschedulable,
            Rejection::Taint(_) => InTree::TaintToleration,
            Rejection::NodeAffinity => InTree::NodeAffinity,
            Rejection::Resources(_) => InTree::NodeResourcesFit,
            Rejection::SpreadMissingLabel | Rejection::Spread => InTree::PodTopologySpread,
            Rejection::ExistingAntiAffinity => InTree::InterPodAffinity,
        }
    }
}

/// Why nodes were rejected, counted per reason over `total` nodes
/// (kube-scheduler's `FitError`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Diagnosis {
    /// Nodes considered.
    pub total: usize,
    /// Native rejections → how many nodes gave them (few distinct values).
    rejections: Vec<(Rejection, usize)>,
    /// Reasons given as text (filter plugins) → how many nodes gave them.
    texts: BTreeMap<String, usize>,
    /// The filter plugins that gave reasons, sorted.
    plugins: Vec<String>,
}

impl Diagnosis {
    /// An empty diagnosis over `total` nodes.
    pub fn over(total: usize) -> Self {
        Self {
            total,
            ..Self::default()
        }
    }

    /// Counts one node rejected by a native check.
    #[inline]
    pub fn reject(&mut self, rejection: Rejection) {
        // Neighbouring nodes mostly fail alike: the latest reason first.
        match self.rejections.last_mut() {
            Some((last, n)) if *last == rejection => *n += 1,
            _ => self.reject_many(rejection, 1),
        }
    }

    /// Counts `nodes` nodes rejected by a native check for one reason.
    #[cold]
    pub fn reject_many(&mut self, rejection: Rejection, nodes: usize) {
        // It becomes the latest (the order of reasons means nothing).
        match self.rejections.iter().position(|(r, _)| *r == rejection) {
            Some(at) => {
                let (_, n) = self.rejections.remove(at);
                self.rejections.push((rejection, n + nodes));
            }
            None => self.rejections.push((rejection, nodes)),
        }
    }

    /// Counts one node rejected for a reason given as text.
    pub fn add(&mut self, reason: impl Into<String>) {
        self.add_many(reason, 1);
    }

    /// Counts `nodes` nodes rejected for one reason given as text.
    pub fn add_many(&mut self, reason: impl Into<String>, nodes: usize) {
        *self.texts.entry(reason.into()).or_default() += nodes;
    }

    /// Counts `nodes` nodes the filter plugin `plugin` rejected for
    /// `reason`.
    pub fn reject_by(&mut self, plugin: &str, reason: impl Into<String>, nodes: usize) {
        self.add_many(reason, nodes);
        if let Err(at) = self.plugins.binary_search_by(|p| p.as_str().cmp(plugin)) {
            self.plugins.insert(at, plugin.to_string());
        }
    }

    /// The plugins that rejected a node (kube-scheduler's
    /// `UnschedulablePlugins` of the pod).
    pub fn rejectors(&self) -> Rejectors {
        let mut rejectors = Rejectors::default();
        for &(rejection, _) in &self.rejections {
            rejectors.add_in_tree(rejection.plugin());
        }
        for plugin in &self.plugins {
            rejectors.add_component(plugin);
        }
        rejectors
    }

    /// Whether every rejection counted depends on its node alone (and the
    /// pod): no topology spread or inter-pod affinity rejection, no
    /// plugin's reason.
    pub fn node_local(&self) -> bool {
        self.texts.is_empty()
            && self.rejections.iter().all(|(r, _)| {
                matches!(
                    r,
                    Rejection::Unschedulable
                        | Rejection::Taint(_)
                        | Rejection::NodeAffinity
                        | Rejection::Resources(_)
                )
            })
    }

    /// `0/12 nodes are available: 8 Insufficient cpu, 4 node(s) had untolerated taint(s).`
    /// (upstream's wording; `count reason` pairs sorted as text).
    pub fn render(&self, snapshot: &Snapshot) -> String {
        let mut reasons = self.texts.clone();
        for &(rejection, n) in &self.rejections {
            let mut count = |text: String| *reasons.entry(text).or_default() += n;
            match rejection {
                Rejection::Unschedulable => count("node(s) were unschedulable".into()),
                Rejection::Taint(id) => count(
                    snapshot
                        .taint_texts
                        .text(id)
                        .unwrap_or_default()
                        .to_string(),
                ),
                Rejection::NodeAffinity => {
                    count("node(s) didn't match Pod's node affinity/selector".into())
                }
                Rejection::Resources(mask) => {
                    let short = snapshot
                        .resource_names
                        .iter()
                        .enumerate()
                        .filter(|&(r, _)| mask >> r & 1 == 1);
                    for (_, name) in short {
                        count(if name == "pods" {
                            "Too many pods".into()
                        } else {
                            format!("Insufficient {name}")
                        });
                    }
                }
                Rejection::SpreadMissingLabel => count(
                    "node(s) didn't match pod topology spread constraints (missing required label)"
                        .into(),
                ),
                Rejection::Spread => {
                    count("node(s) didn't match pod topology spread constraints".into())
                }
                Rejection::ExistingAntiAffinity => {
                    count("node(s) didn't satisfy existing pods anti-affinity rules".into())
                }
            }
        }
        let mut parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
        parts.sort();
        let mut text = format!("0/{} nodes are available", self.total);
        if !parts.is_empty() {
            text.push_str(": ");
            text.push_str(&parts.join(", "));
        }
        text.push('.');
        text
    }
}

/// What the checks that change as pods are placed compute once per pod
/// and placement (upstream's PreFilter state).
#[derive(Debug, Default)]
pub struct PreFilter {
    spread: SpreadState,
    anti_affinity: AntiAffinityState,
}

impl PreFilter {
    /// Whether no node can fail these checks: the pod has no hard spread
    /// constraint and no running pod's anti-affinity forbids it a domain.
    pub fn is_empty(&self) -> bool {
        self.spread.is_empty() && self.anti_affinity.is_empty()
    }

    /// [`SpreadState::for_pod`] and [`AntiAffinityState::for_pod`].
    pub fn for_pod(snapshot: &Snapshot, pod: PodId) -> Self {
        Self {
            spread: SpreadState::for_pod(snapshot, pod),
            anti_affinity: AntiAffinityState::for_pod(snapshot, pod),
        }
    }
}

/// Runs all checks of `pod` against `node`; `Err` holds the reasons of the
/// first failing check (resource fit can give several). `state` is
/// [`PreFilter::for_pod`] of the same pod and snapshot state.
pub fn check(
    snapshot: &Snapshot,
    pod: PodId,
    node: NodeId,
    state: &PreFilter,
) -> Result<(), Rejection> {
    static_check(snapshot, pod, node)?;
    dynamic_check(snapshot, pod, node, state)
}

/// The checks whose answer cannot change during a run, because they read
/// only the pod's spec and the node (`NodeUnschedulable`, `TaintToleration`,
/// `NodeAffinity`): the same for every pod with the same
/// [`static_signature`].
pub fn static_check(snapshot: &Snapshot, pod: PodId, node: NodeId) -> Result<(), Rejection> {
    verdict(static_code(snapshot, pod, node))
}

/// [`static_check`] as a number: [`PASS`], [`UNSCHEDULABLE`], [`AFFINITY`],
/// or [`TAINT`] plus the taint text's id.
fn static_code(snapshot: &Snapshot, pod: PodId, node: NodeId) -> u32 {
    let code = taint_code(snapshot, pod, node);
    if code != PASS {
        return code;
    }
    if node_affinity::filter(snapshot, pod, node).is_err() {
        return AFFINITY;
    }
    PASS
}

/// `NodeUnschedulable` then `TaintToleration` alone (what the
/// `WaschedTaintToleration` component reproduces).
pub fn taint_check(snapshot: &Snapshot, pod: PodId, node: NodeId) -> Result<(), Rejection> {
    verdict(taint_code(snapshot, pod, node))
}

fn taint_code(snapshot: &Snapshot, pod: PodId, node: NodeId) -> u32 {
    if node_unschedulable::filter(snapshot, pod, node).is_err() {
        return UNSCHEDULABLE;
    }
    match taint_toleration::filter(snapshot, pod, node) {
        Err(Rejection::Taint(text)) => TAINT + text,
        _ => PASS,
    }
}

fn verdict(code: u32) -> Result<(), Rejection> {
    match code {
        PASS => Ok(()),
        UNSCHEDULABLE => Err(Rejection::Unschedulable),
        AFFINITY => Err(Rejection::NodeAffinity),
        taint => Err(Rejection::Taint(taint - TAINT)),
    }
}

/// The checks that change as pods are placed: `NodeResourcesFit`,
/// `PodTopologySpread`, `InterPodAffinity` (existing pods' anti-affinity).
pub fn dynamic_check(
    snapshot: &Snapshot,
    pod: PodId,
    node: NodeId,
    state: &PreFilter,
) -> Result<(), Rejection> {
    node_resources_fit::filter(snapshot, pod, node)?;
    let node = &snapshot.nodes[node as usize];
    state.spread.check(node)?;
    state.anti_affinity.check(node)
}

/// What [`static_check`] reads of a pod, as one comparable text: pods of
/// one template (the members of a gang) share it (compare upstream's pod
/// scheduling signatures, KEP-5598).
/// Worked out once per pod ([`PodInfo::signature`]).
pub fn static_signature(pod: &PodInfo) -> Arc<str> {
    pod.signature.get_or_init(|| {
        serde_json::to_string(&(
            &*pod.tolerations,
            &*pod.node_selector,
            pod.required_node_affinity.as_deref(),
        ))
        .expect("k8s types serialise")
    })
}

/// [`static_check`] of one pod signature over every node, compactly, with
/// the nodes that pass and the others' rejections counted (what a walk of
/// every node needs without visiting the nodes no placement changes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticVerdicts {
    /// Each node's verdict code.
    codes: Vec<u32>,
    /// The nodes every static check passes, ascending.
    passing: Vec<NodeId>,
    /// The other nodes' rejections, each with how many nodes gave it.
    rejected: Vec<(Rejection, usize)>,
}

const PASS: u32 = 0;
const UNSCHEDULABLE: u32 = 1;
const AFFINITY: u32 = 2;
const TAINT: u32 = 3;

impl StaticVerdicts {
    /// Evaluates [`static_check`] of `pod` on every node, in chunks of
    /// nodes on the worker threads; the verdicts do not depend on how.
    pub fn of(snapshot: &Snapshot, pod: PodId) -> Self {
        use rayon::prelude::*;
        /// Nodes per task: enough work to outweigh handing it over.
        const CHUNK: usize = 512;
        Self::from_codes(
            (0..snapshot.node_count() as NodeId)
                .into_par_iter()
                .with_min_len(CHUNK)
                .map(|node| static_code(snapshot, pod, node))
                .collect(),
        )
    }

    /// Verdicts from their codes, node by node.
    pub(crate) fn from_codes(codes: Vec<u32>) -> Self {
        let mut passing = Vec::new();
        let mut rejected = Diagnosis::default();
        for (node, &code) in codes.iter().enumerate() {
            match verdict(code) {
                Ok(()) => passing.push(node as NodeId),
                Err(rejection) => rejected.reject(rejection),
            }
        }
        Self {
            codes,
            passing,
            rejected: rejected.rejections,
        }
    }

    /// The verdict on `node`.
    pub fn get(&self, node: NodeId) -> Result<(), Rejection> {
        verdict(self.codes[node as usize])
    }

    /// Each node's verdict code (`verdict` reads it).
    pub(crate) fn codes(&self) -> &[u32] {
        &self.codes
    }

    /// The nodes every static check passes, ascending.
    pub fn passing(&self) -> &[NodeId] {
        &self.passing
    }

    /// Counts the rejection of every node that fails a static check in
    /// `diagnosis`.
    pub fn reject_failing(&self, diagnosis: &mut Diagnosis) {
        for &(rejection, nodes) in &self.rejected {
            diagnosis.reject_many(rejection, nodes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::taint_text;
    use k8s_openapi::api::core::v1::Taint;

    #[test]
    fn diagnosis_reads_like_kube_scheduler() {
        let mut snapshot = Snapshot::default();
        snapshot.resource_names =
            std::sync::Arc::new(vec!["cpu".into(), "memory".into(), "pods".into()]);
        let gpu = Taint {
            key: "gpu".into(),
            value: Some("true".into()),
            effect: "NoSchedule".into(),
            ..Default::default()
        };
        let gpu_taint =
            std::sync::Arc::make_mut(&mut snapshot.taint_texts).intern(&taint_text(&gpu));
        let mut d = Diagnosis::over(12);
        for _ in 0..6 {
            d.reject(Rejection::Resources(0b001));
        }
        for _ in 0..2 {
            d.reject(Rejection::Resources(0b101));
        }
        for _ in 0..3 {
            d.reject(Rejection::Taint(gpu_taint));
        }
        d.add("plugin says no");
        assert_eq!(
            d.render(&snapshot),
            "0/12 nodes are available: 1 plugin says no, 2 Too many pods, 3 node(s) had untolerated taint(s), 8 Insufficient cpu."
        );
    }

    #[test]
    fn static_verdicts_equal_the_checks_they_cache() {
        let snapshot = crate::read_snapshot(&[]).unwrap();
        for pod in 0..snapshot.pods.len() as PodId {
            let verdicts = StaticVerdicts::of(&snapshot, pod);
            for node in 0..snapshot.node_count() as NodeId {
                assert_eq!(
                    verdicts.get(node),
                    static_check(&snapshot, pod, node),
                    "pod {pod} node {node}"
                );
            }
        }
        // Pods of one gang share a signature; different specs do not.
        let key = |name: &str| {
            let pod = snapshot.pods.iter().find(|p| p.key == name).unwrap();
            static_signature(pod)
        };
        assert_eq!(
            key("ml-training/llama-pretrain-worker-0"),
            key("ml-training/llama-pretrain-worker-1")
        );
        assert_ne!(
            key("ml-training/llama-pretrain-worker-0"),
            key("notebooks/jupyter-alice")
        );
    }
}
