//! One output file's content: its bytes, or a function that makes them when they are needed.
//!
//! Document files (and `documents.json`, `vectors.bin`) are made when the lock hashes them and
//! again when they are written, so a million of them are never all in memory at once.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::hash::Hashing;

/// Writes lazy content into any sink.
type Writer<'a> = dyn Fn(&mut dyn Write) -> io::Result<()> + Send + Sync + 'a;

/// Bytes, or how to write them (the same bytes on every call).
pub enum Content<'a> {
    Bytes(Vec<u8>),
    Lazy(Box<Writer<'a>>),
}

impl<'a> Content<'a> {
    /// Content written on demand by `f` (streamed: a large file is never one buffer).
    pub fn lazy(f: impl Fn(&mut dyn Write) -> io::Result<()> + Send + Sync + 'a) -> Self {
        Content::Lazy(Box::new(f))
    }

    /// The bytes (made now for lazy content).
    pub fn get(&self) -> Cow<'_, [u8]> {
        match self {
            Content::Bytes(b) => Cow::Borrowed(b),
            Content::Lazy(f) => {
                let mut v = Vec::new();
                f(&mut v).expect("writing to memory cannot fail");
                Cow::Owned(v)
            }
        }
    }

    /// The blake3 hash and the length, streamed.
    pub fn hash_and_len(&self) -> (blake3::Hash, u64) {
        match self {
            Content::Bytes(b) => (blake3::hash(b), b.len() as u64),
            Content::Lazy(f) => {
                let mut sink = Hashing::new(io::sink());
                // Hashed in large pieces: blake3 hashes a 64 KiB piece with SIMD across its
                // chunks, while the writers emit a few bytes per call.
                let mut w = io::BufWriter::with_capacity(1 << 16, &mut sink);
                f(&mut w).expect("hashing cannot fail");
                w.flush().expect("hashing cannot fail");
                drop(w);
                (sink.hasher.finalize(), sink.len)
            }
        }
    }

    /// Writes the content to a new file at `path`.
    pub fn write_file(&self, path: &Path) -> io::Result<()> {
        match self {
            Content::Bytes(b) => fs::write(path, b),
            Content::Lazy(f) => {
                let mut w = BufWriter::with_capacity(1 << 16, fs::File::create(path)?);
                f(&mut w)?;
                w.flush()
            }
        }
    }
}

impl From<Vec<u8>> for Content<'_> {
    fn from(b: Vec<u8>) -> Self {
        Content::Bytes(b)
    }
}

impl std::fmt::Debug for Content<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Content::Bytes(b) => write!(f, "Bytes({} bytes)", b.len()),
            Content::Lazy(_) => f.write_str("Lazy"),
        }
    }
}

/// Writes one record per item of `items` into `w`, `sep` between two records, in order. The
/// records are made in parallel by `record`, a window of pieces of `piece` items at a time (so
/// at most a window is held beside the output): the same bytes as made one after the other.
pub fn write_records<T: Sync>(
    w: &mut dyn Write,
    items: &[T],
    piece: usize,
    sep: &[u8],
    record: impl Fn(&T, &mut Vec<u8>) -> io::Result<()> + Sync,
) -> io::Result<()> {
    use rayon::prelude::*;
    let window = piece * 2 * rayon::current_num_threads();
    for (n, chunk) in items.chunks(window).enumerate() {
        let pieces: Vec<Vec<u8>> = chunk
            .par_chunks(piece)
            .map(|p| {
                let mut buf = Vec::new();
                for (i, x) in p.iter().enumerate() {
                    if i > 0 {
                        buf.extend_from_slice(sep);
                    }
                    record(x, &mut buf)?;
                }
                Ok(buf)
            })
            .collect::<io::Result<_>>()?;
        for (i, p) in pieces.iter().enumerate() {
            if n > 0 || i > 0 {
                w.write_all(sep)?;
            }
            w.write_all(p)?;
        }
    }
    Ok(())
}

/// Every file of an output: relative `/`-separated path → content.
pub type Files<'a> = BTreeMap<String, Content<'a>>;

/// A view of some of those files (a skill folder's, with paths relative to it).
pub type FileRefs<'f, 'a> = BTreeMap<&'f str, &'f Content<'a>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lazy_content_is_made_on_each_use_and_equals_its_bytes() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let c = Content::lazy(|w| {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            w.write_all(b"do")?;
            w.write_all(b"c")
        });
        assert_eq!(&*c.get(), b"doc");
        let eager = Content::from(b"doc".to_vec());
        assert_eq!(c.hash_and_len(), eager.hash_and_len());
        assert_eq!(c.hash_and_len().1, 3);
        let dir = tempfile::tempdir().unwrap();
        c.write_file(&dir.path().join("d")).unwrap();
        assert_eq!(fs::read(dir.path().join("d")).unwrap(), b"doc");
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 4);
    }
}
