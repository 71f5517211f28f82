//! `InterPodAffinity` (filter), the part wasched models: the required
//! anti-affinity terms of pods already on nodes, which keep a pod they
//! match out of their topology domains (upstream's
//! `satisfyExistingPodsAntiAffinity`). A pending pod's own inter-pod terms
//! are not modelled.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodAffinityTerm;

use super::Rejection;
use crate::model::{NodeId, NodeInfo, PodId, PodInfo, Snapshot, label_selector_matches};

/// The topology domains where a pod may not go because a running pod's
/// required anti-affinity term matches it (`InterPodAffinity`'s PreFilter
/// state for existing pods).
#[derive(Debug, Default)]
pub struct AntiAffinityState {
    /// (topology key, value) pairs, sorted.
    forbidden: Vec<(String, String)>,
}

impl AntiAffinityState {
    /// Whether no running pod's anti-affinity forbids the pod a domain.
    pub fn is_empty(&self) -> bool {
        self.forbidden.is_empty()
    }

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

    pub(super) fn check(&self, node: &NodeInfo) -> Result<(), Rejection> {
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

/// Upstream's `Filter` for existing pods' anti-affinity: `pod` against
/// `node`, in the snapshot as it is.
pub fn filter(snapshot: &Snapshot, pod: PodId, node: NodeId) -> Result<(), Rejection> {
    AntiAffinityState::for_pod(snapshot, pod).check(&snapshot.nodes[node as usize])
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::filter;
    use crate::filters::table::{Cluster, rejected};

    /// Upstream's `ErrReasonExistingAntiAffinityRulesNotMatch`.
    const EXISTING: &str = "node(s) didn't satisfy existing pods anti-affinity rules";

    fn node(name: &str, labels: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{{labels}}}}}\nstatus: {{allocatable: {{cpu: '100', pods: '100'}}}}\n"
        )
    }

    /// A pod in namespace default (upstream's tests leave it empty) with
    /// `labels` (YAML flow entries), bound to `node` unless none, with
    /// these required anti-affinity terms.
    fn pod(name: &str, node: Option<&str>, labels: &str, anti: &[String]) -> String {
        let bound = node.map_or(String::new(), |n| format!(", nodeName: {n}"));
        let affinity = if anti.is_empty() {
            String::new()
        } else {
            format!(
                ", affinity: {{podAntiAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{}]}}}}",
                anti.join(", ")
            )
        };
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, labels: {{{labels}}}}}\nspec: {{containers: [{{name: c, image: x}}]{bound}{affinity}}}\n"
        )
    }

    /// A pod affinity term selecting pods whose label `key` is `op`
    /// `values` (none for `Exists`), over `topology`.
    fn term(key: &str, op: &str, values: &str, topology: &str) -> String {
        let values = match values {
            "" => String::new(),
            v => format!(", values: [{v}]"),
        };
        format!(
            "{{labelSelector: {{matchExpressions: [{{key: {key}, operator: {op}{values}}}]}}, topologyKey: {topology}}}"
        )
    }

    type Case<'a> = (
        &'a str,
        Vec<String>,
        Vec<String>,
        String,
        Vec<(&'a str, bool)>,
    );

    /// Runs `cases` (name, nodes, existing pods, pod under test `p`,
    /// whether it fits each node), checking every node.
    fn run(cases: Vec<Case>) {
        for (name, nodes, existing, pod, want) in cases {
            let mut docs = nodes;
            docs.extend(existing);
            docs.push(pod);
            let cluster = Cluster::new(&docs.join("---\n"));
            let got = cluster.verdicts(filter, "default/p");
            let want: BTreeMap<String, Result<(), Vec<String>>> = want
                .into_iter()
                .map(|(n, fits)| {
                    let verdict = if fits { Ok(()) } else { rejected(&[EXISTING]) };
                    (n.to_string(), verdict)
                })
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }

    /// Upstream's `TestRequiredAffinitySingleNode`
    /// (`interpodaffinity/filtering_test.go`), Filter's verdict on
    /// node1 (upstream runs each case with and without the
    /// InterPodAffinityHostnameFastPath gate, same verdicts). A case whose
    /// PreFilter skips the plugin fits.
    ///
    /// Not expressible here (a pending pod's own inter-pod terms are not
    /// modelled):
    /// - "satisfies with requiredDuringSchedulingIgnoredDuringExecution in
    ///   PodAffinity using In operator that matches the existing pod"
    /// - "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution
    ///   in PodAffinity using not in operator in labelSelector that matches
    ///   the existing pod"
    /// - "Does not satisfy the PodAffinity with labelSelector because of
    ///   diff Namespace"
    /// - "Doesn't satisfy the PodAffinity because of unmatching labelSelector
    ///   with the existing pod"
    /// - "satisfies the PodAffinity with different label Operators in
    ///   multiple RequiredDuringSchedulingIgnoredDuringExecution "
    /// - "The labelSelector requirements(items of matchExpressions) are
    ///   ANDed, the pod cannot schedule onto the node because one of the
    ///   matchExpression item don't match."
    /// - "satisfies the PodAffinity and PodAntiAffinity with the existing
    ///   pod"
    /// - "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity
    ///   symmetry with the existing pod"
    /// - "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity
    ///   with the existing pod"
    /// - "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy
    ///   PodAntiAffinity symmetry with the existing pod"
    /// - "pod matches its own Label in PodAffinity and that matches the
    ///   existing pod Labels"
    /// - "satisfies the PodAntiAffinity with existing pod but doesn't
    ///   satisfy PodAntiAffinity symmetry with incoming pod"
    /// - "PodAntiAffinity symmetry check a1: incoming pod and existing pod
    ///   partially match each other on AffinityTerms"
    /// - "PodAntiAffinity symmetry check a2: incoming pod and existing pod
    ///   partially match each other on AffinityTerms"
    /// - "PodAntiAffinity symmetry check b1: incoming pod and existing pod
    ///   partially match each other on AffinityTerms"
    /// - "PodAntiAffinity symmetry check b2: incoming pod and existing pod
    ///   partially match each other on AffinityTerms"
    /// - "PodAffinity fails PreFilter with an invalid affinity label syntax"
    /// - "PodAntiAffinity fails PreFilter with an invalid antiaffinity label
    ///   syntax"
    /// - "affinity with NamespaceSelector"
    /// - "affinity with non-matching NamespaceSelector"
    /// - "anti-affinity with matching NamespaceSelector"
    /// - "anti-affinity with matching all NamespaceSelector"
    /// - "anti-affinity with non-matching NamespaceSelector"
    #[test]
    fn test_required_affinity_single_node() {
        let node1 = || vec![node("node1", "region: r1, zone: z11")];
        let service = "service: securityscan";
        let cases: Vec<Case> = vec![
            (
                "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
                node1(),
                vec![],
                pod("p", None, "", &[]),
                vec![("node1", true)],
            ),
            (
                "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
                node1(),
                vec![pod(
                    "e",
                    Some("node1"),
                    service,
                    &[term("service", "In", "securityscan, value2", "zone")],
                )],
                pod("p", None, service, &[]),
                vec![("node1", false)],
            ),
            (
                "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
                node1(),
                vec![pod(
                    "e",
                    Some("node1"),
                    service,
                    &[term("service", "NotIn", "securityscan, value2", "zone")],
                )],
                pod("p", None, service, &[]),
                vec![("node1", true)],
            ),
        ];
        assert_eq!(cases.len(), 3, "26 upstream cases, 23 not expressible");
        run(cases);
    }

    /// Upstream's `TestRequiredAffinityMultipleNodes`
    /// (`interpodaffinity/filtering_test.go`), Filter's verdict on every
    /// node (upstream runs each case with and without the
    /// InterPodAffinityHostnameFastPath gate, same verdicts). A case whose
    /// PreFilter skips the plugin fits every node.
    ///
    /// Not expressible here (a pending pod's own inter-pod terms are not
    /// modelled):
    /// - "A pod can be scheduled onto all the nodes that have the same
    ///   topology key & label value with one of them has an existing pod
    ///   that matches the affinity rules"
    /// - "The affinity rule is to schedule all of the pods of this
    ///   collection to the same zone. The first pod of the collection
    ///   should not be blocked from being scheduled onto any node, even
    ///   there's no existing pod that matches the rule anywhere."
    /// - "The first pod of the collection can only be scheduled on nodes
    ///   labelled with the requested topology keys"
    /// - "NodeA and nodeB have same topologyKey and label value. NodeA has
    ///   an existing pod that matches the inter pod affinity rule. The pod
    ///   can not be scheduled onto nodeA and nodeB."
    /// - "This test ensures that anti-affinity matches a pod when any term
    ///   of the anti-affinity rule matches a pod."
    /// - "NodeA and nodeB have same topologyKey and label value. NodeA has
    ///   an existing pod that matches the inter pod affinity rule. The pod
    ///   can not be scheduled onto nodeA and nodeB but can be scheduled
    ///   onto nodeC"
    /// - "NodeA and nodeB have same topologyKey and label value. NodeA has
    ///   an existing pod that matches the inter pod affinity rule. The pod
    ///   can not be scheduled onto nodeA, nodeB, but can be scheduled onto
    ///   nodeC (NodeC has an existing pod that match the inter pod affinity
    ///   rule but in different namespace)"
    /// - "Test incoming pod's anti-affinity: even if labelSelector matches,
    ///   we still check if topologyKey matches"
    /// - "Test incoming pod's anti-affinity: incoming pod wouldn't
    ///   considered as a fit as it at least violates one anti-affinity rule
    ///   of existingPod"
    /// - "Test incoming pod's anti-affinity: only when labelSelector and
    ///   topologyKey both match, it's counted as a single term match - case
    ///   when one term has invalid topologyKey"
    /// - "Test incoming pod's anti-affinity: only when labelSelector and
    ///   topologyKey both match, it's counted as a single term match - case
    ///   when all terms have valid topologyKey"
    /// - "Test incoming pod's affinity: firstly check if all affinityTerms
    ///   match, and then check if all topologyKeys match"
    /// - "Test incoming pod's affinity: firstly check if all affinityTerms
    ///   match, and then check if all topologyKeys match, and the match
    ///   logic should be satisfied on the same pod"
    /// - "Test incoming pod's host-scoped affinity (fast path)"
    /// - "Test incoming pod's host-scoped anti-affinity (fast path)"
    #[test]
    fn test_required_affinity_multiple_nodes() {
        let nodes = |zones: &[&str]| -> Vec<String> {
            ["nodeA", "nodeB", "nodeC"]
                .iter()
                .zip(zones)
                .map(|(n, z)| node(n, &format!("region: r1, zone: {z}, hostname: {n}")))
                .collect()
        };
        let exists = |key: &str, topology: &str| term(key, "Exists", "", topology);
        let foo_bar = "foo: '', bar: ''";
        let cases: Vec<Case> = vec![
            (
                "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
                nodes(&["z1", "z1"]),
                vec![pod(
                    "e",
                    Some("nodeA"),
                    "",
                    &[exists("foo", "invalid-node-label")],
                )],
                pod("p", None, "foo: ''", &[]),
                vec![("nodeA", true), ("nodeB", true)],
            ),
            (
                "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
                nodes(&["z1", "z2"]),
                vec![
                    pod("e1", Some("nodeA"), "", &[exists("foo", "zone")]),
                    pod("e2", Some("nodeA"), "", &[exists("bar", "region")]),
                ],
                pod("p", None, foo_bar, &[]),
                vec![("nodeA", false), ("nodeB", false)],
            ),
            (
                "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
                nodes(&["z1", "z2"]),
                vec![pod(
                    "e",
                    Some("nodeA"),
                    "",
                    &[exists("foo", "invalid-node-label"), exists("bar", "zone")],
                )],
                pod("p", None, foo_bar, &[]),
                vec![("nodeA", false), ("nodeB", true)],
            ),
            (
                "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
                nodes(&["z1", "z2"]),
                vec![pod(
                    "e",
                    Some("nodeA"),
                    "",
                    &[exists("foo", "region"), exists("bar", "zone")],
                )],
                pod("p", None, foo_bar, &[]),
                vec![("nodeA", false), ("nodeB", false)],
            ),
            (
                "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
                nodes(&["z1", "z2", "z3"]),
                vec![
                    pod(
                        "e1",
                        Some("nodeA"),
                        "",
                        &[exists("foo", "zone"), exists("labelA", "zone")],
                    ),
                    pod(
                        "e2",
                        Some("nodeB"),
                        "",
                        &[exists("bar", "zone"), exists("labelB", "zone")],
                    ),
                ],
                pod("p", None, foo_bar, &[]),
                vec![("nodeA", false), ("nodeB", false), ("nodeC", true)],
            ),
        ];
        assert_eq!(cases.len(), 5, "20 upstream cases, 15 not expressible");
        run(cases);
    }
}
