//! What a run reuses between attempts (running victim units per snapshot
//! generation) never changes a decision: with each reuse off, every
//! scenario and generated clusters (gangs, trees, preemption) decide
//! byte-identically.

mod common;

use wasched::generate::{Options, Shape};
use wasched::scheduler::{Reuse, run_reusing};
use wasched::{PluginConfig, Snapshot};

fn snapshots() -> Vec<(String, Snapshot)> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(common::testdata("scenarios")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let snapshot = wasched::read_snapshot(std::slice::from_ref(&path)).unwrap();
            all.push((path.display().to_string(), snapshot));
        }
    }
    for (seed, shape) in [(1, Shape::Gpu), (2, Shape::Mixed), (3, Shape::Cpu)] {
        let options = Options {
            nodes: 300,
            pending_pods: 600,
            seed,
            shape,
        };
        let text = wasched::generate::generate_json(&options).unwrap();
        let mut manifests = wasched::manifest::Manifests::default();
        wasched::manifest::load_str(&mut manifests, "generated.json", &text).unwrap();
        wasched::manifest::expand_jobs(&mut manifests).unwrap();
        all.push((
            format!("generated seed {seed}"),
            Snapshot::build(&manifests).unwrap(),
        ));
    }
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

#[test]
fn reuse_never_changes_a_decision() {
    let mut plugins = common::runtime().bundled(&PluginConfig::default()).unwrap();
    let all = Reuse::default();
    let variants = [Reuse {
        running_units: false,
    }];
    let mut evictions = 0;
    for (name, snapshot) in snapshots() {
        let reference = run_reusing(&mut snapshot.clone(), &mut plugins, all);
        evictions += reference.evictions.len();
        for reuse in variants {
            let outcome = run_reusing(&mut snapshot.clone(), &mut plugins, reuse);
            assert_eq!(
                outcome.to_json(),
                reference.to_json(),
                "{name} with {reuse:?}"
            );
        }
    }
    assert!(
        evictions > 10,
        "the snapshots preempt: {evictions} evictions"
    );
}
