//! `ConfigError`: reading, parsing and validating `c2s.toml` and `--set`.

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
    #[error(
        "{out} is not an output c2s built ({why}), and there is no c2s.toml in {dir} to say what to build\n  help: build it first (`c2s build PATH --out {out}`), or run this where the c2s.toml that builds it is"
    )]
    NoOutput {
        out: String,
        why: &'static str,
        dir: PathBuf,
    },
    #[error("invalid --set {arg:?}: {message}\n  help: use --set key=value, e.g. --set tree.p=8")]
    Set { arg: String, message: String },
    #[error("invalid config value `{field}`: {message}")]
    Invalid { field: String, message: String },
}

impl ConfigError {
    /// The error for `field` holding a value out of range.
    pub(super) fn invalid(field: &str, message: &str) -> ConfigError {
        ConfigError::Invalid {
            field: field.to_string(),
            message: message.to_string(),
        }
    }
}
