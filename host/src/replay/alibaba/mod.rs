//! Alibaba's published GPU-cluster traces, read as a replay's trace and
//! cluster, from <https://github.com/alibaba/clusterdata>. The repository
//! ships no copy of the data (it is published for research and study); the
//! book's replay page says where to get it, which paper to cite and how
//! each column maps.
//!
//! - [`spot_gpu`]: `cluster-trace-v2026-spot-gpu` (Duan et al., ASPLOS
//!   '26): gangs of HP and Spot jobs.
//! - [`openb`]: `cluster-trace-gpu-v2023` (Weng et al., USENIX ATC '23):
//!   single pods, many sharing a GPU.
//!
//! Each file is known by its header. A row that cannot be mapped is not
//! replayed: it is counted, and the first few are named with their file,
//! line, column and why ([`Skipped`]).

pub mod openb;
pub mod spot_gpu;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{Result, bail};

use super::trace::{Job, field_starts};

/// How a public trace's GPU requests become Kubernetes requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum GpuShare {
    /// A share of a GPU asks for a whole `nvidia.com/gpu` (Kubernetes
    /// cannot split one): shared-GPU tasks hold a GPU each.
    #[default]
    Whole,
    /// Every GPU request is counted in thousandths of a GPU on the extended
    /// resource [`GPU_MILLI_RESOURCE`](super::trace::GPU_MILLI_RESOURCE), which nodes offer 1000 of per
    /// GPU (as a GPU-sharing device plugin does): shares pack onto a GPU.
    Milli,
}

/// How the rows of a public trace are mapped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mapping {
    /// GPU requests.
    pub gpu_share: GpuShare,
}

/// The jobs of a public trace's task or job list, if `text` is one (known
/// by its header), and the rows skipped.
pub fn jobs(file: &str, text: &str, mapping: Mapping) -> Option<Result<(Vec<Job>, Skipped)>> {
    if spot_gpu::is_jobs(text) {
        Some(spot_gpu::jobs(file, text))
    } else if openb::is_pods(text) {
        Some(openb::jobs(file, text, mapping))
    } else {
        None
    }
}

/// The starting cluster of a public trace's node list as manifests, and
/// the rows skipped.
pub fn cluster(file: &str, text: &str, mapping: Mapping) -> Result<(String, Skipped)> {
    if spot_gpu::is_nodes(text) {
        spot_gpu::cluster(file, text)
    } else if openb::is_nodes(text) {
        openb::cluster(file, text, mapping)
    } else {
        bail!(
            "{file}: not a node list this version reads: node_info_df.csv of cluster-trace-v2026-spot-gpu ({}) or openb_node_list_*.csv of cluster-trace-gpu-v2023 ({})",
            spot_gpu::NODE_COLUMNS.join(", "),
            openb::NODE_COLUMNS.join(", ")
        )
    }
}

/// Whether `value` is a valid label value (at most 63 characters,
/// alphanumerics, `-`, `_` and `.`, starting and ending alphanumeric).
pub(super) fn is_label_value(value: &str) -> bool {
    value.len() <= 63
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && value
            .chars()
            .next()
            .is_none_or(|c| c.is_ascii_alphanumeric())
        && value
            .chars()
            .last()
            .is_none_or(|c| c.is_ascii_alphanumeric())
}

/// How many skipped rows are named; the rest are only counted.
pub const NAMED: usize = 5;

/// Rows that could not be mapped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    /// How many.
    pub rows: u64,
    /// The first [`NAMED`], each `FILE:LINE:COLUMN: why`.
    pub first: Vec<String>,
}

impl Skipped {
    pub(super) fn add(&mut self, why: String) {
        self.rows += 1;
        if self.first.len() < NAMED {
            self.first.push(why);
        }
    }

    /// One line saying what was skipped in `file`, if anything was.
    pub fn note(&self, file: &str) -> Option<String> {
        if self.rows == 0 {
            return None;
        }
        let mut note = format!(
            "{file}: {} row(s) not mapped, not replayed: {}",
            self.rows,
            self.first.join("; ")
        );
        if self.rows > self.first.len() as u64 {
            let _ = write!(note, "; and {} more", self.rows - self.first.len() as u64);
        }
        Some(note)
    }
}

/// Whether the first line names exactly `columns`, in any order.
pub(super) fn header_is(text: &str, columns: &[&str]) -> bool {
    let Some(first) = text.lines().next() else {
        return false;
    };
    let mut names: Vec<&str> = first
        .trim_start_matches('\u{feff}')
        .split(',')
        .map(str::trim)
        .collect();
    names.sort_unstable();
    let mut wanted = columns.to_vec();
    wanted.sort_unstable();
    names == wanted
}

/// One data row: its line, its cells by column name, and each cell's
/// column on the line.
pub(super) struct Record<'a> {
    pub(super) line: usize,
    cells: BTreeMap<&'a str, String>,
    pub(super) columns: BTreeMap<&'a str, usize>,
}

impl Record<'_> {
    pub(super) fn cell(&self, name: &str) -> &str {
        self.cells.get(name).map_or("", String::as_str)
    }

    pub(super) fn at(&self, file: &str, name: &str) -> String {
        format!(
            "{file}:{}:{}",
            self.line,
            self.columns.get(name).copied().unwrap_or(1)
        )
    }

    /// The job of trace `row` (the trace format's JSON keys), checked as a
    /// row of the trace format is; `sources` names the column each field
    /// was read from, so that a message points at it.
    pub(super) fn job(
        &self,
        file: &str,
        sources: &[(&'static str, &str)],
        row: serde_json::Value,
    ) -> Result<Job, String> {
        let columns = sources
            .iter()
            .map(|&(field, column)| (field, self.columns.get(column).copied().unwrap_or(1)))
            .collect();
        super::trace::job_of_cells(file, self.line, columns, row).map_err(|e| format!("{e:#}"))
    }

    /// A whole number of `name`, or why not.
    pub(super) fn number(&self, file: &str, name: &str) -> Result<u64, String> {
        let cell = self.cell(name);
        // Published as integers; a pandas export may write `4.0`.
        let trimmed = cell.strip_suffix(".0").unwrap_or(cell);
        trimmed.parse().map_err(|_| {
            format!(
                "{}: {name}: {cell:?} is not a whole number ≥ 0",
                self.at(file, name)
            )
        })
    }
}

/// Reads the rows of a CSV file whose header names `columns`; a row of
/// another width is skipped.
pub(super) fn records<'a>(
    file: &str,
    text: &'a str,
    columns: &[&'a str],
    skipped: &mut Skipped,
) -> Result<Vec<Record<'a>>> {
    let lines: Vec<&str> = text.split('\n').collect();
    let header: Vec<&str> = lines
        .first()
        .map(|l| l.trim_start_matches('\u{feff}').trim_end_matches('\r'))
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .collect();
    for name in columns {
        if !header.contains(name) {
            bail!(
                "{file}:1:1: the header lacks column {name:?} (it names {})",
                header.join(", ")
            );
        }
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut out = Vec::new();
    for record in reader.records() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(1, |p| p.line());
                skipped.add(format!("{file}:{line}:1: not a CSV row: {e}"));
                continue;
            }
        };
        let line = record
            .position()
            .expect("read records have positions")
            .line() as usize;
        if record.len() != header.len() {
            skipped.add(format!(
                "{file}:{line}:1: {} cells, the header names {}",
                record.len(),
                header.len()
            ));
            continue;
        }
        let starts = field_starts(lines.get(line.saturating_sub(1)).copied().unwrap_or(""));
        let mut cells = BTreeMap::new();
        let mut positions = BTreeMap::new();
        for (i, &name) in header.iter().enumerate() {
            if let Some(&known) = columns.iter().find(|c| **c == name) {
                cells.insert(known, record[i].trim().to_string());
                positions.insert(known, starts.get(i).copied().unwrap_or(1));
            }
        }
        out.push(Record {
            line,
            cells,
            columns: positions,
        });
    }
    Ok(out)
}
