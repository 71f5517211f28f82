//! The watched cluster: every modelled object the server serves, kept
//! current by one kube-runtime watcher per kind, and the count of changes
//! the shadow's loop waits on.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::scheduling::v1alpha3::CompositePodGroup;
use k8s_openapi::api::scheduling::v1beta1::{PodGroup, Workload};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;

use super::kinds::{self, Kind, Served};
use crate::manifest::{Manifests, Object};

/// An object as the store holds it, shared with the passes that read it.
pub type Held = crate::model::SharedObject;

/// The objects, by kind and `namespace/name`, and what changed.
#[derive(Debug, Default)]
pub struct Store {
    objects: BTreeMap<(Kind, String), Held>,
    /// Objects of a relist in progress, per kind, until its `InitDone`.
    relisting: BTreeMap<Kind, BTreeMap<String, Object>>,
    /// Kinds whose first list has completed.
    synced: BTreeSet<Kind>,
    /// The kinds watched.
    watched: Vec<Kind>,
    /// Every change applied.
    pub changes: u64,
    /// Watch errors (each retried with backoff by the watcher).
    pub watch_errors: u64,
    /// Set when the shadow is shutting down.
    pub stopping: bool,
}

impl Store {
    /// An empty store for the kinds `served`.
    pub fn new(served: &Served) -> Self {
        Self {
            watched: served.kinds.clone(),
            ..Self::default()
        }
    }

    /// Whether every watched kind has been listed once (`/readyz`).
    pub fn ready(&self) -> bool {
        self.watched.iter().all(|k| self.synced.contains(k))
    }

    /// Objects held, per kind (the model's size, for the metrics).
    pub fn counts(&self) -> BTreeMap<Kind, usize> {
        let mut counts: BTreeMap<Kind, usize> = self.watched.iter().map(|&k| (k, 0)).collect();
        for (kind, _) in self.objects.keys() {
            *counts.entry(*kind).or_default() += 1;
        }
        counts
    }

    /// The object `kind` `key`, if held.
    pub fn get(&self, kind: Kind, key: &str) -> Option<&Object> {
        self.objects
            .get(&(kind, key.to_string()))
            .map(|held| &held.1)
    }

    /// Every object of `kind`, by key.
    pub fn objects(&self, kind: Kind) -> impl Iterator<Item = &Object> {
        self.objects
            .range((kind, String::new())..)
            .take_while(move |((k, _), _)| *k == kind)
            .map(|(_, held)| &held.1)
    }

    /// Every object, shared, by kind and key: what a pass models.
    pub fn held(&self) -> Vec<Held> {
        self.objects.values().cloned().collect()
    }

    /// A copy of every object, as manifests read from files would be (the
    /// model sorts; this order is the store's, by kind and key).
    pub fn manifests(&self) -> Manifests {
        let mut manifests = Manifests::default();
        for held in self.objects.values() {
            manifests.objects.push(held.as_ref().clone());
        }
        manifests
    }

    fn insert(&mut self, kind: Kind, key: String, object: Object) -> Option<Held> {
        let held = Arc::new((kinds::origin(&object), object));
        self.objects.insert((kind, key), held)
    }

    /// Applies one watch event of `kind`.
    pub fn apply(&mut self, kind: Kind, event: Event<Object>) {
        match event {
            Event::Apply(object) => {
                let key = kinds::origin(&object).name;
                self.insert(kind, key, object);
                self.changes += 1;
            }
            Event::Delete(object) => {
                let key = kinds::origin(&object).name;
                if self.objects.remove(&(kind, key)).is_some() {
                    self.changes += 1;
                }
            }
            Event::Init => {
                self.relisting.insert(kind, BTreeMap::new());
            }
            Event::InitApply(object) => {
                let key = kinds::origin(&object).name;
                self.relisting.entry(kind).or_default().insert(key, object);
            }
            Event::InitDone => {
                let listed = self.relisting.remove(&kind).unwrap_or_default();
                let stale: Vec<String> = self
                    .objects(kind)
                    .map(|object| kinds::origin(object).name)
                    .filter(|key| !listed.contains_key(key))
                    .collect();
                for key in stale {
                    self.objects.remove(&(kind, key));
                    self.changes += 1;
                }
                for (key, object) in listed {
                    let old = self.insert(kind, key.clone(), object);
                    let old = old.as_ref().map(|h| &h.1);
                    if old.map(same) != self.get(kind, &key).map(same) {
                        self.changes += 1;
                    }
                }
                self.synced.insert(kind);
                self.changes += 1;
            }
        }
    }
}

/// An object's identity and version, to skip relisted objects unchanged.
fn same(object: &Object) -> (String, Option<String>) {
    let meta = match object {
        Object::Node(o) => &o.metadata,
        Object::Pod(o) => &o.metadata,
        Object::PodGroup(o) => &o.metadata,
        Object::Workload(o) => &o.metadata,
        Object::CompositePodGroup(o) => &o.metadata,
        Object::PriorityClass(o) => &o.metadata,
        Object::PodDisruptionBudget(o) => &o.metadata,
        Object::Job(o) => &o.metadata,
        Object::Controller(c) => {
            let field = |k: &str| {
                c.value
                    .pointer(&format!("/metadata/{k}"))
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_string)
            };
            return (field("uid").unwrap_or_default(), field("resourceVersion"));
        }
    };
    (
        meta.uid.clone().unwrap_or_default(),
        meta.resource_version.clone(),
    )
}

/// The store shared by the watchers and the serve loop, with a condition
/// variable signalled on every change.
#[derive(Debug)]
pub struct Shared {
    store: Mutex<Store>,
    changed: Condvar,
}

impl Shared {
    /// A shared empty store for `served`.
    pub fn new(served: &Served) -> Arc<Self> {
        Arc::new(Self {
            store: Mutex::new(Store::new(served)),
            changed: Condvar::new(),
        })
    }

    /// The store, locked.
    pub fn lock(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the store and wakes the loop.
    pub fn update(&self, change: impl FnOnce(&mut Store)) {
        change(&mut self.lock());
        self.changed.notify_all();
    }

    /// Waits until `done` holds or `timeout` passes; returns the store.
    pub fn wait_until(
        &self,
        timeout: Duration,
        done: impl Fn(&Store) -> bool,
    ) -> MutexGuard<'_, Store> {
        let deadline = Instant::now() + timeout;
        let mut store = self.lock();
        while !done(&store) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            store = self
                .changed
                .wait_timeout(store, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        store
    }
}

/// Starts one watcher per served kind on the current tokio runtime.
pub fn watch_all(client: &Client, served: &Served, shared: &Arc<Shared>) {
    for &kind in &served.kinds {
        let (client, shared) = (client.clone(), shared.clone());
        match kind {
            Kind::PriorityClass => {
                spawn::<PriorityClass>(client, kind, shared, |o| Object::PriorityClass(Box::new(o)))
            }
            Kind::Node => spawn::<Node>(client, kind, shared, |o| Object::Node(Box::new(o))),
            Kind::Workload => {
                spawn::<Workload>(client, kind, shared, |o| Object::Workload(Box::new(o)))
            }
            Kind::CompositePodGroup => spawn::<CompositePodGroup>(client, kind, shared, |o| {
                Object::CompositePodGroup(Box::new(o))
            }),
            Kind::PodGroup => {
                spawn::<PodGroup>(client, kind, shared, |o| Object::PodGroup(Box::new(o)))
            }
            Kind::PodDisruptionBudget => spawn::<PodDisruptionBudget>(client, kind, shared, |o| {
                Object::PodDisruptionBudget(Box::new(o))
            }),
            Kind::Pod => spawn::<Pod>(client, kind, shared, |o| Object::Pod(Box::new(o))),
        }
    }
}

fn spawn<K>(client: Client, kind: Kind, shared: Arc<Shared>, wrap: fn(K) -> Object)
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + 'static,
{
    tokio::spawn(async move {
        let api: Api<K> = Api::all(client);
        let mut events = watcher::watcher(api, watcher::Config::default())
            .default_backoff()
            .boxed();
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => shared.update(|store| store.apply(kind, map_event(event, wrap))),
                Err(e) => {
                    tracing::warn!("watching {}s: {e} (retrying)", kind.name());
                    shared.update(|store| store.watch_errors += 1);
                }
            }
        }
    });
}

fn map_event<K>(event: Event<K>, wrap: fn(K) -> Object) -> Event<Object> {
    match event {
        Event::Apply(o) => Event::Apply(wrap(o)),
        Event::Delete(o) => Event::Delete(wrap(o)),
        Event::Init => Event::Init,
        Event::InitApply(o) => Event::InitApply(wrap(o)),
        Event::InitDone => Event::InitDone,
    }
}
