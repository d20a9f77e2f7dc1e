//! `c2s.toml`: the configuration schema (serde, unknown keys rejected), loading and `--set` overrides.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod backends;
mod error;
pub use error::ConfigError;

pub use backends::*;

/// The whole configuration. Every section has defaults, so an empty file is valid.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub corpus: CorpusConfig,
    pub output: OutputConfig,
    pub tree: TreeConfig,
    pub llm: LlmConfig,
    pub embed: EmbedConfig,
    pub kmeans: KmeansConfig,
    pub cache: CacheConfig,
    pub incremental: IncrementalConfig,
    pub agent: AgentConfig,
    pub publish: PublishConfig,
}

/// Bytes of one skill upload to the Claude Skills API (all files together): the default of
/// `publish.max_skill_bytes` and the limit `check` and `build` report against.
pub const MAX_SKILL_BYTES: u64 = 8 * 1024 * 1024;

/// `[publish]`: where `c2s publish` uploads the top-level skills.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PublishConfig {
    pub target: PublishTarget,
    /// Name of the environment variable that holds the API key (never the key itself).
    pub api_key_env: String,
    /// API root; default `https://api.anthropic.com`.
    pub base_url: Option<String>,
    /// Prepended to each skill's display title (e.g. `"docs: "`).
    pub display_prefix: String,
    /// Bytes one skill upload may hold (the Claude Skills API accepts 8 MiB).
    pub max_skill_bytes: u64,
    pub limits: Limits,
}

/// Where skills are published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PublishTarget {
    /// The Claude Skills API (`/v1/skills`).
    Anthropic,
}

impl Default for PublishConfig {
    fn default() -> Self {
        PublishConfig {
            target: PublishTarget::Anthropic,
            api_key_env: "ANTHROPIC_API_KEY".into(),
            base_url: None,
            display_prefix: String::new(),
            max_skill_bytes: MAX_SKILL_BYTES,
            limits: Limits {
                concurrency: 1,
                ..Limits::default()
            },
        }
    }
}

/// The durable memo.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    /// SQLite file, relative to the config file.
    pub path: PathBuf,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            path: PathBuf::from("cache/c2s.sqlite"),
        }
    }
}

/// Warm-start rebuilds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IncrementalConfig {
    /// When more than this share of the documents was added or deleted, rebuild the tree from scratch.
    pub full_rebuild_share: f64,
}

impl Default for IncrementalConfig {
    fn default() -> Self {
        IncrementalConfig {
            full_rebuild_share: 0.3,
        }
    }
}

/// Where the documents are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CorpusConfig {
    /// Folders or single files, relative to the config file.
    pub paths: Vec<PathBuf>,
    /// Globs (relative to each corpus folder) a file must match; empty means all.
    pub include: Vec<String>,
    /// Globs (relative to each corpus folder) that exclude files.
    pub exclude: Vec<String>,
    /// Files larger than this are skipped with a warning.
    pub max_file_bytes: u64,
}

/// Where the skill tree is written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputConfig {
    /// Output folder, relative to the config file.
    pub dir: PathBuf,
    /// Write the top-level skill folders here instead of `<dir>/skills` (a folder shared with
    /// other skills, such as `.claude/skills`); relative to the config file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skills_dir: Option<PathBuf>,
}

/// The tree knobs of the method (DESIGN.md §1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TreeConfig {
    /// Target branching: a level of n nodes gets `max(K, ceil(n / p))` clusters.
    pub p: usize,
    /// At most this many top-level skills.
    #[serde(rename = "K", alias = "k")]
    pub k: usize,
    /// Soft-assignment gap: a document whose top-1 vs top-2 cosine gap is below it also appears
    /// in its second group as an `@see` stub.
    pub tau: f32,
    /// At most this many `@see` stubs per group (the closest calls first); unset: no cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_stubs: Option<usize>,
    /// Clusters smaller than this are merged into the nearest centroid.
    pub min_cluster_size: usize,
    /// Exemplar documents listed per non-leaf node.
    pub exemplars: usize,
    /// Related skills listed per node.
    pub related_skills: usize,
    /// Characters of raw text used for embedding (the full text is kept).
    pub max_doc_chars: usize,
    /// Seed of every random choice (K-Means seeding).
    pub seed: u64,
}

/// K-Means settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KmeansConfig {
    pub device: KmeansDevice,
    pub max_iter: usize,
    pub n_init: usize,
    /// Stop when fewer than this share of points change cluster in an iteration.
    pub tol: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KmeansDevice {
    /// A real GPU when there is one, else the CPU.
    Auto,
    Cpu,
    /// The GPU path on any adapter, CPU-emulated ones included (shader tests).
    Gpu,
}

impl Default for CorpusConfig {
    fn default() -> Self {
        CorpusConfig {
            paths: vec![PathBuf::from("docs")],
            include: Vec::new(),
            exclude: Vec::new(),
            max_file_bytes: 64 * 1024 * 1024,
        }
    }
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig {
            dir: PathBuf::from("c2s-out"),
            skills_dir: None,
        }
    }
}

impl Default for TreeConfig {
    fn default() -> Self {
        TreeConfig {
            p: 10,
            k: 10,
            tau: 0.05,
            max_stubs: None,
            min_cluster_size: 3,
            exemplars: 3,
            related_skills: 3,
            max_doc_chars: 8000,
            seed: 42,
        }
    }
}

impl Default for KmeansConfig {
    fn default() -> Self {
        KmeansConfig {
            device: KmeansDevice::Auto,
            max_iter: 25,
            n_init: 1,
            tol: 0.001,
        }
    }
}

/// A configuration together with the folder its relative paths are resolved against.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub base_dir: PathBuf,
    /// The file it came from, if any.
    pub path: Option<PathBuf>,
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
        })
    }

    /// The default configuration, with paths resolving against `dir`.
    pub fn defaults(dir: PathBuf) -> Loaded {
        Loaded {
            config: Config::default(),
            base_dir: dir,
            path: None,
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
}

impl Config {
    /// Parses TOML text; `origin` names the file in error messages.
    pub fn from_toml(text: &str, origin: &Path) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: origin.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
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
        let bad = |field: &str, message: &str| {
            Err(ConfigError::Invalid {
                field: field.to_string(),
                message: message.to_string(),
            })
        };
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
        if let Err((field, message)) = backends::validate(&self.llm, &self.embed) {
            return bad(&field, &message);
        }
        if self.kmeans.max_iter < 1 || self.kmeans.n_init < 1 {
            return bad("kmeans", "max_iter and n_init must be at least 1");
        }
        if !(0.0..=1.0).contains(&self.incremental.full_rebuild_share) {
            return bad("incremental.full_rebuild_share", "must be in [0, 1]");
        }
        if self.corpus.paths.is_empty() {
            return bad("corpus.paths", "must name at least one folder or file");
        }
        Ok(())
    }

    /// A stable hash of every setting that shapes the output, recorded in the manifest. Corpus
    /// paths are taken relative to `base` (so a clone elsewhere hashes the same); where the
    /// output and the cache live does not count.
    pub fn hash(&self, base: &Path) -> String {
        let mut c = self.clone();
        c.corpus.paths = c
            .corpus
            .paths
            .iter()
            .map(|p| PathBuf::from(crate::paths::display(p, base)))
            .collect();
        c.output = OutputConfig::default();
        c.cache = CacheConfig::default();
        // Serve-phase and publishing settings do not shape the output.
        c.agent = AgentConfig::default();
        c.publish = PublishConfig::default();
        c.llm.stages.remove("agent");
        // Interactive or batch, the same requests give the same answers.
        c.llm.mode = Default::default();
        c.llm.batch = Default::default();
        for o in c.llm.stages.values_mut() {
            o.mode = None;
        }
        let json = serde_json::to_vec(&c).expect("config serializes");
        blake3::hash(&json).to_hex()[..16].to_string()
    }

    /// A hash of what shapes the tree (knobs, embedder, K-Means): a warm start needs it unchanged.
    pub fn tree_hash(&self) -> String {
        let json = serde_json::to_vec(&(&self.tree, &self.embed, &self.kmeans))
            .expect("config serializes");
        blake3::hash(&json).to_hex()[..16].to_string()
    }

    /// Applies one `key=value` override without validating. `key` is dotted (`tree.p`) or a
    /// bare knob (`p`).
    fn set_unchecked(&mut self, arg: &str) -> Result<(), ConfigError> {
        let err = |message: String| ConfigError::Set {
            arg: arg.to_string(),
            message,
        };
        let (key, raw) = arg
            .split_once('=')
            .ok_or_else(|| err("missing `=`".into()))?;
        let key = key.trim();
        let mut table = toml::Table::try_from(&*self).map_err(|e| err(e.to_string()))?;
        let path = resolve_key(&table, key).map_err(err)?;
        let value = parse_value(raw.trim());
        let (leaf, parents) = path.split_last().expect("a key has a field");
        let mut sect = &mut table;
        for name in parents {
            sect = sect
                .entry(name.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .ok_or_else(|| err(format!("`{name}` is a value, not a section")))?;
        }
        sect.insert(leaf.clone(), value);
        let text = toml::to_string(&table).map_err(|e| err(e.to_string()))?;
        let next: Config = toml::from_str(&text).map_err(|e| err(first_line(&e.to_string())))?;
        *self = next;
        Ok(())
    }

    /// Applies one `key=value` override and validates the result.
    pub fn apply_set(&mut self, arg: &str) -> Result<(), ConfigError> {
        self.apply_sets(&[arg.to_string()])
    }

    /// Applies every override, then validates once (so `--set llm.backend=openai --set
    /// llm.base_url=...` works in either order).
    pub fn apply_sets(&mut self, args: &[String]) -> Result<(), ConfigError> {
        let mut next = self.clone();
        for a in args {
            next.set_unchecked(a)?;
        }
        next.validate().map_err(|e| ConfigError::Set {
            arg: args.join(" --set "),
            message: e.to_string(),
        })?;
        *self = next;
        Ok(())
    }
}

fn first_line(s: &str) -> String {
    s.lines()
        .rfind(|l| !l.trim().is_empty() && !l.contains('|'))
        .unwrap_or(s)
        .trim()
        .to_string()
}

/// Finds the table path of a dotted (`embed.onnx.threads`) or bare (`p`) key.
fn resolve_key(table: &toml::Table, key: &str) -> Result<Vec<String>, String> {
    if key.contains('.') {
        let parts: Vec<&str> = key.split('.').collect();
        let (field, sections) = parts.split_last().expect("split gives one part");
        let mut path = Vec::new();
        let mut sect = Some(table);
        for (depth, name) in sections.iter().enumerate() {
            let found = sect.and_then(|t| canonical_field(t, name));
            if depth == 0 && found.is_none() {
                return Err(format!("unknown section `{name}`"));
            }
            let name = found.unwrap_or_else(|| name.to_string());
            sect = sect.and_then(|t| t.get(&name)).and_then(|v| v.as_table());
            path.push(name);
        }
        // Optional settings that are unset do not appear in the table: pass the key through and
        // let deserialization (which rejects unknown fields) have the last word.
        let field = sect
            .and_then(|t| canonical_field(t, field))
            .unwrap_or_else(|| field.to_string());
        path.push(field);
        return Ok(path);
    }
    let hits: Vec<Vec<String>> = table
        .iter()
        .filter_map(|(s, v)| {
            let sect = v.as_table()?;
            canonical_field(sect, key)
                .filter(|f| !sect[f].is_table())
                .map(|f| vec![s.clone(), f])
        })
        .collect();
    match hits.len() {
        1 => Ok(hits.into_iter().next().expect("one hit")),
        0 => Err(format!("unknown key `{key}`")),
        _ => Err(format!(
            "`{key}` is ambiguous; use one of {}",
            hits.iter()
                .map(|p| p.join("."))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn canonical_field(sect: &toml::Table, field: &str) -> Option<String> {
    if sect.contains_key(field) {
        return Some(field.to_string());
    }
    sect.keys().find(|k| k.eq_ignore_ascii_case(field)).cloned()
}

/// Parses a `--set` value as a TOML literal, else takes it as a string.
fn parse_value(raw: &str) -> toml::Value {
    let doc = format!("v = {raw}");
    match toml::from_str::<toml::Table>(&doc) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(raw.into())),
        Err(_) => toml::Value::String(raw.to_string()),
    }
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
    fn set_dotted_bare_and_k() {
        let mut c = Config::default();
        c.apply_set("tree.p=5").unwrap();
        c.apply_set("tau=0.1").unwrap();
        c.apply_set("K=4").unwrap();
        c.apply_set("output.dir=elsewhere").unwrap();
        assert_eq!(c.tree.p, 5);
        assert_eq!(c.tree.k, 4);
        assert!((c.tree.tau - 0.1).abs() < 1e-6);
        assert_eq!(c.output.dir, PathBuf::from("elsewhere"));
        assert!(c.apply_set("nope=1").is_err());
        let e = c.apply_set("tree.nope=1").unwrap_err().to_string();
        assert!(e.contains("nope"), "{e}");
        c.apply_set("llm.price_input_per_mtok=0.5").unwrap();
        assert_eq!(c.llm.price_input_per_mtok, Some(0.5));
        assert!(c.apply_set("tree.p=1").is_err());
        assert!(c.apply_set("tree.p=abc").is_err());
        c.apply_set("embed.onnx.threads=2").unwrap();
        assert_eq!(c.embed.onnx.threads, 2);
        c.apply_set("llm.limits.concurrency=7").unwrap();
        assert_eq!(c.llm.limits.concurrency, 7);
        c.apply_set("llm.stages.card.model=small").unwrap();
        assert_eq!(c.llm.stages["card"].model.as_deref(), Some("small"));
        let e = c
            .apply_set("llm.stages.bogus.model=x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bogus"), "{e}");
        assert!(c.apply_set("embed.onnx.nope=1").is_err());
    }
}
