//! The kinds wasched models, as a live server serves them: which of them
//! it serves (the workload APIs depend on its version and feature gates),
//! how to list them, and how each object becomes a manifest [`Object`].

use std::fmt::Debug;

use anyhow::{Context, Result};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::scheduling::v1alpha3::CompositePodGroup;
use k8s_openapi::api::scheduling::v1beta1::{PodGroup, Workload};
use kube::api::ListParams;
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use super::ORIGIN;
use crate::manifest::{Object, ObjectRef};

/// A modelled kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `scheduling.k8s.io/v1 PriorityClass`.
    PriorityClass,
    /// `v1 Node`.
    Node,
    /// `scheduling.k8s.io/v1beta1 Workload`.
    Workload,
    /// `scheduling.k8s.io/v1alpha3 CompositePodGroup`.
    CompositePodGroup,
    /// `scheduling.k8s.io/v1beta1 PodGroup`.
    PodGroup,
    /// `policy/v1 PodDisruptionBudget`.
    PodDisruptionBudget,
    /// `v1 Pod`.
    Pod,
}

impl Kind {
    /// Every modelled kind, in the order a snapshot lists them.
    pub const ALL: [Kind; 7] = [
        Kind::PriorityClass,
        Kind::Node,
        Kind::Workload,
        Kind::CompositePodGroup,
        Kind::PodGroup,
        Kind::PodDisruptionBudget,
        Kind::Pod,
    ];

    /// `kind`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::PriorityClass => "PriorityClass",
            Kind::Node => "Node",
            Kind::Workload => "Workload",
            Kind::CompositePodGroup => "CompositePodGroup",
            Kind::PodGroup => "PodGroup",
            Kind::PodDisruptionBudget => "PodDisruptionBudget",
            Kind::Pod => "Pod",
        }
    }

    /// `apiVersion`.
    pub fn api_version(self) -> &'static str {
        match self {
            Kind::PriorityClass => "scheduling.k8s.io/v1",
            Kind::Node | Kind::Pod => "v1",
            Kind::Workload | Kind::PodGroup => "scheduling.k8s.io/v1beta1",
            Kind::CompositePodGroup => "scheduling.k8s.io/v1alpha3",
            Kind::PodDisruptionBudget => "policy/v1",
        }
    }

    /// The kind of a manifest object (Jobs are not read from servers).
    pub fn of(object: &Object) -> Option<Kind> {
        Some(match object {
            Object::PriorityClass(_) => Kind::PriorityClass,
            Object::Node(_) => Kind::Node,
            Object::Workload(_) => Kind::Workload,
            Object::CompositePodGroup(_) => Kind::CompositePodGroup,
            Object::PodGroup(_) => Kind::PodGroup,
            Object::PodDisruptionBudget(_) => Kind::PodDisruptionBudget,
            Object::Pod(_) => Kind::Pod,
            Object::Job(_) | Object::Controller(_) => return None,
        })
    }
}

/// The modelled kinds a server serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// Served, in [`Kind::ALL`] order.
    pub kinds: Vec<Kind>,
}

impl Served {
    /// Asks the server which API versions it serves. The core kinds,
    /// PriorityClass and PodDisruptionBudget are always there; the
    /// workload APIs only where v1.37's gates are on.
    pub async fn discover(client: &Client) -> Result<Self> {
        let mut kinds = Vec::new();
        let mut cache: Vec<(&str, Option<Vec<String>>)> = Vec::new();
        for kind in Kind::ALL {
            let version = kind.api_version();
            if !cache.iter().any(|(v, _)| *v == version) {
                let resources = if version == "v1" {
                    client.list_core_api_resources("v1").await.map(Some)
                } else {
                    match client.list_api_group_resources(version).await {
                        Ok(list) => Ok(Some(list)),
                        Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
                        Err(e) => Err(e),
                    }
                }
                .with_context(|| format!("cannot discover {version}"))?;
                let names = resources.map(|list| {
                    list.resources
                        .into_iter()
                        .map(|r| r.kind)
                        .collect::<Vec<_>>()
                });
                cache.push((version, names));
            }
            let served = cache
                .iter()
                .find(|(v, _)| *v == version)
                .and_then(|(_, names)| names.as_ref())
                .is_some_and(|names| names.iter().any(|n| n == kind.name()));
            if served {
                kinds.push(kind);
            }
        }
        Ok(Self { kinds })
    }

    /// Whether `kind` is served.
    pub fn serves(&self, kind: Kind) -> bool {
        self.kinds.contains(&kind)
    }

    /// One line per modelled kind the server does not serve.
    pub fn notes(&self) -> Vec<String> {
        Kind::ALL
            .into_iter()
            .filter(|k| !self.serves(*k))
            .map(|k| {
                format!(
                    "the server does not serve {} {}: none are read (its feature gate is off, or the server is older than v1.37)",
                    k.api_version(),
                    k.name()
                )
            })
            .collect()
    }
}

/// Where an object read from a server came from, for messages.
pub fn origin(object: &Object) -> ObjectRef {
    let (kind, name) = match object {
        Object::Node(o) => ("Node", key(o.as_ref())),
        Object::Pod(o) => ("Pod", key(o.as_ref())),
        Object::PodGroup(o) => ("PodGroup", key(o.as_ref())),
        Object::Workload(o) => ("Workload", key(o.as_ref())),
        Object::CompositePodGroup(o) => ("CompositePodGroup", key(o.as_ref())),
        Object::PriorityClass(o) => ("PriorityClass", key(o.as_ref())),
        Object::PodDisruptionBudget(o) => ("PodDisruptionBudget", key(o.as_ref())),
        Object::Job(o) => ("Job", key(o.as_ref())),
        Object::Controller(c) => {
            let (namespace, name) = c.namespace_and_name();
            let key = if namespace.is_empty() {
                name
            } else {
                format!("{namespace}/{name}")
            };
            (c.kind.api().1, key)
        }
    };
    ObjectRef {
        file: ORIGIN.into(),
        kind: kind.into(),
        name,
    }
}

/// `namespace/name`, or `name` for cluster-scoped objects.
pub fn key<K: ResourceExt>(object: &K) -> String {
    match object.namespace() {
        Some(ns) => format!("{ns}/{}", object.name_any()),
        None => object.name_any(),
    }
}

/// Lists every object of every served kind.
pub async fn list_all(client: &Client, served: &Served) -> Result<Vec<Object>> {
    let mut objects = Vec::new();
    for &kind in &served.kinds {
        let listed = match kind {
            Kind::PriorityClass => {
                list::<PriorityClass>(client, |o| Object::PriorityClass(Box::new(o))).await
            }
            Kind::Node => list::<Node>(client, |o| Object::Node(Box::new(o))).await,
            Kind::Workload => list::<Workload>(client, |o| Object::Workload(Box::new(o))).await,
            Kind::CompositePodGroup => {
                list::<CompositePodGroup>(client, |o| Object::CompositePodGroup(Box::new(o))).await
            }
            Kind::PodGroup => list::<PodGroup>(client, |o| Object::PodGroup(Box::new(o))).await,
            Kind::PodDisruptionBudget => {
                list::<PodDisruptionBudget>(client, |o| Object::PodDisruptionBudget(Box::new(o)))
                    .await
            }
            Kind::Pod => list::<Pod>(client, |o| Object::Pod(Box::new(o))).await,
        };
        objects.extend(listed.with_context(|| format!("cannot list {}s", kind.name()))?);
    }
    Ok(objects)
}

async fn list<K>(client: &Client, wrap: fn(K) -> Object) -> Result<Vec<Object>, kube::Error>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    let api: Api<K> = Api::all(client.clone());
    let mut objects = Vec::new();
    let mut params = ListParams::default().limit(500);
    loop {
        let page = api.list(&params).await?;
        let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        objects.extend(page.items.into_iter().map(wrap));
        match next {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(objects),
        }
    }
}
