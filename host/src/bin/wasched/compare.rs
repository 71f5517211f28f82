//! `wasched compare`: one snapshot under two plugin sets or
//! configurations, and what differs.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::ValueEnum;

use crate::args::{ReadArgs, ViewArgs, use_threads};
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
    files: Vec<PathBuf>,
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
    /// highlighted, as a self-contained HTML file.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    #[command(flatten)]
    view: ViewArgs,
}

/// Runs `wasched compare`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Args {
        files,
        a,
        b,
        output,
        read,
        html,
        view,
    } = args;
    use_threads(view.threads)?;
    let files = input_files(files);
    let read = read.options();
    let sides = [
        wasched::compare::PluginChoice::parse(&a).context("--a")?,
        wasched::compare::PluginChoice::parse(&b).context("--b")?,
    ];
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
