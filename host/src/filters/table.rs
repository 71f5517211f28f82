//! Support for the filter plugins' table tests, re-expressed from
//! upstream's own test tables: a cluster written as YAML, read the way a
//! snapshot is read, a pod and a node looked up by name, and a verdict in
//! upstream's words.

use std::collections::BTreeMap;

use super::{Diagnosis, Rejection};
use crate::model::{BuildOptions, Model, NodeId, PodId, Snapshot};

/// A filter plugin's `Filter`, as each module exports it.
pub type Filter = fn(&Snapshot, PodId, NodeId) -> Result<(), Rejection>;

/// One table case's cluster.
pub struct Cluster {
    /// The snapshot read from the case's YAML.
    pub snapshot: Snapshot,
}

impl Cluster {
    /// The cluster of `yaml` (several documents: nodes, pods — the pod
    /// under test has no `nodeName` — and whatever else the case needs);
    /// a document wasched refuses fails the test with the reader's error.
    pub fn new(yaml: &str) -> Self {
        let mut manifests = crate::manifest::Manifests::default();
        crate::manifest::load_str(&mut manifests, "case.yaml", yaml)
            .unwrap_or_else(|e| panic!("{e:#}"));
        crate::manifest::expand_workloads(&mut manifests).unwrap_or_else(|e| panic!("{e:#}"));
        manifests.finish();
        let snapshot = Model::snapshot_of(manifests, &BuildOptions::default())
            .unwrap_or_else(|e| panic!("{e:#}"));
        Self { snapshot }
    }

    /// The pod `namespace/name`.
    pub fn pod(&self, key: &str) -> PodId {
        let found = self.snapshot.pods.iter().position(|p| p.key == key);
        found.unwrap_or_else(|| panic!("no pod {key}")) as PodId
    }

    /// The node `name`.
    pub fn node(&self, name: &str) -> NodeId {
        self.snapshot
            .node_named(name)
            .unwrap_or_else(|| panic!("no node {name}"))
    }

    /// `filter`'s verdict on pod `pod` and node `node`: `Ok`, or the
    /// reasons of the rejection in upstream's words, sorted
    /// (`["Insufficient cpu", "Insufficient memory"]`).
    pub fn verdict(&self, filter: Filter, pod: &str, node: &str) -> Result<(), Vec<String>> {
        filter(&self.snapshot, self.pod(pod), self.node(node)).map_err(|r| self.reasons(r))
    }

    /// [`Cluster::verdict`] of `pod` on every node, by node name.
    pub fn verdicts(&self, filter: Filter, pod: &str) -> BTreeMap<String, Result<(), Vec<String>>> {
        self.snapshot
            .nodes
            .iter()
            .map(|n| (n.name.clone(), self.verdict(filter, pod, &n.name)))
            .collect()
    }

    /// A rejection's reasons in upstream's words, sorted.
    pub fn reasons(&self, rejection: Rejection) -> Vec<String> {
        let mut diagnosis = Diagnosis::over(1);
        diagnosis.reject(rejection);
        let text = diagnosis.render(&self.snapshot);
        let listed = text
            .strip_prefix("0/1 nodes are available: ")
            .and_then(|t| t.strip_suffix('.'))
            .unwrap_or_else(|| panic!("not a diagnosis: {text}"));
        let mut reasons: Vec<String> = listed
            .split(", 1 ")
            .map(|r| r.strip_prefix("1 ").unwrap_or(r).to_string())
            .collect();
        reasons.sort();
        reasons
    }
}

/// `Err` of these reasons (a table's expected rejection).
pub fn rejected(reasons: &[&str]) -> Result<(), Vec<String>> {
    let mut reasons: Vec<String> = reasons.iter().map(|r| r.to_string()).collect();
    reasons.sort();
    Err(reasons)
}
