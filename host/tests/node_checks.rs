//! The host's node checks made ready for a walk ([`NodeChecks`]) decide
//! exactly as the checks asked node by node ([`filters::check`]): on every
//! scenario, the default snapshot and the sandbox snapshots, for every
//! pending pod on every node, the same verdict and the same rejection.

mod common;

use wasched::filters::{self, NodeChecks, PreFilter, StaticVerdicts};

#[test]
fn prepared_checks_decide_as_the_checks_node_by_node() {
    let (mut pairs, mut rejected, mut short) = (0, 0, 0);
    for files in common::every_snapshot() {
        let snapshot = wasched::read_snapshot(&files).unwrap();
        for pod in 0..snapshot.pods.len() as u32 {
            if !snapshot.pods[pod as usize].pending {
                continue;
            }
            let statics = StaticVerdicts::of(&snapshot, pod);
            let state = PreFilter::for_pod(&snapshot, pod);
            let checks = NodeChecks::new(&snapshot, pod, &statics, &state);
            for node in 0..snapshot.node_count() as u32 {
                let expected = filters::check(&snapshot, pod, node, &state);
                assert_eq!(
                    checks.check(node),
                    expected,
                    "{files:?} pod {pod} node {node}"
                );
                pairs += 1;
                rejected += usize::from(expected.is_err());
                short += usize::from(matches!(expected, Err(filters::Rejection::Resources(_))));
            }
        }
    }
    assert!(
        pairs > 500 && rejected > 200 && short > 100,
        "{pairs} pod-node pairs, {rejected} rejected, {short} for resources"
    );
}
