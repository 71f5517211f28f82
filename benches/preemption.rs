//! What workload-aware preemption costs on a preemption-heavy cluster:
//! 1,000 nodes full of 1,000 running low-priority gangs (4 pods each, half
//! of them `disruptionMode: all`), and 100 high-priority gangs arriving that
//! can only be placed by preemption (upstream's scheduler_perf measures
//! this size: P50 12.5 ms, P99 69 ms per attempt, 949 MB heap); since a
//! preemption frees more than it needs, later gangs often fit without one.
//! Reports the
//! per-attempt P50/P99 and the process's peak memory, and benchmarks the
//! whole run through the components and natively.

use criterion::{Criterion, criterion_group, criterion_main};
use wasched::Snapshot;
use wasched::scheduler::{Entity, RunOptions, RunTimes, run};
use wasched_benches::{
    bench_components_and_native, bundled_plugins, gang, native_plugins, peak_rss_mib, quantile,
    racked_cluster,
};

fn preemption_heavy() -> Snapshot {
    let mut objects = Vec::new();
    for g in 0..1000 {
        objects.extend(gang(
            &format!("low-{g:04}"),
            10,
            4,
            8,
            None,
            None,
            g % 2 == 0,
            &|_| Some(format!("node-{g:05}")),
        ));
    }
    for g in 0..100 {
        objects.extend(gang(
            &format!("high-{g:03}"),
            1000,
            4,
            8,
            None,
            None,
            false,
            &|_| None,
        ));
    }
    racked_cluster(1000, 25, objects).expect("the cluster builds")
}

fn preemption(c: &mut Criterion) {
    let before = peak_rss_mib();
    let snapshot = preemption_heavy();
    for (label, mut plugins) in [
        ("component", bundled_plugins().unwrap().1),
        ("native", native_plugins()),
    ] {
        let mut times = RunTimes::default();
        let options = RunOptions {
            observer: Some(&mut times),
            ..RunOptions::default()
        };
        let outcome = run(&mut snapshot.clone(), &mut plugins, options);
        let preempted = outcome
            .pod_groups
            .iter()
            .filter(|g| g.preemption.as_ref().is_some_and(|p| p.domain.is_some()))
            .count();
        let failed: Vec<_> = outcome
            .pod_groups
            .iter()
            .filter(|g| g.pod_group.starts_with("bench/high") && !g.scheduled)
            .map(|g| (&g.pod_group, &g.reason, &g.preemption))
            .take(2)
            .collect();
        assert!(
            failed.is_empty(),
            "{label}: every high-priority gang is placed: {failed:?}"
        );
        let mut attempts: Vec<_> = times
            .entities
            .iter()
            .filter(|t| matches!(t.entity, Entity::Group(_)))
            .map(|t| t.elapsed)
            .collect();
        let p50 = quantile(&mut attempts, 0.5);
        let p99 = quantile(&mut attempts, 0.99);
        let mut preempting: Vec<_> = times
            .entities
            .iter()
            .filter_map(|t| match t.entity {
                Entity::Group(g) => Some((g, t.elapsed)),
                _ => None,
            })
            .filter(|(g, _)| {
                let key = &snapshot.groups[*g as usize].key;
                outcome.pod_groups.iter().any(|d| {
                    &d.pod_group == key && d.preemption.as_ref().is_some_and(|p| p.domain.is_some())
                })
            })
            .map(|(_, elapsed)| elapsed)
            .collect();
        println!(
            "preemption-heavy ({label}): attempts that preempted: P50 {:.2} ms, P99 {:.2} ms",
            quantile(&mut preempting, 0.5).as_secs_f64() * 1e3,
            quantile(&mut preempting, 0.99).as_secs_f64() * 1e3
        );
        println!(
            "preemption-heavy ({label}): {} attempts, {preempted} preempted ({} evictions; the others fit in room freed earlier), per attempt P50 {:.2} ms, P99 {:.2} ms",
            attempts.len(),
            outcome.evictions.len(),
            p50.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3
        );
    }
    println!(
        "preemption-heavy: peak RSS {:.0} MiB (before building the cluster: {before:.0} MiB)",
        peak_rss_mib()
    );
    bench_components_and_native(c, "preemption_heavy_1000_nodes_100_gangs", &snapshot, 10);
}

criterion_group!(benches, preemption);
criterion_main!(benches);
