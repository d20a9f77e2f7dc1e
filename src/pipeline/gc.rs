//! Memo garbage collection: keeps the entries that the last build of each still-existing output
//! used (its state file's results and its key slots) and the answers of batches still on
//! record, and forgets the outputs that are gone (their journals: key slots and record files).

use std::collections::HashSet;
use std::path::Path;

use crate::db::cache::{CacheError, Key, Memo};
use crate::db::journal::Journal;

/// Deletes unreachable entries; returns how many went.
pub fn collect(memo: &Memo) -> Result<u64, CacheError> {
    let mut live: HashSet<Key> = HashSet::new();
    for journal in Journal::built_by(memo)? {
        let out = journal.out();
        if !out.join(crate::format::LOCK_FILE).is_file() {
            // Its records beside the memo go too (the record of used results is the large one).
            journal.forget(memo)?;
            continue;
        }
        // The slots are rewritten only when many keys moved; the state file has every result
        // the last build used.
        live.extend(state_keys(out));
        let slots: crate::db::exec::Slots = journal.slots(memo);
        for stage in slots.0.values() {
            live.extend(stage.values().map(|parts| parts.key()));
        }
    }
    // Answers of batches still on record (collected, not yet used by a complete build).
    live.extend(crate::llm::batch::live_keys(memo)?);
    memo.retain(&live)
}

/// The keys of the results in the state of the output `out`: its state file (format 1 kept
/// them there) and its result shards (none of a file that cannot be read).
fn state_keys(out: &Path) -> Vec<Key> {
    use crate::format::state;
    let mut results = std::fs::read(out.join(crate::format::STATE_FILE))
        .ok()
        .and_then(|bytes| state::read(&bytes, true).ok())
        .map(|st| st.results)
        .unwrap_or_default();
    let shards = std::fs::read_dir(out.join(state::STATE_DIR))
        .into_iter()
        .flatten();
    for entry in shards.flatten() {
        if let Ok(bytes) = std::fs::read(entry.path()) {
            let _ = state::read_results(&bytes, &mut results);
        }
    }
    results.into_keys().collect()
}
