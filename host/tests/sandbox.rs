//! Plugins that misbehave cannot hurt the scheduler. The fixture plugin
//! `Hostile` (testdata/plugins/hostile) misbehaves on demand at any extension
//! point for PodGroup team/bad only; every test checks that the failure is
//! reported with the plugin's name and cause, that team/good and the lone pod
//! (scheduled after it, through a re-created instance) are unaffected, and
//! that each bound is obeyed by a plugin that stays within it.

mod common;

use std::time::Duration;

use wasched::Outcome;
use wasched::config::{FailurePolicy, PluginSettings};
use wasched::framework::{LogLine, OutputLimits};

const POINTS: [&str; 6] = [
    "pre-enqueue",
    "filter",
    "score",
    "permit",
    "placement-generate",
    "placement-score",
];

fn settings(point: &str, misbehave: &str) -> PluginSettings {
    PluginSettings {
        failure_policy: FailurePolicy::Fail,
        fuel: 20_000_000,
        timeout: Duration::from_secs(10),
        memory_limit: 16 << 20,
        args: format!(r#"{{"point": "{point}", "misbehave": "{misbehave}"}}"#),
        ..PluginSettings::default()
    }
}

/// Runs the sandbox snapshot with `Hostile` under `settings`; also returns
/// the log lines the host kept.
fn run_with_logs(settings: PluginSettings) -> (Outcome, Vec<(String, LogLine)>) {
    run_snapshot("sandbox/snapshot.yaml", settings)
}

/// Runs `snapshot` (under testdata/) with `Hostile` under `settings`.
fn run_snapshot(snapshot: &str, settings: PluginSettings) -> (Outcome, Vec<(String, LogLine)>) {
    let mut plugins = common::hostile_plugins(settings);
    let mut snapshot = wasched::read_snapshot(&[common::testdata(snapshot)]).unwrap();
    let outcome = wasched::scheduler::run(
        &mut snapshot,
        &mut plugins,
        wasched::scheduler::RunOptions::default(),
    );
    (outcome, plugins.drain_logs())
}

fn run(settings: PluginSettings) -> Outcome {
    run_with_logs(settings).0
}

fn bound(outcome: &Outcome) -> Vec<&str> {
    common::bound(outcome).into_keys().collect()
}

/// team/bad stays pending with `message`; everything else binds.
fn assert_contained(outcome: &Outcome, point: &str, cause: &str, message: &str) {
    let context = format!("{point}/{cause}: {outcome:#?}");
    assert_eq!(
        bound(outcome),
        ["team/good-0", "team/good-1", "team/lone"],
        "{context}"
    );
    let expected = format!("plugin Hostile: {message}");
    for pod in ["team/bad-0", "team/bad-1"] {
        let reason = &outcome
            .unschedulable
            .iter()
            .find(|u| u.pod == pod)
            .expect(&context)
            .reason;
        assert!(
            reason.contains(&expected),
            "{pod}: {reason:?} lacks {expected:?}"
        );
    }
    let group = outcome
        .pod_groups
        .iter()
        .find(|g| g.pod_group == "team/bad")
        .expect(&context);
    assert!(!group.scheduled, "{context}");
    assert_eq!(group.condition_reason, "SchedulerError", "{context}");
    let errors: Vec<_> = outcome
        .plugin_errors
        .iter()
        .map(|e| {
            (
                e.plugin.as_str(),
                e.extension_point.as_str(),
                e.cause.as_str(),
            )
        })
        .collect();
    assert!(errors.contains(&("Hostile", point, cause)), "{errors:?}");
    assert!(
        errors.iter().all(|&(_, p, c)| p == point && c == cause),
        "only the bad entity fails: {errors:?}"
    );
}

#[test]
fn a_well_behaved_run_has_no_errors() {
    for point in POINTS {
        let outcome = run(settings(point, "none"));
        assert_eq!(bound(&outcome).len(), 5, "{point}: {outcome:#?}");
        assert!(outcome.plugin_errors.is_empty());
    }
}

#[test]
fn endless_loops_exhaust_the_cpu_budget() {
    for point in POINTS {
        let outcome = run(settings(point, "loop"));
        let message = format!("exceeded its CPU budget of 20000000 fuel in {point}");
        assert_contained(&outcome, point, "cpu", &message);
    }
}

#[test]
fn wall_clock_deadline_stops_a_loop_when_fuel_would_not() {
    let mut s = settings("permit", "loop");
    s.fuel = u64::MAX / 2;
    s.timeout = Duration::from_millis(50);
    assert_contained(
        &run(s),
        "permit",
        "timeout",
        "exceeded its 50ms wall-clock budget in permit",
    );
}

#[test]
fn unbounded_allocation_hits_the_memory_limit() {
    for point in POINTS {
        let outcome = run(settings(point, "alloc"));
        assert_contained(
            &outcome,
            point,
            "memory",
            &format!("exceeded its memory limit of 16Mi in {point}"),
        );
    }
}

#[test]
fn endless_recursion_overflows_the_stack() {
    for point in POINTS {
        let outcome = run(settings(point, "recurse"));
        assert_contained(
            &outcome,
            point,
            "stack",
            &format!("overflowed its stack in {point}"),
        );
    }
}

#[test]
fn panics_are_traps_that_carry_the_message() {
    for point in POINTS {
        let outcome = run(settings(point, "panic"));
        let message = format!(
            "panicked (hostile plugin panics at {point} at testdata/plugins/hostile/src/lib.rs:"
        );
        assert_contained(&outcome, point, "trap", &message);
    }
}

#[test]
fn invalid_answers_are_the_plugins_error() {
    let cases = [
        ("filter", "node 4294967295 was not a candidate"),
        ("score", "score 1000 outside 0..=100"),
        (
            "placement-generate",
            "placement outside has node 11 outside its parent cluster",
        ),
        ("placement-score", "score 1000 outside 0..=100"),
    ];
    for (point, what) in cases {
        let outcome = run(settings(point, "invalid"));
        assert_contained(
            &outcome,
            point,
            "invalid-result",
            &format!("returned an invalid result ({what}) in {point}"),
        );
    }
}

#[test]
fn work_within_the_bounds_is_obeyed_and_the_same_work_over_them_is_stopped() {
    // 8 MiB and 1M iterations at every call of every extension point.
    for point in POINTS {
        let mut within = settings(point, "work:8");
        within.fuel = 100_000_000;
        let outcome = run(within.clone());
        assert_eq!(bound(&outcome).len(), 5, "{point}: {outcome:#?}");
        assert!(
            outcome.plugin_errors.is_empty(),
            "{point}: {:?}",
            outcome.plugin_errors
        );

        let mut small_memory = within.clone();
        small_memory.memory_limit = 4 << 20;
        assert_contained(
            &run(small_memory),
            point,
            "memory",
            "exceeded its memory limit of 4Mi",
        );

        let mut small_fuel = within;
        small_fuel.fuel = 1_000_000;
        assert_contained(
            &run(small_fuel),
            point,
            "cpu",
            "exceeded its CPU budget of 1000000 fuel",
        );
    }
}

#[test]
fn an_ignored_placement_generate_failure_on_a_tree_is_named() {
    let mut s = settings("placement-generate", "panic");
    s.failure_policy = FailurePolicy::Ignore;
    let (outcome, _) = run_snapshot("sandbox/tree.yaml", s);
    assert_eq!(bound(&outcome), ["team/bad-child-0"], "{outcome:#?}");
    let warning = outcome
        .warnings
        .iter()
        .find(|w| w.starts_with("CompositePodGroup team/bad-tree: "))
        .unwrap_or_else(|| panic!("a warning for the tree: {:?}", outcome.warnings));
    assert!(
        warning.contains("schedulingConstraints.topology key example.com/rack ignored: its placement-generate plugin failed and failurePolicy Ignore skipped it: plugin Hostile: panicked"),
        "{warning}"
    );
}

#[test]
fn failure_policy_ignore_skips_the_plugin_and_counts_a_warning() {
    let mut s = settings("permit", "loop");
    s.failure_policy = FailurePolicy::Ignore;
    let outcome = run(s);
    assert_eq!(
        bound(&outcome).len(),
        5,
        "the bad group is admitted without the plugin: {outcome:#?}"
    );
    let warning = outcome
        .warnings
        .iter()
        .find(|w| w.starts_with("plugin Hostile failed"))
        .expect("a warning");
    assert!(
        warning.contains("was skipped (failurePolicy: Ignore)"),
        "{warning}"
    );
    assert!(warning.contains("exceeded its CPU budget"), "{warning}");
    let errors = &outcome.plugin_errors;
    assert_eq!(errors.len(), 1);
    assert_eq!(
        (errors[0].extension_point.as_str(), errors[0].cause.as_str()),
        ("permit", "cpu")
    );
    assert!(errors[0].count >= 1);
}

#[test]
fn metrics_name_plugin_point_and_cause() {
    let outcome = run(settings("filter", "panic"));
    let text = wasched::metrics::encode_text(&outcome);
    // One call: the first failure ends the group's attempt (an Error, as
    // kube-scheduler ends a pod group cycle), its second pod is not tried.
    assert!(
        text.contains(r#"wasched_plugin_errors_total{plugin="Hostile",extension_point="filter",cause="trap"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"scheduler_podgroup_schedule_attempts_total{result="scheduled"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"scheduler_podgroup_schedule_attempts_total{result="error"} 1"#),
        "{text}"
    );
}

#[test]
fn log_floods_are_capped_per_call_and_per_run_and_reported_once() {
    for point in POINTS {
        // 16 MiB of log lines per call of a bad entity.
        let (outcome, logs) = run_with_logs(settings(point, "flood-logs"));
        assert_eq!(bound(&outcome).len(), 5, "{point}: {outcome:#?}");
        let limits = OutputLimits::default();
        let kept: u64 = logs.iter().map(|(_, l)| l.message.len() as u64).sum();
        assert!(
            kept <= limits.log_bytes_per_run + 64,
            "{point}: kept {kept} bytes of log"
        );
        assert!(!logs.is_empty(), "{point}: the first lines are kept");
        let warnings: Vec<_> = outcome
            .warnings
            .iter()
            .filter(|w| w.contains("log output over its caps was dropped"))
            .collect();
        assert_eq!(warnings.len(), 1, "{point}: {:?}", outcome.warnings);
        assert!(
            warnings[0].starts_with("plugin Hostile: "),
            "{}",
            warnings[0]
        );
    }
}

#[test]
fn huge_reasons_are_cut_and_reported_once() {
    let limit = OutputLimits::default().reason_bytes;
    for point in ["pre-enqueue", "permit", "filter"] {
        let mut s = settings(point, "huge-reason");
        s.memory_limit = 64 << 20;
        let outcome = run(s);
        for pod in ["team/bad-0", "team/bad-1"] {
            let reason = common::reason(&outcome, pod);
            assert!(
                reason.len() < 2 * limit + 200,
                "{point}: {pod} reason of {} bytes",
                reason.len()
            );
            assert!(reason.contains("… (cut)"), "{point}: {reason}");
        }
        assert!(
            outcome
                .warnings
                .iter()
                .any(|w| w.starts_with("plugin Hostile: ")
                    && w.contains(&format!("longer than {limit} bytes were cut"))),
            "{point}: {:?}",
            outcome.warnings
        );
        let json = outcome.to_json();
        assert!(
            json.len() < 64 << 10,
            "{point}: {} bytes of JSON",
            json.len()
        );
    }
}

/// At pod-group-post-filter: team/bad's preemption fails with `message`
/// (nothing evicted for it, `SchedulerError`), team/good still preempts.
fn assert_preemption_contained(settings: PluginSettings, cause: &str, message: &str) {
    let (outcome, _) = run_snapshot("sandbox/preemption.yaml", settings);
    let context = format!("{cause}: {outcome:#?}");
    assert_eq!(bound(&outcome), ["team/good-0"], "{context}");
    assert_eq!(outcome.evictions.len(), 1, "{context}");
    assert_eq!(outcome.evictions[0].by, "team/good", "{context}");
    let bad = common::group(&outcome, "team/bad");
    assert!(!bad.scheduled, "{context}");
    assert_eq!(bad.condition_reason, "SchedulerError", "{context}");
    let why = &bad.preemption.as_ref().expect("an attempt").reason;
    assert!(
        why.contains(&format!("plugin Hostile: {message}")),
        "{why:?} lacks {message:?}"
    );
    let point = "pod-group-post-filter";
    assert!(
        outcome
            .plugin_errors
            .iter()
            .all(|e| e.extension_point == point && e.cause == cause),
        "{:?}",
        outcome.plugin_errors
    );
}

#[test]
fn misbehaviour_at_pod_group_post_filter_is_contained() {
    let point = "pod-group-post-filter";
    let cases = [
        (
            "loop",
            "cpu",
            format!("exceeded its CPU budget of 20000000 fuel in {point}"),
        ),
        (
            "alloc",
            "memory",
            format!("exceeded its memory limit of 16Mi in {point}"),
        ),
        (
            "recurse",
            "stack",
            format!("overflowed its stack in {point}"),
        ),
        (
            "panic",
            "trap",
            format!("panicked (hostile plugin panics at {point}"),
        ),
        (
            "invalid",
            "invalid-result",
            format!("returned an invalid result (victim 0 listed twice) in {point}"),
        ),
    ];
    for (misbehave, cause, message) in cases {
        assert_preemption_contained(settings(point, misbehave), cause, &message);
    }
    let (well, _) = run_snapshot("sandbox/preemption.yaml", settings(point, "none"));
    assert_eq!(bound(&well), ["team/bad-0", "team/good-0"], "{well:#?}");
    assert_eq!(well.evictions.len(), 2);
}
