//! The report's reading of a run (`wasched::report`) and what `compare`
//! finds (`wasched::compare`), over scenarios with known outcomes.

mod common;

use wasched::compare::Comparison;
use wasched::report::{ClusterView, Fate, RunView};

fn view(scenario: &str, config: wasched::PluginConfig) -> (ClusterView, RunView) {
    let files = vec![common::testdata(&format!("scenarios/{scenario}.yaml"))];
    let cluster = ClusterView::capture(&wasched::read_snapshot(&files).unwrap(), &[]);
    let outcome = common::simulate_with(&files, None, config);
    let run = RunView::of(&cluster, &outcome, scenario, Vec::new());
    (cluster, run)
}

#[test]
fn a_trees_groups_carry_the_evictions_their_tree_made() {
    let (cluster, run) = view("tree-preempt", wasched::PluginConfig::default());
    for group in ["team/train-a", "team/train-b"] {
        let decision = run.decisions.iter().find(|d| d.name == group).unwrap();
        assert_eq!(decision.result, "admitted");
        let victims: Vec<&str> = decision
            .evictions
            .iter()
            .map(|&p| cluster.pods[p].name.as_str())
            .collect();
        assert!(victims.contains(&"team/low-0"), "{group}: {victims:?}");
    }
    let evicted = run.pods.iter().filter(|p| p.state == Fate::Evicted).count();
    assert_eq!(evicted, run.summary.evicted);
}

#[test]
fn every_pod_has_one_fate_and_a_run_equals_itself() {
    let (cluster, run) = view("preempt-lone-pod", wasched::PluginConfig::default());
    assert_eq!(run.pods.len(), cluster.pods.len());
    let bound = run.pods.iter().filter(|p| p.state == Fate::Bound).count();
    let pending = run.pods.iter().filter(|p| p.state == Fate::Pending).count();
    assert_eq!((bound, pending), (run.summary.bound, run.summary.pending));
    assert!(
        run.decisions
            .iter()
            .any(|d| d.kind == "Pod" && !d.evictions.is_empty()),
        "the lone pod's decision names its victims"
    );
    let same = Comparison::of(&cluster, &run, &run.clone());
    assert!(!same.differs());
    assert!(same.to_table().starts_with("no differences\n"));
}
