//! Progress on stderr: indicatif bars on a terminal, plain cargo-style lines otherwise, nothing with `--quiet`.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Warnings of one kind shown one by one; the rest are counted in one line.
pub const SHOWN: usize = 10;

/// Where progress goes.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    quiet: bool,
    /// `-v`: every warning of a kind, not the first [`SHOWN`], and each step's time.
    verbose: bool,
    /// Whether bars are drawn: on a terminal that reports its size. One that does not (a pty
    /// of size 0 × 0) gets the plain lines, since indicatif would assume 80 columns and a
    /// wrapped bar stays on the screen after it is cleared.
    bars: bool,
    /// Whether status lines, warnings and errors are colored.
    color: bool,
    /// Whether warnings are shown (always, but for work whose caller reports on its own).
    warnings: bool,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        let tty = std::io::stderr().is_terminal();
        Progress {
            quiet,
            verbose: false,
            bars: tty && console::Term::stderr().size_checked().is_some(),
            color: tty && color_allowed(|k| std::env::var_os(k)),
            warnings: true,
        }
    }

    /// With colors forced on or off (`--color always|never`), or as detected (`None`).
    pub fn with_color(self, forced: Option<bool>) -> Progress {
        Progress {
            color: forced.unwrap_or(self.color),
            ..self
        }
    }

    /// With `-v`'s detail: every warning of a kind, and each step's time.
    pub fn with_verbose(self, verbose: bool) -> Progress {
        Progress { verbose, ..self }
    }

    /// Whether `-v` asked for detail.
    pub fn verbose(&self) -> bool {
        self.verbose && !self.quiet
    }

    /// Warnings of one kind: the first [`SHOWN`] (all of them with `-v`), then one line that
    /// `more` words from the count of those left out.
    pub fn warnings(&self, texts: &[String], more: impl Fn(usize) -> String) {
        let shown = if self.verbose { texts.len() } else { SHOWN };
        for t in texts.iter().take(shown) {
            self.warning(t);
        }
        if texts.len() > shown {
            self.warning(&format!(
                "{} (`-v` shows them all; `--json` lists them)",
                more(texts.len() - shown)
            ));
        }
    }

    /// Whether what is printed is colored.
    pub fn color(&self) -> bool {
        self.color
    }

    /// An error line, as the command ends.
    pub fn error(&self, text: &str) {
        if self.color {
            eprintln!("\x1b[1;31merror\x1b[0m: {text}");
        } else {
            eprintln!("error: {text}");
        }
    }

    /// Nothing at all, warnings included: for a build run to answer another command's question
    /// (`c2s check --verify-state`), which says what it found itself.
    pub fn silent() -> Progress {
        Progress {
            warnings: false,
            ..Progress::new(true)
        }
    }

    /// A bar of `total` items for a long stage (hidden when quiet or not a terminal).
    pub fn bar(&self, verb: &str, total: usize) -> ProgressBar {
        if self.quiet || !self.bars {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(total as u64);
        pb.set_style(
            ProgressStyle::with_template("{prefix:>12.cyan.bold} [{bar:30}] {pos}/{len} {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        pb.set_prefix(verb.to_string());
        pb.enable_steady_tick(Duration::from_millis(120));
        pb
    }

    /// Progress of `total` items of a stage: a bar on a terminal; elsewhere a plain line at most
    /// every 10 s (`C2S_PROGRESS_MS` sets the interval) with done/total, rate and time left.
    pub fn meter(&self, verb: &str, total: usize) -> Meter {
        if self.quiet || self.bars {
            return Meter {
                bar: self.bar(verb, total),
                plain: None,
            };
        }
        let every = std::env::var("C2S_PROGRESS_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(Duration::from_secs(10), Duration::from_millis);
        let now = Instant::now();
        Meter {
            bar: ProgressBar::hidden(),
            plain: Some(Plain {
                verb: verb.to_string(),
                total,
                done: AtomicUsize::new(0),
                start: now,
                last: Mutex::new(now),
                every,
            }),
        }
    }

    /// One status line: `    Verb message`.
    pub fn status(&self, verb: &str, msg: &str) {
        if self.quiet {
            return;
        }
        if self.color {
            eprintln!("\x1b[1;32m{verb:>12}\x1b[0m {msg}");
        } else {
            eprintln!("{verb:>12} {msg}");
        }
    }

    /// A warning line; shown even with `--quiet`, like a compiler's.
    pub fn warning(&self, text: &str) {
        if !self.warnings {
            return;
        }
        if self.color {
            eprintln!("\x1b[1;33mwarning\x1b[0m: {text}");
        } else {
            eprintln!("warning: {text}");
        }
    }
}

/// Whether a terminal may be colored, by the environment `var` reads: not when `NO_COLOR` is
/// set to anything but the empty string (no-color.org), nor for `TERM=dumb`.
fn color_allowed(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    let no_color = var("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = var("TERM").is_some_and(|t| t == "dumb");
    !no_color && !dumb
}

/// A stage's progress (see [`Progress::meter`]).
pub struct Meter {
    bar: ProgressBar,
    plain: Option<Plain>,
}

struct Plain {
    verb: String,
    total: usize,
    done: AtomicUsize,
    start: Instant,
    last: Mutex<Instant>,
    every: Duration,
}

impl Meter {
    /// `n` more items done.
    pub fn inc(&self, n: usize) {
        self.bar.inc(n as u64);
        let Some(p) = &self.plain else { return };
        let done = p.done.fetch_add(n, Ordering::Relaxed) + n;
        let mut last = p.last.lock().unwrap_or_else(|e| e.into_inner());
        if last.elapsed() < p.every || done >= p.total {
            return;
        }
        *last = Instant::now();
        eprintln!(
            "{:>12} {}",
            p.verb,
            rate_line(done, p.total, p.start.elapsed())
        );
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// `12/40 (0.3/s, about 1m 33s left)`.
pub fn rate_line(done: usize, total: usize, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64().max(1e-3);
    let rate = done as f64 / secs;
    let left = if rate > 0.0 {
        (total.saturating_sub(done)) as f64 / rate
    } else {
        0.0
    };
    format!(
        "{done}/{total} ({}/s, about {} left)",
        round_rate(rate),
        duration(left)
    )
}

fn round_rate(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}")
    } else if r >= 1.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.2}")
    }
}

/// `45s`, `3m 05s`, `1h 02m`.
fn duration(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_lines_say_done_rate_and_time_left() {
        assert_eq!(
            rate_line(12, 40, Duration::from_secs(40)),
            "12/40 (0.30/s, about 1m 33s left)"
        );
        assert_eq!(
            rate_line(1, 2, Duration::from_secs(3600)),
            "1/2 (0.00/s, about 1h 00m left)"
        );
        assert_eq!(
            rate_line(50, 100, Duration::from_secs(2)),
            "50/100 (25/s, about 2s left)"
        );
    }
}

#[cfg(test)]
mod color_tests {
    use super::*;

    #[test]
    fn no_color_and_a_dumb_terminal_turn_colors_off() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        assert!(color_allowed(env(&[])));
        assert!(!color_allowed(env(&[("NO_COLOR", "1")])));
        // An empty NO_COLOR is as if unset.
        assert!(color_allowed(env(&[("NO_COLOR", "")])));
        assert!(!color_allowed(env(&[("TERM", "dumb")])));
        // `--color` decides over the environment.
        let p = Progress::new(true).with_color(Some(true));
        assert!(p.color());
        assert!(!p.with_color(Some(false)).color());
    }
}
