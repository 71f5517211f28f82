//! Object names and namespaces completed as the API server and kubectl
//! complete them, before an object is read:
//!
//! - a namespaced object without a namespace is in `default` (kubectl's
//!   default namespace), so the two spellings of one pod are one pod;
//! - an object with `generateName` and no `name` gets a name the way the API
//!   server makes one — the prefix (cut to 58 characters) and five
//!   characters of `bcdfghjklmnpqrstvwxz2456789` — except that the five are
//!   not random: they are derived from the object itself (an FNV-1a hash of
//!   its JSON text, which orders keys) and how many identical objects with
//!   that prefix came before it, so the same files always give the same
//!   names. Each generated name is noted.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};
use serde_json::Value;

use super::load::Manifests;

/// `spec.schedulerName` when a pod does not name one.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// The characters the API server draws a generated suffix from
/// (`k8s.io/apimachinery/pkg/util/rand`).
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Length of a generated suffix.
const SUFFIX_LENGTH: usize = 5;

/// The longest prefix kept: 63 (a name's limit) less the suffix.
const MAX_PREFIX: usize = 63 - SUFFIX_LENGTH;

/// Kinds wasched reads that live in a namespace (every other kind it
/// reads is cluster-scoped, and kinds it skips are left as they are).
const NAMESPACED: &[&str] = &[
    "Pod",
    "PodGroup",
    "Workload",
    "CompositePodGroup",
    "PodDisruptionBudget",
    "Job",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "JobSet",
    "LeaderWorkerSet",
    "RayCluster",
    "RayJob",
    "PyTorchJob",
    "TrainJob",
    "TrainingRuntime",
];

/// The part of [`complete`] that needs nothing read before: the namespace
/// of a namespaced kind completed; for an object with a name, the name it
/// takes (for [`GeneratedNames::take`]), `None` for one without.
pub fn complete_given(kind: &str, value: &mut Value) -> Option<String> {
    let Some(Value::Object(metadata)) = value.get_mut("metadata") else {
        return None;
    };
    if NAMESPACED.contains(&kind)
        && metadata
            .get("namespace")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    {
        metadata.insert("namespace".into(), Value::String("default".into()));
    }
    let name = metadata
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())?;
    let namespace = metadata
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Some(format!("{kind}/{namespace}/{name}"))
}

/// How many objects with the same prefix and text have had a name made,
/// so that identical objects get different names, and the names taken so
/// far (given and made), so that a made name never takes one: on a clash
/// the next suffix is tried, as the API server retries.
#[derive(Debug, Default, Clone)]
pub struct GeneratedNames {
    seen: BTreeMap<(String, u64), u64>,
    taken: BTreeSet<String>,
}

impl GeneratedNames {
    /// Records `key` (`kind/namespace/name`) as a name taken.
    pub fn take(&mut self, key: String) {
        self.taken.insert(key);
    }
}

/// Completes `value`'s namespace and name (see the module's doc).
pub fn complete(into: &mut Manifests, file: &str, kind: &str, value: &mut Value) -> Result<()> {
    if let Some(taken) = complete_given(kind, value) {
        into.generated_names.take(taken);
        return Ok(());
    }
    let Some(Value::Object(metadata)) = value.get_mut("metadata") else {
        return Ok(());
    };
    let Some(prefix) = metadata
        .get("generateName")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
    else {
        return Ok(());
    };
    let namespace = metadata
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let hash = fnv1a(value.to_string().as_bytes());
    let names = &mut into.generated_names;
    let count = names
        .seen
        .entry((format!("{kind}/{namespace}/{prefix}"), hash))
        .or_default();
    let name = loop {
        let name = generated_name(&prefix, hash, *count);
        *count += 1;
        if names.taken.insert(format!("{kind}/{namespace}/{name}")) {
            break name;
        }
    };
    let Some(Value::Object(metadata)) = value.get_mut("metadata") else {
        bail!("{file}: {kind} {prefix}: metadata vanished")
    };
    metadata.insert("name".into(), Value::String(name.clone()));
    let shown = if namespace.is_empty() {
        name
    } else {
        format!("{namespace}/{name}")
    };
    into.notes.push(format!(
        "{file}: {kind} {shown}: named from generateName {prefix:?} (a deterministic suffix)"
    ));
    Ok(())
}

/// `prefix` (cut to [`MAX_PREFIX`]) and five characters of [`ALPHABET`]
/// from `hash` and `count`.
fn generated_name(prefix: &str, hash: u64, count: u64) -> String {
    let mut cut = prefix.len().min(MAX_PREFIX);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut n = fnv1a(&[hash.to_le_bytes(), count.to_le_bytes()].concat());
    let mut name = prefix[..cut].to_string();
    for _ in 0..SUFFIX_LENGTH {
        name.push(ALPHABET[(n % ALPHABET.len() as u64) as usize] as char);
        n /= ALPHABET.len() as u64;
    }
    name
}

/// 64-bit FNV-1a: a small, fixed hash (the standard library's may change
/// between releases, and names must not).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(text: &str) -> Value {
        serde_norway::from_str(text).unwrap()
    }

    #[test]
    fn generated_names_are_the_api_servers_shape_and_repeat_exactly() {
        let mut manifests = Manifests::default();
        let text =
            "apiVersion: v1\nkind: Pod\nmetadata: {generateName: web-}\nspec: {containers: []}\n";
        let mut names = Vec::new();
        for _ in 0..3 {
            let mut value = pod(text);
            complete(&mut manifests, "f.yaml", "Pod", &mut value).unwrap();
            assert_eq!(value["metadata"]["namespace"], "default");
            names.push(value["metadata"]["name"].as_str().unwrap().to_string());
        }
        for name in &names {
            let suffix = name.strip_prefix("web-").unwrap();
            assert_eq!(suffix.len(), SUFFIX_LENGTH, "{name}");
            assert!(suffix.bytes().all(|c| ALPHABET.contains(&c)), "{name}");
        }
        // Identical objects get different names; reading again gives the same ones.
        assert_ne!(names[0], names[1]);
        assert_ne!(names[1], names[2]);
        let mut again = Manifests::default();
        let mut value = pod(text);
        complete(&mut again, "other.yaml", "Pod", &mut value).unwrap();
        assert_eq!(value["metadata"]["name"], names[0].as_str());
        assert_eq!(
            manifests.notes[0],
            format!(
                "f.yaml: Pod default/{}: named from generateName \"web-\" (a deterministic suffix)",
                names[0]
            )
        );
        // A made name never takes one already given or made.
        let mut taken = Manifests::default();
        let mut first = pod(text);
        complete(&mut taken, "f.yaml", "Pod", &mut first).unwrap();
        let clash = first["metadata"]["name"].as_str().unwrap().to_string();
        let mut given = Manifests::default();
        let mut named = pod(&format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {clash}}}\n"
        ));
        complete(&mut given, "f.yaml", "Pod", &mut named).unwrap();
        let mut value = pod(text);
        complete(&mut given, "f.yaml", "Pod", &mut value).unwrap();
        assert_ne!(value["metadata"]["name"], clash.as_str());
        // A long prefix is cut to 58 characters, as the API server cuts it.
        let long = "p".repeat(70);
        assert_eq!(generated_name(&long, 1, 0).len(), 63);
    }

    #[test]
    fn namespaced_kinds_default_to_default_and_names_are_kept() {
        let mut manifests = Manifests::default();
        let mut value = pod("apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: \"\"}\n");
        complete(&mut manifests, "f", "Pod", &mut value).unwrap();
        assert_eq!(value["metadata"]["namespace"], "default");
        assert_eq!(value["metadata"]["name"], "a");
        let mut node = pod("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n");
        complete(&mut manifests, "f", "Node", &mut node).unwrap();
        assert!(node["metadata"].get("namespace").is_none());
        assert!(manifests.notes.is_empty());
    }
}
