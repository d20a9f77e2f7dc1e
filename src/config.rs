//! `c2s.toml`: the configuration schema (serde, unknown keys rejected) and the hashes of what
//! shapes the output; loading and validation are in `load`, `--set` overrides in `set`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod embed;
mod endpoint;
mod error;
mod host;
mod llm;
mod load;
mod serve;
mod set;
pub use error::ConfigError;
pub use load::Loaded;

pub use embed::*;
pub use endpoint::Limits;
pub use host::{BYTES_PER_TOKEN, DocumentsIn, Host, HostLimits};
pub use llm::*;
pub use serve::ServeConfig;

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
    /// The LLM judge of `c2s eval --judge` (serve phase; not part of the output's hash).
    #[serde(skip_serializing_if = "is_default_judge")]
    pub judge: JudgeConfig,
    pub publish: PublishConfig,
    /// The HTTP server of `c2s mcp --http` (serve phase; not part of the output's hash).
    #[serde(skip_serializing_if = "is_default_serve")]
    pub serve: ServeConfig,
}

fn is_default_serve(s: &ServeConfig) -> bool {
    *s == ServeConfig::default()
}

fn is_default_judge(j: &JudgeConfig) -> bool {
    *j == JudgeConfig::default()
}

/// Bytes of one skill upload to the Claude Skills API (all files together): the default of
/// `publish.max_skill_bytes` (the API's documented 30 MB).
pub const MAX_SKILL_BYTES: u64 = 30_000_000;

/// Files of one skill upload the Claude Skills API and claude.ai accept.
pub const MAX_SKILL_FILES: usize = 200;

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
    /// Bytes one skill upload may hold (the Claude Skills API accepts 30 MB).
    pub max_skill_bytes: u64,
    /// Files one skill upload may hold (the Claude Skills API and claude.ai accept 200).
    pub max_skill_files: usize,
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
            max_skill_files: MAX_SKILL_FILES,
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
    /// The host the output must fit (`all`: every host at once).
    pub host: Host,
    /// Limits that replace the host's, one by one.
    #[serde(skip_serializing_if = "is_no_limit")]
    pub limits: HostLimits,
    /// `in-skills` (the default) or `by-id`: documents only in `documents.json`, opened with
    /// `get_document`, so that the skill folders hold navigation alone.
    #[serde(skip_serializing_if = "DocumentsIn::is_in_skills")]
    pub documents: DocumentsIn,
    /// Where the sources are browsed online (`https://github.com/org/repo/blob/main`): a link
    /// from a document to a file that is not a document points there (the file's path below
    /// the project root appended); without it, such a link becomes its text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_url: Option<String>,
}

fn is_no_limit(l: &HostLimits) -> bool {
    *l == HostLimits::default()
}

impl OutputConfig {
    /// The limits the output is measured against: the host's, with `[output.limits]` applied.
    pub fn limits(&self) -> HostLimits {
        self.host.limits().with(&self.limits)
    }
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
    /// Whether the tree follows the authors' folders and navigation file. Not serialized at its
    /// default, so the config hash of outputs built before this setting existed stays the same.
    #[serde(skip_serializing_if = "Structure::is_auto")]
    pub structure: Structure,
}

/// Where the tree's shape comes from (`tree.structure`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Structure {
    /// The authors' structure when the corpus has one (a navigation file, or documents in two
    /// folders or more), else clustering.
    #[default]
    Auto,
    /// The authors' structure: folders and navigation files.
    Folders,
    /// Clustering alone (the paper's method), whatever the folders.
    Cluster,
}

impl Structure {
    fn is_auto(&self) -> bool {
        *self == Structure::Auto
    }
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
    /// On the GPU, a batch of K-Means runs whose points × clusters × dimensions (summed over
    /// its runs) is smaller than this runs on the CPU: below it, the GPU's fixed cost per
    /// round trip is more than the CPU's pruned scan. Not serialized at its default, so the
    /// config hash of outputs built before this setting existed stays the same.
    #[serde(skip_serializing_if = "is_default_gpu_min_work")]
    pub gpu_min_work: u64,
}

fn is_default_gpu_min_work(v: &u64) -> bool {
    *v == DEFAULT_GPU_MIN_WORK
}

/// Default of `kmeans.gpu_min_work`: 2^28 multiply-adds per iteration (for example 50,000
/// points × 14 clusters × 384 dimensions).
pub const DEFAULT_GPU_MIN_WORK: u64 = 1 << 28;

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
            host: Host::default(),
            limits: HostLimits::default(),
            documents: DocumentsIn::default(),
            source_url: None,
        }
    }
}

impl Default for TreeConfig {
    fn default() -> Self {
        TreeConfig {
            p: 10,
            k: 8,
            tau: 0.05,
            max_stubs: None,
            min_cluster_size: 3,
            exemplars: 3,
            related_skills: 3,
            max_doc_chars: 8000,
            seed: 42,
            structure: Structure::Auto,
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
            gpu_min_work: DEFAULT_GPU_MIN_WORK,
        }
    }
}

impl Config {
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
        // The host's limits and where documents go shape the files (bundles, parts, folded
        // pages); the folders do not.
        c.output = OutputConfig {
            host: self.output.host,
            limits: self.output.limits,
            documents: self.output.documents,
            ..OutputConfig::default()
        };
        c.cache = CacheConfig::default();
        // Serve-phase and publishing settings do not shape the output.
        c.agent = AgentConfig::default();
        c.judge = JudgeConfig::default();
        c.publish = PublishConfig::default();
        c.serve = ServeConfig::default();
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
        // Where K-Means runs is not what it computes: an output built on a GPU machine is
        // continued on a CPU-only one (a fresh clone in CI) and the other way round.
        let k = &self.kmeans;
        let kmeans = (k.max_iter, k.n_init, k.tol);
        let json =
            serde_json::to_vec(&(&self.tree, &self.embed, kmeans)).expect("config serializes");
        blake3::hash(&json).to_hex()[..16].to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default config's hash (since the default `embed.chunk_tokens` became 100, which
    /// changes every long document's vector): a new setting at its default must not make every
    /// existing output stale.
    #[test]
    fn the_default_config_hash_survives_new_settings() {
        let base = Path::new("/project");
        assert_eq!(Config::default().hash(base), "84809d99822daf0b");
        let mut c = Config::default();
        c.kmeans.gpu_min_work = 0;
        assert_ne!(c.hash(base), "84809d99822daf0b");
    }
}
