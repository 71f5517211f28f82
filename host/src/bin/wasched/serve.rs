//! `wasched serve`: the loop on a live cluster.

use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments of `wasched serve`.
#[derive(clap::Args)]
pub struct Args {
    /// The cluster's kubeconfig (default: `KUBECONFIG`,
    /// `~/.kube/config`, else the pod's service account).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The `spec.schedulerName` of the pods it schedules.
    #[arg(long, value_name = "NAME", default_value = "wasched")]
    scheduler_name: String,
    /// Load every `*.wasm` plugin component in this directory instead of
    /// the bundled plugins.
    #[arg(long, value_name = "DIR")]
    plugins: Option<PathBuf>,
    /// Plugin configuration, as for `simulate`: a
    /// KubeSchedulerConfiguration (its backoff fields set the queue's).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Shadow mode: decide and report (log lines, metrics), but never
    /// bind, evict or write status.
    #[arg(long)]
    dry_run: bool,
    /// Where `/healthz`, `/readyz` and `/metrics` are served (port 0:
    /// a free one, printed at start).
    #[arg(long, value_name = "ADDRESS:PORT", default_value = "127.0.0.1:10260")]
    address: std::net::SocketAddr,
    /// Serve the endpoints over HTTPS with this certificate (PEM; with
    /// `--tls-private-key-file`).
    #[arg(long, value_name = "FILE", requires = "tls_private_key_file")]
    tls_cert_file: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    tls_private_key_file: Option<PathBuf>,
    /// Schedule only while holding the Lease `--lease-namespace`/
    /// `--lease-name` (as kube-scheduler's `--leader-elect`); exit when
    /// it is lost. A dry run never takes it.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    leader_elect: bool,
    /// The Lease's namespace.
    #[arg(long, value_name = "NAMESPACE", default_value = "kube-system")]
    lease_namespace: String,
    /// The Lease's name (default: the scheduler name).
    #[arg(long, value_name = "NAME")]
    lease_name: Option<String>,
}

/// Runs `wasched serve`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Args {
        kubeconfig,
        scheduler_name,
        plugins,
        config,
        dry_run,
        address,
        leader_elect,
        lease_namespace,
        lease_name,
        tls_cert_file,
        tls_private_key_file,
    } = args;
    let config = wasched::PluginConfig::read_noting(config.as_deref(), true)?;
    let lease = leader_elect.then(|| wasched::live::leader::LeaseOptions {
        namespace: lease_namespace,
        name: lease_name.unwrap_or_else(|| scheduler_name.clone()),
    });
    let tls = tls_cert_file
        .zip(tls_private_key_file)
        .map(|(cert, key)| wasched::live::endpoints::Tls { cert, key });
    let options = wasched::live::serve::ServeOptions {
        kubeconfig,
        lease,
        tls,
        scheduler_name,
        plugins,
        config,
        dry_run,
        address,
        ..Default::default()
    };
    wasched::live::serve::run(options, &wasched::Runtime::new()?)?;
    Ok(ExitCode::SUCCESS)
}
