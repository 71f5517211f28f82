//! Files → typed Kubernetes objects.

use std::collections::{BTreeMap, BTreeSet};
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

use super::fields::{self, FieldValidation};

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
    /// its pods are not in the snapshot (see [`super::workloads::job`]).
    Job(Box<Job>),
    /// A workload of another controller (JobSet, LeaderWorkerSet,
    /// RayCluster, …), expanded into what its controller makes by
    /// [`super::expand_workloads`] (see [`super::workloads`]).
    Controller(Box<super::workloads::Controller>),
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
#[derive(Debug, Default, Clone)]
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
    /// How the objects were read that a user should know about: kinds that
    /// look misspelt, what directories held besides manifests, and (once
    /// [`Manifests::finish`] ran) unknown fields and PodGroups not found.
    pub warnings: Vec<String>,
    /// Unknown fields met so far, by kind and path.
    pub unknown_fields: fields::UnknownFields,
    /// How unknown fields are treated (`--strict`).
    pub validation: FieldValidation,
    /// Names given to objects that had only `generateName`.
    pub generated_names: super::names::GeneratedNames,
    /// The line a long read shows on a terminal (none by default).
    pub progress: crate::progress::Reading,
    /// What wasched's cycle never reads is kept ([`super::prune`] is not
    /// applied): the objects go to a real API server.
    pub keep_stored: bool,
    /// How controllers are configured where objects do not say.
    pub controllers: super::workloads::ControllerOptions,
    /// Controller objects that make no pods, and why.
    pub without_pods: Vec<super::workloads::WithoutPods>,
    /// `v1alpha1` pods' groups, made once everything is read.
    pub versions: super::versions::AlphaOneState,
}

impl Manifests {
    /// Everything read but the objects: how they were read (skipped kinds,
    /// notes, warnings, dialect state), for a model that takes its
    /// objects one by one.
    pub fn without_objects(&self) -> Manifests {
        Manifests {
            objects: Vec::new(),
            skipped: self.skipped.clone(),
            notes: self.notes.clone(),
            dialects: self.dialects.clone(),
            warnings: self.warnings.clone(),
            unknown_fields: self.unknown_fields.clone(),
            validation: self.validation,
            generated_names: self.generated_names.clone(),
            progress: self.progress.clone(),
            keep_stored: self.keep_stored,
            controllers: self.controllers.clone(),
            without_pods: self.without_pods.clone(),
            versions: self.versions.clone(),
        }
    }

    /// One warning per PodGroup that pods name in their namespace and the
    /// snapshot lacks there, saying where a PodGroup of that name exists (a
    /// pod joins a group of its own namespace only).
    pub fn missing_group_warnings(&self) -> Vec<String> {
        let mut groups: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (_, object) in &self.objects {
            if let Object::PodGroup(group) = object {
                let name = group.metadata.name.as_deref().unwrap_or_default();
                let namespace = group.metadata.namespace.as_deref().unwrap_or("default");
                groups.entry(name).or_default().insert(namespace);
            }
        }
        let mut missing: BTreeMap<(&str, &str), (usize, &str)> = BTreeMap::new();
        for (origin, object) in &self.objects {
            let Object::Pod(pod) = object else { continue };
            let Some(name) = pod
                .spec
                .as_ref()
                .and_then(|s| s.scheduling_group.as_ref())
                .and_then(|g| g.pod_group_name.as_deref())
            else {
                continue;
            };
            let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
            if groups.get(name).is_some_and(|n| n.contains(namespace)) {
                continue;
            }
            let entry = missing
                .entry((namespace, name))
                .or_insert((0, &origin.name));
            entry.0 += 1;
        }
        missing
            .into_iter()
            .map(|((namespace, name), (count, first))| {
                let elsewhere = groups.get(name).map_or_else(
                    || "no PodGroup of that name is in the snapshot".to_string(),
                    |namespaces| {
                        let list: Vec<&str> = namespaces.iter().copied().collect();
                        format!(
                            "a PodGroup {name} exists in namespace {} (a pod joins a group of its own namespace)",
                            list.join(", ")
                        )
                    },
                );
                format!(
                    "PodGroup {namespace}/{name} not found, named by {count} pod(s) (first: Pod {first}): {elsewhere}"
                )
            })
            .collect()
    }

    /// Ends reading: dialect objects read apart are joined (so the model
    /// sees only v1.37 objects), the unknown fields met become warnings (one
    /// per kind and path), and so do PodGroups that pods name and the
    /// snapshot lacks. Call once, after [`super::expand_workloads`].
    pub fn finish(&mut self) {
        self.join_dialect_objects();
        let unknown = self.unknown_fields.warnings();
        let missing = self.missing_group_warnings();
        self.warnings.extend(unknown);
        self.warnings.extend(missing);
    }

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

/// The path that stands for standard input.
pub const STDIN: &str = "-";

/// Reads every file into `into`, in the order given; a directory stands for
/// every `*.yaml`, `*.yml` and `*.json` file directly in it, in name order
/// (what else it holds is listed in one warning), and [`STDIN`] for
/// standard input. Call [`super::expand_workloads`] once everything is read.
pub fn load_files(into: &mut Manifests, paths: &[impl AsRef<Path>]) -> Result<()> {
    for path in paths {
        let path = path.as_ref();
        if path == Path::new(STDIN) {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes)
                .context("standard input: cannot read")?;
            into.progress.file("(standard input)");
            load_bytes(into, "(standard input)", bytes)?;
            continue;
        }
        for file in files_at(into, path)? {
            into.progress.file(&file.display().to_string());
            let bytes = std::fs::read(&file)
                .with_context(|| format!("{}: cannot read file", file.display()))?;
            load_bytes(into, &file.display().to_string(), bytes)?;
        }
    }
    Ok(())
}

/// Reads one file's bytes: UTF-8, with or without a byte-order mark; an
/// encoding error names the byte offset.
fn load_bytes(into: &mut Manifests, file: &str, mut bytes: Vec<u8>) -> Result<()> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        anyhow!(
            "{file}: not UTF-8 text: invalid byte 0x{:02x} at byte offset {at}",
            e.as_bytes()[at]
        )
    })?;
    load_str(into, file, &text)
}

fn files_at(into: &mut Manifests, path: &Path) -> Result<Vec<std::path::PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries = std::fs::read_dir(path)
        .with_context(|| format!("{}: cannot read directory", path.display()))?;
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    let manifest = |p: &Path| {
        p.extension()
            .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
    };
    let (files, others): (Vec<_>, Vec<_>) = entries
        .into_iter()
        .partition(|p| p.is_file() && manifest(p));
    if files.is_empty() {
        bail!(
            "{}: no *.yaml, *.yml or *.json files in this directory",
            path.display()
        );
    }
    if !others.is_empty() {
        let name = |p: &std::path::PathBuf| {
            let name = p
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            if p.is_dir() { format!("{name}/") } else { name }
        };
        let (folders, rest): (Vec<_>, Vec<_>) = others.iter().partition(|p| p.is_dir());
        let mut said = Vec::new();
        if !folders.is_empty() {
            let names: Vec<String> = folders.iter().map(|p| name(p)).collect();
            said.push(format!(
                "{} folder(s) not read (folders are not searched): {}",
                folders.len(),
                names.join(", ")
            ));
        }
        if !rest.is_empty() {
            let names: Vec<String> = rest.iter().map(|p| name(p)).collect();
            said.push(format!(
                "{} file(s) not read (not *.yaml, *.yml or *.json): {}",
                rest.len(),
                names.join(", ")
            ));
        }
        into.warnings
            .push(format!("{}: {}", path.display(), said.join("; ")));
    }
    Ok(files)
}

/// Reads one file's text (YAML, possibly multi-document, or JSON) into `into`.
pub fn load_str(into: &mut Manifests, file: &str, text: &str) -> Result<()> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // JSON (what `kubectl get -o json` prints) is YAML too, but the JSON
    // parser reads it several times faster, and item by item.
    if text.trim_start().starts_with('{') {
        return super::stream::load_json(into, file, text);
    }
    let too_deep = |at: Option<(usize, usize)>| match at {
        Some((line, column)) => Err(anyhow!(
            "{file}: not valid YAML: recursion limit exceeded at line {line} column {column} \
             (nesting deeper than {} levels)",
            super::depth::MAX_DEPTH
        )),
        None => Ok(()),
    };
    if text.len() >= PARALLEL_FROM {
        // The nesting is checked beside the read in pieces, and its error
        // wins: what is read is undone first.
        let mark = Mark::of(into);
        let (depth, read) = rayon::join(
            || super::depth::too_deep(text),
            || add_in_pieces(into, file, text),
        );
        if depth.is_some() {
            mark.restore(into);
            return too_deep(depth);
        }
        if read? {
            return Ok(());
        }
        mark.restore(into);
    } else {
        too_deep(super::depth::too_deep(text))?;
    }
    for value in parse_documents(text, file)? {
        add_value(into, file, value)?;
    }
    Ok(())
}

/// What [`add_value`] may have changed, to undo a read in pieces that had
/// to give up half-way.
pub(super) struct Mark {
    objects: usize,
    notes: usize,
    warnings: usize,
    unknown_fields: fields::UnknownFields,
    generated_names: super::names::GeneratedNames,
    skipped: BTreeMap<String, usize>,
    dialects: super::dialect::DialectState,
    versions: super::versions::AlphaOneState,
}

impl Mark {
    pub(super) fn of(manifests: &Manifests) -> Self {
        Self {
            objects: manifests.objects.len(),
            notes: manifests.notes.len(),
            warnings: manifests.warnings.len(),
            unknown_fields: manifests.unknown_fields.clone(),
            generated_names: manifests.generated_names.clone(),
            skipped: manifests.skipped.clone(),
            dialects: manifests.dialects.clone(),
            versions: manifests.versions.clone(),
        }
    }

    pub(super) fn restore(self, manifests: &mut Manifests) {
        manifests.objects.truncate(self.objects);
        manifests.notes.truncate(self.notes);
        manifests.warnings.truncate(self.warnings);
        manifests.unknown_fields = self.unknown_fields;
        manifests.generated_names = self.generated_names;
        manifests.skipped = self.skipped;
        manifests.dialects = self.dialects;
        manifests.versions = self.versions;
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
    use rayon::prelude::*;
    let pieces = pieces(text);
    let plain = Plain {
        file,
        validation: into.validation,
        keep_stored: into.keep_stored,
    };
    for run in pieces.chunks(PIECES_PER_BATCH) {
        let Some(values) = parse_pieces(run) else {
            return Ok(false);
        };
        let prepared: Vec<Prepared> = values
            .into_par_iter()
            .map(|value| plain.prepare(value))
            .collect();
        for prepared in prepared {
            match prepared {
                Prepared::Value(value) => add_value(into, file, value)?,
                Prepared::Object {
                    origin,
                    object,
                    taken,
                    unknown,
                } => {
                    into.generated_names.take(taken);
                    into.unknown_fields.merge(unknown);
                    into.objects.push((origin, object));
                    into.progress.object();
                }
                Prepared::Failed(error) => return Err(error),
            }
        }
    }
    Ok(true)
}

/// How plain Nodes and Pods are read on the worker threads: all that
/// [`add_value`] does to them depends on nothing read before, so it is
/// done beside the parsing and only what it records is added in order.
struct Plain<'a> {
    file: &'a str,
    validation: FieldValidation,
    keep_stored: bool,
}

/// An item of a List, parsed, and read as far as it could be on a worker.
enum Prepared {
    /// For [`add_value`].
    Value(Value),
    /// A plain Node or Pod, read: what [`add_value`] would have added.
    Object {
        origin: ObjectRef,
        object: Object,
        /// The name it takes ([`super::names::GeneratedNames::take`]).
        taken: String,
        /// Its unknown fields.
        unknown: fields::UnknownFields,
    },
    /// What [`add_value`] would have failed with.
    Failed(anyhow::Error),
}

impl Plain<'_> {
    /// `value` read as [`add_value`] reads it if it is a plain `v1` Node or
    /// Pod (named; a pod with no dialect's group marker and no `v1alpha1`
    /// `spec.workloadRef`), else left for [`add_value`].
    fn prepare(&self, mut value: Value) -> Prepared {
        let kind = match (
            value.get("apiVersion").and_then(Value::as_str),
            value.get("kind").and_then(Value::as_str),
        ) {
            (Some("v1"), Some("Node")) => "Node",
            (Some("v1"), Some("Pod"))
                if !super::dialect::has_pod_marker(&value)
                    && value.pointer("/spec/workloadRef").is_none() =>
            {
                "Pod"
            }
            _ => return Prepared::Value(value),
        };
        let Some(taken) = super::names::complete_given(kind, &mut value) else {
            return Prepared::Value(value);
        };
        if !self.keep_stored {
            super::prune::never_read(kind, &mut value);
        }
        let origin = ObjectRef {
            file: self.file.to_string(),
            kind: kind.to_string(),
            name: object_name(&value),
        };
        let mut unknown = fields::UnknownFields::default();
        let object =
            match kind {
                "Node" => fields::parse(&origin, value, self.validation, true, &mut unknown)
                    .map(Object::Node),
                _ => fields::parse(&origin, value, self.validation, false, &mut unknown)
                    .map(Object::Pod),
            };
        match object {
            Ok(object) => Prepared::Object {
                origin,
                object,
                taken,
                unknown,
            },
            Err(error) => Prepared::Failed(error),
        }
    }
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

/// Reads one parsed object (a List: each of its items) into `into`.
pub(super) fn add_value(into: &mut Manifests, file: &str, mut value: Value) -> Result<()> {
    let Value::Object(map) = &value else {
        bail!(
            "{file}: expected a Kubernetes object (a mapping with apiVersion and kind), found {}",
            type_name(&value)
        );
    };
    let field = |key: &str| map.get(key).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (field("apiVersion").to_string(), field("kind").to_string());
    if kind.is_empty() || api_version.is_empty() {
        let missing = if kind.is_empty() {
            "kind"
        } else {
            "apiVersion"
        };
        bail!(
            "{file}: object {}: field {missing} is missing: not a Kubernetes object",
            object_name(&value)
        );
    }
    if kind == "List" || (kind.ends_with("List") && map.contains_key("items")) {
        let origin = ObjectRef {
            file: file.to_string(),
            kind,
            name: object_name(&value),
        };
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
    // Names first: a generated name does not depend on what is dropped.
    super::names::complete(into, file, &kind, &mut value)?;
    if !into.keep_stored {
        super::prune::never_read(&kind, &mut value);
    }
    let origin = ObjectRef {
        file: file.to_string(),
        kind: kind.clone(),
        name: object_name(&value),
    };
    if super::dialect::translate(into, &origin, &mut value)?
        == super::dialect::Translation::Consumed
    {
        return Ok(());
    }
    super::versions::convert(into, &origin, &mut value)?;
    let api_version = value["apiVersion"].as_str().unwrap_or_default().to_string();
    if let Some(kind) = super::workloads::ControllerKind::of(&api_version, &origin.kind) {
        into.objects.push((
            origin,
            Object::Controller(Box::new(super::workloads::Controller { kind, value })),
        ));
        into.progress.object();
        return Ok(());
    }
    let validation = into.validation;
    let warnings = &mut into.unknown_fields;
    // Required fields are checked where a defaulted zero would change a
    // decision without a word (groups, classes, budgets, nodes' taints,
    // Jobs); pods, the bulk of a dump, are read as the API server stored
    // them.
    let object = match (api_version.as_str(), kind.as_str()) {
        ("v1", "Node") => Object::Node(fields::parse(&origin, value, validation, true, warnings)?),
        ("batch/v1", "Job") => {
            Object::Job(fields::parse(&origin, value, validation, true, warnings)?)
        }
        ("v1", "Pod") => Object::Pod(fields::parse(&origin, value, validation, false, warnings)?),
        ("scheduling.k8s.io/v1beta1", "PodGroup") => {
            Object::PodGroup(fields::parse(&origin, value, validation, true, warnings)?)
        }
        ("scheduling.k8s.io/v1beta1", "Workload") => {
            Object::Workload(fields::parse(&origin, value, validation, true, warnings)?)
        }
        ("scheduling.k8s.io/v1alpha3", "CompositePodGroup") => {
            Object::CompositePodGroup(fields::parse(&origin, value, validation, true, warnings)?)
        }
        ("scheduling.k8s.io/v1", "PriorityClass") => {
            Object::PriorityClass(fields::parse(&origin, value, validation, true, warnings)?)
        }
        ("policy/v1", "PodDisruptionBudget") => {
            Object::PodDisruptionBudget(fields::parse(&origin, value, validation, true, warnings)?)
        }
        (_, "Node" | "Pod" | "PodGroup" | "Workload" | "CompositePodGroup" | "PriorityClass")
            if api_version.starts_with("scheduling.k8s.io/") || api_version == "v1" =>
        {
            bail!(
                "{origin}: field apiVersion: {kind} {api_version} is not supported; wasched reads {}",
                supported_version(&kind)
            )
        }
        _ => {
            // Any other kind, of any group, built in or custom: counted in
            // one summary line; one that looks like a misspelt modelled
            // kind is named.
            if let Some(read) =
                super::workloads::ControllerKind::in_other_version(&api_version, &kind)
            {
                into.warnings.push(format!(
                    "{origin}: {kind} {api_version} is not read, skipped; wasched expands {kind} {}",
                    read.api().0
                ));
            }
            match near_modelled_kind(&api_version, &kind) {
                Some(meant) if meant == kind => into.warnings.push(format!(
                    "{origin}: {kind} {api_version} is not read, skipped; wasched reads {}",
                    supported_version(&kind)
                )),
                Some(meant) => into.warnings.push(format!(
                    "{origin}: kind {kind} ({api_version}) is not one wasched models, skipped \
                     (did you mean {meant}?)"
                )),
                None => {}
            }
            *into
                .skipped
                .entry(format!("{kind} ({api_version})"))
                .or_default() += 1;
            into.progress.object();
            return Ok(());
        }
    };
    into.objects.push((origin, object));
    into.progress.object();
    Ok(())
}

/// A modelled kind that `kind` looks like a misspelling of (one edit away,
/// or the same but for case), in a group modelled kinds come from.
fn near_modelled_kind(api_version: &str, kind: &str) -> Option<&'static str> {
    const MODELLED: &[&str] = &[
        "Node",
        "Pod",
        "PodGroup",
        "Workload",
        "CompositePodGroup",
        "PriorityClass",
        "PodDisruptionBudget",
        "Job",
    ];
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let core =
        group.is_empty() || group.ends_with(".k8s.io") || group == "batch" || group == "policy";
    if !core {
        return None;
    }
    MODELLED
        .iter()
        .copied()
        .find(|m| m.eq_ignore_ascii_case(kind) || one_edit_apart(m, kind))
}

/// Whether `a` becomes `b` by inserting, removing or replacing one letter.
fn one_edit_apart(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    if long.len() - short.len() > 1 || a == b {
        return false;
    }
    let prefix = short
        .iter()
        .zip(long.iter())
        .take_while(|(x, y)| x == y)
        .count();
    if short.len() == long.len() {
        short[prefix + 1..] == long[prefix + 1..]
    } else {
        short[prefix..] == long[prefix + 1..]
    }
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
        "PodDisruptionBudget" => "policy/v1",
        "Job" => "batch/v1",
        _ => "scheduling.k8s.io/v1",
    }
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
        // Any kind, of any group, that wasched does not model is skipped.
        let m = load(
            "apiVersion: v1\nkind: Gizmo\nmetadata: {name: g}\n---\n\
                      apiVersion: metrics.k8s.io/v1beta1\nkind: NodeMetrics\nmetadata: {name: n}\n",
        )
        .unwrap();
        assert_eq!(
            m.skipped_warning().unwrap(),
            "skipped 2 object(s) of kinds wasched does not model: 1 Gizmo (v1), 1 NodeMetrics (metrics.k8s.io/v1beta1)"
        );
        assert!(m.warnings.is_empty());
        let m = load("apiVersion: v1\nkind: pod\nmetadata: {name: g}\n").unwrap();
        assert_eq!(
            m.warnings,
            [
                "snap.yaml: pod g: kind pod (v1) is not one wasched models, skipped (did you mean Pod?)"
            ]
        );
        let err = load("just a string").unwrap_err().to_string();
        assert!(err.contains("expected a Kubernetes object"), "{err}");
        let err = load("a: [1, 2\n").unwrap_err().to_string();
        assert!(
            err.starts_with("snap.yaml: document 1: not valid YAML"),
            "{err}"
        );
        let err =
            load("apiVersion: scheduling.k8s.io/v1alpha9\nkind: PodGroup\nmetadata: {name: g}\n")
                .unwrap_err()
                .to_string();
        assert!(
            err.contains("is not supported; wasched reads scheduling.k8s.io/v1beta1"),
            "{err}"
        );
    }
}
