//! Arguments several commands share: how manifests are read, the view
//! of the report, worker threads.

use anyhow::Context;

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
