//! c2s compiles a folder of documents into a navigable tree of agent skills (the Corpus2Skill method).
//!
//! Pipeline (data flows one way):
//! `config` → `ingest` → `stage::card` → `stage::embed` → `stage::hierarchy` (per level:
//! `stage::cluster` → `stage::summarize` / label → `stage::repartition` → re-embed) →
//! `stage::enrich` → `stage::render` → `output` (atomic write) + `manifest` (`c2s.lock`).
//! Backends sit behind traits: `llm::Llm`, `embed::Embedder`, `kmeans::KmeansBackend`.

pub mod backends;
pub mod batched;
pub mod build;
pub mod check;
pub mod cli;
pub mod commands;
pub mod config;
pub mod db;
pub mod diag;
pub mod embed;
pub mod error;
pub mod eval;
pub mod http;
pub mod ingest;
pub mod kmeans;
pub mod limits;
pub mod llm;
pub mod manifest;
pub mod output;
pub mod progress;
pub mod publish;
pub mod records;
pub mod retrieval;
pub mod rng;
pub mod serve;
pub mod serve_cmd;
pub mod stage;
pub mod text;
pub mod tree;
pub mod watch;

use std::process::ExitCode;

use cli::{Cli, Command};
use progress::Progress;

/// Exit code: success (for `check`: the output is fresh).
pub const EXIT_OK: u8 = 0;
/// Exit code: `check` found stale output.
pub const EXIT_STALE: u8 = 1;
/// Exit code: an error (bad config, no documents, IO failure).
pub const EXIT_ERROR: u8 = 2;

/// Runs one CLI invocation and returns the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    let progress = Progress::new(cli.quiet);
    let result = match &cli.command {
        Command::Build(args) => commands::build_cmd(args, &progress),
        Command::Check(args) => commands::check_cmd(args),
        Command::Watch(args) => watch::watch_cmd(args, &progress),
        Command::Clean(args) => commands::clean_cmd(args, &progress),
        Command::Cache { action } => commands::cache_cmd(action, &progress),
        Command::Ask(args) => serve_cmd::ask_cmd(args, &progress),
        Command::Mcp(args) => serve_cmd::mcp_cmd(args),
        Command::Eval(args) => commands::eval_cmd(args, &progress),
        Command::Publish(args) => publish::publish_cmd(args, &progress),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(commands::exit_code(&e))
        }
    }
}
