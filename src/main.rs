//! The `c2s` binary: parse the command line and hand it to the library.

use clap::Parser;

fn main() -> std::process::ExitCode {
    c2s::run(c2s::cmd::cli::Cli::parse())
}
