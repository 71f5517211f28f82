//! Alibaba's `cluster-trace-gpu-v2023`, "openb" (Weng et al., "Beware of
//! Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
//! Gradient Descent", USENIX ATC '23).
//!
//! - `openb_pod_list_*.csv` (`name, cpu_milli, memory_mib, num_gpu,
//!   gpu_milli, gpu_spec, qos, pod_phase, creation_time, deletion_time,
//!   scheduled_time`): one task per row, a lone pod (the trace has no
//!   gangs) in namespace [`NAMESPACE`], named as the row. It arrives at
//!   `creation_time` and runs `deletion_time - scheduled_time` seconds once
//!   it starts (its time on a node in production); a task never scheduled
//!   there (no `scheduled_time`) is skipped, as there is nothing to
//!   replay. `cpu_milli` and `memory_mib` are its requests. GPUs as
//!   [`GpuShare`] says: `num_gpu` whole `nvidia.com/gpu`, a share
//!   (`gpu_milli` below 1000, one GPU) rounded up to one; or every request
//!   in thousandths on [`GPU_MILLI_RESOURCE`]. `gpu_spec` (`V100M16` or
//!   `V100M16|V100M32`) a node selector, or node affinity `In` the models,
//!   on the GPU model label. `qos` and `pod_phase` are not mapped: the
//!   trace gives requests only (Kubernetes derives the QoS class from
//!   requests and limits) and no priority.
//! - `openb_node_list_*.csv` (`sn, cpu_milli, memory_mib, gpu, model`):
//!   one Node per row, named `sn`, its CPU, memory, GPUs (or 1000
//!   thousandths per GPU) and 110 pods allocatable, labelled with its GPU
//!   model (none for `nan`, a CPU node).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use anyhow::{Result, bail};
use serde_json::{Value, json};

use super::super::trace::{GPU_MILLI_RESOURCE, GPU_MODEL_LABEL, GPU_RESOURCE, Job};
use super::{GpuShare, Mapping, Record, Skipped, is_label_value, records};

/// The namespace of the trace's pods.
pub const NAMESPACE: &str = "openb";

/// The header of `openb_pod_list_*.csv`.
const POD_COLUMNS: [&str; 11] = [
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
];

/// The header of `openb_node_list_*.csv`.
pub(super) const NODE_COLUMNS: [&str; 5] = ["sn", "cpu_milli", "memory_mib", "gpu", "model"];

/// Whether `text` (a CSV file) is an `openb_pod_list_*.csv`.
pub fn is_pods(text: &str) -> bool {
    super::header_is(text, &POD_COLUMNS)
}

/// Whether `text` (a CSV file) is an `openb_node_list_*.csv`.
pub fn is_nodes(text: &str) -> bool {
    super::header_is(text, &NODE_COLUMNS)
}

/// Whether a cell says "no value" (pandas writes `nan`).
fn absent(cell: &str) -> bool {
    cell.is_empty() || cell.eq_ignore_ascii_case("nan")
}

/// The jobs of an `openb_pod_list_*.csv` (see the module documentation),
/// in the file's order, and the rows skipped.
pub fn jobs(file: &str, text: &str, mapping: Mapping) -> Result<(Vec<Job>, Skipped)> {
    let mut skipped = Skipped::default();
    let mut jobs = Vec::new();
    let mut seen = std::collections::BTreeMap::new();
    for record in records(file, text, &POD_COLUMNS, &mut skipped)? {
        let job = match job(file, &record, mapping) {
            Ok(job) => job,
            Err(why) => {
                skipped.add(why);
                continue;
            }
        };
        if let Some(first) = seen.insert(job.name.clone(), record.line) {
            skipped.add(format!(
                "{}: name: pod {:?} is listed on line {first} too",
                record.at(file, "name"),
                record.cell("name")
            ));
            continue;
        }
        jobs.push(job);
    }
    Ok((jobs, skipped))
}

fn job(file: &str, record: &Record, mapping: Mapping) -> Result<Job, String> {
    let scheduled = record.cell("scheduled_time");
    if absent(scheduled) {
        return Err(format!(
            "{}: scheduled_time: empty, the task never ran",
            record.at(file, "scheduled_time")
        ));
    }
    let scheduled = record.number(file, "scheduled_time")?;
    let deleted = record.number(file, "deletion_time")?;
    let Some(ran) = deleted.checked_sub(scheduled) else {
        return Err(format!(
            "{}: deletion_time: {deleted} is before scheduled_time {scheduled}",
            record.at(file, "deletion_time")
        ));
    };
    let gpus = record.number(file, "num_gpu")?;
    let milli = if absent(record.cell("gpu_milli")) {
        1000
    } else {
        record.number(file, "gpu_milli")?
    };
    if gpus > 0 && !(1..=1000).contains(&milli) {
        return Err(format!(
            "{}: gpu_milli: {milli} is not a share of a GPU (1 to 1000)",
            record.at(file, "gpu_milli")
        ));
    }
    let mut row = json!({
        "name": record.cell("name").to_ascii_lowercase(),
        "namespace": NAMESPACE,
        "submit": record.cell("creation_time"),
        "duration": ran,
        "workers": 1,
        "cpu": format!("{}m", record.number(file, "cpu_milli")?),
        "memory": format!("{}Mi", record.number(file, "memory_mib")?),
    });
    if gpus > 0 {
        match mapping.gpu_share {
            GpuShare::Whole => row["gpu"] = Value::from(gpus),
            GpuShare::Milli => {
                let share = gpus.checked_mul(milli).ok_or_else(|| {
                    format!(
                        "{}: num_gpu: {gpus} GPUs is more than a pod asks for",
                        record.at(file, "num_gpu")
                    )
                })?;
                row["requests"] = json!({ GPU_MILLI_RESOURCE: share });
            }
        }
        let spec = record.cell("gpu_spec");
        if !absent(spec) {
            row["gpuModel"] = Value::String(spec.to_string());
        }
    }
    // Each field of the trace row is where its source column is.
    let sources = [
        ("name", "name"),
        ("submit", "creation_time"),
        ("duration", "deletion_time"),
        ("cpu", "cpu_milli"),
        ("memory", "memory_mib"),
        ("gpu", "num_gpu"),
        ("requests", "gpu_milli"),
        ("gpuModel", "gpu_spec"),
    ];
    record.job(file, &sources, row)
}

/// The cluster of an `openb_node_list_*.csv` as manifests (see the module
/// documentation), and the rows skipped.
pub fn cluster(file: &str, text: &str, mapping: Mapping) -> Result<(String, Skipped)> {
    let mut skipped = Skipped::default();
    let mut yaml = String::new();
    let mut seen = BTreeSet::new();
    for record in records(file, text, &NODE_COLUMNS, &mut skipped)? {
        match node(file, &record, mapping, &mut seen) {
            Ok(node) => yaml.push_str(&node),
            Err(why) => skipped.add(why),
        }
    }
    if seen.is_empty() {
        bail!("{file}: no node could be read");
    }
    Ok((yaml, skipped))
}

fn node(
    file: &str,
    record: &Record,
    mapping: Mapping,
    seen: &mut BTreeSet<String>,
) -> Result<String, String> {
    let name = record.cell("sn").to_ascii_lowercase();
    let at = |column: &str| record.at(file, column);
    if crate::builder::check_dns_subdomain("node", "name", &name).is_err() {
        return Err(format!("{}: sn: {name:?} is not a node name", at("sn")));
    }
    if seen.contains(&name) {
        return Err(format!("{}: sn: {name:?} listed twice", at("sn")));
    }
    let cpu = record.number(file, "cpu_milli")?;
    let memory = record.number(file, "memory_mib")?;
    let gpus = record.number(file, "gpu")?;
    let milli = gpus
        .checked_mul(1000)
        .ok_or_else(|| format!("{}: gpu: {gpus} GPUs is more than a node holds", at("gpu")))?;
    let model = record.cell("model");
    let mut text = format!("apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n");
    if !absent(model) {
        if !is_label_value(model) {
            return Err(format!(
                "{}: model: {model:?} is not a label value",
                at("model")
            ));
        }
        let _ = writeln!(text, "  labels: {{{GPU_MODEL_LABEL}: \"{model}\"}}");
    }
    let gpu = match mapping.gpu_share {
        GpuShare::Whole => format!("{GPU_RESOURCE}: \"{gpus}\""),
        GpuShare::Milli => format!("{GPU_MILLI_RESOURCE}: \"{milli}\""),
    };
    seen.insert(name.clone());
    let _ = write!(
        text,
        "status:\n  allocatable: {{cpu: \"{cpu}m\", memory: \"{memory}Mi\", {gpu}, pods: \"110\"}}\n---\n"
    );
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PODS: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
        openb-pod-0017,88000,327680,8,1000,,Burstable,Succeeded,9437497,10769854,9437497\n\
        openb-pod-0022,4000,15258,1,220,nan,BE,Running,9679175,9973826,9679175\n\
        openb-pod-0035,16000,32768,1,1000,V100M16|V100M32,LS,Running,9967058,9968575,9967063\n\
        openb-pod-0040,1000,1024,0,0,,BE,Pending,9967058,9968575,\n\
        openb-pod-0041,1000,1024,1,1200,,BE,Running,9967058,9968575,9967058\n\
        openb-pod-0042,1000,1024,0,0,,BE,Running,9967058,9967000,9967058\n";

    fn gpus(job: &Job, resource: &str) -> Option<String> {
        job.requests.get(resource).cloned()
    }

    #[test]
    fn tasks_map_to_lone_pods_with_a_share_of_a_gpu_as_chosen() {
        assert!(is_pods(PODS) && !is_nodes(PODS));
        let (jobs, skipped) = super::jobs("pods.csv", PODS, Mapping::default()).unwrap();
        assert_eq!(jobs.len(), 3, "{skipped:?}");
        let [big, shared, typed] = [&jobs[0], &jobs[1], &jobs[2]];
        assert_eq!(
            (big.namespace.as_str(), big.name.as_str()),
            (NAMESPACE, "openb-pod-0017")
        );
        assert_eq!(big.grouping, super::super::super::trace::Grouping::None);
        assert_eq!(big.submit.as_secs(), 9_437_497);
        assert_eq!(big.duration.as_secs(), 10_769_854 - 9_437_497);
        assert_eq!(gpus(big, "cpu").as_deref(), Some("88000m"));
        assert_eq!(gpus(big, "memory").as_deref(), Some("327680Mi"));
        assert_eq!(big.gpus_per_pod(), 8.0);
        // A share of a GPU holds a whole one by default.
        assert_eq!(shared.gpus_per_pod(), 1.0);
        assert!(shared.node_selector.is_empty() && shared.node_affinity.is_empty());
        // Alternatives become node affinity on the model label.
        assert_eq!(
            typed.node_affinity.get(GPU_MODEL_LABEL),
            Some(&vec!["V100M16".to_string(), "V100M32".to_string()])
        );
        assert_eq!(typed.duration.as_secs(), 9_968_575 - 9_967_063);
        assert_eq!(skipped.rows, 3);
        assert_eq!(
            skipped.first,
            [
                "pods.csv:5:58: scheduled_time: empty, the task never ran",
                "pods.csv:6:28: gpu_milli: 1200 is not a share of a GPU (1 to 1000)",
                "pods.csv:7:50: deletion_time: 9967000 is before scheduled_time 9967058",
            ]
        );
        // In thousandths, every GPU request is on the shared resource.
        let milli = Mapping {
            gpu_share: GpuShare::Milli,
        };
        let (jobs, _) = super::jobs("pods.csv", PODS, milli).unwrap();
        assert_eq!(gpus(&jobs[0], GPU_MILLI_RESOURCE).as_deref(), Some("8000"));
        assert_eq!(gpus(&jobs[1], GPU_MILLI_RESOURCE).as_deref(), Some("220"));
        assert_eq!(jobs[1].gpus_per_pod(), 0.22);
    }

    #[test]
    fn nodes_become_a_cluster_labelled_by_model() {
        let nodes = "sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0227,32000,262144,0,nan\nopenb-node-0228,128000,786432,8,G3\nopenb-node-0228,1,1,1,G3\nopenb-node-0229,96000,786432,8,V100 M32\n";
        assert!(is_nodes(nodes) && !is_pods(nodes));
        for (mapping, resource, expected) in [
            (GpuShare::Whole, GPU_RESOURCE, [0, 8]),
            (GpuShare::Milli, GPU_MILLI_RESOURCE, [0, 8000]),
        ] {
            let mapping = Mapping { gpu_share: mapping };
            let (yaml, skipped) = cluster("nodes.csv", nodes, mapping).unwrap();
            assert_eq!(skipped.rows, 2, "{skipped:?}");
            assert_eq!(
                skipped.first,
                [
                    "nodes.csv:4:1: sn: \"openb-node-0228\" listed twice",
                    "nodes.csv:5:32: model: \"V100 M32\" is not a label value",
                ]
            );
            let manifests =
                crate::read_manifests_text("nodes.csv", &yaml, &Default::default()).unwrap();
            let snapshot = crate::model::Snapshot::build(&manifests).unwrap();
            assert_eq!(snapshot.node_count(), 2);
            let gpu = snapshot.resource_index(resource).unwrap();
            let mut allocatable = snapshot.allocatable(gpu).to_vec();
            allocatable.sort_unstable();
            assert_eq!(allocatable, expected);
            let memory = snapshot.resource_index("memory").unwrap();
            assert!(snapshot.allocatable(memory).contains(&(262_144 << 20)));
        }
        // A row refused for a bad cell does not take its name from a good
        // one; nothing readable is an error, not an empty cluster.
        let header = "sn,cpu_milli,memory_mib,gpu,model\n";
        let (yaml, skipped) = cluster(
            "n.csv",
            &format!("{header}n1,1000,1024,one,T4\nn1,1000,1024,1,T4\n"),
            Mapping::default(),
        )
        .unwrap();
        assert_eq!((skipped.rows, yaml.matches("kind: Node").count()), (1, 1));
        let err = cluster(
            "n.csv",
            &format!("{header}n1,1000,1024,one,T4\n"),
            Mapping::default(),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "n.csv: no node could be read");
    }
}
