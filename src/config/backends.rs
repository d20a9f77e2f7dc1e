//! The `[llm]` and `[embed]` sections: which backend runs each stage, its endpoint and limits.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Limits of one HTTP endpoint: concurrency, rate, timeouts and retries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Seconds before one request is abandoned (and retried).
    pub timeout_s: f64,
    /// Retries after the first attempt, for 429, 529, 5xx, timeouts and dropped connections.
    pub max_retries: u32,
    /// First backoff in seconds; doubles per retry, with jitter, capped at `max_backoff_s`.
    pub backoff_s: f64,
    pub max_backoff_s: f64,
    /// Optional requests-per-minute cap.
    pub requests_per_minute: Option<u32>,
    /// Optional tokens-per-minute cap (input estimate plus the output budget).
    pub tokens_per_minute: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            concurrency: 20,
            timeout_s: 120.0,
            max_retries: 6,
            backoff_s: 1.0,
            max_backoff_s: 60.0,
            requests_per_minute: None,
            tokens_per_minute: None,
        }
    }
}

/// The LLM used for cards, summaries, labels, repartition and tags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmConfig {
    pub backend: LlmBackendKind,
    /// API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`.
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// Name of the environment variable that holds the API key (never the key itself).
    pub api_key_env: Option<String>,
    /// Upper bound on output tokens per call.
    pub max_output_tokens: u32,
    /// Extra request fields sent verbatim (e.g. `temperature`); only what is set is sent.
    pub params: BTreeMap<String, toml::Value>,
    /// Prices in currency units per million tokens; when set, cost is reported and estimated.
    pub price_input_per_mtok: Option<f64>,
    pub price_output_per_mtok: Option<f64>,
    pub limits: Limits,
    /// `interactive` (one HTTP call per request) or `batch` (the provider's batch API, at its
    /// discount, one batch per dependent step); `c2s build --batch` overrides it once.
    #[serde(skip_serializing_if = "is_default")]
    pub mode: LlmMode,
    /// How batches are sized, polled and priced.
    #[serde(skip_serializing_if = "is_default")]
    pub batch: BatchConfig,
    /// Per-stage overrides: `card`, `summary`, `label`, `repartition`, `tags`.
    pub stages: BTreeMap<String, StageOverride>,
}

/// Settings left at their default are not serialized, so adding one keeps the config hash of
/// every config that does not set it.
fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// How LLM requests are sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LlmMode {
    /// One HTTP call per request, answered at once.
    #[default]
    Interactive,
    /// Requests gathered into provider batches (OpenAI Batch API, Anthropic Message Batches).
    Batch,
}

/// `[llm.batch]`: batch sizes, polling and price.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BatchConfig {
    /// Seconds between status polls while a build waits for a batch.
    pub poll_s: f64,
    /// Requests per batch; 0 = the provider's limit (OpenAI 50,000, Anthropic 100,000).
    pub max_requests: usize,
    /// Bytes per batch input; 0 = the provider's limit (OpenAI 200 MB, Anthropic 256 MB).
    pub max_bytes: u64,
    /// The batch price discount (0.5 = half the interactive price).
    pub discount: f64,
    /// Batches one request may fail in before the build stops and asks for
    /// `--finish-interactive`.
    pub max_attempts: u32,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            poll_s: 30.0,
            max_requests: 0,
            max_bytes: 0,
            discount: 0.5,
            max_attempts: 3,
        }
    }
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            backend: LlmBackendKind::Extractive,
            base_url: None,
            model: None,
            api_key_env: None,
            max_output_tokens: 512,
            params: BTreeMap::new(),
            price_input_per_mtok: None,
            price_output_per_mtok: None,
            limits: Limits::default(),
            mode: LlmMode::Interactive,
            batch: BatchConfig::default(),
            stages: BTreeMap::new(),
        }
    }
}

/// The settings one stage runs with: `[llm]` overlaid with `[llm.stages.<stage>]`.
#[derive(Debug, Clone, PartialEq)]
pub struct StageSettings {
    pub model: String,
    pub max_output_tokens: u32,
    pub params: BTreeMap<String, toml::Value>,
    pub price_input_per_mtok: Option<f64>,
    pub price_output_per_mtok: Option<f64>,
    /// Interactive calls or batches.
    pub mode: LlmMode,
}

impl StageSettings {
    /// The cost of a call's tokens, when a price is set.
    pub fn cost(&self, input_tokens: u64, output_tokens: u64) -> Option<f64> {
        let (pi, po) = (self.price_input_per_mtok, self.price_output_per_mtok);
        (pi.is_some() || po.is_some()).then(|| {
            input_tokens as f64 * pi.unwrap_or(0.0) / 1e6
                + output_tokens as f64 * po.unwrap_or(0.0) / 1e6
        })
    }
}

impl LlmConfig {
    /// The settings of one stage (`card`, …, `agent`).
    pub fn stage(&self, stage: &str) -> StageSettings {
        let o = self.stages.get(stage).cloned().unwrap_or_default();
        let mut params = self.params.clone();
        params.extend(o.params);
        StageSettings {
            model: o.model.or_else(|| self.model.clone()).unwrap_or_default(),
            max_output_tokens: o.max_output_tokens.unwrap_or(self.max_output_tokens),
            params,
            price_input_per_mtok: o.price_input_per_mtok.or(self.price_input_per_mtok),
            price_output_per_mtok: o.price_output_per_mtok.or(self.price_output_per_mtok),
            mode: o.mode.unwrap_or(self.mode),
        }
    }

    /// Whether any build stage runs in batch mode.
    pub fn any_batch(&self) -> bool {
        LLM_STAGES
            .iter()
            .any(|s| self.stage(s).mode == LlmMode::Batch)
    }
}

/// What one stage changes from `[llm]`: a cheaper model for cards, say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StageOverride {
    pub model: Option<String>,
    pub max_output_tokens: Option<u32>,
    pub params: BTreeMap<String, toml::Value>,
    pub price_input_per_mtok: Option<f64>,
    pub price_output_per_mtok: Option<f64>,
    /// This stage's mode; unset, `[llm] mode` (or `--batch`) applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<LlmMode>,
}

/// The LLM stages of a build (each takes overrides; so does `agent`, the serve phase).
pub const LLM_STAGES: [&str; 5] = ["card", "summary", "label", "repartition", "tags"];

/// `[agent]`: the serve-phase agent of `c2s ask` and `c2s eval --methods agent`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentConfig {
    /// Model calls per question before the agent must stop.
    pub max_turns: usize,
    /// The agent's own endpoint, when it differs from `[llm]` (e.g. build with the offline
    /// backend, serve with a model). Unset fields come from `[llm]`.
    pub backend: Option<LlmBackendKind>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_turns: 20,
            backend: None,
            base_url: None,
            model: None,
            api_key_env: None,
        }
    }
}

impl AgentConfig {
    /// The `[llm]` settings the agent runs with: `[llm]` overlaid with this section.
    pub fn llm(&self, llm: &LlmConfig) -> LlmConfig {
        let mut c = llm.clone();
        if let Some(b) = self.backend {
            c.backend = b;
        }
        for (dst, src) in [
            (&mut c.base_url, &self.base_url),
            (&mut c.model, &self.model),
            (&mut c.api_key_env, &self.api_key_env),
        ] {
            if src.is_some() {
                dst.clone_from(src);
            }
        }
        c
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LlmBackendKind {
    /// Offline and deterministic: extractive cards, summaries, labels and tags.
    Extractive,
    /// Any OpenAI-compatible `/v1/chat/completions` server.
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
}

impl LlmBackendKind {
    /// The name used in the config and in model ids.
    pub fn name(self) -> &'static str {
        match self {
            LlmBackendKind::Extractive => "extractive",
            LlmBackendKind::Openai => "openai",
            LlmBackendKind::Anthropic => "anthropic",
        }
    }
}

/// The embedder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EmbedConfig {
    pub backend: EmbedBackendKind,
    /// Vector size: the hashed embedder's dimension (default 256); for `onnx` a check against
    /// the model's output; for `openai` the `dimensions` request field (sent only when set).
    pub dims: Option<usize>,
    /// A document longer than this many (estimated) tokens is also embedded as passages of
    /// about this size, each memoized on its own; 0 turns chunking off.
    pub chunk_tokens: usize,
    /// At most this many passages per document.
    pub max_chunks: usize,
    pub onnx: OnnxConfig,
    pub openai: OpenAiEmbedConfig,
}

impl Default for EmbedConfig {
    fn default() -> Self {
        EmbedConfig {
            backend: EmbedBackendKind::Hashed,
            dims: None,
            chunk_tokens: 200,
            max_chunks: 64,
            onnx: OnnxConfig::default(),
            openai: OpenAiEmbedConfig::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedBackendKind {
    /// Offline: signed feature hashing of word uni- and bigrams.
    Hashed,
    /// A sentence encoder run by ONNX Runtime (CPU or CUDA).
    Onnx,
    /// Any OpenAI-compatible `/v1/embeddings` server.
    Openai,
}

/// `[embed.onnx]`: a model folder with `model.onnx` and `tokenizer.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OnnxConfig {
    /// Folder with `model.onnx` and `tokenizer.json`, relative to the config file.
    pub model_dir: PathBuf,
    /// `libonnxruntime.so`; when unset, `ORT_DYLIB_PATH`.
    pub library: Option<PathBuf>,
    pub pooling: Pooling,
    /// Tokens per text; longer texts are truncated.
    pub max_tokens: usize,
    pub normalize: bool,
    /// Intra-op threads; 0 lets ONNX Runtime choose.
    pub threads: usize,
    pub device: OnnxDevice,
    /// Texts per inference call (sorted by length, so padding stays small).
    pub batch_size: usize,
}

impl Default for OnnxConfig {
    fn default() -> Self {
        OnnxConfig {
            model_dir: PathBuf::from("models/all-MiniLM-L6-v2-int8"),
            library: None,
            pooling: Pooling::Mean,
            max_tokens: 256,
            normalize: true,
            threads: 0,
            device: OnnxDevice::Auto,
            batch_size: 32,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// Mean of the token vectors under the attention mask.
    Mean,
    /// The first token's vector.
    Cls,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnnxDevice {
    /// CUDA when the library has it and a GPU answers, else the CPU.
    Auto,
    Cpu,
    /// CUDA, falling back to the CPU with a note when it cannot start.
    Cuda,
}

/// `[embed.openai]`: an OpenAI-compatible `/v1/embeddings` endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OpenAiEmbedConfig {
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    /// Texts per request.
    pub batch_size: usize,
    /// Characters per request, summed over its texts.
    pub max_batch_chars: usize,
    pub params: BTreeMap<String, toml::Value>,
    pub limits: Limits,
}

impl Default for OpenAiEmbedConfig {
    fn default() -> Self {
        OpenAiEmbedConfig {
            base_url: None,
            model: None,
            api_key_env: None,
            batch_size: 64,
            max_batch_chars: 200_000,
            params: BTreeMap::new(),
            limits: Limits {
                concurrency: 4,
                ..Limits::default()
            },
        }
    }
}

/// Checks the backend sections; `Err((field, problem))`.
pub fn validate(llm: &LlmConfig, embed: &EmbedConfig) -> Result<(), (String, String)> {
    let bad = |f: &str, m: &str| Err((f.to_string(), m.to_string()));
    if let Some(d) = embed.dims
        && !(1..=65536).contains(&d)
    {
        return bad("embed.dims", "must be between 1 and 65536");
    }
    if embed.backend == EmbedBackendKind::Hashed && embed.dims.is_some_and(|d| d < 16) {
        return bad("embed.dims", "must be at least 16 for the hashed embedder");
    }
    if embed.chunk_tokens != 0 && embed.chunk_tokens < 32 {
        return bad("embed.chunk_tokens", "must be 0 (off) or at least 32");
    }
    if embed.max_chunks < 1 {
        return bad("embed.max_chunks", "must be at least 1");
    }
    if embed.onnx.max_tokens < 8 || embed.onnx.batch_size < 1 {
        return bad(
            "embed.onnx",
            "max_tokens must be at least 8 and batch_size at least 1",
        );
    }
    let o = &embed.openai;
    if o.batch_size < 1 || o.max_batch_chars < 1 {
        return bad(
            "embed.openai",
            "batch_size and max_batch_chars must be positive",
        );
    }
    check_limits("embed.openai.limits", &o.limits)?;
    check_limits("llm.limits", &llm.limits)?;
    if embed.backend == EmbedBackendKind::Openai {
        need(
            &o.base_url,
            "embed.openai.base_url",
            "http://127.0.0.1:8080/v1",
        )?;
        need(&o.model, "embed.openai.model", "text-embedding-3-small")?;
    }
    for name in llm.stages.keys() {
        if !LLM_STAGES.contains(&name.as_str()) && name != "agent" {
            return Err((
                format!("llm.stages.{name}"),
                format!(
                    "is not a stage; use one of {}, agent",
                    LLM_STAGES.join(", ")
                ),
            ));
        }
    }
    let b = &llm.batch;
    if !(b.poll_s.is_finite() && b.poll_s > 0.0) {
        return bad("llm.batch.poll_s", "must be a positive number of seconds");
    }
    if !(0.0..1.0).contains(&b.discount) {
        return bad(
            "llm.batch.discount",
            "must be at least 0 and below 1 (0.5 = half price)",
        );
    }
    if b.max_attempts < 1 {
        return bad("llm.batch.max_attempts", "must be at least 1");
    }
    if llm.backend == LlmBackendKind::Extractive && llm.any_batch() {
        return bad(
            "llm.mode",
            "\"batch\" needs a networked backend: set llm.backend = \"openai\" or \"anthropic\"",
        );
    }
    if llm.max_output_tokens < 16 {
        return bad("llm.max_output_tokens", "must be at least 16");
    }
    match llm.backend {
        LlmBackendKind::Extractive => {}
        LlmBackendKind::Openai => {
            need(&llm.base_url, "llm.base_url", "https://api.openai.com/v1")?;
            need(&llm.model, "llm.model", "gpt-4o-mini")?;
        }
        LlmBackendKind::Anthropic => {
            need(&llm.model, "llm.model", "claude-haiku-4-5")?;
            // Anthropic's own API needs a key; a proxy or test server at base_url may not.
            if llm.base_url.is_none() {
                need(&llm.api_key_env, "llm.api_key_env", "ANTHROPIC_API_KEY")?;
            }
        }
    }
    Ok(())
}

fn need(v: &Option<String>, field: &str, example: &str) -> Result<(), (String, String)> {
    match v {
        Some(s) if !s.trim().is_empty() => Ok(()),
        _ => Err((
            field.to_string(),
            format!("must be set for this backend (e.g. {field} = \"{example}\")"),
        )),
    }
}

fn check_limits(field: &str, l: &Limits) -> Result<(), (String, String)> {
    if l.concurrency < 1 || l.concurrency > 1024 {
        return Err((
            format!("{field}.concurrency"),
            "must be between 1 and 1024".into(),
        ));
    }
    if l.timeout_s.is_nan() || l.timeout_s <= 0.0 {
        return Err((format!("{field}.timeout_s"), "must be positive".into()));
    }
    if l.backoff_s.is_nan() || l.backoff_s < 0.0 || l.max_backoff_s < l.backoff_s {
        return Err((
            format!("{field}.backoff_s"),
            "must be ≥ 0 and ≤ max_backoff_s".into(),
        ));
    }
    if l.requests_per_minute == Some(0) || l.tokens_per_minute == Some(0) {
        return Err((
            field.to_string(),
            "requests_per_minute and tokens_per_minute must be positive when set".into(),
        ));
    }
    Ok(())
}
