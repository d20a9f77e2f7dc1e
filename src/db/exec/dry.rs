//! What a dry run (`build --dry-run`, `--explain`) records: each result it would compute, and
//! which part of its key changed since the previous build of the same subject.

use serde::Serialize;

use super::{MemoValue, Slots};
use crate::db::cache::{CacheError, Key, KeyParts};

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
    /// Stages whose misses take the previous build's result for the same subject instead of a
    /// stand-in's guess (the model is taken to answer as it did).
    pub last_answers: std::collections::HashSet<&'static str>,
}

/// For each of `misses` (item indexes) of `stage` whose subject the previous build had, the
/// memo key of that build's result.
pub fn previous_keys(
    dry: &DryRun,
    stage: &str,
    misses: &[usize],
    subject: impl Fn(usize) -> String,
) -> Vec<(usize, crate::db::cache::Key)> {
    if !dry.last_answers.contains(stage) {
        return Vec::new();
    }
    let Some(prev) = dry.previous.0.get(stage) else {
        return Vec::new();
    };
    misses
        .iter()
        .filter_map(|&i| prev.get(&subject(i)).map(|p| (i, p.key())))
        .collect()
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

impl super::Executor<'_> {
    /// Makes a dry run take, for `stages`, the previous build's result of each item it would
    /// compute, instead of a stand-in's guess.
    pub fn guess_last_answers(&mut self, stages: &[&'static str]) {
        if let Some(d) = &mut self.dry {
            d.last_answers.extend(stages.iter().copied());
        }
    }

    /// Puts the previous build's result of each of `prev` into `out`; returns the misses still to
    /// compute (those the previous build did not have, or whose result the memo lost).
    pub(super) fn take_last_answers<O: MemoValue>(
        &self,
        prev: &[(usize, Key)],
        out: &mut [Option<O>],
        misses: &[usize],
    ) -> Result<Vec<usize>, CacheError> {
        if !prev.is_empty() {
            let keys: Vec<Key> = prev.iter().map(|p| p.1).collect();
            let found = self.memo.get_many(&keys)?;
            for (i, k) in prev {
                if let Some(v) = found.get(k).and_then(|b| O::decode(b)) {
                    out[*i] = Some(v);
                }
            }
        }
        Ok(misses
            .iter()
            .copied()
            .filter(|&i| out[i].is_none())
            .collect())
    }
}
