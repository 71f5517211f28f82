//! Deterministic synthetic clusters (`wasched generate`): nodes in zones →
//! blocks → racks with realistic node classes, background load (some of it
//! in running PodGroups, some under PodDisruptionBudgets), and a pending
//! mix of gang jobs of several sizes and priorities, some
//! topology-constrained, some `disruptionMode: all`, some basic groups,
//! some two-level CompositePodGroup trees (block > rack), and lone pods.
//! Built with the [`crate::builder`] builders, so every object is valid.

use std::fmt::Write as _;

use anyhow::Result;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use serde_json::{Value, json};

mod stored;
pub use stored::as_stored;

use crate::builder::{
    CompositePodGroupBuilder, NodeBuilder, PodBuilder, PodGroupBuilder, WorkloadBuilder,
};

/// Which kinds of nodes the cluster has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shape {
    /// GPU racks of 8-, 4-, 2- and 1-GPU nodes, plus some CPU-only racks.
    Gpu,
    /// CPU-only nodes of several sizes.
    Cpu,
    /// Half GPU racks, half CPU racks.
    Mixed,
}

/// What to generate.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Number of nodes.
    pub nodes: usize,
    /// Number of pending pods (in gang jobs and lone pods).
    pub pending_pods: usize,
    /// Random seed; the same options give the same snapshot.
    pub seed: u64,
    /// Node mix.
    pub shape: Shape,
}

/// Topology labels the generator puts on nodes.
pub const ZONE: &str = "topology.kubernetes.io/zone";
/// Block label (a group of racks under one spine).
pub const BLOCK: &str = "topology.wasched.io/block";
/// Rack label.
pub const RACK: &str = "topology.wasched.io/rack";
/// NVLink-domain label of GPU racks (as NVIDIA's GPU operator sets it).
pub const CLIQUE: &str = "nvidia.com/gpu.clique";

const RACK_SIZE: usize = 16;
const RACKS_PER_BLOCK: usize = 8;
const BLOCKS_PER_ZONE: usize = 8;
const PRIORITY_CLASSES: [(&str, i32); 4] = [
    ("inference-critical", 1_000_000),
    ("training-high", 10_000),
    ("batch", 1_000),
    ("research-low", 100),
];
/// Creation time of the generated objects (2026-11-20T08:00:00Z).
const T0: i64 = 1_795_161_600;

#[derive(Clone, Copy)]
struct NodeClass {
    name: &'static str,
    cpu: u32,
    memory_gi: u32,
    gpus: u32,
    product: &'static str,
}

const GPU_CLASSES: [(NodeClass, u32); 4] = [
    (
        NodeClass {
            name: "h100x8",
            cpu: 192,
            memory_gi: 2048,
            gpus: 8,
            product: "NVIDIA-H100-80GB-HBM3",
        },
        50,
    ),
    (
        NodeClass {
            name: "gb200x4",
            cpu: 144,
            memory_gi: 1024,
            gpus: 4,
            product: "NVIDIA-GB200",
        },
        25,
    ),
    (
        NodeClass {
            name: "l40sx2",
            cpu: 64,
            memory_gi: 512,
            gpus: 2,
            product: "NVIDIA-L40S",
        },
        15,
    ),
    (
        NodeClass {
            name: "l4x1",
            cpu: 32,
            memory_gi: 128,
            gpus: 1,
            product: "NVIDIA-L4",
        },
        10,
    ),
];
/// The GPU models (`nvidia.com/gpu.product`) of the generated GPU nodes,
/// each with the GPUs a node of it has, largest first.
pub fn gpu_products() -> impl Iterator<Item = (u32, &'static str)> {
    GPU_CLASSES
        .iter()
        .map(|(class, _)| (class.gpus, class.product))
}

const CPU_CLASSES: [(NodeClass, u32); 3] = [
    (
        NodeClass {
            name: "cpu-32",
            cpu: 32,
            memory_gi: 128,
            gpus: 0,
            product: "",
        },
        40,
    ),
    (
        NodeClass {
            name: "cpu-64",
            cpu: 64,
            memory_gi: 256,
            gpus: 0,
            product: "",
        },
        40,
    ),
    (
        NodeClass {
            name: "cpu-96",
            cpu: 96,
            memory_gi: 384,
            gpus: 0,
            product: "",
        },
        20,
    ),
];

fn weighted<T: Copy>(rng: &mut ChaCha8Rng, choices: &[(T, u32)]) -> T {
    let total: u32 = choices.iter().map(|(_, w)| w).sum();
    let mut pick = rng.random_range(0..total);
    for &(choice, weight) in choices {
        if pick < weight {
            return choice;
        }
        pick -= weight;
    }
    choices[0].0
}

/// Generates the snapshot as one `kind: List` JSON object (what `kubectl get
/// -o json` prints); much faster to read back than YAML.
pub fn generate_json(options: &Options) -> Result<String> {
    list_json(generate(options)?)
}

/// Generates the snapshot as a real cluster's dump: one `kind: List` JSON
/// object whose items carry what the API server stores ([`as_stored`]:
/// UIDs, resource versions, `managedFields`, node and pod status).
pub fn dump_json(options: &Options) -> Result<String> {
    let mut items = generate(options)?;
    as_stored(&mut items);
    list_json(items)
}

/// Generates the snapshot as one `kind: List` YAML document.
pub fn generate_yaml(options: &Options) -> Result<String> {
    list_yaml(options, generate(options)?)
}

/// `items` as one `kind: List` JSON object on one line.
pub fn list_json(items: Vec<Value>) -> Result<String> {
    let mut out =
        serde_json::to_string(&json!({"apiVersion": "v1", "kind": "List", "items": items}))?;
    out.push('\n');
    Ok(out)
}

/// `items` as one `kind: List` YAML document, after a comment saying which
/// options generated them.
pub fn list_yaml(options: &Options, items: Vec<Value>) -> Result<String> {
    let mut out = String::with_capacity(items.len() * 600);
    writeln!(
        out,
        "# wasched generate --nodes {} --pending-pods {} --seed {} --shape {:?}",
        options.nodes, options.pending_pods, options.seed, options.shape
    )?;
    out.push_str(&serde_norway::to_string(
        &json!({"apiVersion": "v1", "kind": "List", "items": items}),
    )?);
    Ok(out)
}

fn value(object: &impl Serialize, api_version: &str, kind: &str) -> Result<Value> {
    let mut value = serde_json::to_value(object)?;
    value["apiVersion"] = json!(api_version);
    value["kind"] = json!(kind);
    Ok(value)
}

/// How a pending job is grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JobKind {
    /// A gang PodGroup.
    Gang,
    /// A basic PodGroup.
    Basic,
    /// A CompositePodGroup (gang of its 2 children, one block) over two
    /// gang PodGroups (one rack each).
    Tree,
}

/// Generates the snapshot's objects (priority classes, nodes, running and
/// pending pods, PodGroups, CompositePodGroups, Workloads,
/// PodDisruptionBudgets).
pub fn generate(options: &Options) -> Result<Vec<Value>> {
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    // A second stream for what later versions added (running groups,
    // budgets, basic groups, trees), so the first one's draws, and the
    // snapshot's jobs, sizes and priorities, stay what they were.
    let mut extra = ChaCha8Rng::seed_from_u64(options.seed ^ 0x9e37_79b9_7f4a_7c15);
    let mut items = Vec::new();
    for (name, value) in PRIORITY_CLASSES {
        items.push(json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}));
    }

    // Nodes: racks of one class each.
    let mut nodes: Vec<(String, NodeClass, String)> = Vec::new(); // (name, class, rack)
    let racks = options.nodes.div_ceil(RACK_SIZE);
    for rack in 0..racks {
        let block = rack / RACKS_PER_BLOCK;
        let zone = block / BLOCKS_PER_ZONE;
        let gpu_rack = match options.shape {
            Shape::Gpu => rng.random_range(0..10) > 0,
            Shape::Cpu => false,
            Shape::Mixed => rack % 2 == 0,
        };
        let class = if gpu_rack {
            weighted(&mut rng, &GPU_CLASSES)
        } else {
            weighted(&mut rng, &CPU_CLASSES)
        };
        let rack_name = format!("rack-{rack:03}");
        for slot in 0..RACK_SIZE.min(options.nodes - rack * RACK_SIZE) {
            let name = format!("{}-r{rack:03}-n{slot:02}", class.name);
            let mut node = NodeBuilder::new(&name)
                .label(ZONE, &format!("zone-{zone}"))
                .label(BLOCK, &format!("block-{block:02}"))
                .label(RACK, &rack_name)
                .label("wasched.io/node-class", class.name)
                .cpu(&class.cpu.to_string())
                .memory(&format!("{}Gi", class.memory_gi));
            if class.gpus > 0 {
                node = node
                    .gpus(class.gpus)
                    .label("nvidia.com/gpu.product", class.product)
                    .label(CLIQUE, &format!("nvl-{rack:03}"))
                    .taint("nvidia.com/gpu", "present", "NoSchedule");
            }
            items.push(value(&node.build()?, "v1", "Node")?);
            nodes.push((name, class, rack_name.clone()));
        }
    }

    // Background load: a third of the nodes run something. A rack's
    // background pods carry `app: bg-<rack>`; in a third of the racks they
    // form a running PodGroup (half of those disrupted as a whole), in a
    // quarter a PodDisruptionBudget allows one of them to go.
    let mut rack_groups: std::collections::BTreeMap<&str, bool> = Default::default();
    let mut rack_budgets: std::collections::BTreeSet<&str> = Default::default();
    for (_, _, rack) in &nodes {
        if rack_groups.contains_key(rack.as_str()) || rack_budgets.contains(rack.as_str()) {
            continue;
        }
        if extra.random_range(0..3) == 0 {
            rack_groups.insert(rack, extra.random_range(0..2) == 0);
        }
        if extra.random_range(0..4) == 0 {
            rack_budgets.insert(rack);
        }
    }
    let mut used_groups = std::collections::BTreeSet::new();
    for (i, (node, class, rack)) in nodes.iter().enumerate() {
        if rng.random_range(0..3) != 0 {
            continue;
        }
        let app = format!("bg-{rack}");
        let mut pod = PodBuilder::new("background", &format!("running-{i:05}"))
            .cpu(&(class.cpu / 4).to_string())
            .memory(&format!("{}Gi", class.memory_gi / 4))
            .priority_class("batch")
            .label("app", &app)
            .created_at(T0 - 86_400)
            .running_on(node);
        if class.gpus > 0 {
            pod = pod.gpus(class.gpus.div_ceil(2)).tolerate("nvidia.com/gpu");
        }
        if rack_groups.contains_key(rack.as_str()) {
            pod = pod.group(&app);
            used_groups.insert(rack.as_str());
        }
        items.push(value(&pod.build()?, "v1", "Pod")?);
    }
    for (rack, all) in &rack_groups {
        if !used_groups.contains(rack) {
            continue;
        }
        let mut group = PodGroupBuilder::new("background", &format!("bg-{rack}"))
            .priority_class("batch")
            .created_at(T0 - 86_400);
        if *all {
            group = group.disrupt_all();
        }
        items.push(value(
            &group.build()?,
            "scheduling.k8s.io/v1beta1",
            "PodGroup",
        )?);
    }
    for rack in &rack_budgets {
        items.push(json!({
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": format!("bg-{rack}"), "namespace": "background"},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": format!("bg-{rack}")}}},
        }));
    }

    // Pending work: gang jobs sized for a node class, and lone pods.
    let gpu_classes: Vec<NodeClass> = GPU_CLASSES
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| nodes.iter().any(|(_, n, _)| n.name == c.name))
        .collect();
    let mut pending = 0;
    let mut job = 0;
    while pending < options.pending_pods {
        let left = options.pending_pods - pending;
        let created = T0 + job as i64 * 60;
        let (class_name, _) =
            PRIORITY_CLASSES[weighted(&mut rng, &[(0usize, 10), (1, 40), (2, 30), (3, 20)])];
        if left == 1 || rng.random_range(0..10) == 0 {
            let pod = PodBuilder::new("adhoc", &format!("task-{job:05}"))
                .cpu("2")
                .memory("4Gi")
                .priority_class(class_name)
                .created_at(created);
            items.push(value(&pod.build()?, "v1", "Pod")?);
            pending += 1;
            job += 1;
            continue;
        }
        let size: usize = weighted(
            &mut rng,
            &[
                (1usize, 10),
                (2, 20),
                (4, 25),
                (8, 20),
                (16, 12),
                (32, 7),
                (64, 4),
                (128, 2),
            ],
        )
        .min(left);
        let name = format!("job-{job:05}");
        let namespace = if gpu_classes.is_empty() || rng.random_range(0..4) == 0 {
            "batch"
        } else {
            "ml"
        };
        let gpu_class =
            (namespace == "ml").then(|| gpu_classes[rng.random_range(0..gpu_classes.len())]);
        let min_count = if rng.random_range(0..5) == 0 {
            size.div_ceil(2)
        } else {
            size
        };
        let topology =
            (rng.random_range(0..10) < 3).then_some(if size <= RACK_SIZE { RACK } else { BLOCK });
        let disrupt_all = rng.random_range(0..4) == 0;
        let kind = if size >= 4 && gpu_class.is_none() && extra.random_range(0..6) == 0 {
            JobKind::Tree
        } else if extra.random_range(0..8) == 0 {
            JobKind::Basic
        } else {
            JobKind::Gang
        };
        // The PodGroups of the job: (name, members, minCount).
        let mut groups: Vec<(String, usize, Option<i32>)> = Vec::new();
        match kind {
            JobKind::Gang | JobKind::Basic => {
                let min = (kind == JobKind::Gang).then_some(min_count as i32);
                let mut group = PodGroupBuilder::new(namespace, &name)
                    .priority_class(class_name)
                    .workload(&name, "workers")
                    .created_at(created);
                if let Some(min) = min {
                    group = group.gang(min);
                }
                if let Some(key) = topology {
                    group = group.topology(key);
                }
                if disrupt_all {
                    group = group.disrupt_all();
                }
                let workload = WorkloadBuilder::new(namespace, &name)
                    .controller("batch", "Job", &name)
                    .template("workers", min);
                items.push(value(
                    &workload.build()?,
                    "scheduling.k8s.io/v1beta1",
                    "Workload",
                )?);
                items.push(value(
                    &group.build()?,
                    "scheduling.k8s.io/v1beta1",
                    "PodGroup",
                )?);
                groups.push((name.clone(), size, min));
            }
            JobKind::Tree => {
                let shards = [("a", size.div_ceil(2)), ("b", size / 2)];
                let children: Vec<(String, Option<i32>)> = shards
                    .iter()
                    .map(|(shard, n)| (format!("shard-{shard}"), Some(*n as i32)))
                    .collect();
                let child_refs: Vec<(&str, Option<i32>)> =
                    children.iter().map(|(n, m)| (n.as_str(), *m)).collect();
                let workload = WorkloadBuilder::new(namespace, &name)
                    .controller("batch", "JobSet", &name)
                    .composite_template("train", Some(2), &child_refs);
                items.push(value(
                    &workload.build()?,
                    "scheduling.k8s.io/v1beta1",
                    "Workload",
                )?);
                let composite = CompositePodGroupBuilder::new(namespace, &name, &name, "train")
                    .gang(2)
                    .topology(BLOCK)
                    .priority_class(class_name)
                    .created_at(created);
                items.push(value(
                    &composite.build()?,
                    "scheduling.k8s.io/v1alpha3",
                    "CompositePodGroup",
                )?);
                for (shard, n) in shards {
                    let child = format!("{name}-{shard}");
                    let group = PodGroupBuilder::new(namespace, &child)
                        .gang(n as i32)
                        .topology(RACK)
                        .priority_class(class_name)
                        .parent(&name)
                        .workload(&name, &format!("shard-{shard}"))
                        .created_at(created);
                    items.push(value(
                        &group.build()?,
                        "scheduling.k8s.io/v1beta1",
                        "PodGroup",
                    )?);
                    groups.push((child, n, Some(n as i32)));
                }
            }
        }
        for (group, members, _) in &groups {
            for i in 0..*members {
                let mut pod = PodBuilder::new(namespace, &format!("{group}-{i}"))
                    .group(group)
                    .priority_class(class_name)
                    .created_at(created);
                pod = match gpu_class {
                    Some(class) => pod
                        .gpus(class.gpus)
                        .cpu(&(class.cpu / 2).to_string())
                        .memory(&format!("{}Gi", class.memory_gi / 2))
                        .node_selector("nvidia.com/gpu.product", class.product)
                        .tolerate("nvidia.com/gpu"),
                    None => pod
                        .cpu(&rng.random_range(2..16u32).to_string())
                        .memory(&format!("{}Gi", rng.random_range(4..64u32))),
                };
                items.push(value(&pod.build()?, "v1", "Pod")?);
            }
        }
        pending += size;
        job += 1;
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_options_same_snapshot_and_it_loads() {
        let options = Options {
            nodes: 40,
            pending_pods: 60,
            seed: 7,
            shape: Shape::Mixed,
        };
        let a = generate_yaml(&options).unwrap();
        assert_eq!(a, generate_yaml(&options).unwrap());
        assert_ne!(a, generate_yaml(&Options { seed: 8, ..options }).unwrap());
        let mut manifests = crate::manifest::Manifests::default();
        crate::manifest::load_str(&mut manifests, "generated.yaml", &a).unwrap();
        let snapshot = crate::Snapshot::build(&manifests).unwrap();
        assert_eq!(snapshot.nodes.len(), 40);
        assert_eq!(snapshot.pods.iter().filter(|p| p.pending).count(), 60);
        assert!(
            snapshot
                .groups
                .iter()
                .any(|g| g.spec.as_ref().is_some_and(|s| s.topology_key.is_some()))
        );
        assert!(
            snapshot
                .groups
                .iter()
                .any(|g| g.spec.as_ref().is_some_and(|s| s.disrupt_all))
        );
        assert!(snapshot.nodes.iter().any(|n| n.labels.contains_key(CLIQUE)));
    }

    #[test]
    fn clusters_hold_trees_basic_groups_running_groups_and_budgets() {
        let options = Options {
            nodes: 200,
            pending_pods: 400,
            seed: 1,
            shape: Shape::Mixed,
        };
        let mut manifests = crate::manifest::Manifests::default();
        let text = generate_json(&options).unwrap();
        crate::manifest::load_str(&mut manifests, "generated.json", &text).unwrap();
        let snapshot = crate::Snapshot::build(&manifests).unwrap();
        assert!(!snapshot.composites.is_empty(), "CompositePodGroup trees");
        assert!(snapshot.composites.iter().all(|c| c.invalid.is_none()));
        assert!(
            snapshot
                .groups
                .iter()
                .any(|g| g.spec.is_some() && g.min_count().is_none()),
            "basic groups"
        );
        assert!(
            snapshot.groups.iter().any(|g| g
                .members
                .iter()
                .all(|&p| !snapshot.pods[p as usize].pending)
                && !g.members.is_empty()),
            "running groups"
        );
        assert!(!snapshot.budgets.is_empty(), "PodDisruptionBudgets");
        assert_eq!(snapshot.pods.iter().filter(|p| p.pending).count(), 400);
    }
}
