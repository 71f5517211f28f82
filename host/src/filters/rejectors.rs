//! The plugins that rejected a pod on some node: kube-scheduler keeps them
//! with an unschedulable pod (`UnschedulablePlugins`) and requeues it only
//! on the cluster events those plugins registered.

/// An in-tree filter plugin the host runs as its node checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InTree {
    /// `NodeUnschedulable`.
    NodeUnschedulable,
    /// `TaintToleration`.
    TaintToleration,
    /// `NodeAffinity`.
    NodeAffinity,
    /// `NodeResourcesFit`.
    NodeResourcesFit,
    /// `PodTopologySpread`.
    PodTopologySpread,
    /// `InterPodAffinity`.
    InterPodAffinity,
}

impl InTree {
    /// Every in-tree filter plugin, in the default profile's filter order.
    pub const ALL: [InTree; 6] = [
        InTree::NodeUnschedulable,
        InTree::TaintToleration,
        InTree::NodeAffinity,
        InTree::NodeResourcesFit,
        InTree::PodTopologySpread,
        InTree::InterPodAffinity,
    ];

    /// The plugin's name in kube-scheduler.
    pub fn name(self) -> &'static str {
        match self {
            InTree::NodeUnschedulable => "NodeUnschedulable",
            InTree::TaintToleration => "TaintToleration",
            InTree::NodeAffinity => "NodeAffinity",
            InTree::NodeResourcesFit => "NodeResourcesFit",
            InTree::PodTopologySpread => "PodTopologySpread",
            InTree::InterPodAffinity => "InterPodAffinity",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// The plugins that rejected a pod: in-tree filters and filter
/// components (by name). Empty when no plugin rejected it (a plugin
/// failed instead): kube-scheduler then requeues it on any event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Rejectors {
    in_tree: u8,
    /// Sorted, each once.
    components: Vec<String>,
}

impl Rejectors {
    /// Adds an in-tree plugin.
    pub fn add_in_tree(&mut self, plugin: InTree) {
        self.in_tree |= plugin.bit();
    }

    /// Adds a filter component by name.
    pub fn add_component(&mut self, name: &str) {
        if let Err(at) = self.components.binary_search_by(|c| c.as_str().cmp(name)) {
            self.components.insert(at, name.to_string());
        }
    }

    /// The in-tree plugins, in [`InTree::ALL`]'s order.
    pub fn in_tree(&self) -> impl Iterator<Item = InTree> + '_ {
        InTree::ALL
            .into_iter()
            .filter(|p| self.in_tree & p.bit() != 0)
    }

    /// The components' names, sorted.
    pub fn components(&self) -> &[String] {
        &self.components
    }

    /// Whether no plugin rejected the pod.
    pub fn is_empty(&self) -> bool {
        self.in_tree == 0 && self.components.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filters::{Diagnosis, Rejection};

    #[test]
    fn a_diagnosis_names_the_plugins_that_rejected() {
        let mut diagnosis = Diagnosis::over(6);
        diagnosis.reject(Rejection::Resources(1));
        diagnosis.reject(Rejection::Spread);
        diagnosis.reject(Rejection::SpreadMissingLabel);
        diagnosis.reject_by("gpu-binpack", "reserved for GPU pods", 2);
        diagnosis.reject_by("a-filter", "no", 1);
        diagnosis.reject_by("gpu-binpack", "reserved for GPU pods", 1);
        let rejectors = diagnosis.rejectors();
        assert_eq!(
            rejectors.in_tree().collect::<Vec<_>>(),
            [InTree::NodeResourcesFit, InTree::PodTopologySpread]
        );
        assert_eq!(rejectors.components(), ["a-filter", "gpu-binpack"]);
        assert!(!rejectors.is_empty());
        assert!(Diagnosis::over(3).rejectors().is_empty());
    }

    #[test]
    fn every_rejection_has_its_upstream_plugin() {
        let names: Vec<&str> = [
            Rejection::Unschedulable,
            Rejection::Taint(0),
            Rejection::NodeAffinity,
            Rejection::Resources(2),
            Rejection::SpreadMissingLabel,
            Rejection::Spread,
            Rejection::ExistingAntiAffinity,
        ]
        .into_iter()
        .map(|r| r.plugin().name())
        .collect();
        assert_eq!(
            names,
            [
                "NodeUnschedulable",
                "TaintToleration",
                "NodeAffinity",
                "NodeResourcesFit",
                "PodTopologySpread",
                "PodTopologySpread",
                "InterPodAffinity"
            ]
        );
    }
}
