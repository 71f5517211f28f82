//! Deterministic synthetic traces shaped like a GPU cluster's (the replay
//! benchmark's input): many small jobs and few large gangs, two priority
//! classes of `wasched generate`'s clusters that preempt each other.

use std::collections::BTreeMap;
use std::time::Duration;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::trace::{Disruption, GPU_MODEL_LABEL, GPU_RESOURCE, Grouping, Job};

/// What to generate.
#[derive(Debug, Clone, Copy)]
pub struct TraceOptions {
    /// Jobs.
    pub jobs: usize,
    /// Mean time between arrivals.
    pub mean_gap: Duration,
    /// The largest gang (workers).
    pub max_workers: u32,
    /// Random seed; the same options give the same trace.
    pub seed: u64,
}

/// A trace: arrivals with exponential gaps; 40 % single-pod jobs of 1–8
/// GPUs, the rest gangs of 8-GPU pods whose sizes halve in frequency as
/// they double (2 … `max_workers`); half of them asking for one of the
/// GPU models of `wasched generate`'s nodes with room for a pod
/// (`nodeSelector` on `nvidia.com/gpu.product`); durations log-uniform from 5 min to
/// 4 h; a third `training-high`, the rest `batch`, half of them
/// checkpointing every 10 min.
pub fn trace(options: &TraceOptions) -> Vec<Job> {
    jobs(options).collect()
}

/// [`trace`]'s jobs, made one at a time as they are taken (a trace of any
/// length in the memory of one job).
pub fn jobs(options: &TraceOptions) -> impl ExactSizeIterator<Item = Job> + use<> {
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let mut submit = 0f64;
    let (mean_gap, max_workers) = (options.mean_gap, options.max_workers);
    (0..options.jobs).map(move |i| {
        let u: f64 = rng.random_range(1e-9..1.0);
        submit += -u.ln() * mean_gap.as_secs_f64();
        let (workers, gpus) = if rng.random_range(0..10) < 4 {
            (1, [1, 2, 4, 8][rng.random_range(0..4)])
        } else {
            let mut workers = 2;
            while workers < max_workers && rng.random_range(0..2) == 0 {
                workers *= 2;
            }
            (workers, 8)
        };
        // Half the jobs ask for a GPU model that has room for a pod.
        let mut node_selector = BTreeMap::new();
        if rng.random_range(0..2) == 0 {
            let models: Vec<&str> = crate::generate::gpu_products()
                .filter(|&(per_node, _)| per_node >= gpus)
                .map(|(_, product)| product)
                .collect();
            let model = models[rng.random_range(0..models.len())];
            node_selector.insert(GPU_MODEL_LABEL.to_string(), model.to_string());
        }
        let duration = 300.0 * (48f64).powf(rng.random_range(0.0..1.0));
        let high = rng.random_range(0..3) == 0;
        let checkpoint = (!high && rng.random_range(0..2) == 0).then(|| Duration::from_secs(600));
        Job {
            origin: format!("generated:{}", i + 1),
            namespace: "default".into(),
            name: format!("job-{i:06}"),
            submit: Duration::from_millis((submit * 1000.0) as u64),
            duration: Duration::from_secs(duration as u64),
            workers,
            grouping: if workers > 1 {
                Grouping::Gang(workers)
            } else {
                Grouping::None
            },
            requests: BTreeMap::from([
                ("cpu".to_string(), (gpus * 8).to_string()),
                ("memory".to_string(), format!("{}Gi", gpus * 64)),
                (GPU_RESOURCE.to_string(), gpus.to_string()),
            ]),
            node_selector,
            node_affinity: BTreeMap::new(),
            priority_class: Some(if high { "training-high" } else { "batch" }.into()),
            priority_class_at: format!("generated:{}", i + 1),
            topology_key: None,
            disruption: Disruption::Pod,
            checkpoint,
            backoff_limit: 6,
            ignore_disruptions: false,
            grace_period: Duration::from_secs(30),
            roles: Vec::new(),
        }
    })
}

/// A cluster and trace written in the schema of Alibaba's
/// `cluster-trace-v2026-spot-gpu` (see [`super::alibaba::spot_gpu`]):
/// `nodes` nodes of 8 `A100-SXM4-80GB` GPUs and 128 vCPUs; `jobs` jobs
/// arriving with exponential gaps of mean `mean_gap`, 70 % `Spot` and 30 %
/// `HP`, each of 1, 2, 4 or 8 workers (halving in frequency as they
/// double) of 8 GPUs and 16 vCPUs, or a single worker of 1–4 GPUs; running
/// 10 min to 8 h (log-uniform). Returns `node_info_df.csv` and
/// `job_info_df.csv`.
pub fn spot_gpu(options: &TraceOptions, nodes: usize) -> (String, String) {
    use std::fmt::Write as _;
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let mut node_csv = String::from("node_name,gpu_model,gpu_capacity_num,cpu_num\n");
    for i in 0..nodes {
        let _ = writeln!(node_csv, "{i},A100-SXM4-80GB,8,128");
    }
    let mut job_csv = String::from(
        "job_name,organization,gpu_model,cpu_request,gpu_request,worker_num,submit_time,duration,job_type\n",
    );
    let mut submit = 0f64;
    for i in 0..options.jobs {
        let u: f64 = rng.random_range(1e-9..1.0);
        submit += -u.ln() * options.mean_gap.as_secs_f64();
        let (workers, gpus, cpus) = if rng.random_range(0..4) == 0 {
            (1, [1, 2, 4][rng.random_range(0..3)], 8)
        } else {
            let mut workers = 1;
            while workers < options.max_workers && rng.random_range(0..2) == 0 {
                workers *= 2;
            }
            (workers, 8, 16)
        };
        let duration = 600.0 * (48f64).powf(rng.random_range(0.0..1.0));
        let kind = if rng.random_range(0..10) < 3 {
            "HP"
        } else {
            "Spot"
        };
        let organization = rng.random_range(1..=12);
        let _ = writeln!(
            job_csv,
            "{},{organization},A100-SXM4-80GB,{cpus},{gpus},{workers},{},{},{kind}",
            100_000 + i,
            submit as u64,
            duration as u64
        );
    }
    (node_csv, job_csv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_options_give_the_same_trace() {
        let options = TraceOptions {
            jobs: 200,
            mean_gap: Duration::from_secs(30),
            max_workers: 32,
            seed: 7,
        };
        let a = trace(&options);
        assert_eq!(a, trace(&options));
        assert!(a.windows(2).all(|w| w[0].submit <= w[1].submit));
        assert!(a.iter().any(|j| j.workers == 1) && a.iter().any(|j| j.workers >= 8));
        assert!(a.iter().all(|j| j.workers <= 32));
    }
}
