//! `wasched compare`: one snapshot under two plugin sets or
//! configurations, and what differs; with `--trace`, one cluster and
//! trace replayed over time under each.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::ValueEnum;

use crate::args::{ReadArgs, TraceArgs, ViewArgs, use_threads};
use crate::io::{input_files, snapshot_title, write_html};

#[derive(Clone, Copy, ValueEnum)]
/// Output formats of `compare`.
enum CompareFormat {
    Table,
    Json,
}

/// The arguments of `wasched compare`.
#[derive(clap::Args)]
pub struct Args {
    /// Manifest files (as for `simulate`); none: the bundled default.
    /// With `--trace`, the cluster the trace is replayed over.
    files: Vec<PathBuf>,
    /// Replay these trace files over time under each side instead of
    /// scheduling the snapshot at one instant (formats as `replay`);
    /// prints the aggregates that differ, each with its ratio B/A, and
    /// the jobs whose start moved most.
    #[arg(long, value_name = "FILE")]
    trace: Vec<PathBuf>,
    #[command(flatten)]
    over_time: TraceArgs,
    /// Side A's own feature gates with `--trace`, after `--feature-gates`
    /// (e.g. `GenericWorkload=false` for kube-scheduler v1.37's default).
    #[arg(long, value_name = "GATE=BOOL,...", value_delimiter = ',', value_parser = crate::args::parse_gate)]
    a_feature_gates: Vec<(String, bool)>,
    /// Side B's own feature gates with `--trace`, as `--a-feature-gates`.
    #[arg(long, value_name = "GATE=BOOL,...", value_delimiter = ',', value_parser = crate::args::parse_gate)]
    b_feature_gates: Vec<(String, bool)>,
    /// Side A: `bundled`, a plugin directory, a configuration file for
    /// the bundled plugins, `kube-scheduler` (the real one, v1.37.2, on
    /// a real control plane), or `kube-scheduler-wasm` (that
    /// kube-scheduler running the bundled components).
    #[arg(long, value_name = "PLUGINS_OR_CONFIG")]
    a: String,
    /// Side B, as `--a`.
    #[arg(long, value_name = "PLUGINS_OR_CONFIG")]
    b: String,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = CompareFormat::Table)]
    output: CompareFormat,
    #[command(flatten)]
    read: ReadArgs,
    /// Also write both cluster maps side by side, differences
    /// highlighted, as a self-contained HTML file; with `--trace`, both
    /// replays drawn on shared axes (as `replay --html`).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    #[command(flatten)]
    view: ViewArgs,
}

/// Runs `wasched compare`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    use_threads(args.view.threads)?;
    if !args.trace.is_empty() {
        return over_time_compare(args);
    }
    let Args {
        files,
        trace: _,
        over_time,
        a_feature_gates,
        b_feature_gates,
        a,
        b,
        output,
        read,
        html,
        view,
    } = args;
    let sides = sides(&a, &b, false)?;
    if !a_feature_gates.is_empty() || !b_feature_gates.is_empty() {
        anyhow::bail!(
            "--a-feature-gates, --b-feature-gates: give --trace too (they change a replay)"
        );
    }
    if over_time.cluster_from.is_some()
        || over_time.until.is_some()
        || !over_time.feature_gates.is_empty()
        || over_time.gpu_share != wasched::replay::alibaba::GpuShare::Whole
    {
        anyhow::bail!(
            "--cluster-from, --until, --feature-gates, --gpu-share: give --trace too (they change a replay)"
        );
    }
    let files = input_files(files);
    let read = read.options();
    let title = snapshot_title(&files);
    let mut bar = wasched::progress::Bar::on_terminal("comparing");
    let compared = wasched::compare::run(
        &wasched::Runtime::new()?,
        &files,
        &read,
        &sides,
        &view.group_by,
        &mut |done, total| bar.update(done, total),
    )?;
    bar.finish();
    let comparison = &compared.comparison;
    match output {
        CompareFormat::Table => print!("{}", comparison.to_table()),
        CompareFormat::Json => println!("{}", comparison.to_json()),
    }
    if let Some(path) = html {
        let report = wasched::report::Report::new(
            &title,
            &compared.cluster,
            compared.runs.iter().collect(),
            Some(&comparison.differences),
        );
        write_html(&path, &report)?;
    }
    Ok(if comparison.differs() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Sides A and B as `--a` and `--b` name them; `queued`: for a replay.
fn sides(a: &str, b: &str, queued: bool) -> anyhow::Result<[wasched::compare::PluginChoice; 2]> {
    Ok([
        wasched::compare::PluginChoice::parse(a, queued).context("--a")?,
        wasched::compare::PluginChoice::parse(b, queued).context("--b")?,
    ])
}

/// `compare --trace`: both sides replay the trace over the same cluster.
fn over_time_compare(args: Args) -> anyhow::Result<ExitCode> {
    use wasched::replay::whatif;
    let Args {
        files,
        trace: traces,
        over_time,
        a_feature_gates,
        b_feature_gates,
        a,
        b,
        output,
        read,
        html,
        view: _,
    } = args;
    let sides = sides(&a, &b, true)?;
    let gates = [a_feature_gates, b_feature_gates];
    let title = crate::replay::title(&traces);
    if over_time.cluster_from.is_some() && !files.is_empty() {
        anyhow::bail!(
            "{}: with --cluster-from, give no manifests (the cluster is the node list)",
            files[0].display()
        );
    }
    let inputs = over_time.inputs(files, traces, read.options());
    let runtime = wasched::Runtime::new()?;
    let [a, b] = sides;
    let mut loaded = Vec::new();
    for (name, side) in [("A", &a), ("B", &b)] {
        if side.kube_scheduler {
            anyhow::bail!(
                "side {name} ({}): a trace is replayed by wasched's engine; kube-scheduler compares a snapshot",
                side.label
            );
        }
        let plugins = wasched::load_plugins(&runtime, side.plugins.as_deref(), &side.config)
            .with_context(|| format!("side {name} ({})", side.label))?;
        loaded.push((side, plugins));
    }
    let [(a, mut plugins_a), (b, mut plugins_b)] = <[_; 2]>::try_from(loaded).expect("two sides");
    let mut bar = crate::replay::Bar::on_terminal();
    let comparison = whatif::compare(
        &inputs,
        [
            whatif::Side {
                label: labelled(&a.label, &gates[0]),
                plugins: &mut plugins_a,
                options: over_time.options(&a.config, &gates[0]),
            },
            whatif::Side {
                label: labelled(&b.label, &gates[1]),
                plugins: &mut plugins_b,
                options: over_time.options(&b.config, &gates[1]),
            },
        ],
        &mut |_, p| bar.show(p),
    )?;
    bar.clear();
    for note in &comparison.summaries[0].notes {
        eprintln!("note: {note}");
    }
    match output {
        CompareFormat::Table => print!("{}", comparison.to_table()),
        CompareFormat::Json => println!("{}", comparison.to_json()),
    }
    if let Some(path) = html {
        crate::replay::write_pictures(&path, &title, &comparison.pictures)?;
    }
    Ok(if comparison.differs() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A side's label with its own feature gates, if any.
fn labelled(label: &str, gates: &[(String, bool)]) -> String {
    if gates.is_empty() {
        return label.to_string();
    }
    let gates: Vec<String> = gates.iter().map(|(g, on)| format!("{g}={on}")).collect();
    format!("{label} ({})", gates.join(","))
}
