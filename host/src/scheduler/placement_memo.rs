//! Placement answers a plugin marked reusable (the WIT's
//! `generated-placements.reusable`; [`Placements::reusable`]), handed to
//! the next unit of the same kind and topology key, with no running pod,
//! over the same parent nodes, without asking the plugin again.
//!
//! The plugin promised that such an answer depends on nothing else but the
//! nodes' labels, which do not change within one pass, so a memo lives for
//! one run ([`Reuse::placements`](super::Reuse::placements)), or for the
//! runs over the same nodes that hand it on ([`Kept`](super::Kept)). Whether a
//! unit has a running pod is checked at every lookup: pods bound, evicted
//! or rolled back during the run change it.

use rustc_hash::FxHashMap;

use crate::framework::{Placements, Unit};
use crate::model::{NodeId, PodId, Snapshot};

/// Node ids held at most (the parents' and the placements'); past it the
/// memo starts over.
pub const NODES_KEPT: usize = 1 << 21;

/// What a reusable answer is for, but the plugin: the unit's kind and
/// topology key. `None` from [`UnitShape::of`] when nothing may be reused
/// for the unit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UnitShape {
    composite: bool,
    topology_key: String,
}

impl UnitShape {
    /// The shape of `unit`; `None` for a unit without a topology key, a
    /// PodGroup whose object is missing, or a unit with a running pod
    /// (anywhere in a composite's subtree).
    pub fn of(snapshot: &Snapshot, unit: Unit) -> Option<Self> {
        let (composite, key, groups) = match unit {
            Unit::Group(g) => {
                let spec = snapshot.groups.get(g as usize)?.spec.as_ref()?;
                (false, &spec.topology_key, vec![g])
            }
            Unit::Composite(c) => {
                let spec = &snapshot.composites.get(c as usize)?.spec;
                // Only valid trees (no cycle) reach placement generation.
                (true, &spec.topology_key, snapshot.subtree_groups(c))
            }
        };
        let topology_key = key.clone()?;
        let running = |members: &[PodId]| members.iter().any(|&p| snapshot.is_running(p));
        if groups
            .iter()
            .any(|&g| running(&snapshot.groups[g as usize].members))
        {
            return None;
        }
        Some(Self {
            composite,
            topology_key,
        })
    }
}

/// One kept answer: the plugin (its position at placement-generate), the
/// parent nodes it was given, the answer.
#[derive(Debug)]
struct Answer {
    plugin: usize,
    parent: Vec<NodeId>,
    placements: Placements,
}

/// Reusable answers of one run, by [`UnitShape`].
#[derive(Debug, Default)]
pub struct PlacementMemo {
    answers: FxHashMap<UnitShape, Vec<Answer>>,
    /// Node ids held, against [`NODES_KEPT`].
    nodes_kept: usize,
}

impl PlacementMemo {
    /// The answer plugin `plugin` gave a unit of `shape` over `parent`.
    pub fn get(&self, plugin: usize, shape: &UnitShape, parent: &[NodeId]) -> Option<&Placements> {
        self.answers
            .get(shape)?
            .iter()
            .find(|a| a.plugin == plugin && a.parent == parent)
            .map(|a| &a.placements)
    }

    /// Keeps `placements`, the answer of plugin `plugin` for a unit of
    /// `shape` over `parent`, if the plugin marked it reusable.
    pub fn insert(
        &mut self,
        plugin: usize,
        shape: UnitShape,
        parent: &[NodeId],
        placements: &Placements,
    ) {
        if !placements.reusable {
            return;
        }
        let held: usize = placements.candidates.iter().map(|c| c.nodes.len()).sum();
        let nodes = parent.len() + held;
        if self.nodes_kept + nodes > NODES_KEPT {
            self.answers.clear();
            self.nodes_kept = 0;
        }
        self.answers.entry(shape).or_default().push(Answer {
            plugin,
            parent: parent.to_vec(),
            placements: placements.clone(),
        });
        self.nodes_kept += nodes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::Placement;

    /// Three gangs keyed by rack (`a` with a running member), one without
    /// a key; two CompositePodGroups keyed by rack, `ca` with a running pod
    /// in its grandchild PodGroup.
    fn snapshot() -> Snapshot {
        let group = |name: &str, key: &str| {
            format!(
                "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {{name: {name}, namespace: t}}\nspec: {{schedulingPolicy: {{gang: {{minCount: 1}}}}{key}}}\n---\n"
            )
        };
        let pod = |name: &str, group: &str, node: &str| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: t}}\nspec:\n  schedulingGroup: {{podGroupName: {group}}}\n  {node}containers: [{{name: c, image: x}}]\n---\n"
            )
        };
        let composite = |name: &str, parent: &str, key: &str| {
            let parent = match parent {
                "" => String::new(),
                p => format!(", parentCompositePodGroupName: {p}"),
            };
            format!(
                "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata: {{name: {name}, namespace: t}}\nspec: {{workloadRef: {{workloadName: w, templateName: t}}, schedulingPolicy: {{gang: {{minGroupCount: 1}}}}{parent}{key}}}\n---\n"
            )
        };
        let child = |name: &str, parent: &str| {
            format!(
                "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {{name: {name}, namespace: t}}\nspec: {{workloadRef: {{workloadName: w, templateName: t}}, parentCompositePodGroupName: {parent}, schedulingPolicy: {{gang: {{minCount: 1}}}}}}\n---\n"
            )
        };
        let rack = ", schedulingConstraints: {topology: [{key: rack}]}";
        let text = [
            "apiVersion: v1\nkind: Node\nmetadata: {name: n0, labels: {rack: r1}}\nstatus: {allocatable: {cpu: \"4\"}}\n---\n".to_string(),
            group("a", rack),
            group("b", rack),
            group("c", rack),
            group("plain", ""),
            pod("a-0", "a", "nodeName: n0\n  "),
            pod("a-1", "a", ""),
            pod("b-0", "b", ""),
            pod("c-0", "c", ""),
            pod("plain-0", "plain", ""),
            composite("ca", "", rack),
            composite("ca-inner", "ca", ""),
            composite("cb", "", rack),
            child("ca-g", "ca-inner"),
            child("cb-g", "cb"),
            pod("ca-g-0", "ca-g", "nodeName: n0\n  "),
            pod("cb-g-0", "cb-g", ""),
        ]
        .concat();
        let mut manifests = crate::manifest::Manifests::default();
        crate::manifest::load_str(&mut manifests, "memo.yaml", &text).unwrap();
        Snapshot::build(&manifests).unwrap()
    }

    fn group(snapshot: &Snapshot, key: &str) -> Unit {
        let id = snapshot.groups.iter().position(|g| g.key == key).unwrap();
        Unit::Group(id as u32)
    }

    fn composite(snapshot: &Snapshot, key: &str) -> Unit {
        let id = snapshot.composites.iter().position(|c| c.key == key);
        Unit::Composite(id.unwrap() as u32)
    }

    fn answer(reusable: bool) -> Placements {
        Placements {
            candidates: vec![Placement {
                name: "rack=r1".into(),
                nodes: vec![0],
                domain: None,
            }],
            search_budget: None,
            reusable,
        }
    }

    #[test]
    fn only_units_with_a_key_and_no_running_pod_have_a_shape() {
        let snapshot = snapshot();
        assert_eq!(UnitShape::of(&snapshot, group(&snapshot, "t/a")), None);
        assert_eq!(UnitShape::of(&snapshot, group(&snapshot, "t/plain")), None);
        let b = UnitShape::of(&snapshot, group(&snapshot, "t/b")).unwrap();
        assert_eq!(
            UnitShape::of(&snapshot, group(&snapshot, "t/c")),
            Some(b.clone())
        );
        // A composite: a running pod anywhere below it; its own kind.
        assert_eq!(UnitShape::of(&snapshot, composite(&snapshot, "t/ca")), None);
        let cb = UnitShape::of(&snapshot, composite(&snapshot, "t/cb")).unwrap();
        assert_ne!(cb, b, "a composite's answers are not a PodGroup's");
        assert_eq!(cb.topology_key, b.topology_key);
    }

    #[test]
    fn answers_are_kept_per_plugin_and_parent_when_marked_reusable() {
        let snapshot = snapshot();
        let shape = UnitShape::of(&snapshot, group(&snapshot, "t/b")).unwrap();
        let mut memo = PlacementMemo::default();
        memo.insert(0, shape.clone(), &[0], &answer(false));
        assert_eq!(memo.get(0, &shape, &[0]), None, "not marked reusable");
        memo.insert(0, shape.clone(), &[0], &answer(true));
        assert_eq!(memo.get(0, &shape, &[0]), Some(&answer(true)));
        assert_eq!(memo.get(1, &shape, &[0]), None, "another plugin");
        assert_eq!(memo.get(0, &shape, &[0, 1]), None, "another parent");
        let composite = UnitShape {
            composite: true,
            ..shape.clone()
        };
        assert_eq!(memo.get(0, &composite, &[0]), None, "another kind");
        // Bounded: past NODES_KEPT node ids (2 per answer here) it starts
        // over.
        let last = (NODES_KEPT / 2) as NodeId;
        for parent in 1..=last {
            memo.insert(0, shape.clone(), &[parent], &answer(true));
        }
        assert_eq!(memo.get(0, &shape, &[0]), None);
        assert!(memo.get(0, &shape, &[last]).is_some());
    }
}
