//! `wasched replay`: a workload trace through the scheduling cycle in
//! virtual time; one row per job as it ends, then the aggregates.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use wasched::replay::alibaba::{GpuShare, Mapping};
use wasched::replay::report::{self, JobRow, Sink, Summary};
use wasched::replay::{self, Inputs, Options, Progress, QueueConfig};

use crate::args::{Format, ReadArgs, use_threads};

/// The arguments of `wasched replay`.
#[derive(clap::Args)]
pub struct Args {
    /// The cluster: a manifest file or directory (nodes, running pods,
    /// PriorityClasses, …), as `simulate` reads; `default` for the
    /// bundled default snapshot. With `--cluster-from`, the first trace.
    cluster: PathBuf,
    /// Trace files: JSON lines, CSV (`.csv`), or `batch/v1` Jobs and pods
    /// with their PodGroups (`.yaml`, `.yml`), in the trace format
    /// (docs/src/guides/replay.md); or a task list of Alibaba's public GPU
    /// traces (spot-GPU `job_info_df.csv`, openb `openb_pod_list_*.csv`).
    #[arg(required_unless_present = "cluster_from")]
    traces: Vec<PathBuf>,
    /// Start from the nodes of a public trace instead of a CLUSTER:
    /// `node_info_df.csv` of Alibaba's cluster-trace-v2026-spot-gpu (with
    /// its two PriorityClasses, `alibaba-hp` and `alibaba-spot`), or
    /// `openb_node_list_*.csv` of cluster-trace-gpu-v2023.
    #[arg(long, value_name = "FILE")]
    cluster_from: Option<PathBuf>,
    /// How a public trace's share of a GPU is asked for: `whole` (a whole
    /// `nvidia.com/gpu`) or `milli` (thousandths on
    /// `alibabacloud.com/gpu-milli`, which `--cluster-from` nodes offer
    /// 1000 of per GPU).
    #[arg(long, value_enum, default_value_t = GpuShare::Whole)]
    gpu_share: GpuShare,
    /// Load every `*.wasm` plugin component in this directory instead of
    /// the bundled plugins.
    #[arg(long, value_name = "DIR")]
    plugins: Option<PathBuf>,
    /// Plugin and queue configuration: a KubeSchedulerConfiguration
    /// (`podInitialBackoffSeconds`, `podMaxBackoffSeconds` and the
    /// plugins, as `simulate --config`).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Stop at this virtual time (seconds, or a duration like 12h);
    /// jobs not done by then are reported unfinished.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    until: Option<Duration>,
    /// kube-scheduler feature gates that change the queue:
    /// `SchedulerPopFromBackoffQ=false` (on by default).
    #[arg(long, value_name = "GATE=BOOL,...", value_delimiter = ',', value_parser = parse_gate)]
    feature_gates: Vec<(String, bool)>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Table)]
    output: Format,
    #[command(flatten)]
    read: ReadArgs,
    /// Worker threads for reading manifests and node checks (default: the
    /// machine's cores). Decisions never depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

fn parse_time(text: &str) -> Result<Duration, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Ok(Duration::from_secs_f64(s)),
        Ok(_) => Err(format!("{text:?} is not a time ≥ 0")),
        Err(_) => replay::trace::go_duration(text),
    }
}

fn parse_gate(text: &str) -> Result<(String, bool), String> {
    let (gate, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected GATE=true|false, got {text:?}"))?;
    if gate != "SchedulerPopFromBackoffQ" {
        return Err(format!(
            "{gate}: the only gate the replay's queue reads is SchedulerPopFromBackoffQ"
        ));
    }
    let value = value
        .parse()
        .map_err(|_| format!("{gate}: {value:?} is not true or false"))?;
    Ok((gate.to_string(), value))
}

/// Runs `replay`.
pub fn run(args: Args) -> Result<ExitCode> {
    use_threads(args.threads)?;
    let config = wasched::PluginConfig::read_noting(args.config.as_deref(), true)?;
    let mut queue = QueueConfig::default();
    if let Some(backoff) = config.backoff() {
        queue.backoff = backoff;
    }
    for (_, on) in &args.feature_gates {
        queue.pop_from_backoff = *on;
    }
    let mut traces = args.traces;
    let cluster = if args.cluster_from.is_some() {
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
    let inputs = Inputs {
        cluster,
        traces,
        cluster_from: args.cluster_from,
        mapping: Mapping {
            gpu_share: args.gpu_share,
        },
        read: args.read.options(),
    };
    let runtime = wasched::Runtime::new()?;
    let mut plugins = wasched::load_plugins(&runtime, args.plugins.as_deref(), &config)?;
    let options = Options {
        until: args.until,
        queue,
        resolution: None,
        check_invariants: false,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut sink = Rows {
        out: &mut out,
        format: args.output,
        written: 0,
        started: false,
    };
    let mut bar = Bar::on_terminal();
    let summary = replay::replay_files(&inputs, &mut plugins, &options, &mut sink, &mut |p| {
        bar.show(p)
    })?;
    bar.clear();
    for note in &summary.notes {
        eprintln!("note: {note}");
    }
    sink.finish(&summary)?;
    out.flush().context("cannot write the output")?;
    Ok(ExitCode::SUCCESS)
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
struct Bar {
    enabled: bool,
    started: std::time::Instant,
}

impl Bar {
    fn on_terminal() -> Self {
        Self {
            enabled: std::io::stderr().is_terminal(),
            started: std::time::Instant::now(),
        }
    }

    fn show(&mut self, progress: Progress) {
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

    fn clear(&mut self) {
        if self.enabled {
            eprint!("\r\x1b[K");
        }
    }
}
