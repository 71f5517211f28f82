//! Alibaba's `cluster-trace-v2026-spot-gpu` (Duan et al., "GFS: A
//! Preemptive Scheduling Framework for GPU Clusters with Predictive Spot
//! Management", ASPLOS '26).
//!
//! - `job_info_df.csv` (`job_name, organization, gpu_model, cpu_request,
//!   gpu_request, worker_num, submit_time, duration, job_type`): one job per
//!   row. `worker_num` pods, a gang of all of them when more than one;
//!   `cpu_request` and `gpu_request` per pod (the published sample's job of
//!   94 workers asks for 1 GPU and 15 vCPUs: per instance); `gpu_model` a
//!   node selector on [`GPU_MODEL_LABEL`] when GPUs are asked for; the
//!   organization its namespace (`org-N`); `HP` and `Spot` the priority
//!   classes [`HP_CLASS`] and [`SPOT_CLASS`], HP preempting Spot; a
//!   preempted pod is replaced without counting as a failure (a
//!   `podFailurePolicy` ignoring `DisruptionTarget`: spot work is meant to
//!   be preempted). There is no memory column: no memory is asked for.
//! - `node_info_df.csv` (`node_name, gpu_model, gpu_capacity_num,
//!   cpu_num`): one Node per row (`node-N`), its GPUs and vCPUs allocatable,
//!   110 pods, labelled with its GPU model; with the two PriorityClasses,
//!   the starting cluster (`wasched replay --cluster-from`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use anyhow::{Result, bail};
use serde_json::{Value, json};

use super::super::trace::{GPU_MODEL_LABEL, GPU_RESOURCE, Job};
use super::{Record, Skipped, is_label_value, records};

/// The PriorityClass of `HP` jobs.
pub const HP_CLASS: &str = "alibaba-hp";
/// Its value: above [`SPOT_CLASS`]'s, so HP jobs preempt Spot ones.
pub const HP_PRIORITY: i32 = 1000;
/// The PriorityClass of `Spot` jobs.
pub const SPOT_CLASS: &str = "alibaba-spot";
/// Its value.
pub const SPOT_PRIORITY: i32 = 0;

/// The header of `job_info_df.csv`.
const JOB_COLUMNS: [&str; 9] = [
    "job_name",
    "organization",
    "gpu_model",
    "cpu_request",
    "gpu_request",
    "worker_num",
    "submit_time",
    "duration",
    "job_type",
];

/// The header of `node_info_df.csv`.
pub(super) const NODE_COLUMNS: [&str; 4] =
    ["node_name", "gpu_model", "gpu_capacity_num", "cpu_num"];

/// Whether `text` (a CSV file) is a `job_info_df.csv` of the spot-GPU trace.
pub fn is_jobs(text: &str) -> bool {
    super::header_is(text, &JOB_COLUMNS)
}

/// Whether `text` (a CSV file) is a `node_info_df.csv` of the spot-GPU trace.
pub fn is_nodes(text: &str) -> bool {
    super::header_is(text, &NODE_COLUMNS)
}

/// The jobs of a `job_info_df.csv` (see the module documentation), in
/// the file's order, and the rows skipped.
pub fn jobs(file: &str, text: &str) -> Result<(Vec<Job>, Skipped)> {
    let mut skipped = Skipped::default();
    let mut jobs = Vec::new();
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    for record in records(file, text, &JOB_COLUMNS, &mut skipped)? {
        let job = match job(file, &record) {
            Ok(job) => job,
            Err(why) => {
                skipped.add(why);
                continue;
            }
        };
        let key = (job.namespace.clone(), job.name.clone());
        if let Some(first) = seen.insert(key, record.line) {
            skipped.add(format!(
                "{}: job_name: job {}/{} is listed on line {first} too",
                record.at(file, "job_name"),
                job.namespace,
                job.name
            ));
            continue;
        }
        jobs.push(job);
    }
    Ok((jobs, skipped))
}

fn job(file: &str, record: &Record) -> Result<Job, String> {
    let class = match record.cell("job_type") {
        "HP" => HP_CLASS,
        "Spot" => SPOT_CLASS,
        other => {
            return Err(format!(
                "{}: job_type: {other:?} is neither HP nor Spot",
                record.at(file, "job_type")
            ));
        }
    };
    let workers = record.number(file, "worker_num")?;
    let gpus = record.number(file, "gpu_request")?;
    let mut row = json!({
        "name": format!("job-{}", record.cell("job_name").to_ascii_lowercase()),
        "namespace": format!("org-{}", record.cell("organization").to_ascii_lowercase()),
        "submit": record.cell("submit_time"),
        "duration": record.cell("duration"),
        "workers": workers.to_string(),
        "cpu": record.cell("cpu_request"),
        "gpu": gpus.to_string(),
        "priorityClass": class,
        "ignoreDisruptions": true,
    });
    if workers > 1 {
        row["minCount"] = Value::String(workers.to_string());
    }
    let model = record.cell("gpu_model");
    if gpus > 0 && !model.is_empty() {
        row["gpuModel"] = Value::String(model.to_string());
    }
    // Each field of the trace row is where its source column is.
    let sources = [
        ("name", "job_name"),
        ("namespace", "organization"),
        ("submit", "submit_time"),
        ("duration", "duration"),
        ("workers", "worker_num"),
        ("minCount", "worker_num"),
        ("cpu", "cpu_request"),
        ("gpu", "gpu_request"),
        ("gpuModel", "gpu_model"),
        ("priorityClass", "job_type"),
    ];
    record.job(file, &sources, row)
}

/// The cluster of a `node_info_df.csv` as manifests (the Nodes and the two
/// PriorityClasses, see the module documentation), and the rows skipped.
pub fn cluster(file: &str, text: &str) -> Result<(String, Skipped)> {
    let mut skipped = Skipped::default();
    let mut yaml = String::new();
    for (name, value) in [(HP_CLASS, HP_PRIORITY), (SPOT_CLASS, SPOT_PRIORITY)] {
        let _ = write!(
            yaml,
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\nvalue: {value}\n---\n"
        );
    }
    let mut seen = BTreeSet::new();
    for record in records(file, text, &NODE_COLUMNS, &mut skipped)? {
        match node(file, &record, &mut seen) {
            Ok(node) => yaml.push_str(&node),
            Err(why) => skipped.add(why),
        }
    }
    if seen.is_empty() {
        bail!("{file}: no node could be read");
    }
    Ok((yaml, skipped))
}

fn node(file: &str, record: &Record, seen: &mut BTreeSet<String>) -> Result<String, String> {
    let name = format!("node-{}", record.cell("node_name").to_ascii_lowercase());
    let at = |column: &str| record.at(file, column);
    if crate::builder::check_dns_label("node", "name", &name).is_err() {
        return Err(format!(
            "{}: node_name: {name:?} is not a DNS label",
            at("node_name")
        ));
    }
    if seen.contains(&name) {
        return Err(format!(
            "{}: node_name: {name:?} listed twice",
            at("node_name")
        ));
    }
    let gpus = record.number(file, "gpu_capacity_num")?;
    let cpus = record.number(file, "cpu_num")?;
    let model = record.cell("gpu_model");
    if !is_label_value(model) {
        return Err(format!(
            "{}: gpu_model: {model:?} is not a label value",
            at("gpu_model")
        ));
    }
    seen.insert(name.clone());
    Ok(format!(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels: {{{GPU_MODEL_LABEL}: \"{model}\"}}\nstatus:\n  allocatable: {{cpu: \"{cpus}\", {GPU_RESOURCE}: \"{gpus}\", pods: \"110\"}}\n---\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOBS: &str = "job_name,organization,gpu_model,cpu_request,gpu_request,worker_num,submit_time,duration,job_type\n\
        239255,13,A10,20,1,1,0,2764799,HP\n\
        437261,57,A100-SXM4-80GB,15,1,94,9589663,71718,Spot\n\
        500,2,A10,8,0,1,5,-3,HP\n\
        501,2,A10,8,1,1,5,30,Batch\n\
        502,2,A10,8,1,x,5,30,HP\n";

    #[test]
    fn jobs_map_per_worker_with_gangs_and_classes() {
        assert!(is_jobs(JOBS) && !is_nodes(JOBS));
        let (jobs, skipped) = jobs("job_info_df.csv", JOBS).unwrap();
        assert_eq!(jobs.len(), 2);
        let lone = &jobs[0];
        assert_eq!(
            (lone.namespace.as_str(), lone.name.as_str()),
            ("org-13", "job-239255")
        );
        assert_eq!((lone.workers, lone.needed()), (1, 1));
        assert_eq!(lone.grouping, super::super::super::trace::Grouping::None);
        assert_eq!(lone.priority_class.as_deref(), Some(HP_CLASS));
        assert_eq!(lone.duration.as_secs(), 2_764_799);
        let gang = &jobs[1];
        assert_eq!(
            gang.grouping,
            super::super::super::trace::Grouping::Gang(94)
        );
        assert_eq!(gang.requests.get("cpu").map(String::as_str), Some("15"));
        assert_eq!(gang.gpus_per_pod(), 1.0);
        assert_eq!(
            gang.node_selector.get(GPU_MODEL_LABEL).map(String::as_str),
            Some("A100-SXM4-80GB")
        );
        assert_eq!(gang.priority_class.as_deref(), Some(SPOT_CLASS));
        assert_eq!(gang.submit.as_secs(), 9_589_663);
        assert!(gang.ignore_disruptions);
        // Three rows skipped, each named where it is wrong.
        assert_eq!(skipped.rows, 3);
        assert!(
            skipped.first[0].starts_with("job_info_df.csv:4:"),
            "{skipped:?}"
        );
        assert!(skipped.first[0].contains("duration"), "{skipped:?}");
        assert_eq!(
            skipped.first[1],
            "job_info_df.csv:5:22: job_type: \"Batch\" is neither HP nor Spot"
        );
        assert_eq!(
            skipped.first[2],
            "job_info_df.csv:6:15: worker_num: \"x\" is not a whole number ≥ 0"
        );
        // A job listed twice: the second is skipped.
        let twice = format!(
            "{}239255,13,A10,1,1,1,9,9,HP\n",
            JOBS.lines().take(2).collect::<Vec<_>>().join("\n") + "\n"
        );
        let (jobs_twice, skipped_twice) = super::jobs("j.csv", &twice).unwrap();
        assert_eq!(jobs_twice.len(), 1);
        assert_eq!(
            skipped_twice.first,
            ["j.csv:3:1: job_name: job org-13/job-239255 is listed on line 2 too"]
        );
        let note = skipped.note("job_info_df.csv").unwrap();
        assert!(
            note.starts_with("job_info_df.csv: 3 row(s) not mapped"),
            "{note}"
        );
    }

    #[test]
    fn nodes_become_a_cluster_with_both_priority_classes() {
        let nodes = "node_name,gpu_model,gpu_capacity_num,cpu_num\n0,GPU-series-1,4,192\n3,A100-SXM4-80GB,8,128\n3,A10,1,128\n4,A10,one,128\n";
        assert!(is_nodes(nodes));
        let (yaml, skipped) = cluster("node_info_df.csv", nodes).unwrap();
        assert_eq!(skipped.rows, 2, "{skipped:?}");
        assert_eq!(
            skipped.first[0],
            "node_info_df.csv:4:1: node_name: \"node-3\" listed twice"
        );
        let manifests =
            crate::read_manifests_text("node_info_df.csv", &yaml, &Default::default()).unwrap();
        let snapshot = crate::model::Snapshot::build(&manifests).unwrap();
        assert_eq!(snapshot.node_count(), 2);
        let gpu = snapshot.resource_index(GPU_RESOURCE).unwrap();
        assert_eq!(snapshot.allocatable(gpu), [4, 8]);
        let cpu = snapshot.resource_index("cpu").unwrap();
        assert_eq!(snapshot.allocatable(cpu), [192_000, 128_000]);
        assert!(yaml.contains(&format!("name: {HP_CLASS}}}\nvalue: {HP_PRIORITY}")));
        // Nothing readable: an error, not an empty cluster.
        let err = cluster("n.csv", "node_name,gpu_model,gpu_capacity_num,cpu_num\n").unwrap_err();
        assert_eq!(err.to_string(), "n.csv: no node could be read");
        let err = cluster("n.csv", "node_name,gpu_model,cpu_num\n0,A10,1\n").unwrap_err();
        assert!(
            err.to_string()
                .contains("lacks column \"gpu_capacity_num\""),
            "{err}"
        );
    }
}
