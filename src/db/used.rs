//! The results the last build of an output used, in one file beside the memo (`used-<id>.bin`):
//! the next build reads it at once and asks the SQLite memo only for the keys it lacks (the
//! results that moved), instead of looking up every unchanged result row by row.
//!
//! Every entry is a memo key and the value stored under it (a `keyed` file). A key names its
//! inputs, stage, prompt and model, so an entry is right for any build that asks for its key:
//! the file can be older or newer than the memo, or than the output, and never makes a build
//! reuse a result it should not. What a build looked up elsewhere is kept in the overlay until
//! the file is worth rewriting (`keyed::Layered`).

use std::collections::HashSet;
use std::io;
use std::path::Path;

use super::cache::Key;
use super::journal::{Produced, Record};
use super::keyed::{Layered, Row};
use super::value::Entry;

const MAGIC: &[u8] = b"c2s-used 1\n";

/// The results a previous build used.
pub type Used = Layered;

/// Reads the results at `path` and its overlay (empty when missing, damaged or of another
/// format).
pub fn read(path: &Path) -> Used {
    Layered::read(path, MAGIC)
}

/// The results a build used, for the next build: `entries`, with the record it read and the
/// keys that record lacked (`fresh`).
pub struct Kept {
    pub read: Used,
    pub fresh: HashSet<Key>,
    pub entries: Vec<Entry>,
}

impl Produced for Kept {
    fn record(&self) -> Record {
        Record::Used
    }

    /// Keeps the results at `path`, as [`Layered::save`] does (the record itself or its
    /// overlay).
    fn keep(&mut self, path: &Path) -> io::Result<()> {
        // Without a record every key is new; the set is filled only when one was read.
        let all_fresh = self.read.is_empty();
        let rows = self.entries.iter().map(|e| Row {
            key: &e.key,
            value: &e.value,
            fresh: all_fresh || self.fresh.contains(&e.key),
        });
        self.read.save(path, MAGIC, rows)
    }
}
