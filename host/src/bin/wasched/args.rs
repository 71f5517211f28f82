//! Arguments several commands share: how manifests are read, the view
//! of the report, worker threads.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use wasched::replay::alibaba::{GpuShare, Mapping};
use wasched::replay::{Inputs, Options};

/// Output formats of the commands that print decisions (`simulate`,
/// `replay`).
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns for people.
    Table,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}

/// Options shared by the commands that schedule.
#[derive(clap::Args)]
pub struct ViewArgs {
    /// Group the HTML report's map by these node label keys, outermost
    /// first (default: zone, block and rack labels the nodes carry).
    #[arg(long, value_name = "KEY,...", value_delimiter = ',')]
    pub group_by: Vec<String>,
    /// Worker threads for reading manifests and node checks (default: the
    /// machine's cores). Decisions never depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

/// Whose pending pods a command decides on.
#[derive(clap::Args)]
pub struct SchedulerArgs {
    /// Decide on the pending pods whose `spec.schedulerName` is one of
    /// these (a pod that names none is `default-scheduler`'s); other
    /// schedulers' pending pods are left out, their bound pods still
    /// count. `*`: every pending pod.
    #[arg(
        long = "scheduler-name",
        value_name = "NAME,...",
        value_delimiter = ',',
        default_value = "default-scheduler"
    )]
    names: Vec<String>,
}

impl SchedulerArgs {
    /// The names as the model takes them (empty: every pending pod).
    pub fn names(self) -> Vec<String> {
        if self.names.iter().any(|n| n == "*") {
            Vec::new()
        } else {
            self.names
        }
    }
}

/// How manifests are read, in every command that reads them.
#[derive(clap::Args)]
pub struct ReadArgs {
    /// Map a topology policy name of the early CompositePodGroup dialect
    /// to a node label key, e.g. `LowLatencyNetwork=network.topology.nvidia.com/leaf`.
    #[arg(long, value_name = "NAME=KEY", value_parser = parse_alias)]
    topology_alias: Vec<(String, String)>,
    /// Refuse an object with a field its kind does not have, as the API
    /// server's strict field validation does (default: a warning naming
    /// the field).
    #[arg(long)]
    strict: bool,
    /// Workload controllers that run with gang scheduling configured in the
    /// controller rather than on the object: LeaderWorkerSet (its
    /// `gangSchedulingManagement`), PyTorchJob (training-operator's
    /// `--gang-scheduler-name`). Their expanded pods are grouped as those
    /// controllers group them.
    #[arg(long, value_name = "KIND,...", value_delimiter = ',', value_parser = parse_gang_controller)]
    gang_scheduling_for: Vec<wasched::manifest::ControllerKind>,
}

impl ReadArgs {
    /// The read options these arguments give.
    pub fn options(self) -> wasched::ReadOptions {
        wasched::ReadOptions {
            topology_aliases: self.topology_alias.into_iter().collect(),
            strict: self.strict,
            keep_stored: false,
            show_progress: true,
            controllers: wasched::manifest::ControllerOptions {
                gang_scheduling: self.gang_scheduling_for.into_iter().collect(),
            },
        }
    }
}

/// A controller kind configured for gang scheduling in the controller.
fn parse_gang_controller(text: &str) -> Result<wasched::manifest::ControllerKind, String> {
    let kinds = wasched::manifest::workloads::GANG_CONFIGURED_IN_CONTROLLER;
    kinds
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(text))
        .map(|(_, kind)| *kind)
        .ok_or_else(|| {
            let names: Vec<&str> = kinds.iter().map(|(name, _)| *name).collect();
            format!("{text:?}: one of {}", names.join(", "))
        })
}

/// `NAME=KEY`.
fn parse_alias(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, key)) if !name.is_empty() && !key.is_empty() => Ok((name.into(), key.into())),
        _ => Err(format!("expected NAME=KEY, got {text:?}")),
    }
}

/// Sizes the worker pool (reading manifests, node checks).
pub fn use_threads(threads: Option<u16>) -> anyhow::Result<()> {
    let threads = threads.map_or_else(wasched::default_threads, usize::from);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .context("cannot start the worker threads")
}

/// How a trace is replayed over time (`replay`, and `compare --trace`):
/// the public traces' cluster and mapping, the horizon, the queue's gates.
#[derive(clap::Args)]
pub struct TraceArgs {
    /// Start from the nodes of a public trace instead of manifests:
    /// `node_info_df.csv` of Alibaba's cluster-trace-v2026-spot-gpu (with
    /// its two PriorityClasses, `alibaba-hp` and `alibaba-spot`), or
    /// `openb_node_list_*.csv` of cluster-trace-gpu-v2023.
    #[arg(long, value_name = "FILE")]
    pub cluster_from: Option<PathBuf>,
    /// How a public trace's share of a GPU is asked for: `whole` (a whole
    /// `nvidia.com/gpu`) or `milli` (thousandths on
    /// `alibabacloud.com/gpu-milli`, which `--cluster-from` nodes offer
    /// 1000 of per GPU).
    #[arg(long, value_enum, default_value_t = GpuShare::Whole)]
    pub gpu_share: GpuShare,
    /// Stop at this virtual time (seconds, or a duration like 12h);
    /// jobs not done by then are reported unfinished.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub until: Option<Duration>,
    /// kube-scheduler feature gates the replay reads:
    /// `SchedulerPopFromBackoffQ` (on by default) and `GenericWorkload`
    /// (taken as on; `false`: no PodGroups, pods scheduled one by one).
    #[arg(long, value_name = "GATE=BOOL,...", value_delimiter = ',', value_parser = parse_gate)]
    pub feature_gates: Vec<(String, bool)>,
}

impl TraceArgs {
    /// What the replay reads: `cluster` manifests (none: the bundled
    /// default) or the `--cluster-from` node list, and `traces`.
    pub fn inputs(
        &self,
        cluster: Vec<PathBuf>,
        traces: Vec<PathBuf>,
        read: wasched::ReadOptions,
    ) -> Inputs {
        Inputs {
            cluster,
            traces,
            cluster_from: self.cluster_from.clone(),
            mapping: Mapping {
                gpu_share: self.gpu_share,
            },
            read,
        }
    }

    /// The replay's options under `config` (its backoff), the gates, then
    /// `more_gates` (a side's own).
    pub fn options(
        &self,
        config: &wasched::PluginConfig,
        more_gates: &[(String, bool)],
    ) -> Options {
        let mut options = Options {
            until: self.until,
            ..Options::default()
        };
        if let Some(backoff) = config.backoff() {
            options.queue.backoff = backoff;
        }
        for (gate, on) in self.feature_gates.iter().chain(more_gates) {
            match gate.as_str() {
                GENERIC_WORKLOAD => options.generic_workload_off = !on,
                _ => options.queue.pop_from_backoff = *on,
            }
        }
        options
    }
}

fn parse_time(text: &str) -> Result<Duration, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Ok(Duration::from_secs_f64(s)),
        Ok(_) => Err(format!("{text:?} is not a time ≥ 0")),
        Err(_) => wasched::replay::trace::go_duration(text),
    }
}

/// The gate of the workload API.
const GENERIC_WORKLOAD: &str = "GenericWorkload";

/// `GATE=BOOL` of a gate the replay reads.
pub fn parse_gate(text: &str) -> Result<(String, bool), String> {
    let (gate, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected GATE=true|false, got {text:?}"))?;
    if gate != "SchedulerPopFromBackoffQ" && gate != GENERIC_WORKLOAD {
        return Err(format!(
            "{gate}: the gates the replay reads are SchedulerPopFromBackoffQ and {GENERIC_WORKLOAD}"
        ));
    }
    let value = value
        .parse()
        .map_err(|_| format!("{gate}: {value:?} is not true or false"))?;
    Ok((gate.to_string(), value))
}
