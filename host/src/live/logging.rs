//! Log lines of the long-running commands, through `tracing`: wasched's own
//! and the Kubernetes client's (kube-rs logs through `tracing` too), on
//! stderr as text or as JSON lines.

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// `time LEVEL target: message key=value ...`
    Text,
    /// One JSON object a line (`timestamp`, `level`, `target`, `fields`).
    Json,
}

/// The least severe lines written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogLevel {
    /// Errors only.
    Error,
    /// Warnings and errors.
    Warn,
    /// What the command does, and the differences it finds.
    Info,
    /// Every comparison, plugin log line and client request.
    Debug,
    /// Everything the libraries say.
    Trace,
}

impl LogLevel {
    fn filter(self) -> tracing::level_filters::LevelFilter {
        use tracing::level_filters::LevelFilter;
        match self {
            Self::Error => LevelFilter::ERROR,
            Self::Warn => LevelFilter::WARN,
            Self::Info => LevelFilter::INFO,
            Self::Debug => LevelFilter::DEBUG,
            Self::Trace => LevelFilter::TRACE,
        }
    }
}

/// Sends every `tracing` line of the process to stderr in `format`, from
/// `level` up. A second call changes nothing.
pub fn init(format: LogFormat, level: LogLevel) {
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level.filter())
        .with_ansi(false);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}
