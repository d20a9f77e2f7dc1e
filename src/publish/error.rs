//! `PublishError`: what stops `c2s publish` and `c2s pack`.

use std::path::PathBuf;

use crate::serve::ServeError;

/// Errors of `c2s publish` and `c2s pack`.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error(transparent)]
    Http(#[from] crate::http::HttpError),
    #[error(transparent)]
    Serve(#[from] ServeError),
    #[error(
        "{path}: {message}\n  help: fix or delete it; a publish without it adopts remote skills whose titles match"
    )]
    Manifest { path: PathBuf, message: String },
    #[error("the Skills API answered unexpectedly: {0}")]
    Answer(String),
    #[error(
        "skill {skill} is {bytes} bytes in {files} files, over the Skills API's limit of {limit} bytes per skill; nothing was sent\n  help: raise tree.K (more, smaller top-level skills) and build again"
    )]
    TooLarge {
        skill: String,
        bytes: u64,
        files: usize,
        limit: u64,
    },
    #[error(
        "skill {skill} has {files} files, over the Skills API's limit of {limit} files per skill (claude.ai's too); nothing was sent\n  help: raise tree.K (more, smaller top-level skills) and build again"
    )]
    TooManyFiles {
        skill: String,
        files: usize,
        limit: usize,
    },
    #[error("cannot pack: {0}")]
    Pack(String),
    #[error(transparent)]
    Zip(#[from] super::zip::ZipError),
    #[error("{context} {path}: {source}")]
    Io {
        context: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{out} differs from what the last build wrote ({what}); nothing was {}\n  help: run `c2s build` (or `c2s check` to see why) and {} again",
        command.done(), command.name()
    )]
    Stale {
        out: PathBuf,
        what: String,
        command: Reader,
    },
}

/// The command that reads the output's skill folders, as its errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    Publish,
    Pack,
}

impl Reader {
    fn name(self) -> &'static str {
        match self {
            Reader::Publish => "publish",
            Reader::Pack => "pack",
        }
    }

    fn done(self) -> &'static str {
        match self {
            Reader::Publish => "sent",
            Reader::Pack => "packed",
        }
    }
}
