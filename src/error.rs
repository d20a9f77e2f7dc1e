//! Error types for every layer, with user-facing messages that name the file and the fix.

use std::path::PathBuf;

/// Errors in reading or validating configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid config {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error(
        "no c2s.toml in {dir}\n  help: create one (see README.md, \"Configuration\"), pass --config FILE, or build a folder directly: `c2s build PATH --out DIR`"
    )]
    NotFound { dir: PathBuf },
    #[error("invalid --set {arg:?}: {message}\n  help: use --set key=value, e.g. --set tree.p=8")]
    Set { arg: String, message: String },
    #[error("invalid config value `{field}`: {message}")]
    Invalid { field: String, message: String },
}

/// Errors that stop a build.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(
        "no usable documents in {paths}\n  help: check corpus.paths and the include/exclude globs; supported formats are .md .markdown .txt .json .jsonl .html .htm"
    )]
    EmptyCorpus { paths: String },
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
    Embed(String),
    #[error("LLM backend failed: {0}")]
    Llm(String),
    #[error("cache: {0}")]
    Cache(String),
    /// LLM requests wait for batches: the batched build submits or waits, then builds again.
    #[error(
        "LLM requests wait for a batch\n  help: run `c2s build` again to collect the batches and go on"
    )]
    Pending,
    #[error(transparent)]
    Batch(#[from] crate::llm::batch::BatchError),
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

/// Errors in opening a compiled output for serving (`ask`, `mcp`, `eval`).
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "{path} is not a compiled c2s output: {why}\n  help: run `c2s build` first, or pass --out DIR naming the folder that holds c2s.lock"
    )]
    NotOutput { path: PathBuf, why: String },
    #[error(
        "{path}: {message}\n  help: rebuild the output with `c2s build` (the file was edited, or written by another c2s version)"
    )]
    Corrupt { path: PathBuf, message: String },
    #[error("{context} {path}: {source}")]
    Io {
        context: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot embed the question the way {out} was built: {message}\n  help: {help}")]
    Embedder {
        out: PathBuf,
        message: String,
        help: String,
    },
}

/// Errors of `c2s publish`.
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
        "{out} differs from what the last build wrote ({what}); nothing was sent\n  help: run `c2s build` (or `c2s check` to see why) and publish again"
    )]
    Stale { out: PathBuf, what: String },
}

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
}
