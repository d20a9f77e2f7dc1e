//! The manifest `c2s.lock`: versions, config hash, models, and the hash of every source and output file.

use std::collections::BTreeMap;

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::{EmbedBackendKind, EmbedConfig, OnnxConfig, OpenAiEmbedConfig};

/// The contents of `c2s.lock`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lock {
    pub c2s_version: String,
    pub config_hash: String,
    /// Prompt (or extractive algorithm) version per LLM stage.
    pub prompt_versions: BTreeMap<String, String>,
    /// Model ids per role: `llm`, `embed`.
    pub models: BTreeMap<String, String>,
    /// The embedder settings of the build, so that `ask` and `mcp` can embed a question the same
    /// way from the output alone (model paths relative to the output folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed: Option<LockEmbed>,
    /// Where the top-level skill folders were written instead of `skills/` (relative to the
    /// output folder), when `[output] skills_dir` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills_dir: Option<String>,
    /// How the output was built, in paths relative to the output folder, so that `check`,
    /// `clean` and `cache` find the build again from `--out DIR` alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub built_from: Option<BuiltFrom>,
    /// Number of documents and of cluster levels of the build.
    pub documents: usize,
    pub levels: usize,
    /// LLM results that are extractive stand-ins for rejected answers (memoized with the
    /// reason); `c2s build --retry-rejected` asks the model again for them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fallbacks: usize,
    /// Sentences flagged at ingest as planted for AI models, and the documents holding them
    /// (an up-to-date build reports them without reading the sources).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub planted_sentences: usize,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub planted_documents: usize,
    /// Source path → blake3 of its bytes (pages, and the files their includes read).
    pub sources: BTreeMap<String, String>,
    /// The sources that are files read by include directives, not pages found by the walk
    /// (`check` stats them beside the walk's files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub includes: Vec<String>,
    /// Output path → blake3 of its bytes (every output file except the lock itself).
    pub outputs: BTreeMap<String, String>,
}

/// The config file of a build, or the corpus it was given instead (`c2s build PATH`), and its
/// `--set`s; paths relative to the output folder, with `/` separators.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BuiltFrom {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<String>,
}

impl BuiltFrom {
    /// The record of `loaded` built into `out`.
    pub fn of(loaded: &crate::config::Loaded, out: &Path) -> BuiltFrom {
        let rel = |p: &Path| relative_path(out, p).to_string_lossy().replace('\\', "/");
        BuiltFrom {
            config: loaded.path.as_deref().map(rel),
            corpus: loaded.args.corpus.as_deref().map(rel),
            // Where the memo is kept is local to a machine, and shapes nothing.
            set: loaded
                .args
                .sets
                .iter()
                .filter(|s| !s.trim_start().starts_with("cache."))
                .cloned()
                .collect(),
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A short content hash for the manifest.
pub fn file_hash(bytes: &[u8]) -> String {
    crate::hash::content_hash(bytes)
}

impl Lock {
    /// The lock without its `sources` and `outputs` (the small part).
    pub fn header(&self) -> Lock {
        Lock {
            c2s_version: self.c2s_version.clone(),
            config_hash: self.config_hash.clone(),
            prompt_versions: self.prompt_versions.clone(),
            models: self.models.clone(),
            embed: self.embed.clone(),
            skills_dir: self.skills_dir.clone(),
            built_from: self.built_from.clone(),
            documents: self.documents,
            levels: self.levels,
            fallbacks: self.fallbacks,
            planted_sentences: self.planted_sentences,
            planted_documents: self.planted_documents,
            sources: BTreeMap::new(),
            includes: self.includes.clone(),
            outputs: BTreeMap::new(),
        }
    }

    /// Renders the lock as pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("lock serializes") + "\n"
    }
}

/// The embedder settings in the lock: the backend and only its own section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockEmbed {
    pub backend: EmbedBackendKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dims: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub onnx: Option<OnnxConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openai: Option<OpenAiEmbedConfig>,
}

impl LockEmbed {
    /// The embedder configuration it describes (other sections at their defaults).
    pub fn config(&self) -> EmbedConfig {
        let d = EmbedConfig::default();
        EmbedConfig {
            backend: self.backend,
            dims: self.dims,
            onnx: self.onnx.clone().unwrap_or(d.onnx),
            openai: self.openai.clone().unwrap_or(d.openai),
            ..d
        }
    }
}

/// `to` relative to the folder `from` when both are on the same root; else `to` as it is.
pub fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let abs = crate::paths::abs;
    let (from, to) = (abs(from), abs(to));
    let (a, b) = (normal_components(&from), normal_components(&to));
    if a.first() != b.first() {
        return to;
    }
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut rel = PathBuf::new();
    for _ in common..a.len() {
        rel.push("..");
    }
    for c in &b[common..] {
        rel.push(c);
    }
    rel
}

/// The absolute form of a path, with `.` dropped and `name/..` folded (lexically).
pub fn normalize_path(p: &Path) -> PathBuf {
    let abs = crate::paths::abs(p);
    normal_components(&abs).into_iter().collect()
}

/// The components of a path with `.` dropped and `name/..` folded.
fn normal_components(p: &Path) -> Vec<Component<'_>> {
    let mut v: Vec<Component> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(v.last(), Some(Component::Normal(_))) => {
                v.pop();
            }
            c => v.push(c),
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        let r = relative_path(Path::new("/repo/out"), Path::new("/repo/models/m"));
        assert_eq!(r, PathBuf::from("../models/m"));
        let r = relative_path(Path::new("/repo/a/../out"), Path::new("/repo/out/x"));
        assert_eq!(r, PathBuf::from("x"));
    }
}
