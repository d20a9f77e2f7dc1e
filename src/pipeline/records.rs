//! What a build keeps in the memo for the next build of the same output: the tree snapshot
//! (warm starts) and the key slots (`--explain`, `cache gc`).

use std::path::Path;

use crate::config::Config;
use crate::db::cache::Memo;
use crate::db::exec::Executor;
use crate::error::BuildError;
use crate::ingest::Document;
use crate::stage::incremental::snapshot;
use crate::tree::Tree;

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

/// Keeps what the next build needs: the tree (warm start) and the key slots (`--explain`).
pub fn save_records(
    memo: &Memo,
    out: &Path,
    tree: &Tree,
    docs: &[Document],
    cfg: &Config,
    exec: &Executor,
) -> Result<(), BuildError> {
    let snap =
        serde_json::to_vec(&snapshot(tree, docs, cfg.tree_hash())).expect("snapshot serializes");
    memo.set_record(&record_name("tree", out), &snap)?;
    let slots = serde_json::to_vec(&exec.slots).expect("slots serialize");
    memo.set_record(&record_name("slots", out), &slots)
        .map_err(BuildError::from)
}
