//! Fuzzing that reaches the scheduler: random generated clusters (gangs,
//! basic groups, topology groups, CompositePodGroup trees, lone pods,
//! running PodGroups, PodDisruptionBudgets, enough load that preemption
//! runs) scheduled with the bundled plugins — natively, and as components
//! in a smaller run — and the invariants every run must keep checked
//! afterwards:
//!
//! - no node ends over its allocatable where the run placed pods;
//! - the model's requested columns equal the sum over the pods on each
//!   node (every trial and search rolled back exactly), and no pod is left
//!   nominated;
//! - every victim has a lower priority than its preemptor;
//! - an admitted PodGroup has at least `minCount` members placed;
//! - no pod is bound twice, bound and evicted, bound while not pending or
//!   evicted while not running;
//! - the same snapshot gives byte-identical output twice.
//!
//! A separate property drives random assume / remove / checkpoint /
//! rollback sequences against the model and checks that a rollback
//! restores it exactly.
//!
//! Each property counts how many of its cases reached preemption (a trial
//! ran), evicted, and ran the tree search, prints the counts, and fails if
//! its cases never get there. The cases come from `WASCHED_FUZZ_SEED`
//! (default 0, the same cases on every run). Case counts: `WASCHED_FUZZ_CASES=N` sets the
//! native scheduling property's (default 96); the component property runs
//! an eighth of it, the rollback property as many clusters with eight
//! sequences on each (eight times as many sequences). A long run:
//! `WASCHED_FUZZ_CASES=200000 cargo test --release -p wasched --test
//! fuzz_scheduler -- --nocapture`.

mod common;

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use wasched::generate::{Options, Shape};
use wasched::manifest::{Manifests, expand_workloads, load_str};
use wasched::{Outcome, PluginSet, Snapshot};

/// The native property's case count.
fn cases() -> u32 {
    std::env::var("WASCHED_FUZZ_CASES")
        .ok()
        .map(|n| n.parse().expect("WASCHED_FUZZ_CASES is a number"))
        .unwrap_or(96)
}

/// A runner of `cases` cases from `WASCHED_FUZZ_SEED` (a number; 0 by
/// default, so that the run in `cargo test` is the same every time).
fn runner(cases: u32) -> TestRunner {
    let seed: u64 = std::env::var("WASCHED_FUZZ_SEED")
        .ok()
        .map(|n| n.parse().expect("WASCHED_FUZZ_SEED is a number"))
        .unwrap_or(0);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// A small generated cluster: (nodes, pending pods, seed, shape).
fn cluster() -> impl Strategy<Value = Options> {
    (
        4usize..56,
        2usize..90,
        any::<u64>(),
        prop_oneof![Just(Shape::Mixed), Just(Shape::Gpu), Just(Shape::Cpu)],
    )
        .prop_map(|(nodes, pending_pods, seed, shape)| Options {
            nodes,
            pending_pods,
            seed,
            shape,
        })
}

fn snapshot_of(options: &Options) -> Snapshot {
    let yaml = wasched::generate::generate_yaml(options).expect("the generator's own output");
    let mut manifests = Manifests::default();
    load_str(&mut manifests, "generated.yaml", &yaml).unwrap();
    expand_workloads(&mut manifests).unwrap();
    Snapshot::build(&manifests).unwrap()
}

/// How far the cases of one property got.
#[derive(Debug, Default)]
struct Reach {
    cases: u64,
    preemption: u64,
    evicted: u64,
    trees: u64,
}

impl Reach {
    fn count(&mut self, outcome: &Outcome) {
        self.cases += 1;
        let stats = &outcome.placement_stats;
        let attempted = stats.trial_feasible + stats.trial_infeasible > 0
            || outcome.unschedulable.iter().any(|u| u.preemption.is_some())
            || outcome.pod_groups.iter().any(|g| g.preemption.is_some());
        self.preemption += u64::from(attempted);
        self.evicted += u64::from(!outcome.evictions.is_empty());
        self.trees += u64::from(stats.tree_searches > 0);
    }

    fn report(&self, property: &str) {
        eprintln!(
            "{property}: {} cases, {} reached preemption, {} evicted, {} ran the tree search",
            self.cases, self.preemption, self.evicted, self.trees
        );
        assert!(
            self.preemption > 0 && self.evicted > 0 && self.trees > 0,
            "{property}: the cases must reach preemption, evictions and the tree search: {self:?}"
        );
    }
}

/// The priority of a preemptor named in an eviction: a pod, a PodGroup or
/// a CompositePodGroup root.
fn preemptor_priority(snapshot: &Snapshot, by: &str) -> Option<i32> {
    if let Some(p) = snapshot.pods.iter().find(|p| p.key == by) {
        return Some(p.priority);
    }
    if let Some(g) = snapshot.groups.iter().find(|g| g.key == by) {
        return g.spec.as_ref().map(|s| s.priority);
    }
    snapshot
        .composites
        .iter()
        .find(|c| c.key == by)
        .map(|c| c.spec.priority)
}

/// Every invariant of one run: `before` is the snapshot as built, `after`
/// the model once the run is done.
fn check(before: &Snapshot, after: &Snapshot, outcome: &Outcome) -> Result<(), TestCaseError> {
    let index: BTreeMap<&str, usize> = before
        .pods
        .iter()
        .enumerate()
        .map(|(i, p)| (p.key.as_str(), i))
        .collect();
    // Bindings: once each, of pending pods, never evicted too.
    let mut bound = BTreeSet::new();
    for b in &outcome.placements {
        prop_assert!(bound.insert(b.pod.as_str()), "{} bound twice", b.pod);
        let pod = &before.pods[index[b.pod.as_str()]];
        prop_assert!(pod.pending, "{} bound but was not pending", b.pod);
    }
    for e in &outcome.evictions {
        prop_assert!(
            !bound.contains(e.pod.as_str()),
            "{} bound and evicted",
            e.pod
        );
        let victim = &before.pods[index[e.pod.as_str()]];
        prop_assert!(
            before.is_running(index[e.pod.as_str()] as u32),
            "{} evicted but was not running",
            e.pod
        );
        let by = preemptor_priority(before, &e.by);
        prop_assert!(
            by.is_some_and(|p| victim.priority < p),
            "victim {} (priority {}) of {} (priority {by:?})",
            e.pod,
            victim.priority,
            e.by
        );
    }
    // The model: columns equal the pods on each node, nothing nominated,
    // no node the run placed pods on over its allocatable.
    let resources = after.resource_names.len();
    let touched: BTreeSet<u32> = outcome
        .placements
        .iter()
        .filter_map(|b| after.nodes.iter().position(|n| n.name == b.node))
        .map(|n| n as u32)
        .collect();
    for node in 0..after.node_count() as u32 {
        let on_node = after.pods_on_node(node);
        for r in 0..resources {
            let sum: u64 = on_node
                .iter()
                .map(|&p| after.pods[p as usize].requests[r])
                .sum();
            prop_assert_eq!(
                after.requested(r)[node as usize],
                sum,
                "node {} resource {}: requested column drifted from its pods",
                &after.nodes[node as usize].name,
                &after.resource_names[r]
            );
            if touched.contains(&node) {
                let allocatable = after.allocatable(r)[node as usize];
                let before_sum = before.requested(r)[node as usize];
                prop_assert!(
                    sum <= allocatable.max(before_sum),
                    "node {} over its allocatable {}: {sum} > {allocatable}",
                    &after.nodes[node as usize].name,
                    &after.resource_names[r]
                );
            }
        }
        let scoring: [u64; 2] = [0, 1].map(|r| {
            on_node
                .iter()
                .map(|&p| after.pods[p as usize].scoring_requests[r])
                .sum()
        });
        prop_assert_eq!(after.scoring_requested(node), scoring);
        prop_assert_eq!(
            after.requested_without_nominated(node),
            [0, 1].map(|r| after.requested(r)[node as usize])
        );
    }
    prop_assert!(
        after.pods.iter().all(|p| !p.nominated),
        "a pod left nominated"
    );
    // Admitted groups: at least minCount members placed.
    for decision in outcome.pod_groups.iter().filter(|d| d.scheduled) {
        let Some(group) = after.groups.iter().find(|g| g.key == decision.pod_group) else {
            continue;
        };
        let placed = group
            .members
            .iter()
            .filter(|&&p| after.pods[p as usize].node.is_some())
            .count() as u32;
        // A group entry only for the disruption it suffered has no claim.
        if let Some(min_count) = decision.min_count.filter(|_| decision.bound > 0) {
            prop_assert!(
                placed >= min_count,
                "{} admitted with {placed} of minCount {min_count}",
                decision.pod_group
            );
        }
    }
    Ok(())
}

/// Schedules one cluster with `plugins`, checks every invariant, and (every
/// `twice`-th case) that a second run prints the same bytes.
fn schedule_and_check(
    options: &Options,
    plugins: &mut dyn FnMut() -> PluginSet,
    twice: bool,
    reach: &mut Reach,
) -> Result<(), TestCaseError> {
    let before = snapshot_of(options);
    let mut after = before.clone();
    let outcome = wasched::scheduler::run(
        &mut after,
        &mut plugins(),
        wasched::scheduler::RunOptions::default(),
    );
    check(&before, &after, &outcome)?;
    if twice {
        let again = wasched::scheduler::run(
            &mut before.clone(),
            &mut plugins(),
            wasched::scheduler::RunOptions::default(),
        );
        prop_assert_eq!(outcome.to_json(), again.to_json(), "not deterministic");
    }
    reach.count(&outcome);
    Ok(())
}

#[test]
fn bundled_plugins_native_keep_every_invariant() {
    let reach = RefCell::new(Reach::default());
    let n = Cell::new(0u64);
    runner(cases())
        .run(&cluster(), |options| {
            n.set(n.get() + 1);
            let binpack = n.get().is_multiple_of(3);
            schedule_and_check(
                &options,
                &mut || common::native_plugins(binpack),
                n.get().is_multiple_of(16),
                &mut reach.borrow_mut(),
            )
        })
        .unwrap();
    reach.borrow().report("native");
}

#[test]
fn bundled_components_keep_every_invariant() {
    let runtime = common::runtime();
    let reach = RefCell::new(Reach::default());
    let config = wasched::PluginConfig::default();
    runner((cases() / 8).max(12))
        .run(&cluster(), |options| {
            schedule_and_check(
                &options,
                &mut || runtime.bundled(&config).unwrap(),
                false,
                &mut reach.borrow_mut(),
            )
        })
        .unwrap();
    reach.borrow().report("components");
}

/// Every pod's node, the requested columns, and per node the scoring and
/// non-nominated cpu and memory.
type Fingerprint = (Vec<Option<u32>>, Vec<Vec<u64>>, Vec<[u64; 2]>);

/// What a rollback must restore: every placement and every column.
fn fingerprint(snapshot: &Snapshot) -> Fingerprint {
    let nodes = snapshot.node_count() as u32;
    (
        snapshot.pods.iter().map(|p| p.node).collect(),
        (0..snapshot.resource_names.len())
            .map(|r| snapshot.requested(r).to_vec())
            .collect(),
        (0..nodes)
            .flat_map(|n| {
                [
                    snapshot.scoring_requested(n),
                    snapshot.requested_without_nominated(n),
                ]
            })
            .collect(),
    )
}

/// One step of a random sequence against the model.
#[derive(Debug, Clone)]
enum Step {
    Assume(prop::sample::Index, prop::sample::Index),
    Nominate(prop::sample::Index, prop::sample::Index),
    Remove(prop::sample::Index),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (any::<prop::sample::Index>(), any::<prop::sample::Index>())
            .prop_map(|(p, n)| Step::Assume(p, n)),
        (any::<prop::sample::Index>(), any::<prop::sample::Index>())
            .prop_map(|(p, n)| Step::Nominate(p, n)),
        any::<prop::sample::Index>().prop_map(Step::Remove),
    ]
}

/// Sequences tried on each generated cluster (each on a copy of it): the
/// cluster is the costly part of a case.
const SEQUENCES_PER_CLUSTER: usize = 8;

#[test]
fn rollback_restores_the_model_exactly() {
    let reach = Cell::new(0u64);
    let sequence = (
        proptest::collection::vec(step(), 1..40),
        proptest::collection::vec(step(), 0..40),
    );
    let strategy = (
        cluster(),
        proptest::collection::vec(sequence, SEQUENCES_PER_CLUSTER),
    );
    runner(cases())
        .run(&strategy, |(options, sequences)| {
            let built = snapshot_of(&options);
            if built.node_count() == 0 || built.pods.is_empty() {
                return Ok(());
            }
            let nodes = built.node_count();
            let pods = built.pods.len();
            let apply = |snapshot: &mut Snapshot, steps: &[Step]| {
                for step in steps {
                    match step {
                        Step::Assume(p, n) | Step::Nominate(p, n) => {
                            let pod = p.index(pods) as u32;
                            if snapshot.pods[pod as usize].node.is_none() {
                                let node = n.index(nodes) as u32;
                                if matches!(step, Step::Nominate(..)) {
                                    snapshot.nominate(pod, node);
                                } else {
                                    snapshot.assume(pod, node);
                                }
                            }
                        }
                        Step::Remove(p) => snapshot.remove(p.index(pods) as u32),
                    }
                }
            };
            for (before, after) in &sequences {
                let mut snapshot = built.clone();
                // Changes before the checkpoint stay; those after it go.
                apply(&mut snapshot, before);
                let kept = fingerprint(&snapshot);
                let checkpoint = snapshot.checkpoint();
                apply(&mut snapshot, after);
                snapshot.rollback(checkpoint);
                prop_assert_eq!(fingerprint(&snapshot), kept);
                reach.set(reach.get() + 1);
            }
            Ok(())
        })
        .unwrap();
    eprintln!(
        "rollback: {} sequences rolled back and compared",
        reach.get()
    );
    assert!(reach.get() > 0);
}

/// The checks bite: a run's outcome, tampered with, fails them.
#[test]
fn the_checks_catch_a_broken_run() {
    let options = Options {
        nodes: 200,
        pending_pods: 400,
        seed: 15,
        shape: Shape::Mixed,
    };
    let before = snapshot_of(&options);
    let mut after = before.clone();
    let outcome = wasched::scheduler::run(
        &mut after,
        &mut common::native_plugins(false),
        wasched::scheduler::RunOptions::default(),
    );
    check(&before, &after, &outcome).unwrap();
    assert!(!outcome.evictions.is_empty(), "the case must preempt");

    let mut twice = outcome.clone();
    twice.placements.push(twice.placements[0].clone());
    assert!(check(&before, &after, &twice).is_err(), "a pod bound twice");

    let mut reversed = outcome.clone();
    let victim = reversed.evictions[0].pod.clone();
    reversed.evictions[0].by = victim;
    assert!(
        check(&before, &after, &reversed).is_err(),
        "a victim of its own priority"
    );

    let mut drifted = after.clone();
    let pod = drifted.pods.iter().position(|p| p.node.is_some()).unwrap();
    drifted.pods.get_mut(pod).requests[0] += 1;
    assert!(
        check(&before, &drifted, &outcome).is_err(),
        "a column drifted from its pods"
    );
}
