//! Table-driven tests of the reprieve order and the candidate choice, and of
//! the plugin over a [`FakeCluster`], run natively.

use super::*;
use alloc::vec;
use wasched_sdk::fake::{FakeCluster, take_logs};
use wasched_sdk::{PodGroupId, Unit};

/// A single-pod victim unit: pod `index`, priority 0, start 0, no budget.
fn pod(index: u32) -> VictimUnit {
    VictimUnit {
        index,
        pods: vec![index],
        group: None,
        priority: 0,
        start_time: 0,
        violates_budget: false,
    }
}

/// A PodGroup victim unit of group `group` with `size` pods.
fn group(index: u32, group: PodGroupId, size: u32) -> VictimUnit {
    VictimUnit {
        pods: (0..size).map(|i| 100 * (index + 1) + i).collect(),
        group: Some(group),
        ..pod(index)
    }
}

fn prio(unit: VictimUnit, priority: i32) -> VictimUnit {
    VictimUnit { priority, ..unit }
}

fn start(unit: VictimUnit, start_time: i64) -> VictimUnit {
    VictimUnit { start_time, ..unit }
}

fn pdb(unit: VictimUnit) -> VictimUnit {
    VictimUnit {
        violates_budget: true,
        ..unit
    }
}

fn plugin(args: &str) -> WorkloadPreemption {
    wasched_sdk::configure::<WorkloadPreemption>(args).unwrap()
}

const LONE: Preemptor = Preemptor::Pod(0);
const GANG: Preemptor = Preemptor::Unit(Unit::PodGroup(0));

// ---------------------------------------------------------------------------
// Reprieve order
// ---------------------------------------------------------------------------

#[test]
fn reprieve_order_table() {
    struct Case {
        name: &'static str,
        budget_violations_first: bool,
        units: Vec<VictimUnit>,
        order: Vec<u32>,
    }
    let case = |name, units, order| Case {
        name,
        budget_violations_first: true,
        units,
        order,
    };
    let cases = [
        case("empty", vec![], vec![]),
        case(
            "higher priority first",
            vec![prio(pod(0), 1), prio(pod(1), 5), prio(pod(2), -3)],
            vec![1, 0, 2],
        ),
        case(
            "equal priority: PodGroup unit before single pod",
            vec![pod(0), group(1, 7, 1)],
            vec![1, 0],
        ),
        case(
            "PodGroup before pod even when the pod is older",
            vec![start(pod(0), 10), start(group(1, 7, 2), 99)],
            vec![1, 0],
        ),
        case(
            "priority beats group-before-pod",
            vec![prio(group(0, 7, 4), 1), prio(pod(1), 2)],
            vec![1, 0],
        ),
        case(
            "groups: larger first",
            vec![group(0, 7, 2), group(1, 8, 5), group(2, 9, 3)],
            vec![1, 2, 0],
        ),
        case(
            "groups: size beats start",
            vec![start(group(0, 7, 2), 10), start(group(1, 8, 3), 50)],
            vec![1, 0],
        ),
        case(
            "groups of equal size: older first",
            vec![start(group(0, 7, 2), 50), start(group(1, 8, 2), 10)],
            vec![1, 0],
        ),
        case(
            "single pods: older first",
            vec![start(pod(0), 30), start(pod(1), 10), start(pod(2), 20)],
            vec![1, 2, 0],
        ),
        case(
            "full tie: smaller index first",
            vec![pod(2), pod(0), pod(1)],
            vec![0, 1, 2],
        ),
        case(
            "budget-violating first, even at lower priority",
            vec![
                prio(pod(0), 9),
                pdb(prio(pod(1), 1)),
                prio(group(2, 7, 3), 5),
            ],
            vec![1, 0, 2],
        ),
        case(
            "within budget-violating units, the usual order",
            vec![pdb(prio(pod(0), 1)), pdb(prio(pod(1), 4)), prio(pod(2), 9)],
            vec![1, 0, 2],
        ),
        case(
            "every criterion at once",
            vec![
                prio(start(pod(0), 5), 1),         // low priority, old pod
                prio(start(group(1, 7, 2), 9), 3), // small group
                prio(start(pod(2), 1), 3),         // pod at priority 3
                prio(start(group(3, 8, 4), 9), 3), // large group
                prio(start(group(4, 9, 2), 2), 3), // small group, older
                pdb(prio(pod(5), 0)),              // violates a budget
                prio(start(pod(6), 0), 3),         // oldest pod at priority 3
                prio(start(pod(7), 5), 1),         // tie with 0: index
            ],
            vec![5, 3, 4, 1, 6, 2, 0, 7],
        ),
        Case {
            name: "budgetViolationsFirst: false ignores budgets",
            budget_violations_first: false,
            units: vec![
                prio(pod(0), 9),
                pdb(prio(pod(1), 1)),
                prio(group(2, 7, 3), 5),
            ],
            order: vec![0, 2, 1],
        },
    ];
    for case in cases {
        assert_eq!(
            order(&case.units, case.budget_violations_first),
            case.order,
            "{}",
            case.name
        );
        // The input order never matters.
        let mut reversed = case.units.clone();
        reversed.reverse();
        assert_eq!(
            order(&reversed, case.budget_violations_first),
            case.order,
            "{} (reversed input)",
            case.name
        );
    }
}

/// [`order_victims`] with each unit ranked by its `group` alone.
fn order(units: &[VictimUnit], budget_violations_first: bool) -> Vec<u32> {
    let ranked: Vec<Ranked> = units.iter().map(Ranked::by_group).collect();
    order_victims(&ranked, budget_violations_first)
}

#[test]
fn ranks_put_composites_before_groups_before_lone_pods() {
    // Equal priority, size and start: only the rank differs.
    let (lone, member, composite) = (pod(0), pod(1), group(2, 7, 1));
    let ranked = [
        Ranked {
            unit: &lone,
            rank: victim_rank(false, false),
        },
        Ranked {
            unit: &member,
            rank: victim_rank(false, true),
        },
        Ranked {
            unit: &composite,
            rank: victim_rank(true, true),
        },
    ];
    assert_eq!(order_victims(&ranked, true), vec![2, 1, 0]);
    // Size counts between any two units of one rank, pods included.
    let (small, large) = (group(0, 7, 1), group(1, 8, 3));
    assert_eq!(
        order_victims(&[Ranked::by_group(&small), Ranked::by_group(&large)], true),
        vec![1, 0]
    );
}

/// A small deterministic generator (xorshift64*), so the property loop needs
/// no external crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_units(rng: &mut Rng) -> Vec<VictimUnit> {
    let n = rng.below(13) as u32;
    // Indices: a shuffled 0..n (Fisher-Yates), sometimes with a gap.
    let offset = if rng.below(4) == 0 { 3 } else { 0 };
    let mut indices: Vec<u32> = (offset..n + offset).collect();
    for i in (1..indices.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        indices.swap(i, j);
    }
    indices
        .into_iter()
        .map(|index| {
            let unit = if rng.below(2) == 0 {
                pod(index)
            } else {
                group(index, index, 1 + rng.below(4) as u32)
            };
            VictimUnit {
                priority: rng.below(4) as i32 - 1,
                start_time: rng.below(4) as i64,
                violates_budget: rng.below(3) == 0,
                ..unit
            }
        })
        .collect()
}

#[test]
fn order_victims_is_always_a_sorted_permutation() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..2000 {
        let units = random_units(&mut rng);
        for budget_violations_first in [true, false] {
            let order = order(&units, budget_violations_first);
            let mut got = order.clone();
            got.sort_unstable();
            let mut want: Vec<u32> = units.iter().map(|u| u.index).collect();
            want.sort_unstable();
            assert_eq!(got, want, "round {round}: not a permutation");

            let by_index = |index: u32| units.iter().find(|u| u.index == index).unwrap();
            for pair in order.windows(2) {
                let (a, b) = (by_index(pair[0]), by_index(pair[1]));
                assert_eq!(
                    compare_victims(
                        Ranked::by_group(a),
                        Ranked::by_group(b),
                        budget_violations_first
                    ),
                    Ordering::Less,
                    "round {round}: {a:?} must come before {b:?}"
                );
            }

            let mut reversed = units.clone();
            reversed.reverse();
            assert_eq!(
                self::order(&reversed, budget_violations_first),
                order,
                "round {round}: depends on input order"
            );
        }
    }
}

#[test]
fn plugin_orders_victims_per_its_args() {
    let cluster = FakeCluster::new();
    let units = [prio(pod(0), 9), pdb(prio(pod(1), 1))];
    assert_eq!(
        plugin("{}").order_victims(&cluster, GANG, &units),
        Ok(vec![1, 0])
    );
    assert_eq!(
        plugin(r#"{"budgetViolationsFirst": false}"#).order_victims(&cluster, LONE, &units),
        Ok(vec![0, 1])
    );
}

// ---------------------------------------------------------------------------
// Candidate choice
// ---------------------------------------------------------------------------

fn candidate(index: u32, victims: Vec<VictimUnit>) -> PreemptionCandidate {
    PreemptionCandidate {
        index,
        domain: format!("domain-{index}"),
        victims,
        assignments: vec![],
    }
}

/// Picks under `policy` with no GPUs anywhere, whatever the list order.
fn pick(policy: CandidatePolicy, a: &PreemptionCandidate, b: &PreemptionCandidate) -> u32 {
    let forward = select_candidate(policy, &[a.clone(), b.clone()], |_| 0).unwrap();
    let backward = select_candidate(policy, &[b.clone(), a.clone()], |_| 0).unwrap();
    assert_eq!(forward, backward, "the list order must not matter");
    forward
}

/// Each row: two candidates equal in every criterion before the one under
/// test, and the index that criterion picks.
#[test]
fn default_candidate_choice_table() {
    struct Case {
        criterion: &'static str,
        a: Vec<VictimUnit>,
        b: Vec<VictimUnit>,
        winner: u32,
    }
    let cases = [
        Case {
            criterion: "1. fewest PDB-violating victim units",
            a: vec![pdb(prio(pod(10), 1)), prio(pod(11), 1)],
            b: vec![prio(pod(20), 1), prio(pod(21), 1)],
            winner: 1,
        },
        Case {
            criterion: "1. PDB count beats everything after it",
            a: vec![pdb(prio(pod(10), 0))],
            b: vec![prio(pod(20), 7), prio(pod(21), 7), prio(pod(22), 7)],
            winner: 1,
        },
        Case {
            // Sums are equal (6), pods equal (2).
            criterion: "2. lowest highest victim priority",
            a: vec![prio(pod(10), 5), prio(pod(11), 1)],
            b: vec![prio(pod(20), 3), prio(pod(21), 3)],
            winner: 1,
        },
        Case {
            criterion: "2. no victims beat any victim",
            a: vec![prio(pod(10), -100)],
            b: vec![],
            winner: 1,
        },
        Case {
            // Highest equal (3), pods equal (2).
            criterion: "3. lowest priority sum",
            a: vec![prio(pod(10), 3), prio(pod(11), 2)],
            b: vec![prio(pod(20), 3), prio(pod(21), 1)],
            winner: 1,
        },
        Case {
            criterion: "3. the sum counts every pod of a group unit",
            a: vec![prio(group(10, 1, 3), 3)],
            b: vec![prio(pod(20), 3), prio(pod(21), 3)],
            winner: 1,
        },
        Case {
            // With kube-scheduler's per-pod offset of 2^31 the shifted sums
            // (p + 2^31) tie only when the extra victim sits at i32::MIN.
            criterion: "4. fewest victim pods",
            a: vec![prio(pod(10), 4), prio(pod(11), i32::MIN)],
            b: vec![prio(pod(20), 4)],
            winner: 1,
        },
        Case {
            criterion: "5. latest start of the highest-priority victims",
            a: vec![start(prio(pod(10), 3), 100), start(prio(pod(11), 1), 900)],
            b: vec![start(prio(pod(20), 3), 200), start(prio(pod(21), 1), 0)],
            winner: 1,
        },
        Case {
            criterion: "5. the earliest of several highest-priority victims counts",
            a: vec![start(prio(pod(10), 3), 150), start(prio(pod(11), 3), 150)],
            b: vec![start(prio(pod(20), 3), 100), start(prio(pod(21), 3), 500)],
            winner: 0,
        },
        Case {
            criterion: "6. smallest candidate index",
            a: vec![prio(pod(10), 3)],
            b: vec![prio(pod(20), 3)],
            winner: 0,
        },
    ];
    for case in cases {
        let (a, b) = (candidate(0, case.a), candidate(1, case.b));
        assert_eq!(
            pick(CandidatePolicy::FewestVictims, &a, &b),
            case.winner,
            "{}",
            case.criterion
        );
    }
}

#[test]
fn candidate_cost_of() {
    let c = candidate(
        4,
        vec![
            pdb(start(prio(group(0, 1, 3), 5), 40)),
            start(prio(pod(1), 5), 30),
            start(prio(pod(2), -2), 1),
        ],
    );
    let cost = CandidateCost::of(&c, 7);
    assert_eq!(
        cost,
        CandidateCost {
            index: 4,
            budget_violations: 1,
            highest_priority: Some(5),
            highest_priority_start: Some(30),
            priority_sum: 5 * 3 + 5 - 2,
            pods: 5,
            gpus: 7,
        }
    );
    assert_eq!(cost.shifted_priority_sum(), 18 + 5 * (1 << 31));
    assert_eq!(
        CandidateCost::of(&candidate(0, vec![]), 0),
        CandidateCost::default()
    );
    // Pods 100, 101, 102, 1, 2.
    assert_eq!(evicted_gpus(&c, |pod| u64::from(pod % 2)), 2);
}

#[test]
fn no_candidate_is_unschedulable() {
    for policy in CandidatePolicy::ALL {
        assert_eq!(
            select_candidate(policy, &[], |_| 0),
            Err(Status::new(Code::Unschedulable, NO_CANDIDATE))
        );
    }
    let cluster = FakeCluster::new();
    let err = plugin("{}")
        .select_candidate(&cluster, LONE, &[])
        .unwrap_err();
    assert_eq!(err.code, Code::Unschedulable);
}

#[test]
fn lowest_priority_sum_policy() {
    // Default: a (highest priority 10 < 20). LowestPrioritySum: b (20 < 30).
    let a = candidate(
        0,
        vec![prio(pod(10), 10), prio(pod(11), 10), prio(pod(12), 10)],
    );
    let b = candidate(1, vec![prio(pod(20), 20)]);
    assert_eq!(pick(CandidatePolicy::FewestVictims, &a, &b), 0);
    assert_eq!(pick(CandidatePolicy::LowestPrioritySum, &a, &b), 1);

    // The plain sum, without the offset: two pods at 0 beat one at 5.
    let a = candidate(0, vec![prio(pod(10), 0), prio(pod(11), 0)]);
    let b = candidate(1, vec![prio(pod(20), 5)]);
    assert_eq!(pick(CandidatePolicy::LowestPrioritySum, &a, &b), 0);

    // It comes before budgets; on a tie the default order decides.
    let a = candidate(0, vec![pdb(prio(pod(10), 1))]);
    let b = candidate(1, vec![prio(pod(20), 2)]);
    assert_eq!(pick(CandidatePolicy::LowestPrioritySum, &a, &b), 0);
    let a = candidate(0, vec![pdb(prio(pod(10), 2))]);
    assert_eq!(pick(CandidatePolicy::LowestPrioritySum, &a, &b), 1);

    let cluster = FakeCluster::new();
    let a = candidate(
        0,
        vec![prio(pod(10), 10), prio(pod(11), 10), prio(pod(12), 10)],
    );
    let b = candidate(1, vec![prio(pod(20), 20)]);
    let mut p = plugin(r#"{"candidatePolicy": "LowestPrioritySum"}"#);
    assert_eq!(p.select_candidate(&cluster, GANG, &[a, b]), Ok(1));
}

/// Three nodes' worth of running pods: one 8-GPU pod on `gpu-big`, three
/// 1-GPU pods on `gpu-small` (a PodGroup with `disruptionMode: all`), and a
/// CPU-only pod.
struct GpuCluster {
    cluster: FakeCluster,
    big: PodId,
    small: [PodId; 3],
    cpu_only: PodId,
}

fn gpu_cluster(resource: &str) -> GpuCluster {
    let mut cluster = FakeCluster::new();
    let big_node = cluster.add_node("gpu-big").allocatable(resource, 8).id();
    let small_node = cluster.add_node("gpu-small").allocatable(resource, 8).id();
    let cpu_node = cluster.add_node("cpu").allocatable("cpu", 8000).id();
    let pg = cluster.add_pod_group("ml/sweep").priority(1).id();
    let big = cluster
        .add_pod("ml/train")
        .priority(1)
        .request(resource, 8)
        .on_node(big_node)
        .id();
    let small = [0, 1, 2].map(|i| {
        cluster
            .add_pod(&format!("ml/sweep-{i}"))
            .group(pg)
            .priority(1)
            .request(resource, 1)
            .on_node(small_node)
            .id()
    });
    let cpu_only = cluster
        .add_pod("web/api")
        .request("cpu", 500)
        .on_node(cpu_node)
        .id();
    GpuCluster {
        cluster,
        big,
        small,
        cpu_only,
    }
}

fn victim(index: u32, pods: &[PodId], group: Option<PodGroupId>) -> VictimUnit {
    VictimUnit {
        index,
        pods: pods.to_vec(),
        group,
        priority: 1,
        start_time: 0,
        violates_budget: false,
    }
}

#[test]
fn fewest_evicted_gpus_prefers_fewer_gpus_over_fewer_victims() {
    let g = gpu_cluster(DEFAULT_GPU_RESOURCE);
    let candidates = [
        candidate(0, vec![victim(0, &[g.big], None)]),
        candidate(1, vec![victim(0, &g.small, Some(0))]),
    ];
    // Default: one victim pod beats three.
    let mut default = plugin("{}");
    assert_eq!(
        default.select_candidate(&g.cluster, GANG, &candidates),
        Ok(0)
    );
    // FewestEvictedGpus: 3 GPUs beat 8.
    let mut gpus = plugin(r#"{"candidatePolicy": "FewestEvictedGpus"}"#);
    take_logs();
    assert_eq!(gpus.select_candidate(&g.cluster, GANG, &candidates), Ok(1));
    let logs = take_logs();
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert_eq!(
        logs[0].1,
        "FewestEvictedGpus: chose domain-1 (candidate 1 of 2): 1 victim units, 3 pods"
    );

    // A CPU-only victim evicts no GPU at all.
    let with_cpu = [
        candidates[1].clone(),
        candidate(2, vec![victim(0, &[g.cpu_only], None)]),
    ];
    assert_eq!(gpus.select_candidate(&g.cluster, GANG, &with_cpu), Ok(2));

    // Equal GPUs (1 each): the default order decides (one pod beats two).
    let tie = [
        candidate(
            0,
            vec![
                victim(0, &g.small[1..2], None),
                victim(1, &[g.cpu_only], None),
            ],
        ),
        candidate(1, vec![victim(0, &g.small[..1], None)]),
    ];
    assert_eq!(gpus.select_candidate(&g.cluster, GANG, &tie), Ok(1));
}

#[test]
fn fewest_evicted_gpus_with_a_configured_resource() {
    let g = gpu_cluster("amd.com/gpu");
    let candidates = [
        candidate(0, vec![victim(0, &[g.big], None)]),
        candidate(1, vec![victim(0, &g.small, Some(0))]),
    ];
    let mut amd =
        plugin(r#"{"candidatePolicy": "FewestEvictedGpus", "gpuResource": "amd.com/gpu"}"#);
    assert_eq!(amd.select_candidate(&g.cluster, GANG, &candidates), Ok(1));

    // The default resource is not in this snapshot: 0 GPUs everywhere, so
    // the default order decides, and a debug line says why.
    let mut nvidia = plugin(r#"{"candidatePolicy": "FewestEvictedGpus"}"#);
    take_logs();
    assert_eq!(
        nvidia.select_candidate(&g.cluster, GANG, &candidates),
        Ok(0)
    );
    let logs = take_logs();
    assert_eq!(logs[0].0, Level::Debug);
    assert_eq!(
        logs[0].1,
        "resource nvidia.com/gpu is not in the snapshot; every candidate evicts 0 of it"
    );
}

// ---------------------------------------------------------------------------
// Args
// ---------------------------------------------------------------------------

#[test]
fn group_preemption_off_declines_units_and_keeps_lone_pods() {
    let cluster = FakeCluster::new();
    let units = [prio(pod(0), 9), prio(pod(1), 1)];
    let off = plugin(r#"{"groupPreemption": false}"#);
    assert!(!off.group_preemption() && plugin("{}").group_preemption());
    for answer in [
        off.clone().order_victims(&cluster, GANG, &units).err(),
        off.clone()
            .select_candidate(&cluster, GANG, &[candidate(0, vec![])])
            .err(),
    ] {
        let status = answer.expect("a unit is declined");
        assert_eq!(status.code, Code::Unschedulable);
        assert_eq!(status.reason, GROUP_PREEMPTION_OFF);
    }
    assert_eq!(
        off.clone().order_victims(&cluster, LONE, &units),
        plugin("{}").order_victims(&cluster, LONE, &units)
    );
    assert_eq!(
        off.clone()
            .select_candidate(&cluster, LONE, &[candidate(0, vec![])]),
        Ok(0)
    );
}

#[test]
fn args_defaults_and_values() {
    for empty in ["", "{}", "null", r#"{"candidatePolicy": null}"#] {
        assert_eq!(plugin(empty), WorkloadPreemption::default(), "{empty:?}");
    }
    let p = plugin("{}");
    assert_eq!(p.candidate_policy(), CandidatePolicy::FewestVictims);
    assert_eq!(p.gpu_resource(), "nvidia.com/gpu");
    assert!(p.budget_violations_first());

    let p = plugin(
        r#"{"candidatePolicy": "FewestEvictedGpus", "gpuResource": "amd.com/gpu",
            "budgetViolationsFirst": false}"#,
    );
    assert_eq!(p.candidate_policy(), CandidatePolicy::FewestEvictedGpus);
    assert_eq!(p.gpu_resource(), "amd.com/gpu");
    assert!(!p.budget_violations_first());
    for policy in CandidatePolicy::ALL {
        let p = plugin(&format!(r#"{{"candidatePolicy": "{policy}"}}"#));
        assert_eq!(p.candidate_policy(), policy);
    }
}

#[test]
fn bad_args_are_refused() {
    let configure = wasched_sdk::configure::<WorkloadPreemption>;
    let expected = "WaschedWorkloadPreemption: unknown candidatePolicy \"Fastest\"; expected one of \
                    FewestVictims, FewestEvictedGpus, LowestPrioritySum";
    assert_eq!(
        configure(r#"{"candidatePolicy": "Fastest"}"#).unwrap_err(),
        expected
    );
    assert!(
        configure(r#"{"candidatePolicy": "fewestVictims"}"#)
            .unwrap_err()
            .contains("unknown candidatePolicy \"fewestVictims\"")
    );
    assert_eq!(
        configure(r#"{"gpuResource": " "}"#).unwrap_err(),
        "WaschedWorkloadPreemption: gpuResource must not be empty"
    );
    let err = configure(r#"{"candidatPolicy": "FewestVictims"}"#).unwrap_err();
    assert!(
        err.starts_with(
            "invalid args for WaschedWorkloadPreemption: unknown field `candidatPolicy`"
        ),
        "{err}"
    );
    let err = configure(r#"{"budgetViolationsFirst": "yes"}"#).unwrap_err();
    assert!(
        err.starts_with("invalid args for WaschedWorkloadPreemption: invalid type"),
        "{err}"
    );
    let err = configure(r#"{"candidatePolicy": 3}"#).unwrap_err();
    assert!(
        err.starts_with("invalid args for WaschedWorkloadPreemption"),
        "{err}"
    );
}
