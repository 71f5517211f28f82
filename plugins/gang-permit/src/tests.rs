//! Table-driven tests of the gang rules, and of the plugin over a
//! [`FakeCluster`], run natively.

use super::*;
use wasched_sdk::fake::FakeCluster;

fn gang(min_count: u32) -> Option<Policy> {
    Some(Policy::Gang { min_count })
}

#[test]
fn pre_enqueue_table() {
    struct Case {
        name: &'static str,
        policy: Option<Policy>,
        pending: u32,
        bound: u32,
        code: Code,
        reason: &'static str,
    }
    let cases = [
        Case {
            name: "missing PodGroup",
            policy: None,
            pending: 4,
            bound: 0,
            code: Code::UnschedulableAndUnresolvable,
            reason: "PodGroup ns/pg not found",
        },
        Case {
            name: "basic passes with one pod",
            policy: Some(Policy::Basic),
            pending: 1,
            bound: 0,
            code: Code::Success,
            reason: "",
        },
        Case {
            name: "too few pods",
            policy: gang(4),
            pending: 3,
            bound: 0,
            code: Code::UnschedulableAndUnresolvable,
            reason: "waiting for 4 pods of PodGroup ns/pg (minCount 4), 3 present",
        },
        Case {
            name: "exactly minCount",
            policy: gang(4),
            pending: 4,
            bound: 0,
            code: Code::Success,
            reason: "",
        },
        Case {
            name: "bound members count",
            policy: gang(4),
            pending: 1,
            bound: 3,
            code: Code::Success,
            reason: "",
        },
        Case {
            name: "more than minCount",
            policy: gang(2),
            pending: 5,
            bound: 0,
            code: Code::Success,
            reason: "",
        },
    ];
    for case in cases {
        let status = pre_enqueue(&GroupFacts {
            name: "ns/pg",
            policy: case.policy,
            pending: case.pending,
            bound: case.bound,
        });
        assert_eq!(status.code, case.code, "{}", case.name);
        assert_eq!(status.reason, case.reason, "{}", case.name);
    }
}

#[test]
fn permit_table() {
    let cases = [
        ("basic", Some(Policy::Basic), 0, 0, Code::Success),
        ("early abort", gang(4), 1, 2, Code::Unschedulable),
        ("still reachable", gang(4), 1, 3, Code::Wait),
        ("reached", gang(4), 4, 0, Code::Success),
        ("reached with more to try", gang(4), 4, 2, Code::Success),
        (
            "nothing placed, nothing left",
            gang(1),
            0,
            0,
            Code::Unschedulable,
        ),
        (
            "missing PodGroup",
            None,
            3,
            0,
            Code::UnschedulableAndUnresolvable,
        ),
    ];
    for (name, policy, scheduled, remaining, code) in cases {
        let progress = Progress {
            scheduled,
            remaining,
        };
        let status = permit(policy, progress);
        assert_eq!(status.code, code, "{name}: {}", status.reason);
    }
}

#[test]
fn permit_messages() {
    let at = |scheduled, remaining| Progress {
        scheduled,
        remaining,
    };
    assert_eq!(
        permit(gang(4), at(1, 2)).reason,
        "minCount (4) cannot be satisfied: 1 scheduled, 2 remaining"
    );
    assert_eq!(permit(gang(4), at(1, 3)).reason, "waiting for minCount 4");
    assert_eq!(permit(None, at(0, 0)).reason, "PodGroup not found");
    let composite = Some(CompositePolicy::Gang(3));
    assert_eq!(
        composite_permit(composite, at(1, 1)),
        Status::new(
            Code::Unschedulable,
            "minGroupCount (3) cannot be satisfied: 1 scheduled, 1 remaining"
        )
    );
    assert_eq!(
        composite_permit(composite, at(2, 1)),
        Status::new(Code::Wait, "waiting for minGroupCount 3")
    );
    assert!(composite_permit(composite, at(3, 0)).is_success());
    assert!(composite_permit(Some(CompositePolicy::Basic), at(0, 0)).is_success());
    assert_eq!(
        composite_permit(None, at(0, 0)).code,
        Code::UnschedulableAndUnresolvable
    );
}

#[test]
fn composite_pre_enqueue_table() {
    let cases = [
        (CompositePolicy::Gang(2), 2, Code::Success, ""),
        (
            CompositePolicy::Gang(2),
            1,
            Code::UnschedulableAndUnresolvable,
            "waiting for 2 ready children of CompositePodGroup ns/c (minGroupCount 2), 1 ready",
        ),
        (CompositePolicy::Basic, 1, Code::Success, ""),
        (
            CompositePolicy::Basic,
            0,
            Code::UnschedulableAndUnresolvable,
            "waiting for a ready child of CompositePodGroup ns/c, none ready",
        ),
    ];
    for (policy, ready, code, reason) in cases {
        let status = composite_pre_enqueue("ns/c", policy, ready);
        assert_eq!((status.code, status.reason.as_str()), (code, reason));
    }
}

#[test]
fn configure_accepts_only_empty_args() {
    let configure = wasched_sdk::configure::<GangScheduling>;
    assert!(configure("").is_ok());
    assert!(configure(" { } ").is_ok());
    assert!(configure("null").is_ok());
    let err = configure(r#"{"minCount": 3}"#).unwrap_err();
    assert!(
        err.starts_with("WaschedGangScheduling takes no args"),
        "{err}"
    );
}

fn plugin() -> GangScheduling {
    wasched_sdk::configure::<GangScheduling>("{}").unwrap()
}

#[test]
fn pod_group_over_a_native_cluster() {
    let mut cluster = FakeCluster::new();
    let node = cluster.add_node("node-a").id();
    let pg = cluster.add_pod_group("ns/pg").gang(3).id();
    let missing = cluster.add_pod_group("ns/gone").missing().id();
    let basic = cluster.add_pod_group("ns/basic").id();
    cluster.add_pod("ns/pg-0").group(pg).on_node(node);
    cluster.add_pod("ns/pg-1").group(pg);
    cluster.add_pod("ns/gone-0").group(missing);
    let mut gang = plugin();

    let status = gang.pre_enqueue(&cluster, Unit::PodGroup(pg));
    assert_eq!(
        status,
        Status::new(
            Code::UnschedulableAndUnresolvable,
            "waiting for 3 pods of PodGroup ns/pg (minCount 3), 2 present"
        )
    );
    cluster.add_pod("ns/pg-2").group(pg);
    assert!(gang.pre_enqueue(&cluster, Unit::PodGroup(pg)).is_success());
    assert_eq!(
        gang.pre_enqueue(&cluster, Unit::PodGroup(missing)).reason,
        "PodGroup ns/gone not found"
    );
    assert!(
        gang.pre_enqueue(&cluster, Unit::PodGroup(basic))
            .is_success()
    );

    let progress = Progress {
        scheduled: 1,
        remaining: 1,
    };
    assert_eq!(
        gang.permit(&cluster, Unit::PodGroup(pg), progress)
            .status
            .code,
        Code::Unschedulable
    );
    assert_eq!(
        gang.permit(&cluster, Unit::PodGroup(missing), progress),
        Status::new(Code::UnschedulableAndUnresolvable, "PodGroup not found").into()
    );
    assert!(
        gang.permit(&cluster, Unit::PodGroup(basic), progress)
            .status
            .is_success()
    );
}

/// root (gang 2) ── ns/a (gang 2: 1 bound + 1 pending → ready)
///              ├── ns/b (gang 3: 1 pending → not ready)
///              ├── ns/gone (object missing → not ready)
///              └── inner (gang 1) ── ns/c (basic, no pods → not ready)
#[test]
fn composite_readiness_over_a_native_cluster() {
    let mut cluster = FakeCluster::new();
    let node = cluster.add_node("node-a").id();
    let root = cluster.add_composite("ns/root").gang(2).id();
    let inner = cluster.add_composite("ns/inner").gang(1).parent(root).id();
    let a = cluster.add_pod_group("ns/a").gang(2).parent(root).id();
    let b = cluster.add_pod_group("ns/b").gang(3).parent(root).id();
    let gone = cluster.add_pod_group("ns/gone").parent(root).missing().id();
    let c = cluster.add_pod_group("ns/c").parent(inner).id();
    cluster.add_pod("ns/a-0").group(a).on_node(node);
    cluster.add_pod("ns/a-1").group(a);
    cluster.add_pod("ns/b-0").group(b);
    cluster.add_pod("ns/gone-0").group(gone);
    let mut gang = plugin();

    // A missing PodGroup object has no spec, so it names no parent either.
    assert_eq!(cluster.composite(root).unwrap().child_groups, [a, b]);
    assert_eq!(
        gang.pre_enqueue(&cluster, Unit::Composite(root)),
        Status::new(
            Code::UnschedulableAndUnresolvable,
            "waiting for 2 ready children of CompositePodGroup ns/root (minGroupCount 2), 1 ready"
        )
    );

    // One pod makes basic ns/c ready, which makes `inner` (gang 1) ready.
    cluster.add_pod("ns/c-0").group(c);
    assert!(
        gang.pre_enqueue(&cluster, Unit::Composite(root))
            .is_success()
    );

    let progress = Progress {
        scheduled: 1,
        remaining: 0,
    };
    assert_eq!(
        gang.permit(&cluster, Unit::Composite(root), progress)
            .status
            .reason,
        "minGroupCount (2) cannot be satisfied: 1 scheduled, 0 remaining"
    );
    assert!(
        gang.permit(&cluster, Unit::Composite(inner), progress)
            .status
            .is_success()
    );
    assert_eq!(
        gang.pre_enqueue(&cluster, Unit::Composite(99)).code,
        Code::UnschedulableAndUnresolvable
    );
}

#[test]
fn basic_composite_root_needs_one_ready_child() {
    let mut cluster = FakeCluster::new();
    let root = cluster.add_composite("ns/root").id();
    let g = cluster.add_pod_group("ns/g").gang(2).parent(root).id();
    cluster.add_pod("ns/g-0").group(g);
    let mut gang = plugin();
    assert_eq!(
        gang.pre_enqueue(&cluster, Unit::Composite(root)).reason,
        "waiting for a ready child of CompositePodGroup ns/root, none ready"
    );
    cluster.add_pod("ns/g-1").group(g);
    assert!(
        gang.pre_enqueue(&cluster, Unit::Composite(root))
            .is_success()
    );
}

/// The verdicts say how far the host may reuse them: a gang's wait while
/// `scheduled < minCount <= scheduled + remaining`, its success from
/// `minCount` on; an early abort is never reused.
#[test]
fn permit_verdicts_bound_their_reuse() {
    let at = |scheduled, remaining| Progress {
        scheduled,
        remaining,
    };
    let gang_wait = verdict(permit(gang(4), at(1, 5)), Some(4), at(1, 5));
    let bounds = gang_wait.reuse.expect("a wait is reusable");
    assert!(bounds.contain(at(3, 1)));
    assert!(!bounds.contain(at(4, 0)), "minCount reached: ask again");
    assert!(
        !bounds.contain(at(2, 1)),
        "minCount out of reach: ask again"
    );
    let admitted = verdict(permit(gang(4), at(4, 2)), Some(4), at(4, 2));
    assert!(admitted.status.is_success());
    assert!(admitted.reuse.unwrap().contain(at(6, 0)));
    let aborted = verdict(permit(gang(4), at(1, 1)), Some(4), at(1, 1));
    assert_eq!(aborted.status.code, Code::Unschedulable);
    let exactly = aborted.reuse.expect("an abort holds for its progress");
    assert!(exactly.contain(at(1, 1)));
    assert!(!exactly.contain(at(0, 2)) && !exactly.contain(at(1, 0)));
    // Reuse never changes an answer a user can see: over every small
    // progress, the reused verdict equals a fresh one (code and reason).
    for min in 1..6 {
        for scheduled in 0..8 {
            for remaining in 0..8 {
                let fresh = permit(gang(min), at(scheduled, remaining));
                let v = verdict(fresh.clone(), Some(min), at(scheduled, remaining));
                let Some(bounds) = v.reuse else { continue };
                for s2 in 0..8 {
                    for r2 in 0..8 {
                        if bounds.contain(at(s2, r2)) {
                            assert_eq!(permit(gang(min), at(s2, r2)), fresh);
                        }
                    }
                }
            }
        }
    }
}
