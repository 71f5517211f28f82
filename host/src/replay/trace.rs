//! The trace format of `wasched replay`, version 1: one job per JSON line or
//! CSV row (see the book's replay page for the full description).
//!
//! ```text
//! {"format":"wasched.io/trace/v1"}
//! {"name":"train-a","submit":0,"duration":"2h","workers":16,"minCount":16,"gpu":8,"cpu":"64","memory":"512Gi","priorityClass":"training-high","topologyKey":"topology.wasched.io/rack"}
//! {"name":"eval-1","submit":"90s","duration":600,"gpu":1}
//! ```
//!
//! A time is seconds (a JSON number or a CSV number, fractions allowed) or
//! a Go duration (`"1h30m"`, `"2.5s"`, `"250ms"`). Rows may come in any
//! order: jobs are sorted by submit time, then by where they were read. A
//! bad cell is named with its file, line and column; nothing of a bad trace
//! is replayed.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::Value;

use super::alibaba::Mapping;

/// The format this reader reads (the optional first line of a trace).
pub const FORMAT: &str = "wasched.io/trace/v1";

/// The node label `gpuModel` selects on (NVIDIA GPU feature discovery's).
pub const GPU_MODEL_LABEL: &str = "nvidia.com/gpu.product";

/// The extended resource `gpu` asks for.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";
/// Thousandths of a GPU, the extended resource a GPU-sharing device plugin
/// offers (1000 per GPU) and a share of a GPU asks for (the name the openb
/// trace's simulator gives the same quantity).
pub const GPU_MILLI_RESOURCE: &str = "alibabacloud.com/gpu-milli";

/// How a job's pods are grouped for the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// A PodGroup with a gang policy: all-or-nothing from `minCount` pods.
    Gang(u32),
    /// A PodGroup with the basic policy: pods scheduled on their own, in
    /// one queue entity.
    Basic,
    /// No PodGroup: each pod is its own entity (a plain Job).
    None,
}

/// What a preemption takes from a job's PodGroup (`spec.disruptionMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Disruption {
    /// Pods are preempted one by one (`single`, the default).
    #[default]
    Pod,
    /// The whole group goes at once (`all`).
    All,
}

/// One job of a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// Where it was read: `FILE:LINE`.
    pub origin: String,
    /// `metadata.namespace` of its objects.
    pub namespace: String,
    /// Its name; its pods are `NAME-0` … and its PodGroup is `NAME`.
    pub name: String,
    /// When it arrives, from the trace's start.
    pub submit: Duration,
    /// How long it runs once the pods it needs run.
    pub duration: Duration,
    /// Pods.
    pub workers: u32,
    /// How its pods are grouped.
    pub grouping: Grouping,
    /// Requests of each pod: resource name → quantity.
    pub requests: BTreeMap<String, String>,
    /// `spec.nodeSelector` of each pod.
    pub node_selector: BTreeMap<String, String>,
    /// Required node affinity of each pod: a node's label KEY must have
    /// one of the VALUES (`In`), for every key.
    pub node_affinity: BTreeMap<String, Vec<String>>,
    /// `priorityClassName` of its pods and PodGroup.
    pub priority_class: Option<String>,
    /// Where the priority class was read: `FILE:LINE:COLUMN`.
    pub priority_class_at: String,
    /// Its PodGroup's topology constraint key.
    pub topology_key: Option<String>,
    /// What a preemption takes of its PodGroup.
    pub disruption: Disruption,
    /// Work is saved this often; a preempted job resumes from its last
    /// save. `None`: it restarts from zero.
    pub checkpoint: Option<Duration>,
    /// The Job's `backoffLimit`: counted pod failures tolerated.
    pub backoff_limit: u32,
    /// The Job's `podFailurePolicy` ignores `DisruptionTarget`: a
    /// preempted pod is not counted as a failure.
    pub ignore_disruptions: bool,
    /// Each pod's `terminationGracePeriodSeconds`.
    pub grace_period: Duration,
    /// Workers whose pods ask for other resources or nodes than the job's
    /// fields say (a driver beside its workers, a Ray head, parameter
    /// servers; read from a trace written as manifests), in worker order:
    /// the first `roles[0].workers` workers are `roles[0]`'s, and so on;
    /// the rest are as the job's fields say. Empty when all are alike.
    pub roles: Vec<Role>,
}

/// Workers of a job whose pods differ from the job's own (see
/// [`Job::roles`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Role {
    /// How many of the job's workers.
    pub workers: u32,
    /// Requests of each pod: resource name → quantity.
    pub requests: BTreeMap<String, String>,
    /// `spec.nodeSelector` of each pod.
    pub node_selector: BTreeMap<String, String>,
    /// Required node affinity of each pod, as [`Job::node_affinity`].
    pub node_affinity: BTreeMap<String, Vec<String>>,
    /// Each pod's `terminationGracePeriodSeconds`.
    pub grace_period: Duration,
}

impl Role {
    /// GPUs each pod asks for: whole GPUs, and thousandths on
    /// [`GPU_MILLI_RESOURCE`].
    pub fn gpus_per_pod(&self) -> f64 {
        gpus_in(&self.requests)
    }

    /// What each of its pods asks for.
    pub fn shape(&self) -> PodShape<'_> {
        PodShape {
            requests: &self.requests,
            node_selector: &self.node_selector,
            node_affinity: &self.node_affinity,
            grace_period: self.grace_period,
        }
    }
}

/// What one pod of a job asks for: its job's fields, or its role's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PodShape<'a> {
    /// Requests: resource name → quantity.
    pub requests: &'a BTreeMap<String, String>,
    /// `spec.nodeSelector`.
    pub node_selector: &'a BTreeMap<String, String>,
    /// Required node affinity, as [`Job::node_affinity`].
    pub node_affinity: &'a BTreeMap<String, Vec<String>>,
    /// `terminationGracePeriodSeconds`.
    pub grace_period: Duration,
}

/// GPUs in `requests`: whole GPUs, and thousandths on
/// [`GPU_MILLI_RESOURCE`].
fn gpus_in(requests: &BTreeMap<String, String>) -> f64 {
    let count = |resource: &str| {
        requests
            .get(resource)
            .and_then(|q| q.parse::<u64>().ok())
            .unwrap_or(0) as f64
    };
    count(GPU_RESOURCE) + count(GPU_MILLI_RESOURCE) / 1000.0
}

impl Job {
    /// Pods that must run for the job to make progress: `minCount` of a
    /// gang; one for a pod of a basic group or a lone pod (each runs on
    /// its own).
    pub fn needed(&self) -> u32 {
        match self.grouping {
            Grouping::Gang(min) => min,
            Grouping::Basic | Grouping::None => 1,
        }
    }

    /// GPUs each pod of the job's own fields asks for (see
    /// [`Role::gpus_per_pod`]).
    pub fn gpus_per_pod(&self) -> f64 {
        gpus_in(&self.requests)
    }

    /// What the pods of the job's own fields ask for.
    pub fn own_shape(&self) -> PodShape<'_> {
        PodShape {
            requests: &self.requests,
            node_selector: &self.node_selector,
            node_affinity: &self.node_affinity,
            grace_period: self.grace_period,
        }
    }

    /// Each kind of pod the job has, in worker order, with how many of
    /// its workers: [`Job::roles`], then the job's own fields (left out
    /// when roles cover every worker).
    pub fn shapes(&self) -> Vec<(u32, PodShape<'_>)> {
        let mut shapes: Vec<_> = self.roles.iter().map(|r| (r.workers, r.shape())).collect();
        let own = self
            .workers
            .saturating_sub(self.roles.iter().map(|r| r.workers).sum());
        if own > 0 || shapes.is_empty() {
            shapes.push((own, self.own_shape()));
        }
        shapes
    }

    /// What the pod of `worker` asks for.
    pub fn shape(&self, worker: u32) -> PodShape<'_> {
        let mut first = 0;
        for role in &self.roles {
            first += role.workers;
            if worker < first {
                return role.shape();
            }
        }
        self.own_shape()
    }

    /// GPUs the pod of `worker` asks for.
    pub fn gpus_of(&self, worker: u32) -> f64 {
        gpus_in(self.shape(worker).requests)
    }

    /// GPUs all the job's pods ask for.
    pub fn gpus(&self) -> f64 {
        self.shapes()
            .iter()
            .map(|(workers, shape)| f64::from(*workers) * gpus_in(shape.requests))
            .sum()
    }
}

/// A row as written: every field optional so that what is missing is
/// named, unknown fields refused.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Row {
    name: Option<String>,
    namespace: Option<String>,
    submit: Option<Value>,
    duration: Option<Value>,
    workers: Option<Value>,
    min_count: Option<Value>,
    group: Option<String>,
    cpu: Option<Value>,
    memory: Option<Value>,
    gpu: Option<Value>,
    requests: Option<BTreeMap<String, Value>>,
    gpu_model: Option<String>,
    node_selector: Option<BTreeMap<String, String>>,
    priority_class: Option<String>,
    topology_key: Option<String>,
    disruption: Option<String>,
    checkpoint: Option<Value>,
    backoff_limit: Option<Value>,
    ignore_disruptions: Option<bool>,
    grace_period: Option<Value>,
}

/// The CSV columns, as the header names them (the JSON keys).
const COLUMNS: [&str; 20] = [
    "name",
    "namespace",
    "submit",
    "duration",
    "workers",
    "minCount",
    "group",
    "cpu",
    "memory",
    "gpu",
    "requests",
    "gpuModel",
    "nodeSelector",
    "priorityClass",
    "topologyKey",
    "disruption",
    "checkpoint",
    "backoffLimit",
    "ignoreDisruptions",
    "gracePeriod",
];

/// Where a cell is: file, line, and the column of each field (1-based,
/// in characters); or, for a job read from a manifest, the object and the
/// path of each field in it.
struct Place<'a> {
    file: &'a str,
    line: usize,
    columns: BTreeMap<&'static str, usize>,
    /// Column of the row's start (for what is missing).
    start: usize,
    /// The manifest object (`FILE: Kind ns/name`) and each field's path in
    /// it, when the job was not read from a line.
    object: Option<(&'a str, &'a [(&'static str, &'static str)])>,
}

impl Place<'_> {
    /// Where `field` of job `what` is, for a message: `FILE:LINE:COLUMN:
    /// job ns/name: field F`, or `FILE: Kind ns/name: field PATH`.
    fn describe(&self, field: &str, what: &str) -> String {
        match self.object {
            Some((object, paths)) => {
                let path = paths
                    .iter()
                    .find(|(f, _)| *f == field)
                    .map_or(field, |(_, p)| *p);
                format!("{object}: field {path}")
            }
            None => format!("{}: {what}: field {field}", self.at(field)),
        }
    }

    fn at(&self, field: &str) -> String {
        let column = self
            .columns
            .iter()
            .find(|(k, _)| **k == field)
            .map_or(self.start, |(_, c)| *c);
        format!("{}:{}:{column}", self.file, self.line)
    }
}

/// A job from the fields of a manifest object (`origin`: `FILE: Kind
/// ns/name`), given as a trace row (the JSON keys), checked as a row is;
/// `paths` names where each field was read in the object, for messages.
pub(super) fn job_of_object(
    origin: &str,
    paths: &[(&'static str, &'static str)],
    row: Value,
) -> Result<Job> {
    let row: Row = serde_json::from_value(row).with_context(|| origin.to_string())?;
    let place = Place {
        file: origin,
        line: 0,
        columns: BTreeMap::new(),
        start: 0,
        object: Some((origin, paths)),
    };
    let mut job = job(&place, row)?;
    job.origin = origin.to_string();
    Ok(job)
}

/// A job from a row another trace schema was mapped to (the JSON keys),
/// checked as a row is; `columns` says where each field was read on line
/// `line` of `file`, for messages.
pub(super) fn job_of_cells(
    file: &str,
    line: usize,
    columns: BTreeMap<&'static str, usize>,
    row: Value,
) -> Result<Job> {
    let row: Row =
        serde_json::from_value(row).map_err(|e| anyhow::anyhow!("{file}:{line}:1: {e}"))?;
    let place = Place {
        file,
        line,
        columns,
        start: 1,
        object: None,
    };
    job(&place, row)
}

/// Reads trace files (JSON lines, or CSV by the `.csv` extension), jobs in
/// submit order; a row of a public trace that cannot be mapped is an error
/// (see [`read_noting`]), what manifests were read as is left unsaid.
pub fn read(files: &[impl AsRef<Path>]) -> Result<Vec<Job>> {
    read_noting(files, &Reading::default(), &mut Vec::new())
}

/// How trace files are read, where the files do not say.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    /// How the rows of a public trace are mapped.
    pub mapping: Mapping,
    /// How the workload controllers of a trace written as manifests are
    /// configured (`--gang-scheduling-for`).
    pub controllers: crate::manifest::workloads::ControllerOptions,
    /// Rows of a public trace that cannot be mapped are skipped (and
    /// said in a note) rather than an error.
    pub skip_unmapped: bool,
}

/// [`read`], but read as `reading` says; each file's skipped rows of a
/// public trace ([`super::alibaba`]) are one line of `notes`, and so is
/// each conversion or expansion of manifests.
pub fn read_noting(
    files: &[impl AsRef<Path>],
    reading: &Reading,
    notes: &mut Vec<String>,
) -> Result<Vec<Job>> {
    let mut jobs = Vec::new();
    for file in files {
        let file = file.as_ref();
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("{}: cannot read trace", file.display()))?;
        jobs.extend(parse_noting(
            &file.display().to_string(),
            &text,
            reading,
            notes,
        )?);
    }
    finish(jobs)
}

/// Reads one trace's text; `name` decides the format (`.csv`: CSV, or
/// one of Alibaba's public traces by its header, [`super::alibaba`]; `.yaml`, `.yml`:
/// manifests, see [`super::manifests`]). A row of a public trace that
/// cannot be mapped is an error (see [`parse_noting`]).
pub fn parse(name: &str, text: &str) -> Result<Vec<Job>> {
    parse_noting(name, text, &Reading::default(), &mut Vec::new())
}

/// [`parse`], but read as `reading` says: the rows of a public trace that
/// cannot be mapped are skipped (with `skip_unmapped`) and said in one
/// line of `notes`, and so is each conversion or expansion of manifests.
pub fn parse_noting(
    name: &str,
    text: &str,
    reading: &Reading,
    notes: &mut Vec<String>,
) -> Result<Vec<Job>> {
    let public = name
        .ends_with(".csv")
        .then(|| super::alibaba::jobs(name, text, reading.mapping))
        .flatten();
    if let Some(read) = public {
        let (jobs, skipped) = read?;
        match skipped.note(name) {
            Some(note) if !reading.skip_unmapped => bail!("{note}"),
            note => notes.extend(note),
        }
        Ok(jobs)
    } else if name.ends_with(".csv") {
        parse_csv(name, text)
    } else if name.ends_with(".yaml") || name.ends_with(".yml") {
        super::manifests::read(name, text, &reading.controllers, notes)
    } else {
        parse_jsonl(name, text)
    }
}

/// Sorts jobs into submit order and refuses a name used twice.
pub fn finish(mut jobs: Vec<Job>) -> Result<Vec<Job>> {
    jobs.sort_by_key(|j| j.submit);
    let mut seen: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for job in &jobs {
        if let Some(first) = seen.insert((&job.namespace, &job.name), &job.origin) {
            bail!(
                "{}: job {}/{}: field name: already used at {first}",
                job.origin,
                job.namespace,
                job.name
            );
        }
    }
    Ok(jobs)
}

fn check_format(place: &str, format: &str) -> Result<()> {
    if format != FORMAT {
        bail!(
            "{place}: field format: {format:?} is not a trace format this version reads ({FORMAT})"
        );
    }
    Ok(())
}

fn parse_jsonl(file: &str, text: &str) -> Result<Vec<Job>> {
    let mut jobs = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(trimmed).map_err(|e| {
            let column = e.column() + (line.len() - line.trim_start().len());
            anyhow::anyhow!("{file}:{number}:{column}: not a JSON object: {e}")
        })?;
        if let Some(format) = value.get("format").filter(|_| jobs.is_empty()) {
            let place = format!("{file}:{number}:{}", json_column(line, "format"));
            let Some(format) = format.as_str() else {
                bail!("{place}: field format: expected a string");
            };
            check_format(&place, format)?;
            if value.as_object().is_some_and(|o| o.len() > 1) {
                bail!("{place}: the format line holds only \"format\"");
            }
            continue;
        }
        let row: Row = serde_json::from_value(value).map_err(|e| {
            let message = e.to_string();
            let column = unknown_field(&message)
                .and_then(|f| line.find(&format!("\"{f}\"")))
                .map_or(1 + line.len() - line.trim_start().len(), |byte| {
                    line[..byte].chars().count() + 1
                });
            anyhow::anyhow!("{file}:{number}:{column}: {message}")
        })?;
        let columns = COLUMNS.iter().map(|&c| (c, json_column(line, c))).collect();
        let place = Place {
            file,
            line: number,
            columns,
            start: 1 + line.len() - line.trim_start().len(),
            object: None,
        };
        jobs.push(job(&place, row)?);
    }
    Ok(jobs)
}

/// The field serde names in "unknown field `x`".
fn unknown_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    rest.split('`').next()
}

/// The 1-based column where the value of `"key":` starts on `line` (the
/// line's start if the key is not there).
fn json_column(line: &str, key: &str) -> usize {
    let quoted = format!("\"{key}\"");
    let Some(at) = line.find(&quoted) else {
        return 1;
    };
    let after = &line[at + quoted.len()..];
    let colon = after.find(':').map_or(0, |c| c + 1);
    let value = after[colon..].len() - after[colon..].trim_start().len();
    let byte = at + quoted.len() + colon + value;
    line[..byte].chars().count() + 1
}

fn parse_csv(file: &str, text: &str) -> Result<Vec<Job>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .comment(Some(b'#'))
        .flexible(true)
        .from_reader(text.as_bytes());
    // A `# format: ...` line comes first if at all.
    if let Some(first) = text.lines().find(|l| !l.trim().is_empty())
        && let Some(format) = first.trim().strip_prefix('#')
        && let Some(format) = format.trim().strip_prefix("format:")
    {
        check_format(&format!("{file}:1:1"), format.trim())?;
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let mut header: Option<Vec<&'static str>> = None;
    let mut jobs = Vec::new();
    for record in reader.byte_records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            anyhow::anyhow!("{file}:{line}:1: not a CSV row: {e}")
        })?;
        let position = record.position().expect("read records have positions");
        let number = position.line() as usize;
        let line = lines.get(number - 1).copied().unwrap_or("");
        let starts = field_starts(line);
        let column = |i: usize| starts.get(i).copied().unwrap_or(1);
        let cells: Vec<String> = (0..record.len())
            .map(|i| String::from_utf8_lossy(&record[i]).trim().to_string())
            .collect();
        let Some(names) = &header else {
            let mut names = Vec::new();
            for (i, cell) in cells.iter().enumerate() {
                let Some(&known) = COLUMNS.iter().find(|c| *c == cell) else {
                    bail!(
                        "{file}:{number}:{}: unknown column {cell:?}, expected one of: {}",
                        column(i),
                        COLUMNS.join(", ")
                    );
                };
                if names.contains(&known) {
                    bail!("{file}:{number}:{}: column {cell:?} named twice", column(i));
                }
                names.push(known);
            }
            header = Some(names);
            continue;
        };
        if cells.len() > names.len() {
            bail!(
                "{file}:{number}:{}: {} cells, the header names {} columns",
                column(names.len()),
                cells.len(),
                names.len()
            );
        }
        let mut columns = BTreeMap::new();
        let mut row = serde_json::Map::new();
        for (i, cell) in cells.iter().enumerate() {
            let name = names[i];
            columns.insert(name, column(i));
            if cell.is_empty() {
                continue;
            }
            let value = match name {
                "requests" | "nodeSelector" => pairs(cell).map_err(|e| {
                    anyhow::anyhow!("{file}:{number}:{}: field {name}: {e}", column(i))
                })?,
                "ignoreDisruptions" => match cell.as_str() {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    other => bail!(
                        "{file}:{number}:{}: field {name}: {other:?} is not true or false",
                        column(i)
                    ),
                },
                _ => Value::String(cell.clone()),
            };
            row.insert(name.to_string(), value);
        }
        jobs.push(job_of_cells(file, number, columns, Value::Object(row))?);
    }
    Ok(jobs)
}

/// The 1-based column where each comma-separated field of a CSV line
/// starts (quotes respected).
pub(super) fn field_starts(line: &str) -> Vec<usize> {
    let mut starts = vec![1];
    let mut quoted = false;
    for (i, c) in line.chars().enumerate() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => starts.push(i + 2),
            _ => {}
        }
    }
    starts
}

/// `k=v;k2=v2` as a JSON object of strings.
fn pairs(cell: &str) -> Result<Value, String> {
    let mut map = serde_json::Map::new();
    for pair in cell.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((k, v)) = pair.split_once('=') else {
            return Err(format!("{pair:?} is not key=value"));
        };
        map.insert(k.trim().to_string(), Value::String(v.trim().to_string()));
    }
    Ok(Value::Object(map))
}

/// Reads one row into a job, naming the cell of what is wrong.
fn job(place: &Place, row: Row) -> Result<Job> {
    let name = row.name.ok_or_else(|| {
        let at = match place.object {
            Some(_) => place.describe("name", ""),
            None => format!("{}: field name", place.at("name")),
        };
        anyhow::anyhow!("{at}: required")
    })?;
    let namespace = row.namespace.unwrap_or_else(|| "default".into());
    let what = format!("job {namespace}/{name}");
    let err = |field: &str, message: String| {
        anyhow::anyhow!("{}: {message}", place.describe(field, &what))
    };
    crate::builder::check_dns_label(&what, "namespace", &namespace)
        .map_err(|_| err("namespace", format!("{namespace:?} is not a DNS label")))?;
    // A DNS label: the pods' `batch.kubernetes.io/job-name` label value.
    crate::builder::check_dns_label(&what, "name", &name)
        .map_err(|_| err("name", format!("{name:?} is not a DNS label")))?;
    let time = |field: &str, value: Option<Value>| -> Result<Option<Duration>> {
        value
            .map(|v| time_value(&v).map_err(|e| err(field, e)))
            .transpose()
    };
    let count = |field: &str, value: Option<Value>| -> Result<Option<u32>> {
        value
            .map(|v| count_value(&v).map_err(|e| err(field, e)))
            .transpose()
    };
    let submit = time("submit", row.submit)?.ok_or_else(|| err("submit", "required".into()))?;
    let duration =
        time("duration", row.duration)?.ok_or_else(|| err("duration", "required".into()))?;
    if duration.is_zero() {
        return Err(err("duration", "must be positive".into()));
    }
    let workers = count("workers", row.workers)?.unwrap_or(1);
    if workers == 0 {
        return Err(err("workers", "must be at least 1".into()));
    }
    let min_count = count("minCount", row.min_count)?;
    let grouping = match (row.group.as_deref(), min_count) {
        (None | Some("gang"), Some(min)) => {
            if min == 0 || min > workers {
                return Err(err(
                    "minCount",
                    format!("{min} is not between 1 and workers ({workers})"),
                ));
            }
            Grouping::Gang(min)
        }
        (Some("gang"), None) => Grouping::Gang(workers),
        (Some(other), Some(_)) => {
            return Err(err(
                "minCount",
                format!("only a gang has a minCount, and group is {other:?}"),
            ));
        }
        (Some("basic"), None) => Grouping::Basic,
        (None | Some("none"), None) => Grouping::None,
        (Some(other), None) => {
            return Err(err(
                "group",
                format!("{other:?} is not gang, basic or none"),
            ));
        }
    };
    let mut requests = BTreeMap::new();
    for (field, resource, value) in [
        ("cpu", "cpu", row.cpu),
        ("memory", "memory", row.memory),
        ("gpu", GPU_RESOURCE, row.gpu),
    ] {
        if let Some(value) = value {
            requests.insert(
                resource.to_string(),
                quantity(&value).map_err(|e| err(field, e))?,
            );
        }
    }
    for (resource, value) in row.requests.unwrap_or_default() {
        let q = quantity(&value).map_err(|e| err("requests", format!("{resource}: {e}")))?;
        if requests.insert(resource.clone(), q).is_some() {
            return Err(err(
                "requests",
                format!("{resource} is also given on its own"),
            ));
        }
    }
    if let Some(gpus) = requests.get(GPU_RESOURCE)
        && gpus.parse::<u64>().is_err()
    {
        return Err(err(
            "gpu",
            format!("{gpus:?} is not a whole number of GPUs"),
        ));
    }
    let mut node_selector = row.node_selector.unwrap_or_default();
    let mut node_affinity = BTreeMap::new();
    if let Some(model) = row.gpu_model {
        // `A|B`: any of the models, as node affinity.
        let models: Vec<String> = model.split('|').map(|m| m.trim().to_string()).collect();
        if models.iter().any(String::is_empty) {
            return Err(err("gpuModel", format!("{model:?} names an empty model")));
        }
        if let [one] = models.as_slice() {
            node_selector.insert(GPU_MODEL_LABEL.into(), one.clone());
        } else {
            node_affinity.insert(GPU_MODEL_LABEL.to_string(), models);
        }
    }
    let topology_key = row.topology_key.filter(|k| !k.is_empty());
    if topology_key.is_some() && grouping == Grouping::None {
        return Err(err(
            "topologyKey",
            "a topology constraint needs a PodGroup: give minCount or group".into(),
        ));
    }
    let disruption = match row.disruption.as_deref() {
        None | Some("pod") | Some("single") => Disruption::Pod,
        Some("all") => Disruption::All,
        Some(other) => return Err(err("disruption", format!("{other:?} is not pod or all"))),
    };
    if disruption == Disruption::All && grouping == Grouping::None {
        return Err(err(
            "disruption",
            "disruption all needs a PodGroup: give minCount or group".into(),
        ));
    }
    let checkpoint = time("checkpoint", row.checkpoint)?;
    if checkpoint.is_some_and(|c| c.is_zero()) {
        return Err(err("checkpoint", "must be positive".into()));
    }
    Ok(Job {
        origin: format!("{}:{}", place.file, place.line),
        namespace,
        name,
        submit,
        duration,
        workers,
        grouping,
        requests,
        node_selector,
        node_affinity,
        priority_class: row.priority_class,
        priority_class_at: match place.object {
            Some(_) => place.describe("priorityClass", &what),
            None => place.at("priorityClass"),
        },
        topology_key,
        disruption,
        checkpoint,
        backoff_limit: count("backoffLimit", row.backoff_limit)?.unwrap_or(6),
        ignore_disruptions: row.ignore_disruptions.unwrap_or(false),
        grace_period: time("gracePeriod", row.grace_period)?.unwrap_or(Duration::from_secs(30)),
        roles: Vec::new(),
    })
}

/// A time: seconds as a number, or a Go duration string. Never negative.
fn time_value(value: &Value) -> Result<Duration, String> {
    match value {
        Value::Number(n) => {
            let seconds = n.as_f64().unwrap_or(f64::NAN);
            seconds_to_duration(seconds).ok_or_else(|| format!("{n} is not a time ≥ 0"))
        }
        Value::String(s) => {
            if let Ok(seconds) = s.trim().parse::<f64>() {
                return seconds_to_duration(seconds)
                    .ok_or_else(|| format!("{s} is not a time ≥ 0"));
            }
            go_duration(s.trim())
        }
        other => Err(format!(
            "{other} is not a time (seconds, or a duration like 1h30m)"
        )),
    }
}

fn seconds_to_duration(seconds: f64) -> Option<Duration> {
    (seconds.is_finite() && (0.0..1e12).contains(&seconds))
        .then(|| Duration::from_millis((seconds * 1000.0).round() as u64))
}

/// A Go duration (`time.ParseDuration`): `1h30m`, `2.5s`, `250ms`; units
/// h, m, s, ms, us, µs, ns. Negative durations are refused.
pub fn go_duration(text: &str) -> Result<Duration, String> {
    let invalid = || format!("{text:?} is not a time (seconds, or a duration like 1h30m)");
    if text.starts_with('-') {
        return Err(format!("{text:?} is negative"));
    }
    let mut rest = text.strip_prefix('+').unwrap_or(text);
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(invalid)?;
        let number: f64 = rest[..number_end].parse().map_err(|_| invalid())?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return Err(invalid()),
        };
        total += number * scale;
        rest = &rest[unit_end..];
    }
    seconds_to_duration(total).ok_or_else(invalid)
}

fn count_value(value: &Value) -> Result<u32, String> {
    let parsed = match value {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    parsed
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| format!("{value} is not a whole number ≥ 0"))
}

/// A resource quantity, checked as the API server would.
fn quantity(value: &Value) -> Result<String, String> {
    let text = match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.trim().to_string(),
        other => return Err(format!("{other} is not a quantity")),
    };
    let parsed =
        crate::manifest::quantity::Quantity::parse(&text).map_err(|e| format!("{text:?}: {e}"))?;
    if parsed.is_negative() {
        return Err(format!("{text:?} is negative"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(name: &str, text: &str) -> Result<Job> {
        let mut jobs = parse(name, text)?;
        assert_eq!(jobs.len(), 1);
        Ok(jobs.remove(0))
    }

    #[test]
    fn a_json_line_and_a_csv_row_read_the_same() {
        let json = one(
            "t.jsonl",
            r#"{"name":"a","submit":"1m30s","duration":600,"workers":4,"minCount":4,"gpu":8,"cpu":"32","gpuModel":"H100","priorityClass":"high","topologyKey":"rack","checkpoint":"10m"}"#,
        )
        .unwrap();
        let csv = one(
            "t.csv",
            "name,submit,duration,workers,minCount,gpu,cpu,gpuModel,priorityClass,topologyKey,checkpoint\na,90,10m,4,4,8,32,H100,high,rack,600\n",
        )
        .unwrap();
        assert_eq!(json.submit, Duration::from_secs(90));
        assert_eq!(json.duration, Duration::from_secs(600));
        assert_eq!(json.grouping, Grouping::Gang(4));
        assert_eq!(json.gpus_per_pod(), 8.0);
        assert_eq!(json.node_selector[GPU_MODEL_LABEL], "H100");
        assert_eq!(json.backoff_limit, 6);
        assert_eq!(json.grace_period, Duration::from_secs(30));
        assert_eq!(json.priority_class_at, "t.jsonl:1:123");
        assert_eq!(csv.priority_class_at, "t.csv:2:24");
        assert_eq!(
            Job {
                origin: csv.origin.clone(),
                priority_class_at: csv.priority_class_at.clone(),
                ..json
            },
            csv
        );
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let err = |name: &str, text: &str| parse(name, text).unwrap_err().to_string();
        assert_eq!(
            err("t.jsonl", "\n{\"name\":\"a\",\"submit\":0,\"duration\":-5}"),
            "t.jsonl:2:35: job default/a: field duration: -5 is not a time ≥ 0"
        );
        assert_eq!(
            err(
                "t.jsonl",
                r#"{"name":"a","submit":0,"duration":1,"gpus":2}"#
            ),
            "t.jsonl:1:37: unknown field `gpus`, expected one of `name`, `namespace`, `submit`, `duration`, `workers`, `minCount`, `group`, `cpu`, `memory`, `gpu`, `requests`, `gpuModel`, `nodeSelector`, `priorityClass`, `topologyKey`, `disruption`, `checkpoint`, `backoffLimit`, `ignoreDisruptions`, `gracePeriod`"
        );
        assert_eq!(
            err("t.csv", "name,submit,duration,gpu\na,0,10,\nb,0,1x5,1\n"),
            "t.csv:3:5: job default/b: field duration: \"1x5\" is not a time (seconds, or a duration like 1h30m)"
        );
        assert_eq!(
            err("t.csv", "name,submit,duraton\n"),
            "t.csv:1:13: unknown column \"duraton\", expected one of: name, namespace, submit, duration, workers, minCount, group, cpu, memory, gpu, requests, gpuModel, nodeSelector, priorityClass, topologyKey, disruption, checkpoint, backoffLimit, ignoreDisruptions, gracePeriod"
        );
        assert!(
            err("t.jsonl", "{\"name\":\"a\",\"submit\":0}").contains("field duration: required")
        );
        assert!(err("t.jsonl", "{\"format\":\"wasched.io/trace/v9\"}").contains("field format"));
        assert!(err("t.jsonl", "{not json").starts_with("t.jsonl:1:2: not a JSON object"));
        assert!(
            err(
                "t.jsonl",
                r#"{"name":"a","submit":0,"duration":1,"workers":2,"minCount":3}"#
            )
            .contains("field minCount: 3 is not between 1 and workers (2)")
        );
    }

    #[test]
    fn rows_are_sorted_and_names_unique() {
        let text = "{\"format\":\"wasched.io/trace/v1\"}\n{\"name\":\"late\",\"submit\":9,\"duration\":1}\n{\"name\":\"early\",\"submit\":\"2s\",\"duration\":1}\n";
        let jobs = finish(parse("t.jsonl", text).unwrap()).unwrap();
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["early", "late"]);
        let twice = "{\"name\":\"a\",\"submit\":1,\"duration\":1}\n{\"name\":\"a\",\"submit\":0,\"duration\":1}\n";
        let err = finish(parse("t.jsonl", twice).unwrap())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "t.jsonl:1: job default/a: field name: already used at t.jsonl:2"
        );
    }

    #[test]
    fn go_durations() {
        assert_eq!(go_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(go_duration("2.5s"), Ok(Duration::from_millis(2500)));
        assert_eq!(go_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(go_duration("-1s").is_err());
        assert!(go_duration("5").is_err());
        assert!(go_duration("5d").is_err());
    }
}
