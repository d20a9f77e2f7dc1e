//! What a build keeps in the memo for the next build of the same output: the key slots
//! (`--explain`, `cache gc`, and whether this memo has built the output before). The tree for
//! warm starts is read from the output itself (`pipeline::state`).

use std::path::Path;

use crate::db::cache::Memo;
use crate::db::exec::Executor;
use crate::error::BuildError;

/// Names the memo records of one output folder.
pub fn record_name(kind: &str, out: &Path) -> String {
    let abs = crate::paths::abs(out);
    format!("{kind}:{}", abs.display())
}

pub fn read_record<T: serde::de::DeserializeOwned>(memo: &Memo, name: &str) -> Option<T> {
    memo.record(name)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

/// Keeps the key slots (`--explain`) for the next build.
pub fn save_records(memo: &Memo, out: &Path, exec: &Executor) -> Result<(), BuildError> {
    let slots = serde_json::to_vec(&exec.slots).expect("slots serialize");
    memo.set_record(&record_name("slots", out), &slots)
        .map_err(BuildError::from)
}
