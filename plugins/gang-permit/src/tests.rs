//! Table-driven tests of the gang rules, run natively.

use super::*;

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
        let status = permit(
            policy,
            Progress {
                scheduled,
                remaining,
            },
        );
        assert_eq!(status.code, code, "{name}: {}", status.reason);
    }
}

#[test]
fn configure_accepts_only_empty_args() {
    assert!(configure("").is_ok());
    assert!(configure(" { } ").is_ok());
    assert!(configure("null").is_ok());
    let err = configure(r#"{"minCount": 3}"#).unwrap_err();
    assert!(err.contains("GangScheduling takes no args"), "{err}");
}
