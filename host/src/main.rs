//! The `wasched` command line.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU8, Ordering};

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};

/// mimalloc: the run allocates many small, short-lived objects (manifest
/// values, per-call answers), where glibc's allocator spent a fifth of the
/// time (`perf`). Built without transparent huge pages (fewer, smaller
/// page faults, 40 MB less peak memory).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its position in `mi_option_t`,
/// mimalloc.h; the Rust bindings name no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Hands freed memory back to the system after 1 ms rather than mimalloc's
/// default delays: the parsed manifests are freed while the snapshot is
/// built, and returning them promptly keeps the peak of the 5,000-node /
/// 10,000-pod run at 146 MB instead of 159 MB (a few percent more time, in
/// the noise of this machine). `MIMALLOC_PURGE_DELAY` in the environment
/// still decides when set.
fn tune_allocator() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one integer option; valid at any time.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 1) };
    }
}

/// Workload-aware Kubernetes scheduling as WebAssembly components.
#[derive(Parser)]
#[command(name = "wasched", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Schedule a snapshot (Kubernetes manifests) and print what the
    /// scheduler would do: placements, pods left pending and why, PodGroup
    /// verdicts.
    Simulate {
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
        /// Plugin configuration (YAML or JSON): per-plugin failure policy,
        /// CPU and memory bounds, and args (docs/src/plugins/configuration.md). With
        /// `--engine kube-scheduler` or `kube-scheduler-wasm`: a
        /// KubeSchedulerConfiguration.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// `--engine kube-scheduler` (or `kube-scheduler-wasm`): give up
        /// when it has not settled within this many seconds.
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
        /// Schedule the pending pods whose `spec.schedulerName` is one of
        /// these (a pod that names none is `default-scheduler`'s); other
        /// schedulers' pending pods are counted in a note and left out,
        /// their bound pods still count. `*`: every pending pod.
        #[arg(
            long,
            value_name = "NAME,...",
            value_delimiter = ',',
            default_value = "default-scheduler"
        )]
        scheduler_name: Vec<String>,
        #[command(flatten)]
        view: ViewArgs,
    },
    /// Run as a second scheduler on a live cluster: schedule the pods whose
    /// `spec.schedulerName` is `--scheduler-name` (and their PodGroups and
    /// CompositePodGroups) with the same cycle and plugins as `simulate`,
    /// until SIGINT or SIGTERM.
    Serve {
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
        /// Plugin configuration, as for `simulate` (wasched's format or a
        /// KubeSchedulerConfiguration).
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
    },
    /// What if: schedule one snapshot with two plugin sets or configurations
    /// and print only what differs. Exits 0 when nothing differs, 1 when
    /// something does, 2 on error (like `diff`).
    Compare {
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
    },
    /// Configuration files.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// A real Kubernetes v1.37.2 control plane on this machine.
    Cluster {
        #[command(subcommand)]
        command: ClusterCommand,
    },
    /// Print a deterministic synthetic snapshot (YAML) of a cluster in zones,
    /// blocks and racks with background load and pending gang jobs.
    Generate {
        /// Number of nodes.
        #[arg(long, default_value_t = 100)]
        nodes: usize,
        /// Number of pending pods.
        #[arg(long, default_value_t = 200)]
        pending_pods: usize,
        /// Random seed: the same arguments print the same snapshot.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Node mix.
        #[arg(long, value_enum, default_value_t = wasched::generate::Shape::Gpu)]
        shape: wasched::generate::Shape,
        /// Output format (JSON reads back several times faster).
        #[arg(long, short, value_enum, default_value_t = SnapshotFormat::Yaml)]
        output: SnapshotFormat,
        /// Write the objects as an API server returns them (UIDs, resource
        /// versions, managedFields, node and pod status): a real dump's
        /// shape and size.
        #[arg(long)]
        as_stored: bool,
    },
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Print the KubeSchedulerConfiguration equivalent to a configuration
    /// in wasched's former format (`defaults:` and `plugins:`).
    Migrate {
        /// The former configuration file.
        file: PathBuf,
    },
}

#[derive(Subcommand)]
enum ClusterCommand {
    /// Start a real control plane (embedded etcd and kube-apiserver v1.37.2
    /// with the workload APIs, on 127.0.0.1), load a snapshot into it as a
    /// real cluster holds it, write a kubeconfig, and run until Ctrl-C or
    /// SIGTERM. Without kube-scheduler it stands in for kubelets: a pod
    /// marked for deletion is deleted at once. State lives in a temporary
    /// directory removed at exit.
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
        #[command(flatten)]
        read: ReadArgs,
    },
}

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

/// Options shared by the commands that schedule.
#[derive(clap::Args)]
struct ViewArgs {
    /// Group the HTML report's map by these node label keys, outermost
    /// first (default: zone, block and rack labels the nodes carry).
    #[arg(long, value_name = "KEY,...", value_delimiter = ',')]
    group_by: Vec<String>,
    /// Worker threads for reading manifests and node checks (default: the
    /// machine's cores). Decisions never depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

/// How manifests are read, in every command that reads them.
#[derive(clap::Args)]
struct ReadArgs {
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
    fn options(self) -> wasched::ReadOptions {
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

#[derive(Clone, Copy, ValueEnum)]
/// Output formats of `compare`.
enum CompareFormat {
    Table,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
/// Output formats of `generate`.
enum SnapshotFormat {
    Yaml,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
/// Output formats of `simulate`.
enum Format {
    Table,
    Json,
    Yaml,
}

fn parse_alias(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, key)) if !name.is_empty() && !key.is_empty() => Ok((name.into(), key.into())),
        _ => Err(format!("expected NAME=KEY, got {text:?}")),
    }
}

/// The exit status of a failure: 1, or 2 for `compare` (as `diff`); also
/// what a panic exits with.
static ERROR_STATUS: AtomicU8 = AtomicU8::new(1);

fn main() -> ExitCode {
    tune_allocator();
    std::panic::set_hook(Box::new(|info| {
        eprintln!("wasched: internal error: {info}");
        std::process::exit(i32::from(ERROR_STATUS.load(Ordering::Relaxed)));
    }));
    let cli = Cli::parse();
    if let Command::Compare { .. } = cli.command {
        ERROR_STATUS.store(2, Ordering::Relaxed);
    }
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("wasched: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::from(ERROR_STATUS.load(Ordering::Relaxed))
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve {
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
        } => {
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
        Command::Config {
            command: ConfigCommand::Migrate { file },
        } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("{}: cannot read config", file.display()))?;
            let names: Vec<&str> = wasched::runtime::BUNDLED.iter().map(|b| b.name).collect();
            let migrated = wasched::config::migrate::migrate(&text, &names)
                .map_err(|e| anyhow::anyhow!("{}: {e:#}", file.display()))?;
            print!("{migrated}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Generate {
            nodes,
            pending_pods,
            seed,
            shape,
            output,
            as_stored,
        } => {
            use wasched::generate;
            let options = generate::Options {
                nodes,
                pending_pods,
                seed,
                shape,
            };
            let mut items = generate::generate(&options)?;
            if as_stored {
                generate::as_stored(&mut items);
            }
            let text = match output {
                SnapshotFormat::Yaml => generate::list_yaml(&options, items)?,
                SnapshotFormat::Json => generate::list_json(items)?,
            };
            print!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Cluster {
            command:
                ClusterCommand::Up {
                    files,
                    kubeconfig,
                    with_kube_scheduler,
                    config,
                    port,
                    feature_gates,
                    read,
                },
        } => {
            let read = wasched::ReadOptions {
                // The objects go to a real API server as they are.
                keep_stored: true,
                ..read.options()
            };
            let manifests = wasched::read_manifests_with(&input_files(files), &read)?;
            let snapshot = wasched::Snapshot::build(&manifests)?;
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
            };
            match harness.up(&objects, &options)? {}
        }
        Command::Simulate {
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
            scheduler_name,
            view,
        } => {
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
                    schedulers: if scheduler_name.iter().any(|n| n == "*") {
                        Vec::new()
                    } else {
                        scheduler_name
                    },
                    live: false,
                },
            };
            let mut bar = wasched::progress::Bar::on_terminal("scheduling");
            let simulated = simulation
                .run_observed(&wasched::Runtime::new()?, &mut |done, total| {
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
                let run = wasched::report::RunView::of(
                    cluster,
                    outcome,
                    &label,
                    simulated.plugins.clone(),
                );
                let report = wasched::report::Report::new(&title, cluster, vec![&run], None);
                write_html(&path, &report)?;
            }
            print!("{text}");
            if stats {
                eprint!("{}", simulated.stats.to_table());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare {
            files,
            a,
            b,
            output,
            read,
            html,
            view,
        } => {
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
    }
}

/// How the report names the snapshot: its files, or the bundled default.
fn snapshot_title(files: &[PathBuf]) -> String {
    if files.is_empty() {
        return wasched::DEFAULT_SNAPSHOT_NAME.to_string();
    }
    let names: Vec<String> = files
        .iter()
        .map(|f| match f.to_str() {
            Some(wasched::manifest::STDIN) => "standard input".to_string(),
            _ => f.display().to_string(),
        })
        .collect();
    names.join(", ")
}

/// The files to read: those given (`-` is standard input); with none,
/// standard input when it is a pipe or a file, else the bundled default
/// snapshot, said in one line on stderr.
fn input_files(files: Vec<PathBuf>) -> Vec<PathBuf> {
    if !files.is_empty() {
        return files;
    }
    if stdin_has_input() {
        return vec![PathBuf::from(wasched::manifest::STDIN)];
    }
    eprintln!(
        "wasched: no files given and nothing piped in: scheduling the bundled demo snapshot, {}",
        wasched::DEFAULT_SNAPSHOT_NAME
    );
    files
}

/// The width of the terminal standard output is, if it is one (`COLUMNS`,
/// else the terminal's own size); `None` when output goes to a pipe or a
/// file, where table cells are never cut.
fn terminal_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .or_else(console_width)
}

/// The terminal's width, asked of the terminal on standard output.
fn console_width() -> Option<usize> {
    console::Term::stdout()
        .size_checked()
        .map(|(_, columns)| usize::from(columns))
}

/// Whether standard input is a pipe or a regular file (not a terminal, not
/// /dev/null, not closed).
#[cfg(unix)]
fn stdin_has_input() -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata("/dev/stdin").is_ok_and(|m| m.file_type().is_fifo() || m.is_file())
}

/// Elsewhere standard input is read only when named (`-`).
#[cfg(not(unix))]
fn stdin_has_input() -> bool {
    false
}

fn write_html(path: &std::path::Path, report: &wasched::report::Report) -> anyhow::Result<()> {
    std::fs::write(path, wasched::report::html::render(report))
        .with_context(|| format!("{}: cannot write the HTML report", path.display()))
}

/// Sizes the worker pool (reading manifests, node checks).
fn use_threads(threads: Option<u16>) -> anyhow::Result<()> {
    let threads = threads.map_or_else(wasched::default_threads, usize::from);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .context("cannot start the worker threads")
}
