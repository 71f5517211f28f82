//! Files → typed Kubernetes objects.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::scheduling::v1alpha3::CompositePodGroup;
use k8s_openapi::api::scheduling::v1beta1::{PodGroup, Workload};
use serde::Deserialize;
use serde_json::Value;

/// One object the scheduler models.
#[derive(Debug, Clone)]
pub enum Object {
    /// `v1 Node`.
    Node(Box<Node>),
    /// `v1 Pod`.
    Pod(Box<Pod>),
    /// `scheduling.k8s.io/v1beta1 PodGroup`.
    PodGroup(Box<PodGroup>),
    /// `scheduling.k8s.io/v1beta1 Workload`.
    Workload(Box<Workload>),
    /// `scheduling.k8s.io/v1alpha3 CompositePodGroup`.
    CompositePodGroup(Box<CompositePodGroup>),
    /// `scheduling.k8s.io/v1 PriorityClass`.
    PriorityClass(Box<PriorityClass>),
    /// `policy/v1 PodDisruptionBudget`.
    PodDisruptionBudget(Box<PodDisruptionBudget>),
    /// `batch/v1 Job`; expanded into a Workload, a PodGroup and pods when
    /// its pods are not in the snapshot (see [`super::jobs`]).
    Job(Box<Job>),
}

/// Where an object came from, for messages: `file: Kind ns/name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef {
    /// The file it was read from.
    pub file: String,
    /// `kind`.
    pub kind: String,
    /// `namespace/name`, or `name` for cluster-scoped objects.
    pub name: String,
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} {}", self.file, self.kind, self.name)
    }
}

/// Everything read from a set of files.
#[derive(Debug, Default)]
pub struct Manifests {
    /// The modelled objects, in file and document order, with their origin.
    pub objects: Vec<(ObjectRef, Object)>,
    /// Real Kubernetes kinds the host does not model, skipped: `kind
    /// (apiVersion)` → count.
    pub skipped: BTreeMap<String, usize>,
    /// How objects written in other dialects were read, one line each.
    pub notes: Vec<String>,
    /// Group semantics that dialects carry and v1.37 has no field for.
    pub dialects: super::dialect::DialectState,
}

impl Manifests {
    /// One warning line about skipped kinds, if any were skipped.
    pub fn skipped_warning(&self) -> Option<String> {
        if self.skipped.is_empty() {
            return None;
        }
        let total: usize = self.skipped.values().sum();
        let kinds: Vec<String> = self
            .skipped
            .iter()
            .map(|(kind, n)| format!("{n} {kind}"))
            .collect();
        Some(format!(
            "skipped {total} object(s) of kinds wasched does not model: {}",
            kinds.join(", ")
        ))
    }
}

/// Reads every file into `into`, in the order given; a directory stands for
/// every `*.yaml`, `*.yml` and `*.json` file directly in it, in name order.
/// Call [`super::expand_jobs`] once everything is read.
pub fn load_files(into: &mut Manifests, paths: &[impl AsRef<Path>]) -> Result<()> {
    for path in paths {
        let path = path.as_ref();
        for file in files_at(path)? {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("{}: cannot read file", file.display()))?;
            load_str(into, &file.display().to_string(), &text)?;
        }
    }
    Ok(())
}

fn files_at(path: &Path) -> Result<Vec<std::path::PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries = std::fs::read_dir(path)
        .with_context(|| format!("{}: cannot read directory", path.display()))?;
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
        })
        .collect();
    files.sort();
    if files.is_empty() {
        bail!(
            "{}: no *.yaml, *.yml or *.json files in this directory",
            path.display()
        );
    }
    Ok(files)
}

/// Reads one file's text (YAML, possibly multi-document, or JSON) into `into`.
pub fn load_str(into: &mut Manifests, file: &str, text: &str) -> Result<()> {
    // JSON (what `kubectl get -o json` prints) is YAML too, but the JSON
    // parser reads it several times faster.
    if text.trim_start().starts_with('{') {
        for (index, value) in serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .enumerate()
        {
            let value = value
                .map_err(|e| anyhow!("{file}: document {}: not valid JSON: {e}", index + 1))?;
            add_value(into, file, value)?;
        }
        return Ok(());
    }
    if text.len() >= PARALLEL_FROM {
        let mark = Mark::of(into);
        if add_in_pieces(into, file, text)? {
            return Ok(());
        }
        mark.restore(into);
    }
    for value in parse_documents(text, file)? {
        add_value(into, file, value)?;
    }
    Ok(())
}

/// What [`add_value`] may have changed, to undo a read in pieces that had
/// to give up half-way.
struct Mark {
    objects: usize,
    notes: usize,
    skipped: BTreeMap<String, usize>,
    dialects: super::dialect::DialectState,
}

impl Mark {
    fn of(manifests: &Manifests) -> Self {
        Self {
            objects: manifests.objects.len(),
            notes: manifests.notes.len(),
            skipped: manifests.skipped.clone(),
            dialects: manifests.dialects.clone(),
        }
    }

    fn restore(self, manifests: &mut Manifests) {
        manifests.objects.truncate(self.objects);
        manifests.notes.truncate(self.notes);
        manifests.skipped = self.skipped;
        manifests.dialects = self.dialects;
    }
}

/// Reads a large YAML text in pieces ([`pieces`]) parsed on the worker threads, a
/// batch at a time, adding each batch's objects before parsing the next
/// (so only one batch of parsed values is in memory). `false` when a piece
/// does not parse on its own: the caller undoes what was added and reads
/// the text in one pass, which gives the exact error. Batches have a fixed
/// size, so a text with several errors reports the same one whatever the
/// number of threads.
fn add_in_pieces(into: &mut Manifests, file: &str, text: &str) -> Result<bool> {
    let pieces = pieces(text);
    for run in pieces.chunks(PIECES_PER_BATCH) {
        let Some(values) = parse_pieces(run) else {
            return Ok(false);
        };
        for value in values {
            add_value(into, file, value)?;
        }
    }
    Ok(true)
}

/// Pieces parsed per batch (in parallel).
const PIECES_PER_BATCH: usize = 16;

/// The non-empty YAML documents of `text`, in order, read one after the
/// other; an error names the document.
fn parse_documents(text: &str, file: &str) -> Result<Vec<Value>> {
    let mut values = Vec::new();
    for (index, document) in serde_norway::Deserializer::from_str(text).enumerate() {
        let value = Value::deserialize(document).map_err(|e| {
            anyhow!(
                "{file}: document {}: not valid YAML or JSON: {e}",
                index + 1
            )
        })?;
        if value.is_null() {
            continue; // an empty document (`---` at the end, comments only)
        }
        values.push(value);
    }
    Ok(values)
}

/// Texts shorter than this are read in one pass (cutting does not pay).
const PARALLEL_FROM: usize = 256 << 10;

/// `text` cut at its document markers (`---` at the start of a line, which
/// YAML never allows inside a document), and the `items` of a `List`
/// written the way `kubectl` writes it (`items:` at the start of a line,
/// each item starting with `- `) cut into runs of items, so that each piece
/// parses on its own. Cutting pays even on one thread: many small values
/// are lighter than one tree.
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    for document in split_documents(text) {
        match split_list_items(document) {
            Some((wrapper, items)) => {
                pieces.push(Piece::ListWrapper(wrapper));
                pieces.extend(items.into_iter().map(Piece::Items));
            }
            None => pieces.push(Piece::Document(document)),
        }
    }
    pieces
}

/// Parses `pieces` in parallel into the objects they hold, in order: a
/// document's value (none if empty), a List's items one by one (which is
/// how [`add_value`] reads a List). `None` when a piece does not parse on
/// its own or a List wrapper is not a List.
fn parse_pieces(pieces: &[Piece]) -> Option<Vec<Value>> {
    use rayon::prelude::*;
    let parsed: Vec<Vec<Value>> = pieces
        .par_iter()
        .map(|piece| match piece {
            Piece::Document(text) if is_blank(text) => Some(Vec::new()),
            Piece::Document(text) => {
                let value: Value = serde_norway::from_str(text).ok()?;
                Some(if value.is_null() {
                    Vec::new()
                } else {
                    vec![value]
                })
            }
            Piece::ListWrapper(text) => {
                // Exactly what add_value takes for a List, and no second
                // `items` the cutter did not see.
                let wrapper: Value = serde_norway::from_str(text).ok()?;
                let kind = wrapper.get("kind")?.as_str()?;
                let api_version = wrapper.get("apiVersion")?.as_str()?;
                (kind.ends_with("List")
                    && !api_version.is_empty()
                    && wrapper.get("items").is_none())
                .then(Vec::new)
            }
            Piece::Items(text) => match serde_norway::from_str(text).ok()? {
                Value::Array(items) => Some(items),
                _ => None,
            },
        })
        .collect::<Option<_>>()?;
    Some(parsed.into_iter().flatten().collect())
}

/// A piece of a YAML text that parses on its own.
enum Piece<'a> {
    /// A whole document.
    Document(&'a str),
    /// A List document without its items (checked to be a List).
    ListWrapper(String),
    /// Consecutive items of a List, as a YAML sequence.
    Items(&'a str),
}

/// Whether a piece holds only comments and markers.
fn is_blank(text: &str) -> bool {
    text.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "---"
    })
}

/// Items per parallel piece of a List.
const ITEMS_PER_PIECE: usize = 64;

/// A document that is a List as `kubectl` writes it, cut into the document
/// without its items and its items in runs of [`ITEMS_PER_PIECE`]: the
/// lines after `items:` (at the start of a line) up to the next line that
/// is neither an item (`- `), nor indented, nor a comment, nor blank.
/// `None` for any other
/// document.
fn split_list_items(document: &str) -> Option<(String, Vec<&str>)> {
    let mut at = 0;
    let mut items_line = None;
    for line in document.split_inclusive('\n') {
        if line.trim_end() == "items:" {
            items_line = Some(at);
            at += line.len();
            break;
        }
        at += line.len();
    }
    let (line_start, start) = (items_line?, at);
    let mut end = start;
    let mut item_starts = Vec::new();
    for line in document[start..].split_inclusive('\n') {
        if line.starts_with("- ") {
            item_starts.push(end);
        } else if line.starts_with('-') {
            // Another way to start an item (`-` then a line break or a
            // tab), or a marker: not the shape this cutter knows.
            return None;
        } else if !(line.starts_with([' ', '#']) || line.trim().is_empty()) {
            break;
        }
        end += line.len();
    }
    if item_starts.first() != Some(&start) {
        return None;
    }
    let runs: Vec<&str> = item_starts
        .chunks(ITEMS_PER_PIECE)
        .enumerate()
        .map(|(i, run)| {
            let next = item_starts
                .get((i + 1) * ITEMS_PER_PIECE)
                .copied()
                .unwrap_or(end);
            &document[run[0]..next]
        })
        .collect();
    let wrapper = format!("{}{}", &document[..line_start], &document[end..]);
    Some((wrapper, runs))
}

/// `text` cut before every line that starts a document (`---` alone or
/// followed by a space or tab). The first piece may hold only comments.
fn split_documents(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let marker = line
            .strip_prefix("---")
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r', '\n']));
        if marker && at > start {
            pieces.push(&text[start..at]);
            start = at;
        }
        at += line.len();
    }
    pieces.push(&text[start..]);
    pieces
}

fn add_value(into: &mut Manifests, file: &str, mut value: Value) -> Result<()> {
    let Value::Object(map) = &value else {
        bail!(
            "{file}: expected a Kubernetes object (a mapping with apiVersion and kind), found {}",
            type_name(&value)
        );
    };
    let field = |key: &str| map.get(key).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (field("apiVersion").to_string(), field("kind").to_string());
    let name = object_name(&value);
    if kind.is_empty() || api_version.is_empty() {
        let missing = if kind.is_empty() {
            "kind"
        } else {
            "apiVersion"
        };
        bail!("{file}: object {name}: field {missing} is missing: not a Kubernetes object");
    }
    let origin = ObjectRef {
        file: file.to_string(),
        kind: kind.clone(),
        name,
    };
    if kind == "List" || (kind.ends_with("List") && map.contains_key("items")) {
        let Value::Object(mut map) = value else {
            unreachable!("checked above")
        };
        let Some(Value::Array(items)) = map.remove("items") else {
            bail!("{origin}: field items: expected a list of objects");
        };
        for item in items {
            add_value(into, file, item)?;
        }
        return Ok(());
    }
    if super::dialect::translate(into, &origin, &mut value)?
        == super::dialect::Translation::Consumed
    {
        return Ok(());
    }
    let api_version = value["apiVersion"].as_str().unwrap_or_default().to_string();
    let object = match (api_version.as_str(), kind.as_str()) {
        ("v1", "Node") => Object::Node(parse(&origin, value)?),
        ("batch/v1", "Job") => Object::Job(parse(&origin, value)?),
        ("v1", "Pod") => Object::Pod(parse(&origin, value)?),
        ("scheduling.k8s.io/v1beta1", "PodGroup") => Object::PodGroup(parse(&origin, value)?),
        ("scheduling.k8s.io/v1beta1", "Workload") => Object::Workload(parse(&origin, value)?),
        ("scheduling.k8s.io/v1alpha3", "CompositePodGroup") => {
            Object::CompositePodGroup(parse(&origin, value)?)
        }
        ("scheduling.k8s.io/v1", "PriorityClass") => Object::PriorityClass(parse(&origin, value)?),
        ("policy/v1", "PodDisruptionBudget") => Object::PodDisruptionBudget(parse(&origin, value)?),
        (_, "Node" | "Pod" | "PodGroup" | "Workload" | "CompositePodGroup" | "PriorityClass")
            if api_version.starts_with("scheduling.k8s.io/") || api_version == "v1" =>
        {
            bail!(
                "{origin}: field apiVersion: {kind} {api_version} is not supported; wasched reads {}",
                supported_version(&kind)
            )
        }
        _ if is_unmodelled_kind(&api_version, &kind) => {
            *into
                .skipped
                .entry(format!("{kind} ({api_version})"))
                .or_default() += 1;
            return Ok(());
        }
        _ => bail!(
            "{origin}: field kind: unknown kind {kind} (apiVersion {api_version}); \
             not a Kubernetes kind wasched knows"
        ),
    };
    into.objects.push((origin, object));
    Ok(())
}

/// Deserialises a value into a k8s-openapi type, naming the failing field.
pub(super) fn parse<T: serde::de::DeserializeOwned>(
    origin: &ObjectRef,
    value: Value,
) -> Result<Box<T>> {
    serde_path_to_error::deserialize(value)
        .map(Box::new)
        .map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." {
                "(object)".to_string()
            } else {
                path
            };
            anyhow!("{origin}: field {path}: {}", e.into_inner())
        })
}

fn object_name(value: &Value) -> String {
    let meta = |key: &str| {
        value
            .pointer(&format!("/metadata/{key}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    match (meta("namespace"), meta("name")) {
        (_, "") => "(unnamed)".to_string(),
        ("", name) => name.to_string(),
        (namespace, name) => format!("{namespace}/{name}"),
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn supported_version(kind: &str) -> &'static str {
    match kind {
        "Node" | "Pod" => "v1",
        "PodGroup" | "Workload" => "scheduling.k8s.io/v1beta1",
        "CompositePodGroup" => "scheduling.k8s.io/v1alpha3",
        _ => "scheduling.k8s.io/v1",
    }
}

/// Real Kubernetes kinds that may appear in a cluster dump but do not affect
/// what wasched models (yet). Objects of custom API groups (`x.example.com/v1`)
/// count as real too: a dump of a live cluster contains them.
fn is_unmodelled_kind(api_version: &str, kind: &str) -> bool {
    const BUILT_IN: &[&str] = &[
        "APIService",
        "Binding",
        "CSIDriver",
        "CSINode",
        "CSIStorageCapacity",
        "CertificateSigningRequest",
        "ClusterRole",
        "ClusterRoleBinding",
        "ComponentStatus",
        "ConfigMap",
        "ControllerRevision",
        "CronJob",
        "CustomResourceDefinition",
        "DaemonSet",
        "Deployment",
        "DeviceClass",
        "EndpointSlice",
        "Endpoints",
        "Event",
        "FlowSchema",
        "HorizontalPodAutoscaler",
        "Ingress",
        "IngressClass",
        "Job",
        "Lease",
        "LimitRange",
        "MutatingWebhookConfiguration",
        "Namespace",
        "NetworkPolicy",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "PodDisruptionBudget",
        "PodTemplate",
        "PriorityLevelConfiguration",
        "ReplicaSet",
        "ReplicationController",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "ResourceQuota",
        "ResourceSlice",
        "Role",
        "RoleBinding",
        "RuntimeClass",
        "Secret",
        "Service",
        "ServiceAccount",
        "StatefulSet",
        "StorageClass",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
        "VolumeAttachment",
        "VolumeAttributesClass",
    ];
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let custom_group = group.contains('.') && !group.ends_with(".k8s.io");
    BUILT_IN.contains(&kind) || custom_group
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Manifests> {
        let mut m = Manifests::default();
        load_str(&mut m, "snap.yaml", text)?;
        Ok(m)
    }

    #[test]
    fn documents_read_in_parallel_equal_one_pass() {
        let text = "# header comment\n---\napiVersion: v1\nkind: Node\nmetadata: {name: a}\n\
                    --- # trailing comment\nkind: Pod\nspec:\n  x: |\n    ---not a marker\n\
                    ---\n---\n- 1\n- 2\n---\n";
        let documents = split_documents(text);
        assert_eq!(documents.len(), 6, "{documents:?}");
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let parallel = pool.install(|| parse_pieces(&pieces(text))).unwrap();
        assert_eq!(parallel, parse_documents(text, "f").unwrap());
        assert_eq!(parallel.len(), 3);
        // A kubectl List: its items come out one by one, as add_value reads them.
        let list = "apiVersion: v1\nitems:\n- kind: Node\n  metadata:\n    name: a\n\
                    - kind: Pod\n  spec:\n    x: |\n      - not an item\n\
                    # between\n- [1, 2]\nkind: List\nmetadata:\n  resourceVersion: \"\"\n";
        let (wrapper, items) = split_list_items(list).unwrap();
        assert_eq!(
            wrapper,
            "apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: \"\"\n"
        );
        assert_eq!(items.len(), 1);
        let one_pass = parse_documents(list, "f").unwrap();
        let Value::Array(expected) = one_pass[0]["items"].clone() else {
            panic!()
        };
        assert_eq!(
            pool.install(|| parse_pieces(&pieces(list))).unwrap(),
            expected
        );
        // Items the cutter does not know, and a wrapper that is not exactly
        // a List, are read as a whole document or left to the one-pass
        // reader: never cut.
        for odd in [
            "apiVersion: v1\nmetadata:\nitems:\n- kind: Node\n-\n  kind: Pod\nkind: List\n",
            "apiVersion: v1\nitems:\n- kind: Node\nkind: List\nitems: []\n",
            "apiVersion: 1\nitems:\n- kind: Node\nkind: List\n",
        ] {
            let read = pool.install(|| parse_pieces(&pieces(odd)));
            assert!(
                read.is_none() || read == parse_documents(odd, "f").ok(),
                "{odd}"
            );
        }
        // A piece that does not parse alone: the one-pass reader decides.
        let broken = "a: 1\n---\nb: [\n";
        assert!(pool.install(|| parse_pieces(&pieces(broken))).is_none());
    }

    #[test]
    fn a_large_text_that_breaks_late_is_undone_and_reported_as_in_one_pass() {
        let node = |i: usize| format!("---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n{i}\n");
        let mut text: String = (0..5_000).map(node).collect();
        assert!(text.len() >= PARALLEL_FROM);
        let mut manifests = Manifests::default();
        load_str(&mut manifests, "big.yaml", &text).unwrap();
        assert_eq!(manifests.objects.len(), 5_000);
        text.push_str("---\nkind: [broken\n");
        let mut manifests = Manifests::default();
        let error = load_str(&mut manifests, "big.yaml", &text)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("big.yaml: document 5001: not valid YAML"),
            "{error}"
        );
        assert!(
            manifests.objects.is_empty(),
            "what the pieces added was undone"
        );
    }

    #[test]
    fn reads_multi_document_yaml_lists_and_json() {
        let m = load(
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n\
             apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p, namespace: ns}\n  spec: {containers: []}\n---\n",
        )
        .unwrap();
        assert_eq!(m.objects.len(), 2);
        assert_eq!(m.objects[1].0.to_string(), "snap.yaml: Pod ns/p");
        let json = load(r#"{"apiVersion":"v1","kind":"NodeList","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}}]}"#).unwrap();
        assert_eq!(json.objects.len(), 1);
    }

    #[test]
    fn errors_name_file_object_and_field() {
        let err = load(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  containers:\n  - name: c\n    resources: {requests: [1]}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("snap.yaml: Pod ns/p: field spec.containers[0].resources.requests:"),
            "{err}"
        );
        let err = load("apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\nspec: {schedulingPolicy: {gang: {minCount: many}}}\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("PodGroup ns/g: field spec.schedulingPolicy.gang.minCount: invalid type"),
            "{err}"
        );
    }

    #[test]
    fn skips_real_kinds_and_rejects_garbage() {
        let m = load("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\n").unwrap();
        assert!(m.objects.is_empty());
        assert_eq!(
            m.skipped_warning().unwrap(),
            "skipped 2 object(s) of kinds wasched does not model: 2 ConfigMap (v1)"
        );
        let err = load("apiVersion: v1\nkind: Gizmo\nmetadata: {name: g}\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("field kind: unknown kind Gizmo"), "{err}");
        let err = load("just a string").unwrap_err().to_string();
        assert!(err.contains("expected a Kubernetes object"), "{err}");
        let err = load("a: [1, 2\n").unwrap_err().to_string();
        assert!(
            err.starts_with("snap.yaml: document 1: not valid YAML"),
            "{err}"
        );
        let err =
            load("apiVersion: scheduling.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n")
                .unwrap_err()
                .to_string();
        assert!(
            err.contains("is not supported; wasched reads scheduling.k8s.io/v1beta1"),
            "{err}"
        );
    }
}
