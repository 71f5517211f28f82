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
