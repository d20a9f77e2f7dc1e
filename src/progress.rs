//! Progress on stderr: indicatif bars on a terminal, plain cargo-style lines otherwise, nothing with `--quiet`.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Where progress goes.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    quiet: bool,
    tty: bool,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        Progress {
            quiet,
            tty: std::io::stderr().is_terminal(),
        }
    }

    /// A bar of `total` items for a long stage (hidden when quiet or not a terminal).
    pub fn bar(&self, verb: &str, total: usize) -> ProgressBar {
        if self.quiet || !self.tty {
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

    /// One status line: `    Verb message`.
    pub fn status(&self, verb: &str, msg: &str) {
        if self.quiet {
            return;
        }
        if self.tty {
            eprintln!("\x1b[1;32m{verb:>12}\x1b[0m {msg}");
        } else {
            eprintln!("{verb:>12} {msg}");
        }
    }

    /// A warning line; shown even with `--quiet`, like a compiler's.
    pub fn warning(&self, text: &str) {
        if self.tty {
            eprintln!("\x1b[1;33mwarning\x1b[0m: {text}");
        } else {
            eprintln!("warning: {text}");
        }
    }
}
