//! c2s compiles a folder of documents into a navigable tree of agent skills (the Corpus2Skill method).
//!
//! Pipeline (data flows one way):
//! `config` → `ingest` → `stage::card` → `stage::embed` → `stage::hierarchy` (per level:
//! `stage::cluster` → `stage::summarize` / label → `stage::repartition` → re-embed) →
//! `stage::enrich` → `stage::render` → `output` (atomic write) + `manifest` (`c2s.lock`).
//! Backends sit behind traits: `llm::Llm`, `embed::Embedder`, `kmeans::KmeansBackend`.

pub mod build;
pub mod cli;
pub mod config;
pub mod diag;
pub mod embed;
pub mod error;
pub mod ingest;
pub mod kmeans;
pub mod llm;
pub mod manifest;
pub mod output;
pub mod progress;
pub mod rng;
pub mod stage;
pub mod text;
pub mod tree;

use std::process::ExitCode;

use cli::{Cli, Command};
use error::Error;
use progress::Progress;

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: an error (bad config, no documents, IO failure).
pub const EXIT_ERROR: u8 = 2;

/// Runs one CLI invocation and returns the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    match dispatch(&cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn dispatch(cli: &Cli) -> Result<u8, Error> {
    let progress = Progress::new(cli.quiet);
    match &cli.command {
        Command::Build(args) => {
            let target = args.target.resolve()?;
            let opts = build::BuildOptions {
                loaded: target.loaded,
                out_dir: target.out_dir,
                display_base: target.display_base,
            };
            let report = build::build(&opts, &progress)?;
            if args.json {
                println!("{}", serde_json::to_string(&report)?);
            }
            progress.status(
                "Finished",
                &format!(
                    "{} documents → {} skills, {} levels, {} navigation files in {:.2}s ({} warnings, {} files written) → {}",
                    report.documents,
                    report.skills,
                    report.levels,
                    report.navigation_files,
                    report.seconds,
                    report.warnings,
                    report.files.written,
                    report.output
                ),
            );
            Ok(EXIT_OK)
        }
        Command::Clean(args) => {
            let target = args.resolve()?;
            clean(&target.out_dir, &progress)?;
            Ok(EXIT_OK)
        }
    }
}

fn clean(out: &std::path::Path, progress: &Progress) -> Result<(), Error> {
    if !out.exists() {
        progress.status("Clean", &format!("nothing to remove at {}", out.display()));
        return Ok(());
    }
    output::check_replaceable(out)?;
    std::fs::remove_dir_all(out).map_err(|source| Error::Io {
        context: "cannot remove",
        path: out.to_path_buf(),
        source,
    })?;
    progress.status("Removed", &out.display().to_string());
    Ok(())
}
