//! The watched store of `wasched shadow` (`wasched::live::store`): any
//! sequence of watch events — applies, deletes, relists that drop what
//! they no longer list — leaves exactly the last state of every object, and
//! the cluster it holds decides byte-for-byte as the same objects read at
//! once, in any order.

mod common;

use std::collections::BTreeMap;

use kube::runtime::watcher::Event;
use proptest::prelude::*;
use wasched::live::kinds::{self, Kind};
use wasched::live::store::Store;
use wasched::manifest::{Manifests, Object};

/// How many objects `testdata/shadow/mixed.yaml` holds.
const OBJECTS: usize = 12;

/// The objects of `testdata/shadow/mixed.yaml`, in file order.
fn objects() -> Vec<Object> {
    let mut manifests = Manifests::default();
    let path = common::testdata("shadow/mixed.yaml");
    wasched::manifest::load_files(&mut manifests, &[path]).unwrap();
    manifests.objects.into_iter().map(|(_, o)| o).collect()
}

/// Version `v` of an object: a pod with label `v`, a node with `v` more cpu.
fn version(object: &Object, v: u8) -> Object {
    let mut object = object.clone();
    match &mut object {
        Object::Pod(pod) => {
            pod.metadata
                .labels
                .get_or_insert_default()
                .insert("v".into(), v.to_string());
        }
        Object::Node(node) => {
            let status = node.status.get_or_insert_default();
            let cpu = k8s_openapi::apimachinery::pkg::api::resource::Quantity((4 + v).to_string());
            status
                .allocatable
                .get_or_insert_default()
                .insert("cpu".into(), cpu);
        }
        _ => {}
    }
    object
}

#[derive(Debug, Clone)]
enum Step {
    /// Apply version `v` of object `i`.
    Apply(usize, u8),
    /// Delete object `i`.
    Delete(usize),
    /// A relist of object `i`'s kind listing only the objects whose bit is set.
    Relist(usize, u16),
}

fn step(count: usize) -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..count, 0..3u8).prop_map(|(i, v)| Step::Apply(i, v)),
        2 => (0..count).prop_map(Step::Delete),
        1 => (0..count, any::<u16>()).prop_map(|(i, mask)| Step::Relist(i, mask)),
    ]
}

fn kind(object: &Object) -> Kind {
    Kind::of(object).unwrap()
}

fn key(object: &Object) -> String {
    kinds::origin(object).name
}

/// What the cluster decides over `manifests`, as JSON.
fn decide(manifests: &Manifests) -> String {
    schedule(wasched::Snapshot::build(manifests).unwrap())
}

/// What the cluster the store holds decides, modelled as a pass of
/// `shadow` models it: from the shared objects, not a copy.
fn decide_held(store: &Store) -> String {
    let held = store.held();
    let objects = held.iter().map(|h| (&h.0, &h.1));
    let read = Manifests::default();
    schedule(wasched::model::oracle::build_objects(&read, objects, &Default::default()).unwrap())
}

fn schedule(mut snapshot: wasched::Snapshot) -> String {
    let mut plugins = common::native_plugins(false);
    wasched::scheduler::run(
        &mut snapshot,
        &mut plugins,
        wasched::scheduler::RunOptions::default(),
    )
    .to_json()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_event_sequence_leaves_the_last_state_and_decides_as_read_at_once(
        steps in proptest::collection::vec(step(OBJECTS), 1..40),
        order in any::<u64>(),
    ) {
        let base = objects();
        assert_eq!(base.len(), OBJECTS);
        let mut store = Store::default();
        // What a fresh read would hold: (kind, key) → (object index, version).
        let mut expected: BTreeMap<(Kind, String), (usize, u8)> = BTreeMap::new();
        for step in &steps {
            match *step {
                Step::Apply(i, v) => {
                    let object = version(&base[i], v);
                    expected.insert((kind(&object), key(&object)), (i, v));
                    store.apply(kind(&object), Event::Apply(object));
                }
                Step::Delete(i) => {
                    let object = &base[i];
                    expected.remove(&(kind(object), key(object)));
                    store.apply(kind(object), Event::Delete(object.clone()));
                }
                Step::Relist(i, mask) => {
                    let relisted = kind(&base[i]);
                    store.apply(relisted, Event::Init);
                    expected.retain(|(k, _), _| *k != relisted);
                    for (j, object) in base.iter().enumerate() {
                        if kind(object) == relisted && mask & (1 << j) != 0 {
                            expected.insert((relisted, key(object)), (j, 0));
                            store.apply(relisted, Event::InitApply(object.clone()));
                        }
                    }
                    store.apply(relisted, Event::InitDone);
                }
            }
        }
        let held = store.manifests();
        let mut at_once = Manifests::default();
        for &(i, v) in expected.values() {
            let object = version(&base[i], v);
            at_once.objects.push((kinds::origin(&object), object));
        }
        let held_objects: Vec<String> = held.objects.iter().map(|(o, _)| o.to_string()).collect();
        let expected_objects: Vec<String> = at_once.objects.iter().map(|(o, _)| o.to_string()).collect();
        prop_assert_eq!(&held_objects, &expected_objects);
        // In another order, as a fresh list might return them.
        let n = at_once.objects.len().max(1);
        at_once.objects.rotate_left((order as usize) % n);
        if order % 2 == 1 {
            at_once.objects.reverse();
        }
        let decided = decide(&at_once);
        prop_assert_eq!(&decide(&held), &decided);
        prop_assert_eq!(&decide_held(&store), &decided);
    }
}
