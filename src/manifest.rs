//! The manifest `c2s.lock`: versions, config hash, models, and the hash of every source and output file.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The contents of `c2s.lock`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lock {
    pub c2s_version: String,
    pub config_hash: String,
    /// Prompt (or extractive algorithm) version per LLM stage.
    pub prompt_versions: BTreeMap<String, String>,
    /// Model ids per role: `llm`, `embed`.
    pub models: BTreeMap<String, String>,
    /// Number of documents and of cluster levels of the build.
    pub documents: usize,
    pub levels: usize,
    /// LLM results that fell back to the extractive stand-in (not memoized); a build with any
    /// asks the model again instead of taking the up-to-date shortcut.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fallbacks: usize,
    /// Source path → blake3 of its bytes.
    pub sources: BTreeMap<String, String>,
    /// Output path → blake3 of its bytes (every output file except the lock itself).
    pub outputs: BTreeMap<String, String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A short content hash for the manifest.
pub fn file_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex()[..32].to_string()
}

impl Lock {
    /// Renders the lock as pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("lock serializes") + "\n"
    }
}
