//! Contract 0.3.0's identity and lifecycle rules over snapshots rebuilt
//! from a changing cluster: handles stay with their objects, a new object
//! (or a reused slot) is never mistaken for an old one, and per-node change
//! values let a plugin keep per-node work between cycles.

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;

use wasched::framework::ExtensionPoint;
use wasched::framework::native::NativePlugin;
use wasched::manifest::{Manifests, load_str};
use wasched::model::identity::{Kind, LookupError, Registry};
use wasched::{PluginSet, Snapshot};
use wasched_sdk::{Cluster, Code, Handle, NoArgs, NodeId, PodId, Rejections, Status};

/// A filter that keeps nodes labelled `maintenance=true` and nodes without
/// `need` millicores free off, caching each node's verdict across cycles:
/// keyed by (handle, change value, request) when `trust_counters`, else by
/// node id alone (the mistake the counters exist to prevent).
struct CachingFilter {
    trust_counters: bool,
    cache: HashMap<(Handle, u64, u64), bool>,
    by_id: HashMap<(NodeId, u64), bool>,
    hits: Rc<Cell<u64>>,
    misses: Rc<Cell<u64>>,
}

impl CachingFilter {
    fn fits(cluster: &impl Cluster, node: NodeId, request: u64) -> bool {
        let facts = &cluster.nodes_facts(&[node]).unwrap()[0];
        let maintenance = cluster.lookup("maintenance");
        let yes = cluster.lookup("true");
        let in_maintenance = facts
            .labels
            .iter()
            .any(|&(k, v)| Some(k) == maintenance && Some(v) == yes);
        let free = cluster.allocatable(0)[node as usize] - cluster.requested(0)[node as usize];
        !in_maintenance && free >= request
    }
}

impl wasched_sdk::Plugin for CachingFilter {
    type Args = NoArgs;
    const NAME: &'static str = "CachingFilter";

    fn new(_: NoArgs) -> Result<Self, String> {
        Err("built directly by the test".into())
    }

    fn filter(
        &mut self,
        cluster: &impl Cluster,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Vec<wasched_sdk::RejectionGroup> {
        let request = cluster.pod_requests(pod)[0];
        let handles = cluster.node_handles();
        let changes = cluster.node_changes();
        let mut rejections = Rejections::new();
        for &node in nodes {
            let cached = if self.trust_counters {
                let key = (handles[node as usize], changes[node as usize], request);
                self.cache.get(&key).copied()
            } else {
                self.by_id.get(&(node, request)).copied()
            };
            let fits = match cached {
                Some(fits) => {
                    self.hits.set(self.hits.get() + 1);
                    fits
                }
                None => {
                    self.misses.set(self.misses.get() + 1);
                    let fits = Self::fits(cluster, node, request);
                    let key = (handles[node as usize], changes[node as usize], request);
                    self.cache.insert(key, fits);
                    self.by_id.insert((node, request), fits);
                    fits
                }
            };
            if !fits {
                rejections.reject(node, Code::Unschedulable, "cached: does not fit");
            }
        }
        rejections.into_groups()
    }
}

struct Counters {
    hits: Rc<Cell<u64>>,
    misses: Rc<Cell<u64>>,
}

fn caching(trust_counters: bool) -> (PluginSet, Counters) {
    let (hits, misses) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    let plugin = CachingFilter {
        trust_counters,
        cache: HashMap::new(),
        by_id: HashMap::new(),
        hits: hits.clone(),
        misses: misses.clone(),
    };
    let mut set = PluginSet::new();
    set.add(Box::new(NativePlugin::new(
        plugin,
        &[ExtensionPoint::Filter],
    )))
    .unwrap();
    (set, Counters { hits, misses })
}

fn node(name: &str, labels: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{{labels}}}}}\nstatus: {{allocatable: {{cpu: '4', memory: 8Gi, pods: '110'}}}}\n"
    )
}

fn pod(name: &str, cpu: &str, node: Option<&str>) -> String {
    let bound = node.map_or(String::new(), |n| format!(", nodeName: {n}"));
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: team}}\nspec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: '{cpu}'}}}}}}]{bound}}}\n"
    )
}

fn snapshot(text: &str, registry: &mut Registry) -> Snapshot {
    let mut manifests = Manifests::default();
    load_str(&mut manifests, "cluster.yaml", text).unwrap();
    let mut snapshot = Snapshot::build(&manifests).unwrap();
    registry.stamp(&mut snapshot);
    snapshot
}

fn bindings(snapshot: &mut Snapshot, plugins: &mut PluginSet) -> Vec<(String, String)> {
    let outcome =
        wasched::scheduler::run(snapshot, plugins, wasched::scheduler::RunOptions::default());
    outcome
        .placements
        .into_iter()
        .map(|b| (b.pod, b.node))
        .collect()
}

/// Cycle 1: four idle nodes, one pending pod. Cycle 2, rebuilt: `node-b`
/// went into maintenance, `node-c` got a 3-cpu pod, a node `node-0` sorting
/// first shifted every dense id, and two new pods wait. The caching plugin
/// decides exactly as a plugin without a cache, reusing what did not
/// change; the one that ignores the counters places onto a node it may not.
#[test]
fn a_caching_plugin_stays_correct_across_rebuilt_snapshots_and_one_ignoring_counters_does_not() {
    let first = [
        node("node-a", "zone: a"),
        node("node-b", "zone: a"),
        node("node-c", "zone: a"),
        node("node-d", "zone: a"),
        pod("warm", "3", None),
    ]
    .concat();
    let second = [
        node("node-0", "zone: a"),
        node("node-a", "zone: a"),
        node("node-b", "'maintenance': 'true'"),
        node("node-c", "zone: a"),
        node("node-d", "zone: a"),
        pod("warm", "3", Some("node-a")),
        pod("busy", "3", Some("node-c")),
        pod("x-late-1", "3", None),
        pod("x-late-2", "3", None),
        pod("x-late-3", "3", None),
    ]
    .concat();

    let mut registry = Registry::new();
    let one = snapshot(&first, &mut registry);
    let mut two = snapshot(&second, &mut registry);

    // Handles: the same node keeps its handle though its id moved; the new
    // node has a new one; node-b's handle is kept (same object, relabelled).
    let handle = |s: &Snapshot, name: &str| {
        let id = s.nodes.iter().position(|n| n.name == name).unwrap() as u32;
        s.identity().handle(Kind::Node, id).unwrap()
    };
    for name in ["node-a", "node-b", "node-c", "node-d"] {
        assert_eq!(handle(&one, name), handle(&two, name), "{name}");
    }
    assert!(
        ["node-a", "node-b", "node-c", "node-d"]
            .iter()
            .all(|n| handle(&one, n) != handle(&two, "node-0"))
    );
    // Change values: node-b (relabelled) and node-c (a pod bound) moved,
    // node-d did not; node-a moved too (warm was bound there).
    let change = |s: &Snapshot, name: &str| {
        let id = s.nodes.iter().position(|n| n.name == name).unwrap();
        s.identity().node_changes()[id]
    };
    assert_eq!(change(&one, "node-d"), change(&two, "node-d"));
    for name in ["node-a", "node-b", "node-c"] {
        assert_ne!(change(&one, name), change(&two, name), "{name}");
    }
    assert!(two.identity().generation() > one.identity().generation());

    // The reference: no cache at all (a fresh plugin per cycle).
    let expected_two = bindings(&mut two.clone(), &mut caching(true).0);

    let (mut plugins, counters) = caching(true);
    let mut one_run = one.clone();
    bindings(&mut one_run, &mut plugins);
    let misses_one = counters.misses.get();
    assert_eq!(misses_one, 4, "cycle 1 computes every node once");
    let decided = bindings(&mut two.clone(), &mut plugins);
    assert_eq!(decided, expected_two);
    // node-d was unchanged: its verdict for a 3-cpu pod came from cycle 1.
    assert!(counters.hits.get() >= 1, "no cache hit");
    assert!(
        counters.misses.get() - misses_one < 3 * 5,
        "the cache was never used"
    );
    assert_eq!(
        expected_two,
        [
            ("team/x-late-1".to_string(), "node-0".to_string()),
            ("team/x-late-2".to_string(), "node-d".to_string()),
        ]
    );

    // Ignoring the counters: node ids moved and node states changed, and
    // the stale verdicts put a pod where it does not fit.
    let (mut naive, _) = caching(false);
    bindings(&mut one.clone(), &mut naive);
    let wrong = bindings(&mut two, &mut naive);
    assert_ne!(wrong, expected_two, "the naive cache decided right by luck");

    // A handle outside the snapshot, or of a deleted object, is refused.
    let gone = {
        let mut r = Registry::new();
        let old = snapshot(&first, &mut r);
        let without_d = snapshot(
            &[
                node("node-a", "zone: a"),
                node("node-b", "zone: a"),
                node("node-c", "zone: a"),
            ]
            .concat(),
            &mut r,
        );
        let d = handle(&old, "node-d");
        let reborn = snapshot(&first, &mut r);
        assert_ne!(
            handle(&reborn, "node-d"),
            d,
            "a reused slot is a new handle"
        );
        (
            without_d.identity().resolve(Kind::Node, d),
            reborn.identity().resolve(Kind::Node, d),
        )
    };
    assert_eq!(gone, (Err(LookupError::Stale), Err(LookupError::Stale)));
    assert_eq!(
        one.identity().handle(Kind::Node, 99),
        Err(LookupError::Unknown)
    );
    let _ = Status::success();
}
