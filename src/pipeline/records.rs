//! What a build keeps for the next build of the same output: the key slots in the memo
//! (`--explain`, `cache gc`, and whether this memo has built the output before), and the
//! record of the results it used beside the memo (`db::used`). The tree for warm starts is
//! read from the output itself (`pipeline::state`).

use std::path::Path;

use crate::db::cache::Memo;
use crate::db::exec::Executor;
use crate::db::used::Used;
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

/// Drops the record of used results the build read, and writes the results this build used in
/// its place (when `write`, and when the old one is worth rewriting). Only a shortcut for the
/// next build: an error is for a warning, never a failed build.
pub fn keep_used(path: &Path, exec: &mut Executor, write: bool) -> std::io::Result<()> {
    let read = exec.used.take();
    let kept = &exec.kept;
    if !write || !Used::worth_rewriting(read.as_ref(), kept.len(), exec.used_missed) {
        return Ok(());
    }
    drop(read);
    crate::db::used::write(path, kept.iter().map(|e| (&e.key, e.value.as_slice())))
}
