//! `BuildError`: what stops a build, in ingest, the stages, the memo and the pipeline, with
//! user-facing messages that name the file and the fix. Each other layer has its own error type
//! (`config::ConfigError`, `serve::ServeError`, `publish::PublishError`, `cmd::Error`, …).

use std::path::PathBuf;

use crate::config::ConfigError;

/// Errors that stop a build.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(
        "no usable documents in {paths}\n  help: check corpus.paths and the include/exclude globs; supported formats are .md .markdown .mdx .rst .rest .txt .json .jsonl .ndjson .html .htm .pdf .docx"
    )]
    EmptyCorpus { paths: String },
    /// The corpus is larger than the host's skills hold (`format::limits::fits_the_host` says
    /// by how much, and the choices).
    #[error("{0}")]
    DoesNotFit(String),
    #[error(
        "corpus path {path} does not exist\n  help: fix corpus.paths in the config or the PATH argument"
    )]
    MissingSource { path: PathBuf },
    #[error("invalid glob {glob:?} in corpus.{field}: {message}")]
    Glob {
        field: &'static str,
        glob: String,
        message: String,
    },
    #[error(
        "refusing to replace {path}: it exists, is not empty and holds no c2s.lock, so it is not a c2s output\n  help: choose another output directory (--out or output.dir), or remove it yourself"
    )]
    ForeignOutput { path: PathBuf },
    #[error(
        "output directory {out} overlaps corpus path {source_path}\n  help: put the output outside the corpus (or the corpus outside the output)"
    )]
    OutputOverlapsCorpus { out: PathBuf, source_path: PathBuf },
    #[error(
        "the skills folder {skills} is inside the output folder {out}\n  help: leave output.skills_dir unset to keep the skills in the output, or point it outside (e.g. .claude/skills)"
    )]
    SkillsInsideOutput { out: PathBuf, skills: PathBuf },
    #[error(
        "refusing to write the skill folder {path}: it exists and this output's c2s.lock does not list it (another skill of the same name?)\n  help: rename or move that folder, or choose another output.skills_dir"
    )]
    SkillsClash { path: PathBuf },
    #[error("{context} {path}: {source}")]
    Io {
        context: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("embedding backend failed: {0}")]
    Embed(#[from] crate::embed::EmbedError),
    /// An LLM stage failed for good on one item.
    #[error("LLM backend failed: {context}: {source}")]
    LlmStage {
        context: String,
        source: crate::llm::LlmError,
    },
    /// The LLM backend could not be set up from the config.
    #[error("LLM backend failed: {0}")]
    LlmSetup(#[from] crate::llm::SetupError),
    #[error("cache: {0}")]
    Cache(#[from] crate::db::cache::CacheError),
    /// A broken internal promise (a stage returned the wrong number of results, a thread
    /// panicked): a bug to report, not something the user can fix.
    #[error("internal error: {0}\n  help: please report this with the command that failed")]
    Internal(String),
    /// LLM requests wait for batches: the batched build submits or waits, then builds again.
    #[error(
        "LLM requests wait for a batch\n  help: run `c2s build` again to collect the batches and go on"
    )]
    Pending,
    #[error(
        "another c2s build is writing {path} (lock {lock})\n  help: wait for it to finish, or remove the lock file if no c2s process is running"
    )]
    Busy { path: PathBuf, lock: PathBuf },
}

impl BuildError {
    pub fn io(context: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        BuildError::Io {
            context,
            path: path.into(),
            source,
        }
    }
}

impl crate::db::exec::StageError for BuildError {
    fn is_pending(&self) -> bool {
        matches!(self, BuildError::Pending)
    }
    fn pending() -> Self {
        BuildError::Pending
    }
    fn internal(message: String) -> Self {
        BuildError::Internal(message)
    }
}
