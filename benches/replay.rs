//! What `wasched replay` costs: a generated GPU cluster (`wasched
//! generate`, racks of 8-, 4-, 2- and 1-GPU nodes with background load) and
//! a generated trace of gangs and single-pod jobs in two priority classes
//! that preempt (`replay::generate::trace`), replayed through the bundled
//! components. Prints one run each at the scale of a large GPU cluster
//! (4,096 nodes: 100,000 jobs below saturation, a trace ten times longer
//! than another for memory, and saturated), pod starts and scheduling
//! attempts per second of wall time and the virtual-time speed-up of one
//! run on 512 nodes, then benchmarks that whole replay.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use wasched::replay::generate::{TraceOptions, trace};
use wasched::replay::{self, Job, JobRow};
use wasched::scheduler::ablation::Reuse;
use wasched_benches::{bundled_plugins, peak_rss_mib, replay_run};

const NODES: usize = 512;
const JOBS: usize = 2_000;

fn inputs() -> (wasched::manifest::Manifests, Vec<Job>) {
    let manifests = replay_run::cluster(NODES).expect("the cluster generates and reads");
    let jobs = trace(&TraceOptions {
        jobs: JOBS,
        mean_gap: Duration::from_secs(20),
        max_workers: 64,
        seed: 1,
    });
    (manifests, jobs)
}

fn replay_once(
    manifests: &wasched::manifest::Manifests,
    jobs: &[Job],
    plugins: &mut wasched::PluginSet,
) -> replay::Summary {
    replay_reusing(manifests, jobs, plugins, Reuse::default())
}

/// A replay with the cycle reusing what `reuse` says.
fn replay_reusing(
    manifests: &wasched::manifest::Manifests,
    jobs: &[Job],
    plugins: &mut wasched::PluginSet,
    reuse: Reuse,
) -> replay::Summary {
    let model = replay::model_of(manifests.clone()).expect("the cluster models");
    let mut rows: Vec<JobRow> = Vec::new();
    let options = replay::Options::default();
    replay::replay_reusing(model, jobs.to_vec(), plugins, &options, &mut rows, reuse)
        .expect("replays")
}

/// Pod starts per second of wall time of one replay.
fn pod_starts_per_second(run: impl FnOnce() -> replay::Summary) -> (replay::Summary, f64, f64) {
    let started = Instant::now();
    let summary = run();
    let wall = started.elapsed().as_secs_f64();
    let rate = summary.pod_starts as f64 / wall;
    (summary, wall, rate)
}

/// The shape of a large GPU cluster's week: 4,096 generated GPU nodes of
/// several models and generated traces of gangs of 1–128 workers in two
/// priority classes that preempt, made as they arrive. One run each,
/// printed: below saturation (100,000 jobs 30 s apart on average), the
/// memory of a trace ten times longer than another (10,000 then 100,000
/// jobs, in that order: the peak only grows), and saturated (jobs 1 s
/// apart, replayed for the first 3,000 s of virtual time).
fn at_scale() -> anyhow::Result<()> {
    const NODES: usize = 4_096;
    let cluster = replay_run::cluster(NODES)?;
    let (_runtime, mut plugins) = bundled_plugins()?;
    let gap = Duration::from_secs(30);
    let tenth = replay_run::replay_generated(&cluster, &mut plugins, 10_000, gap, 128, None, None)?;
    let tenth_peak = peak_rss_mib();
    eprintln!("replay at scale: {NODES} nodes, {}", tenth.line());
    let below =
        replay_run::replay_generated(&cluster, &mut plugins, 100_000, gap, 128, None, None)?;
    eprintln!(
        "replay at scale, below saturation: {NODES} nodes, {}",
        below.line()
    );
    eprintln!(
        "replay at scale: a trace 10x longer peaks at {:.2}x the memory ({:.0} MiB, then {:.0} MiB)",
        peak_rss_mib() / tenth_peak,
        tenth_peak,
        peak_rss_mib()
    );
    let saturated = replay_run::replay_generated(
        &cluster,
        &mut plugins,
        100_000,
        Duration::from_secs(1),
        128,
        Some(Duration::from_secs(3_000)),
        None,
    )?;
    eprintln!(
        "replay at scale, saturated: {NODES} nodes, {}",
        saturated.line()
    );
    Ok(())
}

fn replay_bench(c: &mut Criterion) {
    at_scale().expect("the replays at scale run");
    let (manifests, jobs) = inputs();
    let (_runtime, mut plugins) = bundled_plugins().expect("the bundled plugins load");
    let (summary, wall, rate) =
        pod_starts_per_second(|| replay_once(&manifests, &jobs, &mut plugins));
    // The baseline, in the same run: every run of the cycle starts with
    // empty caches.
    let fresh = Reuse {
        across_runs: false,
        ..Reuse::default()
    };
    let (_, _, fresh_rate) =
        pod_starts_per_second(|| replay_reusing(&manifests, &jobs, &mut plugins, fresh));
    eprintln!(
        "replay: {NODES} nodes, {}",
        replay_run::Timed { summary, wall }.line()
    );
    eprintln!(
        "replay: with every run's caches empty (the baseline): {fresh_rate:.0} pod starts/s; kept across runs {:.2}x",
        rate / fresh_rate
    );
    let mut group = c.benchmark_group("replay");
    group.sample_size(10);
    group.bench_function("generated_512_nodes_2000_jobs", |b| {
        b.iter(|| replay_once(&manifests, &jobs, &mut plugins))
    });
    group.finish();
}

criterion_group!(benches, replay_bench);
criterion_main!(benches);
