//! What topology placement costs: one topology-constrained gang attempt of
//! 8 pods on 5,000 nodes in 40 racks, and a three-level CompositePodGroup
//! tree of 64 pods (zone > block > rack) on the same cluster — each through
//! the bundled components and through the same plugin logic compiled
//! natively, in the same run.

use criterion::{Criterion, criterion_group, criterion_main};
use wasched::Snapshot;
use wasched_benches::{
    bench_components_and_native, bundled_plugins, composite, gang, native_plugins, racked_cluster,
};

/// 5,000 nodes in 40 racks of 125; every node half full; one pending gang
/// of 8 pods x 8 cpu constrained to a rack.
fn one_gang() -> Snapshot {
    let mut objects = Vec::new();
    for n in 0..5000 {
        objects.extend(gang(
            &format!("load-{n}"),
            1000,
            1,
            16,
            None,
            None,
            false,
            &|_| Some(format!("node-{n:05}")),
        ));
    }
    objects.extend(gang(
        "job",
        100,
        8,
        8,
        Some("example.com/rack"),
        None,
        false,
        &|_| None,
    ));
    racked_cluster(5000, 125, objects).expect("the cluster builds")
}

/// The same cluster (racks of 125) with a tree: a zone-level root, two
/// block-level composites, four rack-level PodGroups of 16 pods x 8 cpu.
fn three_levels() -> Snapshot {
    let mut objects = vec![composite("tree", 2, "topology.kubernetes.io/zone", None)];
    for b in 0..2 {
        let block = format!("tree-block-{b}");
        objects.push(composite(&block, 2, "example.com/block", Some("tree")));
        for r in 0..2 {
            objects.extend(gang(
                &format!("{block}-rack-{r}"),
                100,
                16,
                8,
                Some("example.com/rack"),
                Some(&block),
                false,
                &|_| None,
            ));
        }
    }
    racked_cluster(5000, 125, objects).expect("the cluster builds")
}

fn bench(c: &mut Criterion, name: &str, snapshot: &Snapshot) {
    // Both decide the same, and everything is placed.
    let a = wasched::scheduler::run(
        &mut snapshot.clone(),
        &mut bundled_plugins().unwrap().1,
        wasched::scheduler::RunOptions::default(),
    );
    let b = wasched::scheduler::run(
        &mut snapshot.clone(),
        &mut native_plugins(),
        wasched::scheduler::RunOptions::default(),
    );
    assert_eq!(a.to_json(), b.to_json());
    assert!(a.pod_groups.iter().all(|g| g.scheduled), "{a:#?}");
    bench_components_and_native(c, name, snapshot, 20);
}

fn topology_gang(c: &mut Criterion) {
    bench(c, "topology_gang_8_pods_5000_nodes_40_racks", &one_gang());
}

fn three_level_tree(c: &mut Criterion) {
    bench(
        c,
        "composite_tree_3_levels_64_pods_5000_nodes",
        &three_levels(),
    );
}

criterion_group!(benches, topology_gang, three_level_tree);
criterion_main!(benches);
