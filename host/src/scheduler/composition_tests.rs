//! Composition as kube-scheduler composes: score weights, placement
//! generation by several plugins (intersected), pod-group-post-filter
//! plugins asked in order, and a `KubeSchedulerConfiguration` arranging
//! the set.

use std::cell::RefCell;
use std::rc::Rc;

use super::run;
use crate::config::PluginConfig;
use crate::framework::{
    Answer, Code, ExtensionPoint, Placement, Placements, Plugin, PluginSet, PreemptionCandidate,
    Preemptor, Status, Unit, VictimUnit,
};
use crate::model::{NodeId, PodId, Snapshot};

/// Four idle nodes `n0..n3`: racks r1 (n0, n1), r2 (n2, n3); zones a (n0,
/// n2), b (n1, n3).
const NODES: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: n0, labels: {rack: r1, zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi}}
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {rack: r1, zone: b}}
status: {allocatable: {cpu: "4", memory: 8Gi}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {rack: r2, zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi}}
---
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {rack: r2, zone: b}}
status: {allocatable: {cpu: "4", memory: 8Gi}}
"#;

fn snapshot(objects: &str) -> Snapshot {
    let mut manifests = crate::manifest::Manifests::default();
    let text = format!("{NODES}\n---\n{objects}");
    crate::manifest::load_str(&mut manifests, "test.yaml", &text).unwrap();
    Snapshot::build(&manifests).unwrap()
}

fn pod(name: &str, cpu: &str, extra: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: t}}\nspec:\n  {extra}\n  containers: [{{name: c, image: x, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]\n---\n"
    )
}

type Journal = Rc<RefCell<Vec<String>>>;

/// A scripted plugin: scores one node 100, splits by a label, declines or
/// refuses preemption, as told.
struct Scripted {
    name: &'static str,
    points: Vec<ExtensionPoint>,
    journal: Journal,
    favourite: Option<&'static str>,
    split_by: Option<&'static str>,
    choice: Result<(), Code>,
}

impl Scripted {
    fn new(name: &'static str, points: &[ExtensionPoint], journal: &Journal) -> Self {
        Self {
            name,
            points: points.to_vec(),
            journal: journal.clone(),
            favourite: None,
            split_by: None,
            choice: Ok(()),
        }
    }
}

impl Plugin for Scripted {
    fn name(&self) -> &str {
        self.name
    }

    fn points(&self) -> &[ExtensionPoint] {
        &self.points
    }

    fn score(
        &mut self,
        snapshot: &mut Snapshot,
        _pod: PodId,
        nodes: &[NodeId],
    ) -> Answer<Result<Vec<i64>, Status>> {
        let favourite = self.favourite;
        Ok(Ok(nodes
            .iter()
            .map(|&n| i64::from(Some(snapshot.nodes[n as usize].name.as_str()) == favourite) * 100)
            .collect()))
    }

    fn generate_placements(
        &mut self,
        snapshot: &mut Snapshot,
        _unit: Unit,
        parent: &Placement,
    ) -> Answer<Result<Placements, Status>> {
        let Some(label) = self.split_by else {
            return Ok(Err(Status::new(Code::Skip, "")));
        };
        Ok(Ok(super::tests::placements_by_label(
            snapshot, parent, label,
        )))
    }

    fn select_candidate(
        &mut self,
        _snapshot: &mut Snapshot,
        _preemptor: Preemptor,
        _candidates: &[PreemptionCandidate],
    ) -> Answer<Result<u32, Status>> {
        self.journal
            .borrow_mut()
            .push(format!("{} select-candidate", self.name));
        Ok(match self.choice {
            Ok(()) => Ok(0),
            Err(code) => Err(Status::new(code, format!("{} says no", self.name))),
        })
    }

    fn order_victims(
        &mut self,
        _snapshot: &mut Snapshot,
        _preemptor: Preemptor,
        units: &[VictimUnit],
    ) -> Answer<Result<Vec<u32>, Status>> {
        Ok(Ok(units.iter().map(|u| u.index).collect()))
    }
}

fn bound(snapshot: &mut Snapshot, plugins: &mut PluginSet) -> Vec<(String, String)> {
    run(snapshot, plugins, super::RunOptions::default())
        .placements
        .into_iter()
        .map(|b| (b.pod, b.node))
        .collect()
}

/// Two score plugins favouring different nodes: the weighted sum decides.
#[test]
fn score_weights_multiply_each_plugins_scores() {
    let journal = Journal::default();
    let objects = pod("p", "1", "priority: 0");
    let with = |weight_b: i64| {
        let mut a = Scripted::new("A", &[ExtensionPoint::Score], &journal);
        a.favourite = Some("n1");
        let mut b = Scripted::new("B", &[ExtensionPoint::Score], &journal);
        b.favourite = Some("n2");
        let mut set = PluginSet::new();
        set.add(Box::new(a)).unwrap();
        set.add(Box::new(b)).unwrap();
        // A's 100 beats B's 100 × 1 on the name tie-break (n1 < n2); B
        // weighted 2 wins outright.
        set.set_weight("A", 1);
        set.set_weight("B", weight_b);
        bound(&mut snapshot(&objects), &mut set)
    };
    assert_eq!(with(1), [("t/p".to_string(), "n1".to_string())]);
    assert_eq!(with(2), [("t/p".to_string(), "n2".to_string())]);
}

/// Two placement-generate plugins: their placements are intersected (a
/// rack and a zone: one node each), names joined with ` & `.
#[test]
fn several_placement_generate_plugins_are_intersected() {
    use crate::framework::Placement as P;
    let cut = |name: &str, nodes: &[NodeId]| P {
        name: name.into(),
        nodes: nodes.to_vec(),
        domain: None,
    };
    let racks = Placements {
        candidates: vec![cut("rack=r1", &[0, 1]), cut("rack=r2", &[2, 3])],
        search_budget: Some(50),
        reusable: true,
    };
    let zones = Placements {
        candidates: vec![cut("zone=a", &[0, 2]), cut("zone=b", &[1, 3])],
        search_budget: Some(20),
        reusable: true,
    };
    let both = super::group::intersect(racks, zones);
    let names: Vec<(&str, &[NodeId])> = both
        .candidates
        .iter()
        .map(|p| (p.name.as_str(), p.nodes.as_slice()))
        .collect();
    assert_eq!(
        names,
        [
            ("rack=r1 & zone=a", &[0][..]),
            ("rack=r1 & zone=b", &[1][..]),
            ("rack=r2 & zone=a", &[2][..]),
            ("rack=r2 & zone=b", &[3][..]),
        ]
    );
    assert_eq!(both.search_budget, Some(20));
    // The host keeps each plugin's own answer, never an intersection.
    assert!(!both.reusable);

    // In a run (no permit plugin: whatever fits binds): two 3-cpu pods of
    // a topology-constrained group fit together in a rack, but a rack ∩
    // zone is one node, which holds one of them.
    let objects = "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: t}\nspec: {schedulingPolicy: {gang: {minCount: 2}}, schedulingConstraints: {topology: [{key: rack}]}}\n---\n"
        .to_string()
        + &pod("g-0", "3", "schedulingGroup: {podGroupName: g}")
        + &pod("g-1", "3", "schedulingGroup: {podGroupName: g}");
    let journal = Journal::default();
    let splitter = |name, label| {
        let mut p = Scripted::new(name, &[ExtensionPoint::PlacementGenerate], &journal);
        p.split_by = Some(label);
        Box::new(p)
    };
    let mut one = PluginSet::new();
    one.add(splitter("Racks", "rack")).unwrap();
    assert_eq!(bound(&mut snapshot(&objects), &mut one).len(), 2);
    let mut two = PluginSet::new();
    two.add(splitter("Racks", "rack")).unwrap();
    two.add(splitter("Zones", "zone")).unwrap();
    assert_eq!(
        bound(&mut snapshot(&objects), &mut two),
        [("t/g-0".to_string(), "n0".to_string())]
    );
}

/// A high-priority pod that needs a node's room: the first
/// pod-group-post-filter plugin that does not decline carries the
/// preemption; unresolvable stops the others.
#[test]
fn pod_group_post_filter_plugins_are_asked_in_order() {
    let objects = ["n0", "n1", "n2", "n3"]
        .iter()
        .map(|n| pod(&format!("low-{n}"), "4", &format!("nodeName: {n}")))
        .collect::<String>()
        + &pod("high", "4", "priority: 100");
    let outcome = |first: Result<(), Code>| {
        let journal = Journal::default();
        let mut a = Scripted::new("First", &[ExtensionPoint::PodGroupPostFilter], &journal);
        a.choice = first;
        let b = Scripted::new("Second", &[ExtensionPoint::PodGroupPostFilter], &journal);
        let mut set = PluginSet::new();
        set.add(Box::new(a)).unwrap();
        set.add(Box::new(b)).unwrap();
        let out = run(
            &mut snapshot(&objects),
            &mut set,
            super::RunOptions::default(),
        );
        let asked = journal.borrow().clone();
        (out.evictions.len(), asked)
    };
    let (evicted, asked) = outcome(Ok(()));
    assert_eq!(
        (evicted, asked),
        (1, vec!["First select-candidate".to_string()])
    );
    let (evicted, asked) = outcome(Err(Code::Unschedulable));
    assert_eq!(evicted, 1);
    assert_eq!(asked, ["First select-candidate", "Second select-candidate"]);
    let (evicted, asked) = outcome(Err(Code::UnschedulableAndUnresolvable));
    assert_eq!(
        (evicted, asked),
        (0, vec!["First select-candidate".to_string()])
    );
}

/// A `KubeSchedulerConfiguration` arranges the set: order per point,
/// weights, disabled plugins, in-tree names noted; mistakes name the field.
#[test]
fn a_kube_scheduler_configuration_arranges_the_set() {
    let journal = Journal::default();
    let loaded = || -> Vec<(Box<dyn Plugin>, bool)> {
        vec![
            (
                Box::new(Scripted::new(
                    "A",
                    &[ExtensionPoint::Score, ExtensionPoint::PodGroupPostFilter],
                    &journal,
                )),
                true,
            ),
            (
                Box::new(Scripted::new("B", &[ExtensionPoint::Score], &journal)),
                false,
            ),
            (
                Box::new(Scripted::new(
                    "C",
                    &[ExtensionPoint::PlacementGenerate],
                    &journal,
                )),
                true,
            ),
        ]
    };
    let config = PluginConfig::parse(
        r#"
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
profiles:
- schedulerName: wasched
  plugins:
    multiPoint:
      enabled: [{name: B, weight: 3}]
      disabled: [{name: C}]
    score:
      enabled: [{name: NodeResourcesFit, weight: 2}, {name: A, weight: 5}]
    podGroupPostFilter:
      disabled: [{name: '*'}]
  pluginConfig:
  - name: A
    args: {failurePolicy: Ignore, fuel: 1000000, args: {x: 1}}
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
"#,
    )
    .unwrap();
    assert_eq!(config.settings("A").fuel, 1_000_000);
    assert_eq!(config.settings("A").args, r#"{"x":1}"#);
    let (mut set, notes) = config.assemble(loaded()).unwrap();
    let at = |set: &mut PluginSet, point| -> Vec<(String, i64)> {
        set.at(point)
            .map(|p| (p.name().to_string(), p.weight()))
            .collect()
    };
    // Defaults first (A), then multiPoint's B, A's weight from score.
    assert_eq!(
        at(&mut set, ExtensionPoint::Score),
        [("A".to_string(), 5), ("B".to_string(), 3)]
    );
    assert!(at(&mut set, ExtensionPoint::PlacementGenerate).is_empty());
    assert!(at(&mut set, ExtensionPoint::PodGroupPostFilter).is_empty());
    assert_eq!(set.names(), ["A", "B"]);
    assert!(notes[0].contains("in-tree plugin NodeResourcesFit runs only inside kube-scheduler"));

    // An order that is not the load order.
    let reordered = PluginConfig::parse(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    score:\n      disabled: [{name: '*'}]\n      enabled: [{name: B}, {name: A}]\n",
    )
    .unwrap();
    let (mut set, _) = reordered.assemble(loaded()).unwrap();
    assert_eq!(
        at(&mut set, ExtensionPoint::Score),
        [("B".to_string(), 1), ("A".to_string(), 1)]
    );
    // A plugin added to an arranged set serves its points after the
    // arranged ones (a test's or bench's extra plugin is asked).
    set.add(Box::new(Scripted::new(
        "D",
        &[ExtensionPoint::Score],
        &journal,
    )))
    .unwrap();
    assert_eq!(
        at(&mut set, ExtensionPoint::Score),
        [
            ("B".to_string(), 1),
            ("A".to_string(), 1),
            ("D".to_string(), 1)
        ]
    );

    let error = |text: &str| -> String {
        let body = format!(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n{text}"
        );
        match PluginConfig::parse(&body) {
            Err(e) => format!("{e:#}"),
            Ok(config) => format!("{:#}", config.assemble(loaded()).expect_err("an error")),
        }
    };
    let cases = [
        (
            "profiles:\n- plugins: {score: {enabled: [{name: Nope}]}}\n",
            "field profiles[0].plugins.score.enabled[0]: unknown plugin Nope; loaded: A, B, C",
        ),
        (
            "profiles:\n- plugins: {score: {enabled: [{name: TopologyPlacement}]}}\n",
            "unknown plugin TopologyPlacement (did you mean WaschedTopologyPlacement?)",
        ),
        (
            "profiles:\n- plugins: {filter: {enabled: [{name: C}]}}\n",
            "field profiles[0].plugins.filter.enabled[0]: plugin C does not implement filter",
        ),
        (
            "profiles:\n- plugins: {bind: {enabled: [{name: A}]}}\n",
            "field profiles[0].plugins.bind.enabled[0]: A is a wasched plugin; wasched plugins have no such extension point",
        ),
        (
            "profiles:\n- plugins: {scor: {}}\n",
            "field profiles[0].plugins.scor: unknown field `scor`",
        ),
        (
            "profiles:\n- pluginConfig: [{name: A, args: {fuell: 1}}]\n",
            "field profiles[0].pluginConfig[0].args.fuell: unknown field `fuell`",
        ),
        (
            "profiles:\n- pluginConfig: [{name: A, args: {enabled: true}}]\n",
            "field profiles[0].pluginConfig[0].args.enabled: not allowed here",
        ),
        (
            "profiles:\n- pluginConfig: [{name: TopologyPlacement, args: {}}]\n",
            "the configuration names plugin TopologyPlacement (did you mean WaschedTopologyPlacement?), but no loaded plugin has that name",
        ),
        (
            "profiles:\n- {schedulerName: a}\n- {schedulerName: b}\n",
            "field profiles: 2 profiles and none has schedulerName wasched",
        ),
    ];
    for (text, expected) in cases {
        let got = error(text);
        assert!(got.contains(expected), "{text}: {got}");
    }
    let wrong_version = PluginConfig::parse(
        "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
    )
    .unwrap_err();
    assert!(
        format!("{wrong_version:#}")
            .contains("kubescheduler.config.k8s.io/v1beta3 is not supported")
    );
}
