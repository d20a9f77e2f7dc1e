//! The `[embed]` section: which embedder turns text into vectors, and its settings.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::ConfigError;
use super::endpoint::{Limits, check_limits, need};

/// The embedder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EmbedConfig {
    pub backend: EmbedBackendKind,
    /// Vector size: the hashed embedder's dimension (default 256); for `onnx` a check against
    /// the model's output; for `openai` the `dimensions` request field (sent only when set).
    pub dims: Option<usize>,
    /// A document longer than twice this many (estimated) tokens is also embedded as passages
    /// of at most this size, each memoized on its own; 0 turns chunking off.
    pub chunk_tokens: usize,
    /// At most this many passages per document (128 of about 100 tokens hold some 50 KB of
    /// text: ordinary pages are embedded whole).
    pub max_chunks: usize,
    pub onnx: OnnxConfig,
    pub openai: OpenAiEmbedConfig,
}

impl Default for EmbedConfig {
    fn default() -> Self {
        EmbedConfig {
            backend: EmbedBackendKind::Hashed,
            dims: None,
            chunk_tokens: 100,
            max_chunks: 128,
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

/// Checks the `[embed]` section.
pub(super) fn validate_embed(embed: &EmbedConfig) -> Result<(), ConfigError> {
    let bad = |f: &str, m: &str| Err(ConfigError::invalid(f, m));
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
    if embed.backend == EmbedBackendKind::Openai {
        need(
            &o.base_url,
            "embed.openai.base_url",
            "http://127.0.0.1:8080/v1",
        )?;
        need(&o.model, "embed.openai.model", "text-embedding-3-small")?;
    }
    Ok(())
}
