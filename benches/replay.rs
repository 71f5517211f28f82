//! What `wasched replay` costs: a generated GPU cluster (`wasched
//! generate`, racks of 8-, 4-, 2- and 1-GPU nodes with background load) and
//! a generated trace of gangs and single-pod jobs in two priority classes
//! that preempt (`replay::generate::trace`), replayed to the end through
//! the bundled components. Prints pod starts and scheduling attempts per
//! second of wall time and the virtual-time speed-up of one run, then
//! benchmarks the whole replay.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use wasched::generate::{Options, Shape, generate_yaml};
use wasched::replay::generate::{TraceOptions, trace};
use wasched::replay::{self, Job, JobRow};
use wasched::scheduler::ablation::Reuse;
use wasched_benches::{bundled_plugins, peak_rss_mib};

const NODES: usize = 512;
const JOBS: usize = 2_000;

fn inputs() -> (wasched::manifest::Manifests, Vec<Job>) {
    let yaml = generate_yaml(&Options {
        nodes: NODES,
        pending_pods: 0,
        seed: 1,
        shape: Shape::Gpu,
    })
    .expect("the cluster generates");
    let manifests = wasched::read_manifests_text("generated.yaml", &yaml, &Default::default())
        .expect("the cluster reads");
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

fn replay_bench(c: &mut Criterion) {
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
    let gpu_mean = if summary.series.is_empty() {
        0.0
    } else {
        summary.series.iter().map(|p| p.gpu_share).sum::<f64>() / summary.series.len() as f64
    };
    eprintln!(
        "replay: {NODES} nodes, {} jobs ({} succeeded), {} pod starts, {} attempts, {} evictions in {wall:.2} s: {:.0} pod starts/s, {:.0} attempts/s; {:.0} s of virtual time, {:.0}x; mean GPU allocation {:.0} %; peak RSS {:.0} MiB",
        summary.jobs,
        summary.succeeded,
        summary.pod_starts,
        summary.attempts,
        summary.evictions,
        rate,
        summary.attempts as f64 / wall,
        summary.replayed,
        summary.replayed / wall,
        gpu_mean * 100.0,
        peak_rss_mib(),
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
