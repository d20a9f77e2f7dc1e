//! The results the last build of an output used, in one file beside the memo (`used-<id>.bin`):
//! the next build reads it at once and asks the SQLite memo only for the keys it lacks (the
//! results that moved), instead of looking up every unchanged result row by row.
//!
//! Every entry is a memo key and the value stored under it (a `keyed` file). A key names its
//! inputs, stage, prompt and model, so an entry is right for any build that asks for its key:
//! the file can be older or newer than the memo, or than the output, and never makes a build
//! reuse a result it should not. What a build looked up elsewhere is kept in the overlay until
//! the file is worth rewriting (`keyed::Layered`).

use std::io;
use std::path::{Path, PathBuf};

use super::keyed::Layered;

const MAGIC: &[u8] = b"c2s-used 1\n";

/// The results a previous build used.
pub type Used = Layered;

/// Where the used results of the output `out` are kept (`memo` is the memo's path).
pub fn path_for(out: &Path, memo: &Path) -> PathBuf {
    super::cache::beside_memo(memo, out, "used", "bin")
}

/// Reads the results at `path` and its overlay (empty when missing, damaged or of another
/// format).
pub fn read(path: &Path) -> Used {
    Layered::read(path, MAGIC)
}

/// Keeps the results a build used (key and value, and whether `read` lacked it) at `path`, as
/// [`Layered::save`] does.
pub fn save<'a>(
    read: &Used,
    path: &Path,
    entries: impl IntoIterator<Item = super::keyed::Row<'a>>,
) -> io::Result<()> {
    read.save(path, MAGIC, entries)
}
