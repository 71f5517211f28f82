//! The Go harness `wasched-kube` (the repository's `kube/` module): the real
//! control plane and kube-scheduler v1.37.2 built from their Go modules.
//! Found beside the `wasched` binary, through `WASCHED_KUBE`, in the source
//! tree's `kube/bin/`, or on `PATH`; built with `make -C kube` (never by
//! this library).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};

use super::objects::ClusterObjects;
use super::played::Played;
use super::readback::KubeResult;

/// The harness's file name.
pub const BINARY: &str = "wasched-kube";

/// The Go module, in the source tree this wasched was built from.
const SOURCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../kube");

/// How to build the harness, for messages.
pub const BUILD_HINT: &str = "make -C kube (Go 1.26 and a Go module proxy serving k8s.io/kubernetes v1.37.2), or point WASCHED_KUBE at a built wasched-kube";

/// A located harness binary.
#[derive(Debug, Clone)]
pub struct Harness {
    binary: PathBuf,
}

impl Harness {
    /// The harness's `subcommand` with `--objects file`.
    fn command(&self, subcommand: &str, file: &Path) -> Command {
        let mut command = Command::new(&self.binary);
        command.arg(subcommand).arg("--objects").arg(file);
        command
    }

    /// A harness at `binary`.
    pub fn at(binary: impl Into<PathBuf>) -> Self {
        Self {
            binary: binary.into(),
        }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.binary
    }

    /// Finds the harness (`WASCHED_KUBE`, beside the running executable,
    /// the source tree's `kube/bin/`, `PATH`); when none is built, the
    /// error says how to build it.
    pub fn locate() -> Result<Self> {
        if let Some(path) = std::env::var_os("WASCHED_KUBE") {
            let path = PathBuf::from(path);
            if !path.is_file() {
                bail!("WASCHED_KUBE={}: no such file", path.display());
            }
            return Ok(Self::at(path));
        }
        let mut candidates = Vec::new();
        if let Some(dir) = std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(Path::to_path_buf))
        {
            candidates.push(dir.join(BINARY));
        }
        let built = Path::new(SOURCE).join("bin").join(BINARY);
        candidates.push(built);
        if let Some(path) = std::env::var_os("PATH") {
            candidates.extend(std::env::split_paths(&path).map(|d| d.join(BINARY)));
        }
        if let Some(found) = candidates.into_iter().find(|c| c.is_file()) {
            return Ok(Self::at(found));
        }
        let source = if Path::new(SOURCE).join("go.mod").is_file() {
            format!("its source is at {SOURCE}")
        } else {
            format!("its source is not at {SOURCE}")
        };
        bail!("{BINARY} is not built ({source}): build it with {BUILD_HINT}")
    }

    /// Runs the snapshot's `objects` through the real kube-scheduler:
    /// `wasched-kube schedule` starts the control plane, creates every
    /// object, then starts kube-scheduler, waits until it is quiet and
    /// reads its decisions back.
    pub fn schedule(
        &self,
        objects: &ClusterObjects,
        options: &ScheduleOptions,
    ) -> Result<KubeResult> {
        let dir = scratch_dir()?;
        let file = dir.path.join("objects.json");
        write_objects(objects, &file)?;
        let mut command = self.command("schedule", &file);
        command
            .arg("--timeout")
            .arg(format!("{}ms", options.timeout.as_millis()));
        scheduler_args(&mut command, &options.config, &options.wasm, &options.log);
        if options.ties {
            command.arg("--ties");
        }
        prefer_arg(&mut command, &dir.path, &options.prefer)?;
        if let Some(keep) = std::env::var_os("WASCHED_KUBE_KEEP") {
            // Debugging: keep what the harness was given.
            let keep = PathBuf::from(keep);
            std::fs::create_dir_all(&keep)?;
            for name in ["objects.json", "prefer.json"] {
                if dir.path.join(name).is_file() {
                    std::fs::copy(dir.path.join(name), keep.join(name))?;
                }
            }
        }
        self.result(command)
    }

    /// Plays `trace` (a List of objects, each annotated
    /// `wasched.io/submit-at`) on a cluster of `objects` in real time:
    /// `wasched-kube play` runs kube-scheduler with its own backoff, pods
    /// keeping time and upstream's Job controller, creates each object at
    /// its submit time and, once every Job has finished, reports what
    /// happened to each pod and Job.
    pub fn play(
        &self,
        objects: &ClusterObjects,
        trace: &serde_json::Value,
        options: &PlayOptions,
    ) -> Result<Played> {
        let dir = scratch_dir()?;
        let file = dir.path.join("objects.json");
        write_objects(objects, &file)?;
        let trace_file = dir.path.join("trace.json");
        std::fs::write(&trace_file, serde_json::to_vec(trace)?)
            .with_context(|| format!("cannot write {}", trace_file.display()))?;
        let mut command = self.command("play", &file);
        command
            .arg("--trace")
            .arg(&trace_file)
            .arg("--until")
            .arg(format!("{}ms", options.until.as_millis()));
        scheduler_args(&mut command, &options.config, &options.wasm, &options.log);
        prefer_arg(&mut command, &dir.path, &options.prefer)?;
        self.result(command)
    }

    /// Runs `command` and reads the JSON it prints.
    fn result<T: serde::de::DeserializeOwned>(&self, mut command: Command) -> Result<T> {
        let output = command
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", self.binary.display()))?;
        if !output.status.success() {
            bail!("{}", last_line(&output.stderr, &output.status));
        }
        serde_json::from_slice(&output.stdout).with_context(|| {
            format!(
                "{} printed something other than its result",
                self.binary.display()
            )
        })
    }

    /// Replaces this process with `wasched-kube up`: the control plane with
    /// the snapshot's objects, a kubeconfig at `kubeconfig`, kube-scheduler
    /// if asked; it runs until SIGINT or SIGTERM. Returns only on error.
    pub fn up(
        &self,
        objects: &ClusterObjects,
        options: &UpOptions,
    ) -> Result<std::convert::Infallible> {
        use std::os::unix::process::CommandExt;
        // Not in a scratch directory: exec never returns to remove one. The
        // harness removes the file once read (`--delete-objects`).
        let file =
            std::env::temp_dir().join(format!("wasched-cluster-{}.json", std::process::id()));
        write_objects(objects, &file)?;
        let mut command = self.command("up", &file);
        command
            .arg("--delete-objects")
            .arg("--kubeconfig")
            .arg(&options.kubeconfig)
            .arg("--port")
            .arg(options.port.to_string());
        if options.with_kube_scheduler {
            command.arg("--with-kube-scheduler");
        }
        if let Some(config) = &options.config {
            command.arg("--config").arg(config);
        }
        if let Some(gates) = &options.feature_gates {
            command.arg("--feature-gates").arg(gates);
        }
        if options.lifecycle {
            command.arg("--lifecycle");
        }
        if options.job_controller {
            command.arg("--job-controller");
        }
        let error = command.exec();
        let _ = std::fs::remove_file(&file);
        Err(anyhow!("cannot run {}: {error}", self.binary.display()))
    }
}

/// Tie-breaks for kube-scheduler (`wasched-kube schedule --prefer`): where
/// several nodes share the top score for a pod and the preferred one is
/// among them, it is taken; likewise for a PodGroup's or
/// CompositePodGroup's tied placements, the one holding the preferred
/// node. Only ties kube-scheduler would break arbitrarily are affected.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Preferences {
    /// Pod `namespace/name` → node.
    pub nodes: std::collections::BTreeMap<String, String>,
    /// PodGroup or CompositePodGroup `namespace/name` → node.
    pub groups: std::collections::BTreeMap<String, String>,
    /// Job `namespace/name` → the node of each binding of its pods, in
    /// order: of a tie, a pod of the Job takes the node where the most of
    /// these bindings are still to be made, its group the placement that
    /// holds the most of them.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub jobs: std::collections::BTreeMap<String, Vec<String>>,
}

/// How `wasched-kube schedule` runs.
#[derive(Debug, Clone)]
pub struct ScheduleOptions {
    /// A KubeSchedulerConfiguration file (default: upstream's default
    /// profile, every node scored).
    pub config: Option<PathBuf>,
    /// Report the score class of every binding.
    pub ties: bool,
    /// Break kube-scheduler's ties toward these choices.
    pub prefer: Option<Preferences>,
    /// Give up when kube-scheduler is not quiet within this.
    pub timeout: Duration,
    /// Keep the control plane's and scheduler's logs here (default:
    /// `WASCHED_KUBE_LOG`, at verbosity `WASCHED_KUBE_V`; else discarded).
    pub log: Option<PathBuf>,
    /// Run wasched's components inside kube-scheduler
    /// (`--engine kube-scheduler-wasm`).
    pub wasm: Option<WasmComponents>,
}

/// Which components kube-scheduler runs (`wasched-kube --wasm`): enabled
/// at the points they export, in place of the in-tree workload plugins,
/// unless the configuration arranges them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WasmComponents {
    /// A directory of `*.wasm` components; `None`: the bundled ones.
    pub plugins: Option<PathBuf>,
}

impl Default for ScheduleOptions {
    fn default() -> Self {
        Self {
            config: None,
            ties: false,
            prefer: None,
            timeout: Duration::from_secs(300),
            log: std::env::var_os("WASCHED_KUBE_LOG").map(PathBuf::from),
            wasm: None,
        }
    }
}

/// How `wasched-kube up` runs.
#[derive(Debug, Clone, Default)]
pub struct UpOptions {
    /// Where to write the kubeconfig.
    pub kubeconfig: PathBuf,
    /// Also run kube-scheduler.
    pub with_kube_scheduler: bool,
    /// Its KubeSchedulerConfiguration.
    pub config: Option<PathBuf>,
    /// The API server's port on 127.0.0.1 (0: a free one).
    pub port: u16,
    /// Feature gates changed from the workload gates on
    /// (`Name=true,Other=false`): a cluster as one with a gate off is.
    pub feature_gates: Option<String>,
    /// Pods keep a node's time (`wasched-kube up --lifecycle`): bound pods
    /// start, succeed after their `wasched.io/run-for` annotation, and stay
    /// terminating for their grace period.
    pub lifecycle: bool,
    /// Run upstream's Job controller (`--job-controller`).
    pub job_controller: bool,
}

/// How `wasched-kube play` runs.
#[derive(Debug, Clone)]
pub struct PlayOptions {
    /// A KubeSchedulerConfiguration file (default: upstream's default
    /// profile, every node scored).
    pub config: Option<PathBuf>,
    /// Stop this long after the start even if Jobs still run.
    pub until: Duration,
    /// Keep the logs here (default: `WASCHED_KUBE_LOG`).
    pub log: Option<PathBuf>,
    /// Run wasched's components inside kube-scheduler.
    pub wasm: Option<WasmComponents>,
    /// Break kube-scheduler's ties toward these choices (a Job's pods by
    /// [`Preferences::jobs`]: the Job controller names them at random).
    pub prefer: Option<Preferences>,
}

impl Default for PlayOptions {
    fn default() -> Self {
        Self {
            config: None,
            until: Duration::from_secs(1800),
            log: std::env::var_os("WASCHED_KUBE_LOG").map(PathBuf::from),
            wasm: None,
            prefer: None,
        }
    }
}

/// `--prefer FILE` when there are preferences, the file written in `dir`.
fn prefer_arg(command: &mut Command, dir: &Path, prefer: &Option<Preferences>) -> Result<()> {
    if let Some(prefer) = prefer {
        let file = dir.join("prefer.json");
        std::fs::write(&file, serde_json::to_vec(prefer)?)
            .with_context(|| format!("cannot write {}", file.display()))?;
        command.arg("--prefer").arg(file);
    }
    Ok(())
}

/// The arguments that choose kube-scheduler's configuration, components
/// and logs.
fn scheduler_args(
    command: &mut Command,
    config: &Option<PathBuf>,
    wasm: &Option<WasmComponents>,
    log: &Option<PathBuf>,
) {
    if let Some(config) = config {
        command.arg("--config").arg(config);
    }
    if let Some(wasm) = wasm {
        command.arg("--wasm");
        if let Some(dir) = &wasm.plugins {
            command.arg("--wasm-plugins").arg(dir);
        }
    }
    if let Some(log) = log {
        command.arg("--log").arg(log);
        if let Some(v) = std::env::var_os("WASCHED_KUBE_V") {
            command.arg("--v").arg(v);
        }
    }
}

/// The harness's one-line error, without its `wasched-kube: ` prefix.
fn last_line(stderr: &[u8], status: &std::process::ExitStatus) -> String {
    let text = String::from_utf8_lossy(stderr);
    let line = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    let line = line.strip_prefix("wasched-kube: ").unwrap_or(line);
    if line.is_empty() {
        format!("{BINARY} failed ({status}) without saying why")
    } else {
        line.to_string()
    }
}

/// A directory removed when dropped.
struct Scratch {
    path: PathBuf,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn scratch_dir() -> Result<Scratch> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let path = std::env::temp_dir().join(format!(
        "wasched-cluster-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&path).with_context(|| format!("cannot make {}", path.display()))?;
    Ok(Scratch { path })
}

/// Writes `objects` as a List to `file`.
fn write_objects(objects: &ClusterObjects, file: &Path) -> Result<()> {
    std::fs::write(file, serde_json::to_vec(&objects.to_list())?)
        .with_context(|| format!("cannot write {}", file.display()))
}
