//! `wasched replay`: a workload trace through the scheduling cycle in
//! virtual time; one row per job as it ends, then the aggregates.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use wasched::replay::report::{self, JobRow, Sink, Summary};
use wasched::replay::{self, Progress};

use crate::args::{Format, ReadArgs, TraceArgs, use_threads};

/// The arguments of `wasched replay`.
#[derive(clap::Args)]
pub struct Args {
    /// The cluster: a manifest file or directory (nodes, running pods,
    /// PriorityClasses, …), as `simulate` reads; `default` for the
    /// bundled default snapshot. With `--cluster-from`, the first trace.
    cluster: PathBuf,
    /// Trace files: JSON lines, CSV (`.csv`), or manifests (`.yaml`,
    /// `.yml`: `batch/v1` Jobs, pods with their PodGroups, and the workload
    /// objects `simulate` expands — JobSet, LeaderWorkerSet, RayJob,
    /// PyTorchJob, Volcano Job, … — each annotated
    /// `wasched.io/submit-at`), in the trace format
    /// (docs/src/guides/replay.md); or a task list of Alibaba's public GPU
    /// traces (spot-GPU `job_info_df.csv`, openb `openb_pod_list_*.csv`).
    #[arg(required_unless_present = "cluster_from")]
    traces: Vec<PathBuf>,
    /// Load every `*.wasm` plugin component in this directory instead of
    /// the bundled plugins.
    #[arg(long, value_name = "DIR")]
    plugins: Option<PathBuf>,
    /// Plugin and queue configuration: a KubeSchedulerConfiguration
    /// (`podInitialBackoffSeconds`, `podMaxBackoffSeconds` and the
    /// plugins, as `simulate --config`).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    over_time: TraceArgs,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Table)]
    output: Format,
    /// Also draw the replay as a self-contained HTML file: allocated GPUs
    /// and pending jobs over time, the wait per priority class, a
    /// timeline of the largest jobs.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    #[command(flatten)]
    read: ReadArgs,
    /// Worker threads for reading manifests and node checks (default: the
    /// machine's cores). Decisions never depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

/// Runs `replay`.
pub fn run(args: Args) -> Result<ExitCode> {
    use_threads(args.threads)?;
    let config = wasched::PluginConfig::read_noting(args.config.as_deref(), true)?;
    let mut traces = args.traces;
    let cluster = if args.over_time.cluster_from.is_some() {
        // No CLUSTER: the first path is a trace.
        if args.cluster.as_os_str() == "default" || args.cluster.is_dir() {
            anyhow::bail!(
                "{}: with --cluster-from, give only traces (the cluster is the node list)",
                args.cluster.display()
            );
        }
        traces.insert(0, args.cluster);
        Vec::new()
    } else if args.cluster.as_os_str() == "default" {
        Vec::new()
    } else {
        vec![args.cluster]
    };
    let title = title(&traces);
    let label = match (&args.plugins, &args.config) {
        (Some(dir), _) => dir.display().to_string(),
        (None, Some(config)) => config.display().to_string(),
        (None, None) => "bundled".to_string(),
    };
    let inputs = args.over_time.inputs(cluster, traces, args.read.options());
    let runtime = wasched::Runtime::new()?;
    let mut plugins = wasched::load_plugins(&runtime, args.plugins.as_deref(), &config)?;
    let options = args.over_time.options(&config, &[]);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut sink = Rows {
        out: &mut out,
        format: args.output,
        written: 0,
        started: false,
    };
    let mut bar = Bar::on_terminal();
    let mut show = |p| bar.show(p);
    // The pictures keep each job's wait: only when asked for.
    let (summary, pictures) = if args.html.is_some() {
        let mut collector = replay::pictures::Collector::new(&mut sink);
        let summary =
            replay::replay_files(&inputs, &mut plugins, &options, &mut collector, &mut show)?;
        let pictures = collector.finish(&label, &summary);
        (summary, Some(pictures))
    } else {
        let summary = replay::replay_files(&inputs, &mut plugins, &options, &mut sink, &mut show)?;
        (summary, None)
    };
    bar.clear();
    for note in &summary.notes {
        eprintln!("note: {note}");
    }
    sink.finish(&summary)?;
    out.flush().context("cannot write the output")?;
    if let (Some(path), Some(pictures)) = (args.html, pictures) {
        write_pictures(&path, &title, &[pictures])?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The title of a replay's pictures: its traces' file names.
pub fn title(traces: &[PathBuf]) -> String {
    traces
        .iter()
        .map(|t| {
            t.file_name()
                .map_or_else(|| t.display().to_string(), |n| n.to_string_lossy().into())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes the pictures of `runs` to `path`.
pub fn write_pictures(
    path: &std::path::Path,
    title: &str,
    runs: &[replay::pictures::Run],
) -> Result<()> {
    std::fs::write(path, replay::pictures::render(title, runs))
        .with_context(|| format!("{}: cannot write the report", path.display()))
}

/// Rows written as jobs end (nothing before the first, so that an input
/// error leaves stdout empty).
struct Rows<'a, W: Write> {
    out: &'a mut W,
    format: Format,
    written: usize,
    started: bool,
}

/// Widths of the streamed table's columns (a longer cell widens its row).
const WIDTHS: [usize; 10] = [32, 9, 9, 9, 9, 16, 8, 9, 10, 0];

impl<W: Write> Rows<'_, W> {
    fn start(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.started, true) {
            return Ok(());
        }
        match self.format {
            Format::Table => {
                let header: Vec<String> =
                    report::JOB_COLUMNS.iter().map(|c| c.to_string()).collect();
                self.line(&header)
            }
            Format::Json => writeln!(self.out, "{{\"jobs\": [").map_err(Into::into),
            Format::Yaml => writeln!(self.out, "jobs:").map_err(Into::into),
        }
    }

    fn line(&mut self, cells: &[String]) -> Result<()> {
        let mut text = String::new();
        for (cell, width) in cells.iter().zip(WIDTHS) {
            text.push_str(&format!("{cell:<width$}  "));
        }
        writeln!(self.out, "{}", text.trim_end())?;
        Ok(())
    }

    fn finish(&mut self, summary: &Summary) -> Result<()> {
        self.start()?;
        match self.format {
            Format::Table => {
                writeln!(self.out)?;
                write!(self.out, "{}", report::summary_text(summary))?;
            }
            Format::Json => {
                if self.written > 0 {
                    writeln!(self.out)?;
                }
                writeln!(
                    self.out,
                    "], \"summary\": {}}}",
                    serde_json::to_string_pretty(summary)?
                )?;
            }
            Format::Yaml => {
                if self.written == 0 {
                    writeln!(self.out, "  []")?;
                }
                writeln!(self.out, "summary:")?;
                let text = serde_norway::to_string(summary)?;
                for line in text.lines() {
                    writeln!(self.out, "  {line}")?;
                }
            }
        }
        Ok(())
    }
}

impl<W: Write> Sink for Rows<'_, W> {
    fn job(&mut self, row: &JobRow) -> Result<()> {
        self.start()?;
        match self.format {
            Format::Table => self.line(&report::job_cells(row))?,
            Format::Json => {
                let separator = if self.written == 0 { "" } else { ",\n" };
                write!(self.out, "{separator}  {}", serde_json::to_string(row)?)?;
            }
            Format::Yaml => {
                let text = serde_norway::to_string(&[row])?;
                write!(self.out, "{text}")?;
            }
        }
        self.written += 1;
        Ok(())
    }
}

/// Where the replay is, on stderr when it is a terminal.
pub struct Bar {
    enabled: bool,
    started: std::time::Instant,
}

impl Bar {
    /// A bar shown only when stderr is a terminal.
    pub fn on_terminal() -> Self {
        Self {
            enabled: std::io::stderr().is_terminal(),
            started: std::time::Instant::now(),
        }
    }

    /// Shows where a replay is.
    pub fn show(&mut self, progress: Progress) {
        if !self.enabled {
            return;
        }
        let elapsed = self.started.elapsed().as_secs_f64().max(1e-3);
        eprint!(
            "\r\x1b[Kreplay: virtual time {:.0} s, {}/{} jobs ended, {:.0} events/s",
            progress.now.as_secs_f64(),
            progress.ended,
            progress.jobs,
            progress.events as f64 / elapsed
        );
    }

    /// Clears the line.
    pub fn clear(&mut self) {
        if self.enabled {
            eprint!("\r\x1b[K");
        }
    }
}
