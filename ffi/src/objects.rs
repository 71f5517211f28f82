//! Kubernetes objects as kube-scheduler's informers hold them (Go's
//! `encoding/json` of the API types), read into wasched's objects.

use anyhow::{Result, anyhow, bail};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::scheduling::v1alpha3::CompositePodGroup;
use k8s_openapi::api::scheduling::v1beta1::{PodGroup, Workload};
use k8s_openapi::{Resource, serde::de::DeserializeOwned};
use wasched::manifest::{Object, ObjectRef};

/// How objects handed in are named in messages (`kube-scheduler: Pod team/a`).
pub const ORIGIN: &str = "kube-scheduler";

/// The kinds a view takes, as the caller names them.
pub const KINDS: [&str; 7] = [
    "Node",
    "Pod",
    "PodGroup",
    "Workload",
    "CompositePodGroup",
    "PriorityClass",
    "PodDisruptionBudget",
];

/// Reads one object of `kind` from its JSON. Go's API types leave
/// `apiVersion` and `kind` empty on informer objects, so they are filled
/// in; a malformed object is an error naming the kind, the object and the
/// field.
pub fn read(kind: &str, json: &[u8]) -> Result<(ObjectRef, Object)> {
    // Straight from the bytes; what that does not take (an empty
    // `apiVersion`, a malformed field) is read again through the parsed
    // JSON, which fills in what Go leaves empty and names the field.
    read_from(kind, Bytes(json)).or_else(|_| {
        let value: serde_json::Value =
            serde_json::from_slice(json).map_err(|e| anyhow!("{kind} is not valid JSON: {e}"))?;
        read_value(kind, value)
    })
}

/// [`read`] from parsed JSON.
pub fn read_value(kind: &str, json: serde_json::Value) -> Result<(ObjectRef, Object)> {
    read_from(kind, json)
}

/// JSON an object is read from: bytes, or parsed.
trait Source {
    fn typed<K: Resource + DeserializeOwned>(self) -> Result<K>;
}

/// An object's JSON text, read as it stands.
struct Bytes<'a>(&'a [u8]);

impl Source for Bytes<'_> {
    fn typed<K: Resource + DeserializeOwned>(self) -> Result<K> {
        Ok(serde_json::from_slice(self.0)?)
    }
}

impl Source for serde_json::Value {
    fn typed<K: Resource + DeserializeOwned>(self) -> Result<K> {
        typed(self)
    }
}

fn read_from(kind: &str, json: impl Source) -> Result<(ObjectRef, Object)> {
    let object = match kind {
        "Node" => Object::Node(Box::new(json.typed::<Node>()?)),
        "Pod" => Object::Pod(Box::new(json.typed::<Pod>()?)),
        "PodGroup" => Object::PodGroup(Box::new(json.typed::<PodGroup>()?)),
        "Workload" => Object::Workload(Box::new(json.typed::<Workload>()?)),
        "CompositePodGroup" => {
            Object::CompositePodGroup(Box::new(json.typed::<CompositePodGroup>()?))
        }
        "PriorityClass" => Object::PriorityClass(Box::new(json.typed::<PriorityClass>()?)),
        "PodDisruptionBudget" => {
            Object::PodDisruptionBudget(Box::new(json.typed::<PodDisruptionBudget>()?))
        }
        other => bail!("unknown kind {other:?} (a view takes {})", KINDS.join(", ")),
    };
    let mut origin = wasched::live::kinds::origin(&object);
    origin.file = ORIGIN.into();
    Ok((origin, object))
}

fn typed<K: Resource + DeserializeOwned>(mut value: serde_json::Value) -> Result<K> {
    let serde_json::Value::Object(fields) = &mut value else {
        bail!("{} is not a JSON object", K::KIND);
    };
    let name = key(fields);
    for (field, expected) in [("apiVersion", K::API_VERSION), ("kind", K::KIND)] {
        match fields.get(field).and_then(|v| v.as_str()) {
            None | Some("") => {
                fields.insert(field.into(), expected.into());
            }
            Some(found) if found == expected => {}
            Some(found) => bail!(
                "{} {name}: field {field}: expected {expected}, found {found}",
                K::KIND
            ),
        }
    }
    serde_path_to_error::deserialize(value)
        .map_err(|e| anyhow!("{} {name}: field {}: {}", K::KIND, e.path(), e.inner()))
}

/// `namespace/name` (or `name`) of an object's JSON text, for messages.
pub fn key_of(json: &[u8]) -> String {
    match serde_json::from_slice::<serde_json::Value>(json) {
        Ok(serde_json::Value::Object(fields)) => key(&fields),
        _ => "(unnamed)".into(),
    }
}

/// `namespace/name` (or `name`) of an object's JSON fields, for messages.
pub fn key(fields: &serde_json::Map<String, serde_json::Value>) -> String {
    let meta = fields.get("metadata");
    let field = |f: &str| {
        meta.and_then(|m| m.get(f))
            .and_then(|v| v.as_str())
            .unwrap_or_default()
    };
    match (field("namespace"), field("name")) {
        ("", "") => "(unnamed)".into(),
        ("", name) => name.into(),
        (ns, name) => format!("{ns}/{name}"),
    }
}
