//! `wasched cluster`: a real control plane on this machine.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::args::ReadArgs;
use crate::io::input_files;

#[derive(Subcommand)]
/// The `cluster` subcommands.
pub enum Command {
    /// Start a real control plane (embedded etcd and kube-apiserver v1.37.2
    /// with the workload APIs, on 127.0.0.1), load a snapshot into it as a
    /// real cluster holds it, write a kubeconfig, and run until Ctrl-C or
    /// SIGTERM. It stands in for kubelets: a pod marked for deletion is
    /// deleted at once, or, with `--lifecycle`, pods keep a node's time.
    /// State lives in a temporary directory removed at exit.
    Up {
        /// Manifest files (as for `simulate`); none: the bundled default.
        files: Vec<PathBuf>,
        /// Write the administrator's kubeconfig (kubectl works with it) here.
        #[arg(long, value_name = "FILE")]
        kubeconfig: PathBuf,
        /// Also run the real kube-scheduler v1.37.2 with the workload gates.
        #[arg(long)]
        with_kube_scheduler: bool,
        /// The KubeSchedulerConfiguration of `--with-kube-scheduler`
        /// (default: upstream's default profile, every node scored).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// The API server's port on 127.0.0.1 (default: a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Change the control plane's feature gates (default: the workload
        /// gates on), as a cluster with one off runs:
        /// `TopologyAwareWorkloadScheduling=false`.
        #[arg(long, value_name = "NAME=BOOL,...")]
        feature_gates: Option<String>,
        /// Pods keep a node's time: a bound pod starts (Running), succeeds
        /// after its `wasched.io/run-for` annotation (a Go duration, e.g.
        /// `90s`), and a pod being deleted stays terminating for its grace
        /// period.
        #[arg(long)]
        lifecycle: bool,
        /// Also run upstream's Job controller v1.37.2 (with WorkloadWithJob:
        /// each Job's Workload and PodGroup): Jobs create their pods, and
        /// preempted or failed pods are replaced.
        #[arg(long)]
        job_controller: bool,
        #[command(flatten)]
        read: ReadArgs,
    },
}

/// Runs `wasched cluster`.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    let Command::Up {
        files,
        kubeconfig,
        with_kube_scheduler,
        config,
        port,
        feature_gates,
        lifecycle,
        job_controller,
        read,
    } = command;
    let read = wasched::ReadOptions {
        // The objects go to a real API server as they are.
        keep_stored: true,
        ..read.options()
    };
    let manifests = wasched::read_manifests_with(&input_files(files), &read)?;
    let snapshot = wasched::model::Model::snapshot_of(manifests.clone(), &Default::default())?;
    let objects = wasched::cluster::translate(&manifests, &snapshot)?;
    // How the files were read, then how they were translated.
    for note in snapshot.notes.iter().chain(&objects.notes) {
        eprintln!("note: {note}");
    }
    for warning in snapshot.warnings.iter().chain(&objects.warnings) {
        eprintln!("warning: {warning}");
    }
    let harness = wasched::cluster::Harness::locate()?;
    let options = wasched::cluster::UpOptions {
        kubeconfig,
        with_kube_scheduler,
        config,
        port,
        feature_gates,
        lifecycle,
        job_controller,
    };
    match harness.up(&objects, &options)? {}
}
