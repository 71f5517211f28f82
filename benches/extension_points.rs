//! Every extension point of every bundled plugin, called through the
//! framework (answer checks included) once through the wasm component and
//! once with the same logic compiled natively, on the same inputs over the
//! generated 5,000-node cluster: the price of the wasm boundary per call.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use wasched::framework::{
    ExtensionPoint, Placement, PreemptionCandidate, Preemptor, Progress, Unit, VictimUnit,
};
use wasched::{PluginSet, Snapshot};
use wasched_benches::{
    bundled_plugins_with_binpack, large_snapshot, native_plugins_with_binpack,
    v0_2_0_plugins_with_binpack,
};

/// `GpuBinPacking` args: GPUs and cpu, and the filter on, so both points work.
const BINPACK_ARGS: &str = r#"{"resources": [{"name": "nvidia.com/gpu", "weight": 3}, {"name": "cpu"}], "reserveForRequesters": true}"#;

/// The inputs every call gets, picked from the large cluster.
struct Inputs {
    gang: Unit,
    topology_gang: Unit,
    gpu_pod: u32,
    cpu_pod: u32,
    nodes: Vec<u32>,
    victims: Vec<VictimUnit>,
    candidates: Vec<PreemptionCandidate>,
}

impl Inputs {
    fn pick(snapshot: &Snapshot) -> Self {
        let gpu = snapshot
            .resource_names
            .iter()
            .position(|r| r == "nvidia.com/gpu")
            .expect("a GPU cluster");
        let pending = |wants_gpu: bool| {
            snapshot
                .pods
                .iter()
                .position(|p| p.pending && (p.requests[gpu] > 0) == wants_gpu)
                .expect("pending pods with and without GPUs") as u32
        };
        let gang = snapshot
            .groups
            .iter()
            .position(|g| g.min_count().is_some_and(|m| m >= 4))
            .expect("a gang") as u32;
        let topology_gang = snapshot
            .groups
            .iter()
            .position(|g| {
                g.spec.as_ref().is_some_and(|s| s.topology_key.is_some()) && g.parent.is_none()
            })
            .expect("a topology-constrained gang") as u32;
        let nodes: Vec<u32> = (0..snapshot.node_count() as u32).collect();
        let members = &snapshot.groups[topology_gang as usize].members;
        let assignments: Vec<(u32, u32)> = members
            .iter()
            .zip(&nodes[..16])
            .map(|(&p, &n)| (p, n))
            .collect();
        let running: Vec<u32> = (0..snapshot.pods.len() as u32)
            .filter(|&p| {
                !snapshot.pods[p as usize].pending && snapshot.pods[p as usize].node.is_some()
            })
            .take(400)
            .collect();
        let victims: Vec<VictimUnit> = running
            .iter()
            .enumerate()
            .map(|(i, &pod)| {
                let info = &snapshot.pods[pod as usize];
                VictimUnit {
                    index: i as u32,
                    pods: vec![pod],
                    group: None,
                    priority: info.priority,
                    start_time: i as i64,
                    violates_budget: i % 7 == 0,
                }
            })
            .collect();
        let candidates: Vec<PreemptionCandidate> = (0..40)
            .map(|c| PreemptionCandidate {
                index: c as u32,
                domain: format!("rack-{c}"),
                victims: victims[c * 10..c * 10 + 1 + c % 5].to_vec(),
                assignments: assignments.clone(),
            })
            .collect();
        Self {
            gang: Unit::Group(gang),
            topology_gang: Unit::Group(topology_gang),
            gpu_pod: pending(true),
            cpu_pod: pending(false),
            nodes,
            victims,
            candidates,
        }
    }
}

/// Calls the one plugin at `point` in `plugins` with the inputs.
fn call(plugins: &mut PluginSet, point: ExtensionPoint, snapshot: &mut Snapshot, i: &Inputs) {
    let mut plugin = plugins.at(point).next().expect("a plugin at every point");
    match point {
        ExtensionPoint::PreEnqueue => {
            black_box(plugin.pre_enqueue(snapshot, i.gang).unwrap());
        }
        ExtensionPoint::Permit => {
            let progress = Progress {
                scheduled: 1,
                remaining: 2,
            };
            black_box(plugin.permit(snapshot, i.gang, progress).unwrap());
        }
        ExtensionPoint::Filter => {
            black_box(plugin.filter(snapshot, i.cpu_pod, &i.nodes).unwrap());
        }
        ExtensionPoint::Score => {
            black_box(
                plugin
                    .score(snapshot, i.gpu_pod, &i.nodes)
                    .unwrap()
                    .expect("scores"),
            );
        }
        ExtensionPoint::PlacementGenerate => {
            let parent = Placement::cluster(i.nodes.len());
            black_box(
                plugin
                    .generate_placements(snapshot, i.topology_gang, &parent)
                    .unwrap()
                    .expect("placements"),
            );
        }
        ExtensionPoint::PlacementScore => {
            unreachable!("no bundled plugin scores placements; the host does")
        }
        ExtensionPoint::PodGroupPostFilter => {
            let preemptor = Preemptor::Unit(i.topology_gang);
            black_box(
                plugin
                    .order_victims(snapshot, preemptor, &i.victims)
                    .unwrap()
                    .expect("an order"),
            );
            black_box(
                plugin
                    .select_candidate(snapshot, preemptor, &i.candidates)
                    .unwrap()
                    .expect("a choice"),
            );
        }
    }
}

fn extension_points(c: &mut Criterion) {
    let mut snapshot = large_snapshot().unwrap();
    let inputs = Inputs::pick(&snapshot);
    let (_runtime, mut wasm) = bundled_plugins_with_binpack(BINPACK_ARGS).unwrap();
    let (_old_runtime, mut old) = v0_2_0_plugins_with_binpack(BINPACK_ARGS).unwrap();
    let mut native = native_plugins_with_binpack(BINPACK_ARGS);
    // The batched filter and score of one pod over every node, together
    // (what a pod's cycle asks a node plugin), against 0.2.0's build.
    let mut group = c.benchmark_group("WaschedGpuBinPacking/filter+score");
    for (label, plugins) in [
        ("component", &mut wasm),
        ("component-0.2.0", &mut old),
        ("native", &mut native),
    ] {
        group.bench_function(label, |b| {
            b.iter(|| {
                call(plugins, ExtensionPoint::Filter, &mut snapshot, &inputs);
                call(plugins, ExtensionPoint::Score, &mut snapshot, &inputs);
            })
        });
    }
    group.finish();
    let cases = [
        ("WaschedGangScheduling", ExtensionPoint::PreEnqueue),
        ("WaschedGangScheduling", ExtensionPoint::Permit),
        ("WaschedGpuBinPacking", ExtensionPoint::Filter),
        ("WaschedGpuBinPacking", ExtensionPoint::Score),
        (
            "WaschedTopologyPlacement",
            ExtensionPoint::PlacementGenerate,
        ),
        (
            "WaschedWorkloadPreemption",
            ExtensionPoint::PodGroupPostFilter,
        ),
    ];
    for (plugin, point) in cases {
        let mut group = c.benchmark_group(format!("{plugin}/{}", point.interface()));
        for (label, plugins) in [("component", &mut wasm), ("native", &mut native)] {
            group.bench_function(label, |b| {
                b.iter(|| call(plugins, point, &mut snapshot, &inputs))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, extension_points);
criterion_main!(benches);
