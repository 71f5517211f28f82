//! The incremental model (`wasched::model::Model`): any sequence of upserts
//! and deletes, of every modelled kind and in any order, leaves a model that
//! holds and decides byte-for-byte what a snapshot built at once from the
//! final objects holds and decides; handles follow contract 0.3.0's
//! identity rules; churn does not grow it.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use proptest::prelude::*;
use wasched::Snapshot;
use wasched::manifest::{Manifests, Object, ObjectRef};
use wasched::model::identity::{Kind, LookupError};
use wasched::model::{BuildOptions, Model, SharedObject};

/// Every scenario snapshot, read once: (file, how it was read, objects).
fn scenarios() -> &'static Vec<(String, Manifests)> {
    static SCENARIOS: OnceLock<Vec<(String, Manifests)>> = OnceLock::new();
    SCENARIOS.get_or_init(|| {
        let mut files: Vec<_> = std::fs::read_dir(common::testdata("scenarios"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.push(common::testdata("shadow/mixed.yaml"));
        files.sort();
        files
            .into_iter()
            .map(|file| {
                let manifests =
                    wasched::read_manifests_with(std::slice::from_ref(&file), &Default::default())
                        .unwrap();
                (file.display().to_string(), manifests)
            })
            .collect()
    })
}

/// A copy of `manifests` without its objects (how they were read).
fn read_of(manifests: &Manifests) -> Manifests {
    manifests.without_objects()
}

/// Version `v` of an object, each changing what the model derives from it:
/// 0 is the object as written; a pod gets a label (budgets, spread) and
/// becomes the oldest, then loses its binding or starts terminating; a node gets more cpu, then a
/// new label and a taint; a PodGroup's gang asks for one pod; a
/// PriorityClass is worth more; a budget's allowance is computed, then
/// from a percentage.
fn version(object: &Object, v: u8) -> Object {
    let mut object = object.clone();
    if v == 0 {
        return object;
    }
    match &mut object {
        Object::Pod(pod) => {
            pod.metadata
                .labels
                .get_or_insert_default()
                .insert("v".into(), v.to_string());
            if v == 1 {
                // Older than the rest: first among its group's members.
                pod.metadata.creation_timestamp =
                    Some(Time("2026-01-01T00:00:00Z".parse().expect("a timestamp")));
                // And asking for a little more cpu: its requests are read
                // again, not kept from the version before.
                if let Some(container) = pod
                    .spec
                    .as_mut()
                    .and_then(|spec| spec.containers.first_mut())
                {
                    let requests = container
                        .resources
                        .get_or_insert_default()
                        .requests
                        .get_or_insert_default();
                    let cpu = requests.get("cpu").map_or(String::new(), |q| q.0.clone());
                    let more = match cpu.as_str() {
                        "" => "7m".to_string(),
                        _ => format!("{}m", wasched_cpu_milli(&cpu) + 7),
                    };
                    requests.insert("cpu".into(), Quantity(more));
                }
            }
            if v == 2 {
                let spec = pod.spec.get_or_insert_default();
                if spec.node_name.take().is_none() {
                    pod.metadata.deletion_timestamp =
                        Some(Time("2026-11-30T00:00:00Z".parse().expect("a timestamp")));
                }
            }
        }
        Object::Node(node) => {
            let status = node.status.get_or_insert_default();
            status
                .allocatable
                .get_or_insert_default()
                .insert("cpu".into(), Quantity((8 * u32::from(v)).to_string()));
            if v == 2 {
                node.metadata
                    .labels
                    .get_or_insert_default()
                    .insert("incremental.test/rack".into(), "r2".into());
                node.spec
                    .get_or_insert_default()
                    .taints
                    .get_or_insert_default()
                    .push(k8s_openapi::api::core::v1::Taint {
                        key: "incremental.test/v".into(),
                        value: Some("2".into()),
                        effect: "PreferNoSchedule".into(),
                        ..Default::default()
                    });
            }
        }
        Object::PodGroup(group) => {
            if let Some(gang) = group.spec.scheduling_policy.gang.as_mut() {
                gang.min_count = 1;
            }
        }
        Object::PriorityClass(class) => {
            class.value = class.value.map(|value| value + i32::from(v));
        }
        Object::PodDisruptionBudget(budget) => {
            // Computed from the pods it matches, not given.
            budget.status = None;
            if v == 2 {
                let spec = budget.spec.get_or_insert_default();
                spec.min_available = None;
                spec.max_unavailable = Some(
                    k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String("50%".into()),
                );
            }
        }
        _ => {}
    }
    object
}

/// A cpu quantity in millicores (the forms the scenarios write).
fn wasched_cpu_milli(cpu: &str) -> u64 {
    match cpu.strip_suffix('m') {
        Some(milli) => milli.parse().expect("millicores"),
        None => (cpu.parse::<f64>().expect("cores") * 1000.0).ceil() as u64,
    }
}

/// The object recreated under its name: a new `metadata.uid`.
fn recreated(object: &Object, generation: u8) -> Object {
    let mut object = object.clone();
    let uid = format!("recreated-{generation}");
    match &mut object {
        Object::Pod(pod) => pod.metadata.uid = Some(uid),
        Object::Node(node) => node.metadata.uid = Some(uid),
        _ => {}
    }
    object
}

#[derive(Debug, Clone)]
enum Step {
    /// Upsert version `v` of object `i`.
    Apply(usize, u8),
    /// Upsert object `i` recreated (new uid).
    Recreate(usize, u8),
    /// Delete object `i`.
    Delete(usize),
    /// Delete the pods among objects `i..` together (`Model::delete_pods`),
    /// the others one by one.
    DeleteMany(Vec<usize>),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        5 => (0..64usize, 0..3u8).prop_map(|(i, v)| Step::Apply(i, v)),
        1 => (0..64usize, 0..3u8).prop_map(|(i, g)| Step::Recreate(i, g)),
        2 => (0..64usize).prop_map(Step::Delete),
        1 => proptest::collection::vec(0..64usize, 1..8).prop_map(Step::DeleteMany),
    ];
    proptest::collection::vec(step, 0..60)
}

/// Everything a snapshot holds that decisions can depend on, with symbols
/// spelled out (their ids are per snapshot) and handles left out (they
/// are per model).
fn canonical(snapshot: &Snapshot) -> String {
    let mut out = String::new();
    let text = |s: u32| snapshot.symbols.text(s).unwrap_or("?").to_string();
    out += &format!("resources {:?}\n", snapshot.resource_names);
    for (n, node) in snapshot.nodes.iter().enumerate() {
        let mut node = node.clone();
        let taints: Vec<String> = node
            .taint_texts
            .iter()
            .map(|&t| snapshot.taint_texts.text(t).unwrap_or("?").to_string())
            .collect();
        node.taint_texts.clear();
        let columns: Vec<(u64, u64)> = (0..snapshot.resource_names.len())
            .map(|r| (snapshot.allocatable(r)[n], snapshot.requested(r)[n]))
            .collect();
        out += &format!(
            "node {node:?} taints {taints:?} columns {columns:?} scoring {:?} without-nominated {:?} pods {:?}\n",
            snapshot.scoring_requested(n as u32),
            snapshot.requested_without_nominated(n as u32),
            snapshot.pods_on_node(n as u32)
        );
        for key in node.labels.keys() {
            let symbol = snapshot
                .symbols
                .lookup(key)
                .expect("node label keys are interned");
            let column: Vec<Option<String>> = snapshot
                .label_column(symbol)
                .iter()
                .map(|v| v.map(text))
                .collect();
            out += &format!("  column {key} {column:?}\n");
        }
    }
    for (p, pod) in snapshot.pods.iter().enumerate() {
        out += &format!("pod {pod:?} budgets {:?}\n", snapshot.pod_budgets(p as u32));
        assert!(snapshot.symbols.lookup(&pod.namespace).is_some());
    }
    for group in &snapshot.groups {
        out += &format!("group {group:?}\n");
    }
    for composite in &snapshot.composites {
        out += &format!("composite {composite:?}\n");
    }
    for budget in &snapshot.budgets {
        out += &format!("budget {budget:?}\n");
    }
    out += &format!(
        "warnings {:?}\nnotes {:?}\n",
        snapshot.warnings, snapshot.notes
    );
    out
}

fn decide(mut snapshot: Snapshot) -> String {
    let mut plugins = common::native_plugins(false);
    wasched::scheduler::run(
        &mut snapshot,
        &mut plugins,
        wasched::scheduler::RunOptions::default(),
    )
    .to_json()
}

fn shared(object: Object) -> SharedObject {
    Arc::new((wasched::live::kinds::origin(&object), object))
}

fn origin_key(object: &Object) -> (String, String) {
    let origin = wasched::live::kinds::origin(object);
    (origin.kind, origin.name)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_sequence_of_upserts_and_deletes_holds_and_decides_as_built_at_once(
        scenario in 0..64usize,
        budgets in 0..4u8,
        steps in steps(),
        live in any::<bool>(),
        wasched_only in any::<bool>(),
    ) {
        // One case in four churns the scenario with a budget.
        let scenario = match budgets {
            0 => scenarios().iter().position(|(f, _)| f.ends_with("preempt-budget.yaml")).unwrap(),
            _ => scenario % scenarios().len(),
        };
        let (file, manifests) = &scenarios()[scenario];
        let base: Vec<Object> = manifests.objects.iter().map(|(_, o)| o.clone()).collect();
        let options = BuildOptions {
            schedulers: wasched_only
                .then(|| "wasched".to_string())
                .into_iter()
                .collect(),
            live,
        };
        let read = read_of(manifests);
        let mut model = Model::new(&read, &options).unwrap();
        // Start from the whole scenario, then churn it.
        let mut held: BTreeMap<(String, String), Object> = BTreeMap::new();
        for object in &base {
            held.insert(origin_key(object), object.clone());
            let _ = model.upsert(shared(object.clone()));
        }
        for step in &steps {
            if let Step::DeleteMany(many) = step {
                let mut pods = Vec::new();
                for i in many {
                    let Some(object) = base.get(i % base.len().max(1)) else {
                        continue;
                    };
                    let key = origin_key(object);
                    held.remove(&key);
                    if key.0 == "Pod" {
                        pods.push(key.1);
                    } else {
                        model.delete(&key.0, &key.1);
                    }
                }
                model.delete_pods(pods.iter().map(String::as_str));
                continue;
            }
            let Some(object) = base.get(match *step {
                Step::Apply(i, _) | Step::Recreate(i, _) | Step::Delete(i) => i % base.len().max(1),
                Step::DeleteMany(_) => unreachable!("handled above"),
            }) else {
                continue;
            };
            let key = origin_key(object);
            match *step {
                Step::Apply(_, v) => {
                    let object = version(object, v);
                    held.insert(key, object.clone());
                    let _ = model.upsert(shared(object));
                }
                Step::Recreate(_, g) => {
                    let object = recreated(object, g);
                    held.insert(key, object.clone());
                    let _ = model.upsert(shared(object));
                }
                Step::Delete(_) => {
                    held.remove(&key);
                    model.delete(&key.0, &key.1);
                }
                Step::DeleteMany(_) => unreachable!("handled above"),
            }
        }
        let mut at_once = read_of(manifests);
        for object in held.values() {
            at_once.objects.push((wasched::live::kinds::origin(object), object.clone()));
        }
        match wasched::model::oracle::build_with(&at_once, &options) {
            Ok(built) => {
                prop_assert_eq!(model.refused().count(), 0, "{}: refused {:?}", file,
                    model.refused().map(|(o, why)| format!("{o}: {why}")).collect::<Vec<_>>());
                let incremental = model.snapshot();
                prop_assert_eq!(canonical(&incremental), canonical(&built), "{}", file);
                prop_assert_eq!(decide(incremental), decide(built), "{}", file);
            }
            // What a build refuses as a whole, the model refuses object by
            // object.
            Err(e) => prop_assert!(model.refused().count() > 0, "{file}: {e:#}"),
        }
    }
}

/// `Model::build` (what `simulate` runs) holds and decides as
/// `Snapshot::build` on every scenario, and symbol ids are the same too.
#[test]
fn built_at_once_the_model_is_the_snapshot() {
    for (file, manifests) in scenarios() {
        let options = BuildOptions::default();
        let model = Model::build(manifests.clone(), &options)
            .unwrap()
            .into_snapshot();
        let at_once = Model::snapshot_of(manifests.clone(), &options).unwrap();
        assert_eq!(canonical(&model), canonical(&at_once), "{file}");
        let built = wasched::model::oracle::build_with(manifests, &options).unwrap();
        assert_eq!(canonical(&model), canonical(&built), "{file}");
        for s in 0..built.symbols.len() as u32 {
            assert_eq!(
                model.symbols.text(s),
                built.symbols.text(s),
                "{file}: symbol {s}"
            );
        }
        assert_eq!(decide(model), decide(built), "{file}");
    }
}

fn node(name: &str, uid: &str, cpu: &str) -> Object {
    let text = format!(
        "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, uid: {uid}, labels: {{zone: z-{name}}}}}\nstatus: {{allocatable: {{cpu: \"{cpu}\", memory: 8Gi, pods: \"110\"}}}}\n"
    );
    one(&text)
}

fn pod(name: &str, node: Option<&str>, label: &str) -> Object {
    let bound = node.map(|n| format!("nodeName: {n}, ")).unwrap_or_default();
    let text = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ns, uid: uid-{name}, labels: {{unique: {label}}}}}\nspec: {{{bound}containers: [{{name: c, image: x, resources: {{requests: {{cpu: 100m, example.com/widget-{label}: \"1\"}}, limits: {{example.com/widget-{label}: \"1\"}}}}}}]}}\n"
    );
    one(&text)
}

fn one(text: &str) -> Object {
    let mut manifests = Manifests::default();
    wasched::manifest::load_str(&mut manifests, "test.yaml", text).unwrap();
    manifests.objects.remove(0).1
}

/// Contract 0.3.0's identity rules on the model: a changed object keeps
/// its handle, a node's change value moves only when the node changes, a
/// recreated object and a deleted one's handle are new and stale.
#[test]
fn handles_and_change_values_follow_the_identity_rules() {
    let mut model = Model::new(&Manifests::default(), &BuildOptions::default()).unwrap();
    for name in ["a", "b", "c"] {
        model
            .upsert(shared(node(name, &format!("u-{name}"), "4")))
            .unwrap();
    }
    model.upsert(shared(pod("p", Some("b"), "x"))).unwrap();
    let first = model.snapshot();
    let id = |s: &Snapshot, name: &str| s.nodes.iter().position(|n| n.name == name).unwrap() as u32;
    let handle = |s: &Snapshot, name: &str| s.identity().handle(Kind::Node, id(s, name)).unwrap();
    let change = |s: &Snapshot, name: &str| s.identity().node_changes()[id(s, name) as usize];

    // A heartbeat-like re-upsert of the same object changes nothing.
    model.upsert(shared(node("b", "u-b", "4"))).unwrap();
    let same = model.snapshot();
    assert_eq!(change(&same, "b"), change(&first, "b"));

    // A new node sorted before them moves ids, not handles or change values.
    model.upsert(shared(node("0a", "u-0", "4"))).unwrap();
    let moved = model.snapshot();
    assert_eq!(id(&moved, "b"), id(&first, "b") + 1);
    for name in ["a", "b", "c"] {
        assert_eq!(handle(&moved, name), handle(&first, name));
        assert_eq!(change(&moved, name), change(&first, name));
        assert_eq!(
            moved.identity().resolve(Kind::Node, handle(&first, name)),
            Ok(id(&moved, name))
        );
    }

    // More cpu on b: same handle, new change value; a and c unchanged.
    model.upsert(shared(node("b", "u-b", "8"))).unwrap();
    let grown = model.snapshot();
    assert_eq!(handle(&grown, "b"), handle(&first, "b"));
    assert!(change(&grown, "b") > change(&moved, "b"));
    assert_eq!(change(&grown, "a"), change(&moved, "a"));
    assert_eq!(grown.pods_on_node(id(&grown, "b")), &[0]);

    // A pod bound to c changes c only.
    model.upsert(shared(pod("q", Some("c"), "y"))).unwrap();
    let bound = model.snapshot();
    assert!(change(&bound, "c") > change(&grown, "c"));
    assert_eq!(change(&bound, "b"), change(&grown, "b"));

    // Recreated under its name: a new handle; the old one is stale.
    model.upsert(shared(node("c", "u-c2", "4"))).unwrap();
    let again = model.snapshot();
    assert_ne!(handle(&again, "c"), handle(&bound, "c"));
    assert_eq!(
        again.identity().resolve(Kind::Node, handle(&bound, "c")),
        Err(LookupError::Stale)
    );
    // Its pod is still on it.
    assert_eq!(again.pods_on_node(id(&again, "c")).len(), 1);

    // Deleted: its handle is stale, even once its slot is reused.
    model.delete("Node", "a");
    model.upsert(shared(node("d", "u-d", "4"))).unwrap();
    let reused = model.snapshot();
    let d = handle(&reused, "d");
    assert_eq!(d.slot, handle(&first, "a").slot, "the freed slot is reused");
    assert_ne!(d.generation, handle(&first, "a").generation);
    assert_eq!(
        reused.identity().resolve(Kind::Node, handle(&first, "a")),
        Err(LookupError::Stale)
    );
}

/// Rounds of pods added and deleted, each with labels and an extended
/// resource never seen before: the model's size comes back to where it
/// was, symbols stay bounded, and freed slots are reused.
#[test]
fn churn_does_not_grow_the_model() {
    let mut model = Model::new(&Manifests::default(), &BuildOptions::default()).unwrap();
    for name in ["a", "b"] {
        model
            .upsert(shared(node(name, &format!("u-{name}"), "64")))
            .unwrap();
    }
    let idle = model.size();
    let mut most_symbols = 0;
    for round in 0..200 {
        for i in 0..20 {
            let label = format!("r{round}-{i}");
            let on = if i % 2 == 0 { Some("a") } else { None };
            model
                .upsert(shared(pod(&format!("p{i}"), on, &label)))
                .unwrap();
        }
        let busy = model.snapshot();
        assert_eq!(busy.pods.len(), 20);
        for i in 0..20 {
            model.delete("Pod", &format!("ns/p{i}"));
        }
        let _ = model.snapshot();
        let size = model.size();
        assert_eq!(size.modelled, idle.modelled, "round {round}");
        assert_eq!(size.resources, idle.resources, "round {round}");
        assert!(size.free_slots <= 20, "round {round}: {size:?}");
        most_symbols = most_symbols.max(size.symbols);
    }
    // 200 rounds interned 8,000 label values and 4,000 resource names.
    assert!(most_symbols < 2_000, "symbols grew to {most_symbols}");
    let end = model.size();
    assert_eq!(end.objects, idle.objects);
}

/// An object the model cannot read is refused with its name and field,
/// and the rest is modelled; a pod waiting for its PriorityClass is taken
/// once the class comes, and refused again when it goes.
#[test]
fn refused_objects_are_named_and_taken_when_they_can_be() {
    let mut model = Model::new(&Manifests::default(), &BuildOptions::default()).unwrap();
    model.upsert(shared(node("a", "u-a", "4"))).unwrap();
    let waiting = one(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: w, namespace: ns}\nspec: {priorityClassName: high, containers: [{name: c, image: x}]}\n",
    );
    let error = model.upsert(shared(waiting)).unwrap_err().to_string();
    assert!(
        error.contains("Pod ns/w") && error.contains("spec.priorityClassName"),
        "{error}"
    );
    assert_eq!(model.snapshot().pods.len(), 0);
    let class = one(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n",
    );
    model.upsert(shared(class)).unwrap();
    assert_eq!(model.refused().count(), 0);
    let snapshot = model.snapshot();
    assert_eq!(snapshot.pods.len(), 1);
    assert_eq!(snapshot.pods[0].priority, 1000);
    model.delete("PriorityClass", "high");
    assert_eq!(model.snapshot().pods.len(), 0);
    let (origin, why) = model.refused().next().unwrap();
    assert_eq!(origin.name, "ns/w");
    assert!(why.contains("PriorityClass \"high\""), "{why}");
    let _ = ObjectRef::clone(origin);

    // A pod new to the model, refused on its next version before the
    // model is read: the first leaves, and the model holds the rest.
    model.delete("Pod", "ns/w");
    let first = one(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: ns}\nspec: {containers: [{name: c, image: x}]}\n",
    );
    let later = one(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: v, namespace: ns}\nspec: {containers: [{name: c, image: x}]}\n",
    );
    model.upsert(shared(first)).unwrap();
    model.upsert(shared(later)).unwrap();
    let refused = one(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: ns}\nspec: {priorityClassName: high, containers: [{name: c, image: x}]}\n",
    );
    assert!(model.upsert(shared(refused)).is_err());
    let snapshot = model.snapshot();
    let keys: Vec<&str> = snapshot.pods.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(keys, ["ns/v"]);
}

/// `sync` (what a `shadow` pass calls with the watched objects) reads only
/// the objects that are new allocations: the same objects again change
/// nothing, one replaced object is one change, one gone is one delete.
#[test]
fn sync_reads_only_what_changed() {
    let (_, manifests) = scenarios()
        .iter()
        .find(|(f, _)| f.ends_with("node-checks.yaml"))
        .unwrap();
    let mut objects: Vec<SharedObject> = manifests
        .objects
        .iter()
        .map(|(origin, object)| Arc::new((origin.clone(), object.clone())))
        .collect();
    let mut model = Model::new(&read_of(manifests), &BuildOptions::default()).unwrap();
    assert_eq!(model.sync(objects.iter()), objects.len());
    let before = model.snapshot();
    assert_eq!(model.sync(objects.iter()), 0);
    let node = before.identity().node_changes().to_vec();
    assert_eq!(model.snapshot().identity().node_changes(), node.as_slice());

    // A copy of an object, even unchanged, is read again and found equal:
    // no node changes.
    objects[0] = Arc::new((*objects[0]).clone());
    assert_eq!(model.sync(objects.iter()), 1);
    assert_eq!(model.snapshot().identity().node_changes(), node.as_slice());

    // One pod bound by the watch: one change, its node's value moves.
    let at = objects
        .iter()
        .position(|o| matches!(&o.1, Object::Pod(p) if p.spec.as_ref().is_some_and(|s| s.node_name.is_none())))
        .unwrap();
    let mut bound = (*objects[at]).clone();
    if let Object::Pod(pod) = &mut bound.1 {
        pod.spec.get_or_insert_default().node_name = Some("cpu-b".into());
    }
    objects[at] = Arc::new(bound);
    assert_eq!(model.sync(objects.iter()), 1);
    let after = model.snapshot();
    let cpu_b = after.nodes.iter().position(|n| n.name == "cpu-b").unwrap();
    for (n, (&now, &then)) in after
        .identity()
        .node_changes()
        .iter()
        .zip(&node)
        .enumerate()
    {
        assert_eq!(now != then, n == cpu_b, "node {n}");
    }

    // One object gone: one delete.
    let gone = objects.remove(at);
    assert_eq!(model.sync(objects.iter()), 1);
    assert!(model.object(&gone.0.kind, &gone.0.name).is_none());
    let built = wasched::model::oracle::build_with(
        &Manifests {
            objects: objects.iter().map(|o| (**o).clone()).collect(),
            ..read_of(manifests)
        },
        &BuildOptions::default(),
    )
    .unwrap();
    assert_eq!(canonical(&model.snapshot()), canonical(&built));
}
