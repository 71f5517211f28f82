//! The host's node checks made ready for a walk ([`NodeChecks`]) decide
//! exactly as the checks asked node by node ([`filters::check`]): on every
//! scenario, the default snapshot and the sandbox snapshots, for every
//! pending pod on every node, the same verdict and the same rejection; and
//! again with every pending pod assumed onto the first node, which leaves
//! it overcommitted (more requested than allocatable).

mod common;

use wasched::Snapshot;
use wasched::filters::{self, NodeChecks, PreFilter, StaticVerdicts};

/// Pod-node pairs compared, how many were rejected, how many for
/// resources, and how many were on an overcommitted node.
#[derive(Default)]
struct Compared {
    pairs: usize,
    rejected: usize,
    short: usize,
    overcommitted: usize,
}

fn compare(what: &str, snapshot: &Snapshot, pending: &[u32], counts: &mut Compared) {
    for &pod in pending {
        let statics = StaticVerdicts::of(snapshot, pod);
        let state = PreFilter::for_pod(snapshot, pod);
        let checks = NodeChecks::new(snapshot, pod, &statics, &state);
        for node in 0..snapshot.node_count() as u32 {
            let expected = filters::check(snapshot, pod, node, &state);
            assert_eq!(checks.check(node), expected, "{what} pod {pod} node {node}");
            counts.pairs += 1;
            counts.rejected += usize::from(expected.is_err());
            counts.short += usize::from(matches!(expected, Err(filters::Rejection::Resources(_))));
            let n = node as usize;
            counts.overcommitted += usize::from((0..2).any(|r| {
                snapshot.requested(r).get(n).copied().unwrap_or(0)
                    > snapshot.allocatable(r).get(n).copied().unwrap_or(0)
            }));
        }
    }
}

#[test]
fn prepared_checks_decide_as_the_checks_node_by_node() {
    let mut counts = Compared::default();
    for files in common::every_snapshot() {
        let snapshot = wasched::read_snapshot(&files).unwrap();
        let pending: Vec<u32> = (0..snapshot.pods.len() as u32)
            .filter(|&pod| snapshot.pods[pod as usize].pending)
            .collect();
        compare(&format!("{files:?}"), &snapshot, &pending, &mut counts);
        if snapshot.node_count() == 0 {
            continue;
        }
        let mut crowded = snapshot.clone();
        for &pod in &pending {
            crowded.assume(pod, 0);
        }
        compare(
            &format!("{files:?}, crowded"),
            &crowded,
            &pending,
            &mut counts,
        );
    }
    let Compared {
        pairs,
        rejected,
        short,
        overcommitted,
    } = counts;
    assert!(
        pairs > 500 && rejected > 200 && short > 100 && overcommitted > 100,
        "{pairs} pod-node pairs, {rejected} rejected, {short} for resources, {overcommitted} on overcommitted nodes"
    );
}
