//! Reading a source's bytes: capped at `corpus.max_file_bytes`, hashed for the manifest, and
//! taken from what the examination already read (a fresh clone's sources are hashed before
//! ingest parses them) instead of being read twice.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use super::IngestOptions;
use super::walk::Candidate;
use crate::db::statindex::Stat;
use crate::diag::Diagnostics;

/// Reads one file's bytes (None when too large or unreadable, with a warning) and its manifest
/// hash; a source the examination read whole (`ahead`) is not read again.
pub(super) fn read_bytes(
    c: &Candidate,
    opts: &IngestOptions,
    ahead: Option<(Vec<u8>, String)>,
    d: &mut Diagnostics,
) -> (Option<Vec<u8>>, String, Option<Stat>) {
    if let (Some((bytes, hash)), Some(Ok(stat))) = (ahead, &c.stat) {
        return (Some(bytes), hash, Some(*stat));
    }
    let (content, stat) = load(c, opts);
    let hash = content.hash();
    let bytes = match content {
        Content::Unreadable(e) => {
            d.warn(&c.display, None, format!("unreadable ({e}); skipped"));
            None
        }
        Content::TooLarge(len) => {
            d.warn(
                &c.display,
                None,
                format!(
                    "file is {len} bytes, over corpus.max_file_bytes = {}; skipped (raise the cap to include it)",
                    opts.max_file_bytes
                ),
            );
            None
        }
        Content::Bytes(b) => Some(b),
    };
    (bytes, hash, stat)
}

/// A source file's bytes, or why there are none.
enum Content {
    Bytes(Vec<u8>),
    TooLarge(u64),
    Unreadable(String),
}

impl Content {
    /// The hash recorded in the manifest: of the bytes, or of the reason they were not read.
    fn hash(&self) -> String {
        match self {
            Content::Bytes(b) => crate::hash::content_hash(b),
            Content::TooLarge(n) => format!("oversize:{n}"),
            Content::Unreadable(_) => "unreadable".to_string(),
        }
    }
}

/// Reads a candidate, with the stat the walk took before the read (so that a write racing the
/// read changes the stat the next build sees).
fn load(c: &Candidate, opts: &IngestOptions) -> (Content, Option<Stat>) {
    match &c.stat {
        Some(Ok(s)) => (read_capped(&c.path, s.size, opts), Some(*s)),
        Some(Err(e)) => (Content::Unreadable(e.clone()), None),
        None => (Content::Unreadable("not stat'ed".into()), None),
    }
}

/// The bytes of the file at `path` of `size` bytes, unless it is over `corpus.max_file_bytes`.
fn read_capped(path: &Path, size: u64, opts: &IngestOptions) -> Content {
    if size > opts.max_file_bytes {
        return Content::TooLarge(size);
    }
    match read_sized(path, size) {
        Ok(b) => Content::Bytes(b),
        Err(e) => Content::Unreadable(e.to_string()),
    }
}

/// The bytes of the file at `path`, whose walk found `size` bytes: `std::fs::read` without the
/// stat it makes (and `read_to_end` too) to size its buffer, since the walk's stat gave the size
/// (a fresh clone reads every source). A file that has grown since is still read whole.
fn read_sized(path: &Path, size: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{ErrorKind, Read};
    let mut file = std::fs::File::open(path)?;
    // One byte more than the stat said, so that the read that finds the end needs no growth.
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(usize::try_from(size).unwrap_or(0).saturating_add(1))?;
    bytes.resize(bytes.capacity(), 0);
    let mut len = 0;
    loop {
        if len == bytes.len() {
            bytes.resize(len.saturating_mul(2).max(64), 0);
        }
        match file.read(&mut bytes[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(len);
    Ok(bytes)
}

/// A source file the build would read, and its stat (or why there is none), as the walk found
/// it.
pub struct Found<'w> {
    /// The path the manifest records.
    pub display: &'w str,
    pub(super) path: &'w Path,
    pub stat: Result<Stat, &'w str>,
}

impl<'w> Found<'w> {
    /// A file read by an include (listed in the lock), at `path`, shown as `display`.
    pub fn included(display: &'w str, path: &'w Path, stat: Result<Stat, &'w str>) -> Self {
        Found {
            display,
            path,
            stat,
        }
    }

    /// The hash the manifest records: of the bytes, or of the reason they were not read (as a
    /// build records it). The bytes of a file read whole, and their hash, go into `ahead` when
    /// given (ingest then does not read the file again).
    pub fn hash(&self, opts: &IngestOptions, ahead: Option<&Mutex<ReadAhead>>) -> String {
        let content = match &self.stat {
            Err(e) => Content::Unreadable(e.to_string()),
            Ok(s) => read_capped(self.path, s.size, opts),
        };
        let hash = content.hash();
        if let (Some(ahead), Content::Bytes(bytes)) = (ahead, content) {
            let kept = (bytes, hash.clone());
            let mut ahead = ahead.lock().unwrap_or_else(|e| e.into_inner());
            ahead.insert(self.display.to_string(), kept);
        }
        hash
    }
}

/// Sources read whole before ingest (by the examination of `c2s build`, which hashes every
/// file whose stat it does not know: all of them in a fresh clone), with their hashes, by the
/// path the manifest records. Ingest takes a source's bytes from here instead of reading it
/// again; the walk's stat was taken before either read.
pub type ReadAhead = HashMap<String, (Vec<u8>, String)>;

#[cfg(test)]
mod tests {
    use super::*;

    /// A file read with the size its stat gave, or a stale one, comes back whole, as
    /// `std::fs::read` gives it.
    #[test]
    fn a_file_is_read_whole_whatever_size_the_stat_said() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0usize, 1, 63, 64, 65, 700, 5000] {
            let path = dir.path().join(format!("f{len}"));
            let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            std::fs::write(&path, &data).unwrap();
            for said in [0, len as u64 / 2, len as u64, len as u64 + 10] {
                assert_eq!(
                    read_sized(&path, said).unwrap(),
                    data,
                    "{len} bytes, stat said {said}"
                );
            }
        }
        let missing = read_sized(&dir.path().join("none"), 3).unwrap_err();
        let std_err = std::fs::read(dir.path().join("none")).unwrap_err();
        assert_eq!(missing.to_string(), std_err.to_string());
        // A folder: the error `std::fs::read` gives.
        let folder = read_sized(dir.path(), 4096).unwrap_err();
        assert_eq!(
            folder.to_string(),
            std::fs::read(dir.path()).unwrap_err().to_string()
        );
    }
}
