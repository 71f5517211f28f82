//! The progress bar long runs show on stderr — only when stderr is a
//! terminal, so it never mixes into piped output or JSON/YAML.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar over queued scheduling entities, or nothing.
pub struct Bar {
    label: &'static str,
    bar: Option<ProgressBar>,
    enabled: bool,
}

impl Bar {
    /// A bar labelled `label`, drawn only if stderr is a terminal.
    pub fn on_terminal(label: &'static str) -> Self {
        Self {
            label,
            bar: None,
            enabled: std::io::stderr().is_terminal(),
        }
    }

    /// `done` of `total` entities are through their cycle.
    pub fn update(&mut self, done: usize, total: usize) {
        if !self.enabled {
            return;
        }
        let label = self.label;
        let bar = self.bar.get_or_insert_with(|| {
            let bar =
                ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{msg} [{bar:40}] {pos}/{len} entities, {per_sec}, eta {eta}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.set_message(label);
            bar
        });
        if (done as u64) < bar.position() {
            // A second run (compare's side B) starts over, rate included.
            bar.reset();
        }
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    }

    /// Clears the bar (the decisions follow on stdout).
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Bar {
    /// A run that fails leaves no half-drawn bar above its error line.
    fn drop(&mut self) {
        self.finish();
    }
}
