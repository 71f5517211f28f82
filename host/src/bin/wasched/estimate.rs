//! `wasched simulate --until-start`: when each pending entity of a
//! snapshot is estimated to start (`wasched::replay::estimate`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use wasched::replay::estimate::{self, Options};

use crate::args::Format;

/// The flags `--until-start` reads.
#[derive(clap::Args)]
pub struct EstimateArgs {
    /// Estimate when each pending PodGroup, CompositePodGroup and pod
    /// starts, by replaying the snapshot forward with no new arrivals,
    /// and say what each estimate rests on.
    #[arg(long)]
    pub until_start: bool,
    /// With `--until-start`: how long a pod runs that gives no runtime
    /// (annotation `wasched.io/run-for`, `activeDeadlineSeconds`) and
    /// whose priority class has none (a duration: 90s, 2h30m); without
    /// it, such a pod runs for ever. A pod whose restartPolicy is Always
    /// ends only at its activeDeadlineSeconds.
    #[arg(long, value_name = "DURATION", requires = "until_start",
          value_parser = wasched::replay::trace::go_duration)]
    pub default_runtime: Option<Duration>,
    /// With `--until-start`: how long the pods of a priority class run,
    /// `CLASS=DURATION` (repeatable).
    #[arg(long = "runtime", value_name = "CLASS=DURATION", requires = "until_start",
          value_parser = parse_class_runtime)]
    pub runtimes: Vec<(String, Duration)>,
    /// With `--until-start`: the instant estimates count from (RFC 3339);
    /// default: the snapshot's latest creation or start time, or, with
    /// `--kubeconfig`, the time the cluster is read.
    #[arg(long, value_name = "TIME", requires = "until_start", value_parser = parse_instant)]
    pub now: Option<i64>,
}

/// `CLASS=DURATION`.
fn parse_class_runtime(text: &str) -> Result<(String, Duration), String> {
    let (class, duration) = text
        .split_once('=')
        .ok_or_else(|| format!("expected CLASS=DURATION, got {text:?}"))?;
    let duration =
        wasched::replay::trace::go_duration(duration).map_err(|e| format!("{class}: {e}"))?;
    Ok((class.to_string(), duration))
}

/// An RFC 3339 instant as Unix seconds.
fn parse_instant(text: &str) -> Result<i64, String> {
    text.parse::<k8s_openapi::jiff::Timestamp>()
        .map(|t| t.as_second())
        .map_err(|e| format!("{text:?} is not an RFC 3339 time: {e}"))
}

/// What an estimate run reads besides its flags.
pub struct Inputs {
    pub files: Vec<PathBuf>,
    pub kubeconfig: Option<PathBuf>,
    pub read: wasched::ReadOptions,
    pub plugins: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub output: Format,
    pub html: Option<PathBuf>,
    pub title: String,
    pub schedulers: Vec<String>,
}

/// Runs `wasched simulate --until-start`.
pub fn run(args: EstimateArgs, inputs: Inputs) -> Result<ExitCode> {
    let config = wasched::PluginConfig::read_noting(inputs.config.as_deref(), true)?;
    let mut options = Options {
        now: args.now,
        now_from: "--now".into(),
        default_runtime: args.default_runtime,
        class_runtimes: args.runtimes.into_iter().collect(),
        schedulers: inputs.schedulers,
        ..Options::default()
    };
    if let Some(backoff) = config.backoff() {
        options.queue.backoff = backoff;
    }
    let manifests = match &inputs.kubeconfig {
        Some(kubeconfig) => {
            let read_at = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64);
            let manifests = wasched::live::read_cluster(kubeconfig)?;
            if options.now.is_none() {
                options.now = Some(read_at);
                options.now_from = "the time the cluster was read".into();
            }
            manifests
        }
        None => wasched::read_manifests_with(&inputs.files, &inputs.read)?,
    };
    let runtime = wasched::Runtime::new()?;
    let mut plugins = wasched::load_plugins(&runtime, inputs.plugins.as_deref(), &config)?;
    let estimates = estimate::estimate(manifests, &mut plugins, &options)?;
    let text = match inputs.output {
        Format::Table => estimates.to_table(),
        Format::Json => serde_json::to_string_pretty(&estimates)? + "\n",
        Format::Yaml => serde_norway::to_string(&estimates)?,
    };
    if let Some(path) = &inputs.html {
        let page = estimate::html(&inputs.title, &estimates);
        std::fs::write(path, page).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}
