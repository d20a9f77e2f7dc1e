//! `Error`: what a command fails with (every layer's error, by kind), and its exit code.

use std::path::PathBuf;

use crate::config::ConfigError;
use crate::error::BuildError;
use crate::publish::PublishError;
use crate::serve::ServeError;

/// Top-level error of a c2s command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error(transparent)]
    Serve(#[from] ServeError),
    #[error(transparent)]
    Publish(#[from] PublishError),
    #[error("{context} {path}: {source}")]
    Io {
        context: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write JSON to stdout: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Eval(#[from] crate::eval::EvalError),
    #[error(transparent)]
    Batched(#[from] crate::pipeline::batched::BatchedError),
    #[error(
        "{} already exists; `c2s init` changes no config: edit it, or remove it and run `c2s init` again",
        path.display()
    )]
    ConfigExists { path: PathBuf },
    #[error("{} is not a folder; `c2s init DIR` writes DIR/c2s.toml for the docs repo in DIR", path.display())]
    NotAFolder { path: PathBuf },
}

impl Error {
    /// The exit code of this error: every error is 2 (1 is `check`'s finding of stale output,
    /// which is an answer, not an error).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Config(_)
            | Error::Build(_)
            | Error::Serve(_)
            | Error::Publish(_)
            | Error::Io { .. }
            | Error::Json(_)
            | Error::Eval(_)
            | Error::Batched(_)
            | Error::ConfigExists { .. }
            | Error::NotAFolder { .. } => super::EXIT_ERROR,
        }
    }
}
