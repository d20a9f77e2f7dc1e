//! The command layer: one file per command (`build`, `check`, `clean`, `cache`, `eval`,
//! `watch`, `serve` for `ask` and `mcp`, `publish`, `pack`, `init`), the CLI grammar (`cli`),
//! dispatch and exit codes.

pub mod build;
pub mod cache;
pub mod check;
pub mod clean;
pub mod cli;
pub mod dry_run;
pub mod error;
pub mod eval;
pub mod init;
pub mod pack;
pub mod publish;
pub mod serve;
pub mod watch;

use std::process::ExitCode;

use crate::progress::Progress;
use cli::{Cli, Command, TargetArgs};
pub use error::Error;

/// Exit code: success (for `check`: the output is fresh).
pub const EXIT_OK: u8 = 0;
/// Exit code: `check` found stale output.
pub const EXIT_STALE: u8 = 1;
/// Exit code: an error (bad config, no documents, IO failure).
pub const EXIT_ERROR: u8 = 2;

/// Runs one CLI invocation and returns the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    let progress = Progress::new(cli.quiet)
        .with_color(cli.color.forced())
        .with_verbose(cli.verbose);
    let result = match &cli.command {
        Command::Build(args) => build::build_cmd(args, &progress),
        Command::Check(args) => check::check_cmd(args),
        Command::Watch(args) => watch::watch_cmd(args, &progress),
        Command::Clean(args) => clean::clean_cmd(args, &progress),
        Command::Cache { action } => cache::cache_cmd(action, &progress),
        Command::Ask(args) => serve::ask_cmd(args, &progress),
        Command::Mcp(args) => serve::mcp_cmd(args),
        Command::Eval(args) => eval::eval_cmd(args, &progress),
        Command::Publish(args) => publish::publish_cmd(args, &progress),
        Command::Pack(args) => pack::pack_cmd(args, &progress),
        Command::Init(args) => init::init_cmd(args, &progress),
        Command::Completions { shell } => completions(*shell),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            progress.error(&e.to_string());
            ExitCode::from(exit_code(&e))
        }
    }
}

/// `c2s completions SHELL`: the completion script of the whole command line, on stdout.
fn completions(shell: clap_complete::Shell) -> Result<u8, Error> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "c2s", &mut std::io::stdout());
    Ok(EXIT_OK)
}

pub(crate) fn memo_path(target: &TargetArgs) -> Result<std::path::PathBuf, Error> {
    let t = target.resolve()?;
    Ok(t.loaded.memo_path())
}

/// Maps an error to the exit code for it.
pub fn exit_code(e: &Error) -> u8 {
    e.exit_code()
}

pub(crate) fn nav_params(
    nav: &crate::cmd::cli::NavArgs,
    fallback: bool,
) -> crate::serve::navigator::NavParams {
    crate::serve::navigator::NavParams {
        beam: nav.beam.max(1),
        k: nav.k.max(1),
        fallback,
        fetch: 3,
        row_weight: nav.row_weight.max(0.0),
        dense_weight: nav.dense_weight.map(|w| w.max(0.0)),
    }
}
