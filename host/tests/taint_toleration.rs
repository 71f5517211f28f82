//! The `WaschedTaintToleration` component, built from `plugins/` and run
//! through the wasm boundary and the framework's answer checks, decides
//! exactly as the host's native `NodeUnschedulable` + `TaintToleration`
//! check: on every scenario, the default snapshot and the sandbox
//! snapshots, for every pending pod on every node, the same nodes are
//! rejected with the same reason.

mod common;

use std::collections::BTreeMap;
use wasched::filters::{self, Rejection};
use wasched::framework::ExtensionPoint;
use wasched::{PluginConfig, Snapshot};

/// The native check's reason for each node it rejects.
fn native(snapshot: &Snapshot, pod: u32) -> BTreeMap<u32, String> {
    (0..snapshot.node_count() as u32)
        .filter_map(|node| {
            let text = match filters::taint_check(snapshot, pod, node) {
                Ok(()) => return None,
                Err(Rejection::Unschedulable) => "node(s) were unschedulable".to_string(),
                Err(Rejection::Taint(id)) => snapshot.taint_texts.text(id).unwrap().to_string(),
                Err(other) => panic!("not a taint verdict: {other:?}"),
            };
            Some((node, text))
        })
        .collect()
}

#[test]
fn the_taint_toleration_component_decides_exactly_as_the_native_check() {
    let config = PluginConfig::default().enable("WaschedTaintToleration");
    let mut set = common::runtime().bundled(&config).unwrap();
    let (mut pods, mut rejections) = (0, 0);
    for files in common::every_snapshot() {
        let mut snapshot = wasched::read_snapshot(&files).unwrap();
        let nodes: Vec<u32> = (0..snapshot.node_count() as u32).collect();
        for pod in 0..snapshot.pods.len() as u32 {
            if !snapshot.pods[pod as usize].pending {
                continue;
            }
            let expected = native(&snapshot, pod);
            let mut plugin = set
                .at(ExtensionPoint::Filter)
                .find(|p| p.name() == "WaschedTaintToleration")
                .expect("enabled");
            let answer = plugin.filter(&mut snapshot, pod, &nodes).unwrap();
            let got: BTreeMap<u32, String> = answer
                .into_iter()
                .flat_map(|r| r.nodes.into_iter().map(move |n| (n, r.reason.clone())))
                .collect();
            assert_eq!(
                got, expected,
                "{files:?}, pod {}",
                snapshot.pods[pod as usize].key
            );
            pods += 1;
            rejections += expected.len();
        }
    }
    // The snapshots exercise the check: cordoned and tainted nodes reject.
    assert!(pods > 100, "{pods} pods");
    assert!(rejections > 20, "{rejections} rejections");
}

/// Enabled in a whole run it changes nothing: the host's own checks have
/// already removed every node it would reject.
#[test]
fn enabling_it_changes_no_decision() {
    let config = PluginConfig::default().enable("WaschedTaintToleration");
    for files in common::every_snapshot() {
        let plain = common::simulate(&files, None).to_json();
        let with = common::simulate_with(&files, None, config.clone()).to_json();
        assert_eq!(plain, with, "{files:?}");
    }
}
