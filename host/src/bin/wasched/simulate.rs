//! `wasched simulate`: schedule a snapshot (files, or a live cluster's
//! objects) with one engine and print the decisions.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::ValueEnum;

use crate::args::{Format, ReadArgs, SchedulerArgs, ViewArgs, use_threads};
use crate::io::{input_files, snapshot_title, terminal_width, write_html};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
/// Engines of `simulate`.
enum EngineArg {
    /// wasched's cycle with the plugin components.
    Wasched,
    /// The real kube-scheduler v1.37.2.
    KubeScheduler,
    /// The real kube-scheduler v1.37.2 running wasched's components (the
    /// bundled ones, or `--plugins DIR`) in place of its workload plugins.
    KubeSchedulerWasm,
}

/// The arguments of `wasched simulate`.
#[derive(clap::Args)]
pub struct Args {
    /// Manifest files (YAML or JSON, as `kubectl get -o yaml|json`
    /// prints). Without any, the bundled default snapshot is used.
    files: Vec<PathBuf>,
    /// Load every `*.wasm` plugin component in this directory instead of
    /// the bundled plugins.
    #[arg(long, value_name = "DIR")]
    plugins: Option<PathBuf>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Table)]
    output: Format,
    /// Which scheduler decides: wasched's cycle with the plugin
    /// components, the real kube-scheduler v1.37.2 on a real control
    /// plane (`make -C kube` builds it from Go modules), or that
    /// kube-scheduler running the components (`kube-scheduler-wasm`:
    /// the bundled ones, or those of `--plugins`).
    #[arg(long, value_enum, default_value_t = EngineArg::Wasched)]
    engine: EngineArg,
    /// Plugin configuration: a KubeSchedulerConfiguration (YAML or
    /// JSON) arranging the plugins, each wasched plugin's failure policy,
    /// CPU and memory bounds and args in its pluginConfig
    /// (docs/src/plugins/configuration.md); with `--engine
    /// kube-scheduler` or `kube-scheduler-wasm`, kube-scheduler reads it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// `--engine kube-scheduler` (or `kube-scheduler-wasm`): give up
    /// when kube-scheduler is still deciding after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    timeout: u64,
    /// Also write the run's metrics (Prometheus text format) to FILE.
    #[arg(long, value_name = "FILE")]
    metrics: Option<PathBuf>,
    #[command(flatten)]
    read: ReadArgs,
    /// Print the plugins' log lines to stderr.
    #[arg(long, short)]
    verbose: bool,
    /// Print where the time went to stderr after the decisions: reading,
    /// loading, scheduling (pods/s), node checks, and per plugin and
    /// extension point the calls, total, mean and max time.
    #[arg(long)]
    stats: bool,
    /// Also write a self-contained HTML report to FILE: the cluster map
    /// before and after the run, and every decision.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Take the snapshot from the live cluster of this kubeconfig
    /// (every modelled kind it serves) instead of files.
    #[arg(long, value_name = "FILE", conflicts_with = "files")]
    kubeconfig: Option<PathBuf>,
    #[command(flatten)]
    schedulers: SchedulerArgs,
    #[command(flatten)]
    view: ViewArgs,
    #[command(flatten)]
    estimate: crate::estimate::EstimateArgs,
}

/// Runs `wasched simulate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Args {
        files,
        mut plugins,
        output,
        engine,
        config,
        timeout,
        metrics,
        read,
        verbose,
        stats,
        html,
        kubeconfig,
        schedulers,
        view,
        estimate,
    } = args;
    use_threads(view.threads)?;
    let files = if kubeconfig.is_some() {
        files
    } else {
        input_files(files)
    };
    let title = match &kubeconfig {
        Some(path) => format!("the cluster of {}", path.display()),
        None => snapshot_title(&files),
    };
    if estimate.until_start {
        if engine != EngineArg::Wasched {
            anyhow::bail!(
                "--until-start replays the snapshot with wasched's engine; it takes no --engine"
            );
        }
        if metrics.is_some() || stats || verbose {
            anyhow::bail!(
                "--until-start prints estimates only; it takes no --metrics, --stats or --verbose"
            );
        }
        let inputs = crate::estimate::Inputs {
            files,
            kubeconfig,
            read: read.options(),
            plugins,
            config,
            output,
            html,
            title,
            schedulers: schedulers.names(),
        };
        return crate::estimate::run(estimate, inputs);
    }
    let label = match (&plugins, &config) {
        _ if engine == EngineArg::KubeScheduler => match &config {
            Some(config) => format!("kube-scheduler, {}", config.display()),
            None => "kube-scheduler".to_string(),
        },
        _ if engine == EngineArg::KubeSchedulerWasm => {
            let mut label = "kube-scheduler-wasm".to_string();
            for path in plugins.iter().chain(&config) {
                label.push_str(&format!(", {}", path.display()));
            }
            label
        }
        (Some(dir), Some(config)) => format!("{}, {}", dir.display(), config.display()),
        (Some(dir), None) => dir.display().to_string(),
        (None, Some(config)) => format!("bundled, {}", config.display()),
        (None, None) => "bundled".to_string(),
    };
    let (engine, config) = match engine {
        EngineArg::Wasched => (
            wasched::Engine::Wasched,
            wasched::PluginConfig::read_noting(config.as_deref(), false)?,
        ),
        EngineArg::KubeScheduler => {
            if plugins.is_some() {
                anyhow::bail!(
                    "--plugins loads components into wasched's engine; --engine kube-scheduler runs kube-scheduler's own plugins"
                );
            }
            let options = wasched::cluster::ScheduleOptions {
                config,
                timeout: std::time::Duration::from_secs(timeout),
                ..Default::default()
            };
            (
                wasched::Engine::KubeScheduler(options),
                wasched::PluginConfig::default(),
            )
        }
        EngineArg::KubeSchedulerWasm => {
            let options = wasched::cluster::ScheduleOptions {
                config,
                timeout: std::time::Duration::from_secs(timeout),
                wasm: Some(wasched::cluster::WasmComponents {
                    plugins: plugins.take(),
                }),
                ..Default::default()
            };
            (
                wasched::Engine::KubeScheduler(options),
                wasched::PluginConfig::default(),
            )
        }
    };
    let simulation = wasched::Simulation {
        engine,
        read: read.options(),
        plugins,
        config,
        capture: html.is_some().then(|| view.group_by.clone()),
        timed: stats,
        files,
        kubeconfig,
        build: wasched::model::BuildOptions {
            schedulers: schedulers.names(),
            live: false,
        },
    };
    let mut bar = wasched::progress::Bar::on_terminal("scheduling");
    let simulated = simulation.run_observed(&wasched::Runtime::new()?, &mut |done, total| {
        bar.update(done, total)
    })?;
    bar.finish();
    let outcome = &simulated.outcome;
    if verbose {
        for (plugin, line) in &simulated.logs {
            eprintln!("[{plugin}] {:?}: {}", line.level, line.message);
        }
    }
    eprint!("{}", outcome.diagnostics());
    let text = match output {
        Format::Table => outcome.to_table_for(terminal_width()),
        Format::Json => outcome.to_json() + "\n",
        Format::Yaml => outcome.to_yaml(),
    };
    if let Some(path) = metrics {
        std::fs::write(&path, wasched::metrics::encode_text(outcome))
            .with_context(|| format!("{}: cannot write metrics", path.display()))?;
    }
    if let (Some(path), Some(cluster)) = (html, &simulated.cluster) {
        let run = wasched::report::RunView::of(cluster, outcome, &label, simulated.plugins.clone());
        let report = wasched::report::Report::new(&title, cluster, vec![&run], None);
        write_html(&path, &report)?;
    }
    print!("{text}");
    if stats {
        eprint!("{}", simulated.stats.to_table());
    }
    Ok(ExitCode::SUCCESS)
}
