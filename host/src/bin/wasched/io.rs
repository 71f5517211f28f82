//! What the commands read and write around the decisions: which files,
//! how the report names them, the terminal's width, the HTML report file.

use std::path::PathBuf;

use anyhow::Context;

/// How the report names the snapshot: its files, or the bundled default.
pub fn snapshot_title(files: &[PathBuf]) -> String {
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
pub fn input_files(files: Vec<PathBuf>) -> Vec<PathBuf> {
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
pub fn terminal_width() -> Option<usize> {
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

/// Writes the report as one self-contained HTML file.
pub fn write_html(path: &std::path::Path, report: &wasched::report::Report) -> anyhow::Result<()> {
    std::fs::write(path, wasched::report::html::render(report))
        .with_context(|| format!("{}: cannot write the HTML report", path.display()))
}
