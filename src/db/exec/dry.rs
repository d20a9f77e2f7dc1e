//! What a dry run (`build --dry-run`, `--explain`) records: each result it would compute, and
//! which part of its key changed since the previous build of the same subject.

use serde::Serialize;

use super::Slots;
use crate::db::cache::KeyParts;

/// A result `--dry-run` would compute, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Miss {
    pub stage: &'static str,
    /// Which stage call of the build it belongs to (a batched build submits one batch per
    /// dependent step).
    pub step: usize,
    pub subject: String,
    pub reason: String,
    pub input_chars: usize,
}

/// The previous build's slots and the misses found so far.
pub struct DryRun {
    pub previous: Slots,
    pub misses: Vec<Miss>,
}

/// Which part of a key changed since the previous build of the same subject.
pub fn explain(previous: Option<&KeyParts>, now: &KeyParts) -> String {
    let Some(p) = previous else {
        return "new (no result for it in the previous build)".into();
    };
    let mut why = Vec::new();
    if p.stage_version != now.stage_version {
        why.push(format!(
            "stage version {} -> {}",
            p.stage_version, now.stage_version
        ));
    }
    if p.prompt != now.prompt {
        why.push(format!("prompt {} -> {}", p.prompt, now.prompt));
    }
    if p.model != now.model {
        why.push(format!("model {} -> {}", p.model, now.model));
    }
    if p.inputs != now.inputs {
        why.push("input content changed".into());
    }
    if why.is_empty() {
        "not in the cache (removed or never stored)".into()
    } else {
        why.join(", ")
    }
}
