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

/// The line a long read shows on stderr — the file being read and how many
/// objects are read so far — only when stderr is a terminal, and only once
/// the read has taken [`Reading::SHOW_AFTER`] (a small file never flashes
/// a line). Clones share the line.
#[derive(Clone, Default)]
pub struct Reading(Option<std::sync::Arc<std::sync::Mutex<ReadingLine>>>);

struct ReadingLine {
    started: std::time::Instant,
    show_after: std::time::Duration,
    target: Option<ProgressDrawTarget>,
    bar: Option<ProgressBar>,
    file: String,
    objects: u64,
}

impl std::fmt::Debug for Reading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Reading(shown)"
        } else {
            "Reading(hidden)"
        })
    }
}

impl Reading {
    /// How long a read goes on before its line shows.
    pub const SHOW_AFTER: std::time::Duration = std::time::Duration::from_millis(250);

    /// A line on stderr if it is a terminal; otherwise nothing is shown.
    pub fn on_terminal() -> Self {
        if std::io::stderr().is_terminal() {
            Self::to(ProgressDrawTarget::stderr(), Self::SHOW_AFTER)
        } else {
            Self::default()
        }
    }

    /// A line drawn to `target` once a read has taken `show_after`.
    pub fn to(target: ProgressDrawTarget, show_after: std::time::Duration) -> Self {
        Self(Some(std::sync::Arc::new(std::sync::Mutex::new(
            ReadingLine {
                started: std::time::Instant::now(),
                show_after,
                target: Some(target),
                bar: None,
                file: String::new(),
                objects: 0,
            },
        ))))
    }

    /// Reading `file` starts (the delay counts from the first file).
    pub fn file(&self, file: &str) {
        self.with(|line| {
            if line.file.is_empty() {
                line.started = std::time::Instant::now();
            }
            line.file = file.to_string();
            line.draw();
        });
    }

    /// One more object is read.
    pub fn object(&self) {
        self.with(|line| {
            line.objects += 1;
            if line.objects % 256 == 0 {
                line.draw();
            }
        });
    }

    /// Reading is over: the line is cleared.
    pub fn finish(&self) {
        self.with(|line| {
            if let Some(bar) = line.bar.take() {
                bar.finish_and_clear();
            }
        });
    }

    fn with(&self, f: impl FnOnce(&mut ReadingLine)) {
        if let Some(line) = &self.0 {
            f(&mut line
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner));
        }
    }
}

impl ReadingLine {
    fn draw(&mut self) {
        if self.bar.is_none()
            && self.started.elapsed() >= self.show_after
            && let Some(target) = self.target.take()
        {
            let bar =
                ProgressBar::with_draw_target(None, target).with_elapsed(self.started.elapsed());
            bar.set_style(
                ProgressStyle::with_template("reading {msg}: {pos} objects, {elapsed}")
                    .expect("valid template"),
            );
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_message(self.file.clone());
            bar.set_position(self.objects);
        }
    }
}

impl Drop for ReadingLine {
    /// A read that fails leaves no line above its error.
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A terminal that keeps what is written to it.
    #[derive(Debug, Clone, Default)]
    struct Screen(Arc<Mutex<String>>);

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            100
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(&format!("{s}\n"))
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_long_read_shows_the_file_and_the_objects_read() {
        let screen = Screen::default();
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(screen.clone()), 100);
        let reading = Reading::to(target, std::time::Duration::ZERO);
        let mut manifests = crate::manifest::Manifests {
            progress: reading.clone(),
            ..Default::default()
        };
        let text = crate::generate::generate_json(&crate::generate::Options {
            nodes: 600,
            pending_pods: 10,
            seed: 1,
            shape: crate::generate::Shape::Cpu,
        })
        .unwrap();
        reading.file("dump.json");
        crate::manifest::load_str(&mut manifests, "dump.json", &text).unwrap();
        // Drawing is rate-limited: the last state, drawn now.
        reading.with(|line| line.bar.as_ref().expect("shown").force_draw());
        reading.finish();
        let shown = screen.0.lock().unwrap().clone();
        let last = shown
            .rsplit("reading dump.json: ")
            .next()
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse::<u64>().ok());
        assert!(last.is_some_and(|n| n >= 512), "{shown:?}");

        // Not a terminal, or a read shorter than the delay: nothing.
        let screen = Screen::default();
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(screen.clone()), 100);
        let reading = Reading::to(target, std::time::Duration::from_secs(3600));
        manifests.progress = reading.clone();
        reading.file("dump.json");
        crate::manifest::load_str(&mut manifests, "dump.json", &text).unwrap();
        assert_eq!(screen.0.lock().unwrap().as_str(), "");
    }
}
