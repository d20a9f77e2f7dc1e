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
    match std::fs::read(path) {
        Ok(b) => Content::Bytes(b),
        Err(e) => Content::Unreadable(e.to_string()),
    }
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
