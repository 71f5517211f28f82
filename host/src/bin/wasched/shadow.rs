//! `wasched shadow`: a read-only watch of a live cluster.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::args::SchedulerArgs;
use wasched::live::endpoints::{Limits, Tls};
use wasched::live::logging::{LogFormat, LogLevel};
use wasched::live::shadow::ShadowOptions;

/// The arguments of `wasched shadow`.
#[derive(clap::Args)]
pub struct Args {
    /// The cluster's kubeconfig (default: `KUBECONFIG`,
    /// `~/.kube/config`, else the pod's service account).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    #[command(flatten)]
    schedulers: SchedulerArgs,
    /// Load every `*.wasm` plugin component in this directory instead of
    /// the bundled plugins.
    #[arg(long, value_name = "DIR")]
    plugins: Option<PathBuf>,
    /// Plugin configuration, as for `simulate`: a KubeSchedulerConfiguration.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Where `/healthz`, `/readyz`, `/metrics`, `/decisions` and
    /// `/differences` are served (port 0: a free one, printed at start).
    #[arg(long, value_name = "ADDRESS:PORT", default_value = "127.0.0.1:10260")]
    address: std::net::SocketAddr,
    /// Serve the endpoints over HTTPS with this certificate (PEM; with
    /// `--tls-private-key-file`).
    #[arg(long, value_name = "FILE", requires = "tls_private_key_file")]
    tls_cert_file: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    tls_private_key_file: Option<PathBuf>,
    /// Connections the endpoints serve at once; more are closed at once.
    #[arg(long, value_name = "N", default_value_t = Limits::default().connections)]
    max_connections: usize,
    /// Seconds a client has to send a request's headers.
    #[arg(long, value_name = "SECONDS", default_value_t = Limits::default().read_timeout.as_secs())]
    read_timeout: u64,
    /// Log lines as `text` (logfmt-like) or `json` (one object a line).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// The least severe lines logged (the Kubernetes client's included).
    #[arg(long, value_enum, default_value_t = LogLevel::Info)]
    log_level: LogLevel,
}

/// Runs `wasched shadow`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Args {
        kubeconfig,
        schedulers,
        plugins,
        config,
        address,
        tls_cert_file,
        tls_private_key_file,
        max_connections,
        read_timeout,
        log_format,
        log_level,
    } = args;
    wasched::live::logging::init(log_format, log_level);
    if max_connections == 0 {
        anyhow::bail!("--max-connections must be at least 1");
    }
    let config = wasched::PluginConfig::read_noting(config.as_deref(), false)?;
    let tls = tls_cert_file
        .zip(tls_private_key_file)
        .map(|(cert, key)| Tls { cert, key });
    let options = ShadowOptions {
        kubeconfig,
        scheduler_names: schedulers.names(),
        plugins,
        config,
        address,
        tls,
        limits: Limits {
            connections: max_connections,
            read_timeout: Duration::from_secs(read_timeout.max(1)),
            ..Limits::default()
        },
        ..ShadowOptions::default()
    };
    wasched::live::shadow::run(options, &wasched::Runtime::new()?)?;
    Ok(ExitCode::SUCCESS)
}
