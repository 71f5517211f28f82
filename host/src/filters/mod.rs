//! The per-node checks every kube-scheduler runs, as native host code, in
//! the default profile's filter order: `NodeUnschedulable`,
//! `TaintToleration`, `NodeAffinity` (nodeSelector + required node affinity),
//! `NodeResourcesFit`, `PodTopologySpread` (hard constraints),
//! `InterPodAffinity` (the running pods' required anti-affinity; a pending
//! pod's own inter-pod terms are not modelled). A node fails at its first failing check, and the
//! reasons use upstream's wording so that diagnoses read like
//! `0/12 nodes are available: 8 Insufficient cpu, ...`.

use std::collections::BTreeMap;

use std::collections::HashMap;

use k8s_openapi::api::core::v1::{
    NodeSelectorRequirement, NodeSelectorTerm, PodAffinityTerm, Taint, Toleration,
};

use crate::model::{NodeId, NodeInfo, PodId, PodInfo, Snapshot, label_selector_matches};

mod checks;
mod score;
mod wordings;
pub use checks::NodeChecks;
pub use score::{default_placement_scores, default_scores, placement_fit, pods_count};
pub use wordings::Wordings;

const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

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

    /// `0/12 nodes are available: 8 Insufficient cpu, 4 node(s) had untolerated taint {k: v}.`
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

/// Per-domain counts of the pods a pod's hard topology spread constraints
/// select, taken once per placement of that pod (`PodTopologySpread`'s
/// PreFilter state).
#[derive(Debug, Default)]
pub struct SpreadState {
    constraints: Vec<SpreadCounts>,
}

#[derive(Debug)]
struct SpreadCounts {
    key: String,
    max_skew: i64,
    counts: HashMap<String, i64>,
    min: i64,
    self_match: i64,
}

impl SpreadState {
    /// Per constraint, the matching pods per domain, sorted by domain
    /// (what the constraint checks against; for tests and diagnostics).
    pub fn domain_counts(&self) -> Vec<Vec<(String, i64)>> {
        self.constraints
            .iter()
            .map(|c| {
                let mut counts: Vec<(String, i64)> =
                    c.counts.iter().map(|(d, n)| (d.clone(), *n)).collect();
                counts.sort();
                counts
            })
            .collect()
    }

    /// Counts, for each constraint of `pod`, the matching pods (same
    /// namespace, selected by the constraint's label selector) in every domain
    /// of its topology key over the nodes the pod's node affinity allows.
    pub fn for_pod(snapshot: &Snapshot, pod: PodId) -> Self {
        let info = &snapshot.pods[pod as usize];
        let constraints = info
            .spread
            .iter()
            .map(|c| {
                let selects = |p: &PodInfo| {
                    p.namespace == info.namespace
                        && c.label_selector
                            .as_ref()
                            .is_some_and(|s| label_selector_matches(s, &p.labels))
                };
                let mut counts: HashMap<String, i64> = HashMap::new();
                for (n, node) in snapshot.nodes.iter().enumerate() {
                    let Some(domain) = node.labels.get(&c.topology_key) else {
                        continue;
                    };
                    if !matches_node_affinity(info, node) {
                        continue;
                    }
                    let matching = snapshot
                        .pods_on_node(n as NodeId)
                        .iter()
                        .filter(|&&p| p != pod && selects(&snapshot.pods[p as usize]))
                        .count() as i64;
                    *counts.entry(domain.clone()).or_default() += matching;
                }
                let too_few_domains = (counts.len() as i64) < i64::from(c.min_domains.unwrap_or(1));
                let min = if too_few_domains {
                    0
                } else {
                    counts.values().copied().min().unwrap_or(0)
                };
                SpreadCounts {
                    key: c.topology_key.clone(),
                    max_skew: i64::from(c.max_skew),
                    counts,
                    min,
                    self_match: i64::from(selects(info)),
                }
            })
            .collect();
        Self { constraints }
    }

    fn check(&self, node: &NodeInfo) -> Result<(), Rejection> {
        for c in &self.constraints {
            let Some(domain) = node.labels.get(&c.key) else {
                return Err(Rejection::SpreadMissingLabel);
            };
            let count = c.counts.get(domain).copied().unwrap_or(0);
            if count + c.self_match - c.min > c.max_skew {
                return Err(Rejection::Spread);
            }
        }
        Ok(())
    }
}

/// The topology domains where a pod may not go because a running pod's
/// required anti-affinity term matches it (`InterPodAffinity`'s PreFilter
/// state for existing pods).
#[derive(Debug, Default)]
pub struct AntiAffinityState {
    /// (topology key, value) pairs, sorted.
    forbidden: Vec<(String, String)>,
}

impl AntiAffinityState {
    /// The domains of every pod on a node (bound or assumed, not evicted)
    /// whose required anti-affinity terms match `pod`: for each such term,
    /// that node's value of the term's topology key.
    pub fn for_pod(snapshot: &Snapshot, pod: PodId) -> Self {
        let info = &snapshot.pods[pod as usize];
        let mut forbidden = std::collections::BTreeSet::new();
        for &other in snapshot.anti_affine_pods() {
            let running = &snapshot.pods[other as usize];
            let Some(node) = running.node.filter(|_| other != pod && !running.evicted) else {
                continue;
            };
            let labels = &snapshot.nodes[node as usize].labels;
            for term in running.required_anti_affinity.iter() {
                if let Some(value) = labels.get(&term.topology_key)
                    && pod_term_selects(term, &running.namespace, info)
                {
                    forbidden.insert((term.topology_key.clone(), value.clone()));
                }
            }
        }
        Self {
            forbidden: forbidden.into_iter().collect(),
        }
    }

    fn check(&self, node: &NodeInfo) -> Result<(), Rejection> {
        match self
            .forbidden
            .iter()
            .any(|(key, value)| node.labels.get(key) == Some(value))
        {
            true => Err(Rejection::ExistingAntiAffinity),
            false => Ok(()),
        }
    }
}

/// The label every namespace carries with its name.
const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// Whether a pod affinity term of a pod in `owner_namespace` selects `pod`:
/// its label selector matches (none matches nothing), in one of its
/// namespaces (`namespaces`, else the owner's; a `namespaceSelector` on
/// `kubernetes.io/metadata.name` alone is evaluated, any other one is taken
/// to select every namespace, since namespaces' labels are not modelled:
/// stricter than upstream when it selects fewer).
pub fn pod_term_selects(term: &PodAffinityTerm, owner_namespace: &str, pod: &PodInfo) -> bool {
    let listed = term.namespaces.as_deref().unwrap_or_default();
    let in_namespace = match &term.namespace_selector {
        None if listed.is_empty() => pod.namespace == owner_namespace,
        None => listed.contains(&pod.namespace),
        Some(selector) => {
            listed.contains(&pod.namespace) || {
                let keys = selector
                    .match_labels
                    .iter()
                    .flat_map(|m| m.keys())
                    .chain(selector.match_expressions.iter().flatten().map(|e| &e.key));
                let only_names = keys.into_iter().all(|k| k == NAMESPACE_NAME_LABEL);
                !only_names
                    || label_selector_matches(
                        selector,
                        &BTreeMap::from([(
                            NAMESPACE_NAME_LABEL.to_string(),
                            pod.namespace.clone(),
                        )]),
                    )
            }
        }
    };
    in_namespace
        && term
            .label_selector
            .as_ref()
            .is_some_and(|selector| label_selector_matches(selector, &pod.labels))
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
        self.spread.constraints.is_empty() && self.anti_affinity.forbidden.is_empty()
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
    if !matches_node_affinity(&snapshot.pods[pod as usize], &snapshot.nodes[node as usize]) {
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
    let info = &snapshot.pods[pod as usize];
    let n = &snapshot.nodes[node as usize];
    if n.unschedulable
        && !info
            .tolerations
            .iter()
            .any(|t| tolerates(t, UNSCHEDULABLE_TAINT, "", "NoSchedule"))
    {
        return UNSCHEDULABLE;
    }
    match untolerated_taint(&n.taints, &info.tolerations) {
        Some(i) => TAINT + n.taint_texts[i],
        None => PASS,
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
    fits_resources(snapshot, &snapshot.pods[pod as usize], node)?;
    let node = &snapshot.nodes[node as usize];
    state.spread.check(node)?;
    state.anti_affinity.check(node)
}

/// What [`static_check`] reads of a pod, as one comparable text: pods of
/// one template (the members of a gang) share it (compare upstream's pod
/// scheduling signatures, KEP-5598).
pub fn static_signature(pod: &PodInfo) -> String {
    serde_json::to_string(&(
        &*pod.tolerations,
        &*pod.node_selector,
        pod.required_node_affinity.as_deref(),
    ))
    .expect("k8s types serialise")
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

/// The index of the first `NoSchedule`/`NoExecute` taint no toleration
/// tolerates.
fn untolerated_taint(taints: &[Taint], tolerations: &[Toleration]) -> Option<usize> {
    taints.iter().position(|taint| {
        (taint.effect == "NoSchedule" || taint.effect == "NoExecute")
            && !tolerations.iter().any(|t| {
                tolerates(
                    t,
                    &taint.key,
                    taint.value.as_deref().unwrap_or_default(),
                    &taint.effect,
                )
            })
    })
}

/// `Toleration.ToleratesTaint`.
fn tolerates(toleration: &Toleration, key: &str, value: &str, effect: &str) -> bool {
    let toleration_effect = toleration.effect.as_deref().unwrap_or_default();
    if !toleration_effect.is_empty() && toleration_effect != effect {
        return false;
    }
    let toleration_key = toleration.key.as_deref().unwrap_or_default();
    if !toleration_key.is_empty() && toleration_key != key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("Equal") {
        "Exists" => true,
        "Equal" | "" => toleration.value.as_deref().unwrap_or_default() == value,
        _ => false,
    }
}

/// `nodeSelector` (every label must match) and required node affinity (any
/// term matches; within a term every requirement matches).
fn matches_node_affinity(pod: &PodInfo, node: &NodeInfo) -> bool {
    let selector_ok = pod
        .node_selector
        .iter()
        .all(|(k, v)| node.labels.get(k) == Some(v));
    let affinity_ok = pod
        .required_node_affinity
        .as_ref()
        .is_none_or(|terms| terms.iter().any(|term| term_matches(term, node)));
    selector_ok && affinity_ok
}

/// Whether a node selector term matches `node`: it has requirements and all
/// of them match (a term without requirements matches nothing).
fn term_matches(term: &NodeSelectorTerm, node: &NodeInfo) -> bool {
    let expressions = term.match_expressions.iter().flatten();
    let fields = term.match_fields.iter().flatten();
    let has_requirements = term
        .match_expressions
        .as_ref()
        .is_some_and(|e| !e.is_empty())
        || term.match_fields.as_ref().is_some_and(|f| !f.is_empty());
    has_requirements
        && expressions
            .into_iter()
            .all(|r| requirement_matches(r, node.labels.get(&r.key).map(String::as_str)))
        && fields
            .into_iter()
            .all(|r| r.key == "metadata.name" && requirement_matches(r, Some(node.name.as_str())))
}

fn requirement_matches(requirement: &NodeSelectorRequirement, value: Option<&str>) -> bool {
    let values = requirement.values.as_deref().unwrap_or_default();
    let as_int = |s: &str| s.parse::<i64>().ok();
    match requirement.operator.as_str() {
        "In" => value.is_some_and(|v| values.iter().any(|x| x == v)),
        "NotIn" => value.is_none_or(|v| !values.iter().any(|x| x == v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(v), Some(bound)) = (
                value.and_then(as_int),
                values.first().and_then(|b| as_int(b)),
            ) else {
                return false;
            };
            if requirement.operator == "Gt" {
                v > bound
            } else {
                v < bound
            }
        }
        _ => false,
    }
}

/// `NodeResourcesFit`: every requested resource must fit in what is left.
fn fits_resources(snapshot: &Snapshot, pod: &PodInfo, node: NodeId) -> Result<(), Rejection> {
    let mut short = 0u128;
    for (r, &request) in pod.requests.iter().enumerate() {
        let free = snapshot.allocatable(r)[node as usize]
            .saturating_sub(snapshot.requested(r)[node as usize]);
        if request > free {
            short |= 1 << r;
        }
    }
    if short == 0 {
        Ok(())
    } else {
        Err(Rejection::Resources(short))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::taint_text;
    use serde_json::json;

    fn toleration(value: serde_json::Value) -> Toleration {
        serde_json::from_value(value).unwrap()
    }

    fn taint(key: &str, value: &str, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: Some(value.into()),
            effect: effect.into(),
            ..Default::default()
        }
    }

    #[test]
    fn tolerations_follow_kubernetes_rules() {
        let gpu = taint("nvidia.com/gpu", "present", "NoSchedule");
        let cases = [
            (json!({"key": "nvidia.com/gpu", "operator": "Exists"}), true),
            (
                json!({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present"}),
                true,
            ),
            (
                json!({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}),
                true,
            ),
            (json!({"key": "nvidia.com/gpu", "value": "absent"}), false),
            (
                json!({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}),
                false,
            ),
            (json!({"operator": "Exists"}), true),
            (json!({"key": "other", "operator": "Exists"}), false),
        ];
        for (t, expected) in cases {
            let tolerations = [toleration(t.clone())];
            let tolerated = untolerated_taint(std::slice::from_ref(&gpu), &tolerations).is_none();
            assert_eq!(tolerated, expected, "{t}");
        }
        let soft = [taint("a", "b", "PreferNoSchedule")];
        assert!(
            untolerated_taint(&soft, &[]).is_none(),
            "PreferNoSchedule does not filter"
        );
    }

    #[test]
    fn node_selector_requirements() {
        let req = |op: &str, values: &[&str]| NodeSelectorRequirement {
            key: "k".into(),
            operator: op.into(),
            values: Some(values.iter().map(|s| s.to_string()).collect()),
        };
        assert!(requirement_matches(&req("In", &["a", "b"]), Some("b")));
        assert!(!requirement_matches(&req("In", &["a"]), None));
        assert!(requirement_matches(&req("NotIn", &["a"]), None));
        assert!(!requirement_matches(&req("NotIn", &["a"]), Some("a")));
        assert!(requirement_matches(&req("Exists", &[]), Some("x")));
        assert!(requirement_matches(&req("DoesNotExist", &[]), None));
        assert!(requirement_matches(&req("Gt", &["4"]), Some("8")));
        assert!(!requirement_matches(&req("Lt", &["4"]), Some("8")));
        assert!(!requirement_matches(&req("Gt", &["4"]), Some("eight")));
    }

    #[test]
    fn diagnosis_reads_like_kube_scheduler() {
        let mut snapshot = Snapshot::default();
        snapshot.resource_names = vec!["cpu".into(), "memory".into(), "pods".into()];
        let gpu_taint =
            snapshot
                .taint_texts
                .intern(&taint_text(&taint("gpu", "true", "NoSchedule")));
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
            "0/12 nodes are available: 1 plugin says no, 2 Too many pods, 3 node(s) had untolerated taint {gpu: true}, 8 Insufficient cpu."
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
