//! Reading and validating `c2s.toml`, and `Loaded`: a config with the folder its paths resolve
//! against.

use std::path::{Path, PathBuf};

use super::{Config, ConfigError};

/// A configuration together with the folder its relative paths are resolved against.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub base_dir: PathBuf,
    /// The file it came from, if any.
    pub path: Option<PathBuf>,
    /// What the command line added: the corpus PATH given instead of a config, and `--set`s
    /// (recorded in the lock, so that `--out DIR` alone finds the build again).
    pub args: CommandArgs,
}

/// The parts of a command line that shape a build beyond its config file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommandArgs {
    pub corpus: Option<PathBuf>,
    pub sets: Vec<String>,
}

impl Loaded {
    /// Reads and validates a config file; its paths resolve against the file's folder.
    pub fn from_file(file: &Path) -> Result<Loaded, ConfigError> {
        Ok(Loaded {
            config: Config::load(file)?,
            base_dir: file
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from(".")),
            path: Some(file.to_path_buf()),
            args: CommandArgs::default(),
        })
    }

    /// The default configuration, with paths resolving against `dir`.
    pub fn defaults(dir: PathBuf) -> Loaded {
        Loaded {
            config: Config::default(),
            base_dir: dir,
            path: None,
            args: CommandArgs::default(),
        }
    }

    /// Resolves a configured path against the config's folder.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }

    /// Where the memo is: `cache.path`, resolved against the config's folder.
    pub fn memo_path(&self) -> PathBuf {
        self.resolve(&self.config.cache.path)
    }
}

impl Config {
    /// Parses TOML text; `origin` names the file in error messages.
    pub fn from_toml(text: &str, origin: &Path) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: origin.to_path_buf(),
            message: parse_message(text, &e),
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Reads and parses a config file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Config::from_toml(&text, path)
    }

    /// Checks value ranges that the types cannot express.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let t = &self.tree;
        let bad = |field: &str, message: &str| Err(ConfigError::invalid(field, message));
        if t.p < 2 {
            return bad("tree.p", "must be at least 2");
        }
        if t.k < 1 {
            return bad("tree.K", "must be at least 1");
        }
        if !(0.0..1.0).contains(&t.tau) {
            return bad("tree.tau", "must be in [0, 1)");
        }
        if t.min_cluster_size < 1 {
            return bad("tree.min_cluster_size", "must be at least 1");
        }
        if t.max_doc_chars < 100 {
            return bad("tree.max_doc_chars", "must be at least 100");
        }
        super::embed::validate_embed(&self.embed)?;
        super::llm::validate_llm(&self.llm)?;
        super::llm::validate_agent(&self.agent)?;
        if self.kmeans.max_iter < 1 || self.kmeans.n_init < 1 {
            return bad("kmeans", "max_iter and n_init must be at least 1");
        }
        if !(0.0..=1.0).contains(&self.incremental.full_rebuild_share) {
            return bad("incremental.full_rebuild_share", "must be in [0, 1]");
        }
        if self.corpus.paths.is_empty() {
            return bad("corpus.paths", "must name at least one folder or file");
        }
        self.output.limits.validate()?;
        Ok(())
    }
}

/// A TOML error as a user reads it: the key it is about (`tree.p`), and the expected type in
/// words, not Rust's (`expected usize`).
fn parse_message(text: &str, e: &toml::de::Error) -> String {
    let message = in_words(e.to_string().trim_end());
    match e.span().and_then(|s| key_at(text, s.start)) {
        Some(key) => format!("`{key}`: {message}"),
        None => message,
    }
}

/// A deserializer's message with Rust's type names in words (`expected usize`: a whole
/// number, 0 or more).
pub(super) fn in_words(message: &str) -> String {
    let mut message = message.to_string();
    for (rust, words) in [
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected u32", "expected a whole number, 0 or more"),
        ("expected u16", "expected a whole number, 0 or more"),
        ("expected u8", "expected a whole number, 0 or more"),
        ("expected i64", "expected a whole number"),
        ("expected i32", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected f32", "expected a number"),
    ] {
        message = message.replace(rust, words);
    }
    message
}

/// The dotted key whose value starts at byte `at` of a TOML text: the last `[table]` header
/// before it and the key on its line.
fn key_at(text: &str, at: usize) -> Option<String> {
    let before = text.get(..at)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let key = before[line_start..].split('=').next()?.trim();
    if key.is_empty() || key.starts_with('[') || !before[line_start..].contains('=') {
        return None;
    }
    let table = before[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('[') && !l.starts_with("[["))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    Some(match table {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_defaults() {
        let c = Config::from_toml("", Path::new("c2s.toml")).unwrap();
        assert_eq!(c, Config::default());
    }

    #[test]
    fn unknown_key_is_named() {
        let e = Config::from_toml("[tree]\npp = 3\n", Path::new("c2s.toml")).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("pp"), "{msg}");
        assert!(msg.contains("c2s.toml"), "{msg}");
    }

    #[test]
    fn a_type_error_names_the_key_and_the_type_in_words() {
        let e = Config::from_toml(
            "[corpus]\npaths = [\"d\"]\n[tree]\np = \"eight\"\n",
            Path::new("c2s.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("`tree.p`") && e.contains("expected a whole number, 0 or more"),
            "{e}"
        );
        assert!(!e.contains("usize"), "{e}");
        let mut c = Config::default();
        let e = c
            .apply_sets(&["tree.p=abc".to_string()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected a whole number, 0 or more"), "{e}");
    }
}
