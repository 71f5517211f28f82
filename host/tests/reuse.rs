//! What a run reuses between attempts (running victim units per snapshot
//! generation, every permit verdict of a unit's cycle, the searches that
//! found no node while their nodes stay unchanged, the nodes found short
//! of a pod shape's requests and the parts of their default scores while
//! they stay unchanged, placement answers a
//! plugin marked reusable, and all of these kept from one run to the next
//! over the same nodes) never changes a decision: with each reuse off,
//! every scenario and generated clusters (gangs, trees, preemption) decide
//! byte-identically, and a replay replays the same.

mod common;

use wasched::framework::ExtensionPoint;
use wasched::generate::{Options, Shape};
use wasched::scheduler::RunOptions;
use wasched::scheduler::ablation::Reuse;

/// A run with `reuse`.
fn run_reusing(
    snapshot: &mut wasched::Snapshot,
    plugins: &mut wasched::PluginSet,
    reuse: Reuse,
) -> wasched::Outcome {
    wasched::scheduler::ablation::run_reusing(snapshot, plugins, RunOptions::default(), reuse)
}
use wasched::{PluginConfig, PluginSet, Snapshot};

/// The calls at `point` of the last run.
fn calls_at(plugins: &PluginSet, point: ExtensionPoint) -> u64 {
    plugins
        .call_times()
        .iter()
        .filter(|(_, at, _)| *at == point)
        .map(|(_, _, times)| times.calls)
        .sum()
}

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
        wasched::manifest::expand_workloads(&mut manifests).unwrap();
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
    let variants = [
        Reuse {
            running_units: false,
            ..all
        },
        Reuse {
            permit_verdicts: false,
            ..all
        },
        Reuse {
            misfits: false,
            ..all
        },
        Reuse {
            short_nodes: false,
            ..all
        },
        Reuse {
            node_scores: false,
            ..all
        },
        Reuse {
            placements: false,
            ..all
        },
    ];
    let mut evictions = 0;
    // Permit calls with every verdict kept, and with only the latest.
    let (mut kept, mut latest) = (0, 0);
    // Searches answered from the misfits remembered, with them on and off.
    let (mut remembered, mut remembered_off) = (0, 0);
    // Nodes counted short from what was known, on and off.
    let (mut known_short, mut known_short_off) = (0, 0);
    // Nodes whose score parts were known, on and off.
    let (mut known_scores, mut known_scores_off) = (0, 0);
    // Placement answers reused, and placement-generate calls, on and off.
    let (mut reused, mut reused_off) = (0, 0);
    let (mut generate_calls, mut generate_calls_off) = (0, 0);
    for (name, snapshot) in snapshots() {
        let reference = run_reusing(&mut snapshot.clone(), &mut plugins, all);
        kept += calls_at(&plugins, ExtensionPoint::Permit);
        generate_calls += calls_at(&plugins, ExtensionPoint::PlacementGenerate);
        evictions += reference.evictions.len();
        remembered += reference.placement_stats.remembered_misfits;
        known_short += reference.placement_stats.known_short_nodes;
        known_scores += reference.placement_stats.known_node_scores;
        reused += reference.placement_stats.reused_placements;
        for reuse in variants {
            let outcome = run_reusing(&mut snapshot.clone(), &mut plugins, reuse);
            if !reuse.permit_verdicts {
                latest += calls_at(&plugins, ExtensionPoint::Permit);
            }
            if !reuse.misfits {
                remembered_off += outcome.placement_stats.remembered_misfits;
            }
            if !reuse.short_nodes {
                known_short_off += outcome.placement_stats.known_short_nodes;
            }
            if !reuse.node_scores {
                known_scores_off += outcome.placement_stats.known_node_scores;
            }
            if !reuse.placements {
                reused_off += outcome.placement_stats.reused_placements;
                generate_calls_off += calls_at(&plugins, ExtensionPoint::PlacementGenerate);
            }
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
    assert!(
        remembered > 100 && remembered_off == 0,
        "gangs that fit nowhere are not walked again: {remembered} searches remembered, {remembered_off} with it off"
    );
    assert!(
        known_short > 1000 && known_short_off == 0,
        "nodes short of a shape's requests are not checked again: {known_short} counted as known, {known_short_off} with it off"
    );
    assert!(
        known_scores > 1000 && known_scores_off == 0,
        "a node's score parts are not worked out again in the same state: {known_scores} taken as known, {known_scores_off} with it off"
    );
    assert!(
        reused > 100 && reused_off == 0,
        "reusable placement answers are handed on: {reused} reused, {reused_off} with it off"
    );
    assert_eq!(
        generate_calls + reused,
        generate_calls_off,
        "each answer reused is a placement-generate call saved"
    );
    assert!(
        kept * 10 < latest * 9,
        "keeping every permit verdict saves calls: {kept} calls against {latest}"
    );
}

/// With filter plugins loaded (GpuBinPacking and TaintToleration as
/// components), a search is remembered only when the host's own checks
/// rejected every node before a plugin was asked: still no decision
/// changes, and such searches still occur.
#[test]
fn misfits_with_filter_plugins_never_change_a_decision() {
    let config = PluginConfig::default()
        .enable("WaschedGpuBinPacking")
        .enable("WaschedTaintToleration");
    let mut plugins = common::runtime().bundled(&config).unwrap();
    assert!(plugins.any_at(ExtensionPoint::Filter));
    let off = Reuse {
        misfits: false,
        ..Reuse::default()
    };
    let mut remembered = 0;
    for (name, snapshot) in snapshots() {
        let reference = run_reusing(&mut snapshot.clone(), &mut plugins, off);
        let outcome = run_reusing(&mut snapshot.clone(), &mut plugins, Reuse::default());
        remembered += outcome.placement_stats.remembered_misfits;
        assert_eq!(outcome.to_json(), reference.to_json(), "{name}");
    }
    assert!(
        remembered > 0,
        "searches the host's checks alone rejected are remembered: {remembered}"
    );
}

/// A placement answer kept for a unit without running pods is never handed
/// to one with a running member: `pinned` (a member running in rack r2)
/// stays in r2 after `first` (same key, same parent, no running pod) had
/// its racks generated, though r1 would score higher.
#[test]
fn a_unit_with_a_running_member_is_asked_not_handed_a_kept_answer() {
    let node = |name: &str, rack: &str, cpu: u32| {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{example.com/rack: {rack}}}}}\nstatus: {{allocatable: {{cpu: \"{cpu}\", pods: \"110\"}}}}\n---\n"
        )
    };
    let group = |name: &str, min: u32, created: u32| {
        format!(
            "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {{name: {name}, namespace: t, creationTimestamp: \"2026-01-01T00:00:{created:02}Z\"}}\nspec: {{schedulingPolicy: {{gang: {{minCount: {min}}}}}, schedulingConstraints: {{topology: [{{key: example.com/rack}}]}}}}\n---\n"
        )
    };
    let pod = |name: &str, group: Option<&str>, cpu: &str, node: Option<&str>| {
        let group = group.map_or(String::new(), |g| {
            format!("  schedulingGroup: {{podGroupName: {g}}}\n")
        });
        let (node, phase) = node.map_or((String::new(), "Pending"), |n| {
            (format!("  nodeName: {n}\n"), "Running")
        });
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: t}}\nspec:\n{group}{node}  containers: [{{name: c, image: x, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]\nstatus: {{phase: {phase}}}\n---\n"
        )
    };
    let text = [
        node("n0", "r1", 4),
        node("n1", "r2", 16),
        // r1 is nearly full, so it scores higher for a pod that fits there.
        pod("filler", None, "3", Some("n0")),
        // `first` fits nowhere, but its racks are generated (and kept).
        group("first", 1, 1),
        pod("first-0", Some("first"), "32", None),
        group("pinned", 2, 2),
        pod("pinned-0", Some("pinned"), "1", Some("n1")),
        pod("pinned-1", Some("pinned"), "1", None),
    ]
    .concat();
    let mut manifests = wasched::manifest::Manifests::default();
    wasched::manifest::load_str(&mut manifests, "pinned.yaml", &text).unwrap();
    let snapshot = Snapshot::build(&manifests).unwrap();
    let mut plugins = common::runtime().bundled(&PluginConfig::default()).unwrap();
    let off = Reuse {
        placements: false,
        ..Reuse::default()
    };
    let reference = run_reusing(&mut snapshot.clone(), &mut plugins, off);
    let outcome = run_reusing(&mut snapshot.clone(), &mut plugins, Reuse::default());
    let bound: Vec<(&str, &str)> = outcome
        .placements
        .iter()
        .map(|b| (b.pod.as_str(), b.node.as_str()))
        .collect();
    assert_eq!(bound, [("t/pinned-1", "n1")]);
    assert_eq!(outcome.to_json(), reference.to_json());
    assert_eq!(outcome.placement_stats.reused_placements, 0);
}

/// A replay keeps the cycle's caches from one run to the next (its nodes
/// never change while pods come and go, their ids moving): a generated
/// trace of gangs and single pods that preempt replays the same with every
/// run starting empty.
#[test]
fn caches_kept_across_a_replays_runs_never_change_it() {
    use std::time::Duration;
    use wasched::replay::{self, JobRow, generate::TraceOptions};

    let yaml = wasched::generate::generate_yaml(&Options {
        nodes: 48,
        pending_pods: 0,
        seed: 3,
        shape: Shape::Gpu,
    })
    .unwrap();
    let manifests =
        wasched::read_manifests_text("generated.yaml", &yaml, &Default::default()).unwrap();
    let jobs = replay::generate::trace(&TraceOptions {
        jobs: 150,
        mean_gap: Duration::from_secs(15),
        max_workers: 16,
        seed: 3,
    });
    let mut plugins = common::runtime().bundled(&PluginConfig::default()).unwrap();
    let mut replayed = |reuse: Reuse| {
        let model = replay::model_of(manifests.clone()).unwrap();
        let mut rows: Vec<JobRow> = Vec::new();
        let options = replay::Options::default();
        let summary = replay::replay_reusing(
            model,
            jobs.clone(),
            &mut plugins,
            &options,
            &mut rows,
            reuse,
        )
        .unwrap();
        (rows, summary)
    };
    let (kept_rows, kept) = replayed(Reuse::default());
    let (fresh_rows, fresh) = replayed(Reuse {
        across_runs: false,
        ..Reuse::default()
    });
    let (unknown_rows, unknown) = replayed(Reuse {
        short_nodes: false,
        ..Reuse::default()
    });
    assert_eq!(kept_rows, unknown_rows, "short nodes off");
    assert_eq!(kept, unknown, "short nodes off");
    let (unscored_rows, unscored) = replayed(Reuse {
        node_scores: false,
        ..Reuse::default()
    });
    assert_eq!(kept_rows, unscored_rows, "node scores off");
    assert_eq!(kept, unscored, "node scores off");
    assert!(
        kept.evictions > 0 && kept.attempts > 2 * kept.jobs,
        "the trace preempts and retries: {kept:?}"
    );
    assert_eq!(kept_rows, fresh_rows);
    assert_eq!(kept, fresh);
}
