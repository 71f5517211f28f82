//! CompositePodGroup trees (`scheduling.k8s.io/v1alpha3`, KEP-6012): inner
//! nodes are CompositePodGroups, leaves are PodGroups, children point up with
//! `spec.parentCompositePodGroupName`. The tree is validated as the scheduler
//! does (the `Invalid` reason): no cycle, no missing parent, depth ≤ 4
//! levels counting the PodGroups, one Workload for all members.

use std::collections::{BTreeMap, HashMap};

use super::GroupId;

/// Index of a CompositePodGroup; composites are sorted by `namespace/name`.
pub type CompositeId = u32;

/// Most levels of a hierarchy, counting the PodGroups (KEP-6012).
pub const MAX_DEPTH: usize = 4;

/// `spec.schedulingPolicy` of a CompositePodGroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompositePolicy {
    /// `basic: {}`.
    Basic,
    /// `gang: {minGroupCount}`.
    Gang {
        /// Children that must be admitted together.
        min_group_count: u32,
    },
}

/// The scheduling-relevant spec of a CompositePodGroup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompositeSpec {
    /// `spec.schedulingPolicy`.
    pub policy: CompositePolicy,
    /// `spec.priority`, else the value of `spec.priorityClassName`, else 0.
    pub priority: i32,
    /// `spec.disruptionMode` is `all` (applies to the whole subtree).
    pub disrupt_all: bool,
    /// `spec.preemptionPolicy` is `Never`.
    pub never_preempt: bool,
    /// `spec.schedulingConstraints.topology[0].key`.
    pub topology_key: Option<String>,
}

/// A CompositePodGroup and its place in its tree.
#[derive(Debug, Clone, PartialEq)]
pub struct CompositeInfo {
    /// `namespace/name`.
    pub key: String,
    /// The spec.
    pub spec: CompositeSpec,
    /// `spec.parentCompositePodGroupName`, as written.
    pub parent_name: Option<String>,
    /// The parent, when it exists.
    pub parent: Option<CompositeId>,
    /// Child PodGroups, by key.
    pub child_groups: Vec<GroupId>,
    /// Child CompositePodGroups, by key.
    pub child_composites: Vec<CompositeId>,
    /// `spec.workloadRef.name`.
    pub workload: Option<String>,
    /// `metadata.creationTimestamp`, Unix seconds.
    pub created: i64,
    /// Why its tree is invalid (the `Invalid` condition's message), if it is.
    pub invalid: Option<String>,
}

/// One member of a hierarchy as validation sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// `PodGroup` or `CompositePodGroup`.
    pub kind: &'static str,
    /// `namespace/name`.
    pub key: String,
    /// `spec.parentCompositePodGroupName` (a name in the same namespace).
    pub parent: Option<String>,
    /// The Workload it belongs to.
    pub workload: Option<String>,
}

fn namespace(key: &str) -> &str {
    key.split_once('/').map_or("", |(ns, _)| ns)
}

/// Validates every tree the members form. Returns, per member index that
/// belongs to an invalid tree, the problem of that tree (the first in
/// member order); members of valid trees and members without parent and
/// children are absent. `composites` are the keys of the CompositePodGroups
/// among the members (parents must be among them).
pub fn validate(members: &[Member]) -> BTreeMap<usize, String> {
    let (mut problems, irregular) = classify(members);
    for (i, problem) in irregular {
        problems.entry(i).or_insert(problem);
    }
    problems
}

/// [`validate`], split in two: the problems that keep kube-scheduler
/// v1.37.2 from ever scheduling a tree (a cycle, a missing parent: its
/// queue never completes the hierarchy), and the ones KEP-6012 calls
/// `Invalid` but v1.37.2 does not enforce (more than 4 levels, members of
/// several Workloads): it schedules those trees.
pub fn classify(members: &[Member]) -> (BTreeMap<usize, String>, BTreeMap<usize, String>) {
    let index: HashMap<&str, usize> = members
        .iter()
        .enumerate()
        .filter(|(_, m)| m.kind == "CompositePodGroup")
        .map(|(i, m)| (m.key.as_str(), i))
        .collect();
    // Walk every member up to its root: the root (or where the walk broke)
    // identifies the tree; a problem on the way marks the tree invalid.
    let mut tree_of: Vec<String> = Vec::with_capacity(members.len());
    let mut problems: BTreeMap<String, String> = BTreeMap::new();
    for member in members {
        let mut path = vec![member.key.as_str()];
        let mut current = member;
        let (root, problem) = loop {
            let Some(parent) = &current.parent else {
                break (current.key.clone(), None);
            };
            let parent_key = format!("{}/{parent}", namespace(&current.key));
            if let Some(at) = path.iter().position(|k| *k == parent_key) {
                // The cycle's smallest key names the tree, whoever found it.
                let mut cycle: Vec<&str> = path[at..].to_vec();
                cycle.sort_unstable();
                break (
                    cycle[0].to_string(),
                    Some(format!(
                        "the hierarchy has a cycle through {}",
                        cycle.join(", ")
                    )),
                );
            }
            let Some(&next) = index.get(parent_key.as_str()) else {
                break (
                    current.key.clone(),
                    Some(format!(
                        "{} {}: parent CompositePodGroup {parent_key} does not exist",
                        current.kind, current.key
                    )),
                );
            };
            path.push(&members[next].key);
            current = &members[next];
        };
        if let Some(problem) = problem {
            problems.entry(root.clone()).or_insert(problem);
        }
        tree_of.push(root);
    }
    let mut irregular: BTreeMap<String, String> = BTreeMap::new();
    for (i, member) in members.iter().enumerate() {
        if depth(members, &index, i) > MAX_DEPTH && !problems.contains_key(&tree_of[i]) {
            irregular.entry(tree_of[i].clone()).or_insert_with(|| {
                format!(
                    "{} {} is deeper than {MAX_DEPTH} levels",
                    member.kind, member.key
                )
            });
        }
    }
    // One Workload per tree.
    let mut workloads: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (i, member) in members.iter().enumerate() {
        if let Some(workload) = &member.workload {
            let seen = workloads.entry(tree_of[i].as_str()).or_default();
            if !seen.contains(&workload.as_str()) {
                seen.push(workload);
            }
        }
    }
    for (root, mut names) in workloads {
        if names.len() > 1 && !problems.contains_key(root) {
            names.sort_unstable();
            irregular.entry(root.to_string()).or_insert_with(|| {
                format!(
                    "members belong to different Workloads ({})",
                    names.join(", ")
                )
            });
        }
    }
    let per_member = |problems: &BTreeMap<String, String>| {
        tree_of
            .iter()
            .enumerate()
            .filter_map(|(i, root)| problems.get(root).map(|p| (i, p.clone())))
            .collect()
    };
    (per_member(&problems), per_member(&irregular))
}

/// Levels from member `i` up to its root, counting itself; stops counting
/// at a cycle or a missing parent.
fn depth(members: &[Member], index: &HashMap<&str, usize>, i: usize) -> usize {
    let mut depth = 1;
    let mut current = &members[i];
    while let Some(parent) = &current.parent {
        let key = format!("{}/{parent}", namespace(&current.key));
        let Some(&next) = index.get(key.as_str()) else {
            break;
        };
        depth += 1;
        if depth > members.len() {
            break; // a cycle
        }
        current = &members[next];
    }
    depth
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpg(name: &str, parent: Option<&str>) -> Member {
        Member {
            kind: "CompositePodGroup",
            key: format!("ml/{name}"),
            parent: parent.map(str::to_string),
            workload: Some("w".into()),
        }
    }

    fn pg(name: &str, parent: Option<&str>) -> Member {
        Member {
            kind: "PodGroup",
            key: format!("ml/{name}"),
            parent: parent.map(str::to_string),
            workload: None,
        }
    }

    #[test]
    fn valid_trees_have_no_problems() {
        let members = [
            cpg("root", None),
            cpg("block", Some("root")),
            cpg("rack", Some("block")),
            pg("workers", Some("rack")),
            pg("alone", None),
        ];
        assert!(validate(&members).is_empty());
    }

    #[test]
    fn each_invalid_kind_marks_its_whole_tree_only() {
        let members = [
            // Too deep: 4 composites + a PodGroup = 5 levels.
            cpg("a", None),
            cpg("b", Some("a")),
            cpg("c", Some("b")),
            cpg("d", Some("c")),
            pg("leaf", Some("d")),
            // Missing parent.
            pg("orphan", Some("ghost")),
            // Cycle.
            cpg("x", Some("y")),
            cpg("y", Some("x")),
            pg("under-cycle", Some("x")),
            // Two Workloads in one tree.
            Member {
                workload: Some("w2".into()),
                ..cpg("mixed", None)
            },
            cpg("mixed-child", Some("mixed")),
            // A valid tree beside them.
            cpg("fine", None),
            pg("fine-leaf", Some("fine")),
        ];
        let problems = validate(&members);
        let of = |i: usize| problems.get(&i).cloned().unwrap_or_default();
        for i in 0..5 {
            assert_eq!(of(i), "PodGroup ml/leaf is deeper than 4 levels", "{i}");
        }
        assert_eq!(
            of(5),
            "PodGroup ml/orphan: parent CompositePodGroup ml/ghost does not exist"
        );
        for i in 6..9 {
            assert_eq!(of(i), "the hierarchy has a cycle through ml/x, ml/y", "{i}");
        }
        for i in 9..11 {
            assert_eq!(
                of(i),
                "members belong to different Workloads (w, w2)",
                "{i}"
            );
        }
        assert!(!problems.contains_key(&11) && !problems.contains_key(&12));
    }

    #[test]
    fn four_levels_with_the_pod_group_are_fine() {
        let members = [
            cpg("a", None),
            cpg("b", Some("a")),
            cpg("c", Some("b")),
            pg("leaf", Some("c")),
        ];
        assert!(validate(&members).is_empty());
    }
}
