//! One output file's content: its bytes, or a function that makes them when they are needed.
//!
//! Document files are made when the lock hashes them and again when they are written, so a
//! million of them are never all in memory at once. The large whole-corpus files
//! (`documents.json`, `vectors.bin`), which every edit changes, are written to a spill file
//! while they are hashed and moved into place, so they are made once. Content whose hash and
//! length a recipe recalls (the state file's result shards) is made only when it is written.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::hash::Hashing;

/// Writes lazy content into any sink.
type Writer<'a> = dyn Fn(&mut dyn Write) -> io::Result<()> + Send + Sync + 'a;

/// Bytes, or how to write them (the same bytes on every call).
pub enum Content<'a> {
    Bytes(Vec<u8>),
    Lazy(Box<Writer<'a>>),
    /// Lazy content that hashing also writes to a file, which the writer then moves into place.
    Spilled(Box<Writer<'a>>, Spill),
    /// Lazy content whose blake3 hash and length are known without making it.
    Recalled(blake3::Hash, u64, Box<Writer<'a>>),
}

/// Where spilled content is written while it is hashed, and whether it is there now (the first
/// write moves it away).
#[derive(Debug)]
pub struct Spill {
    file: PathBuf,
    made: Mutex<bool>,
}

impl<'a> Content<'a> {
    /// Content written on demand by `f` (streamed: a large file is never one buffer).
    pub fn lazy(f: impl Fn(&mut dyn Write) -> io::Result<()> + Send + Sync + 'a) -> Self {
        Content::Lazy(Box::new(f))
    }

    /// Lazy content that [`Content::hash_and_len`] also writes to `file` (without `file`, plain
    /// lazy content). The file is the caller's to remove when it was never moved into place.
    pub fn spilled(
        f: impl Fn(&mut dyn Write) -> io::Result<()> + Send + Sync + 'a,
        file: Option<PathBuf>,
    ) -> Self {
        match file {
            Some(file) => Content::Spilled(
                Box::new(f),
                Spill {
                    file,
                    made: Mutex::new(false),
                },
            ),
            None => Content::lazy(f),
        }
    }

    /// Lazy content made by `f`, whose bytes hash to `hash` and are `len` long (a recipe's
    /// record; the caller vouches for it).
    pub fn recalled(
        hash: blake3::Hash,
        len: u64,
        f: impl Fn(&mut dyn Write) -> io::Result<()> + Send + Sync + 'a,
    ) -> Self {
        Content::Recalled(hash, len, Box::new(f))
    }

    fn made(spill: &Spill) -> std::sync::MutexGuard<'_, bool> {
        spill.made.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The bytes (made now for lazy content).
    pub fn get(&self) -> Cow<'_, [u8]> {
        match self {
            Content::Bytes(b) => Cow::Borrowed(b),
            Content::Lazy(f) | Content::Recalled(_, _, f) => Cow::Owned(Self::make(f)),
            Content::Spilled(f, spill) => {
                if *Self::made(spill)
                    && let Ok(b) = fs::read(&spill.file)
                {
                    return Cow::Owned(b);
                }
                Cow::Owned(Self::make(f))
            }
        }
    }

    fn make(f: &Writer) -> Vec<u8> {
        let mut v = Vec::new();
        f(&mut v).expect("writing to memory cannot fail");
        v
    }

    /// The blake3 hash and the length, streamed.
    pub fn hash_and_len(&self) -> (blake3::Hash, u64) {
        match self {
            Content::Bytes(b) => (blake3::hash(b), b.len() as u64),
            Content::Lazy(f) => Self::hash_made(f, io::sink()).expect("hashing cannot fail"),
            Content::Recalled(hash, len, _) => (*hash, *len),
            Content::Spilled(f, spill) => {
                let mut made = Self::made(spill);
                match Self::spill(f, &spill.file) {
                    Ok(hashed) => {
                        *made = true;
                        hashed
                    }
                    // Not written (a full disk, say): hashed alone, and made again to be written.
                    Err(_) => {
                        let _ = fs::remove_file(&spill.file);
                        *made = false;
                        Self::hash_made(f, io::sink()).expect("hashing cannot fail")
                    }
                }
            }
        }
    }

    /// Writes `f`'s bytes to `file` and hashes them on the way.
    fn spill(f: &Writer, file: &Path) -> io::Result<(blake3::Hash, u64)> {
        if let Some(dir) = file.parent() {
            fs::create_dir_all(dir)?;
        }
        Self::hash_made(f, fs::File::create(file)?)
    }

    /// Hashes `f`'s bytes on their way into `to`. In large pieces: blake3 hashes a 64 KiB
    /// piece with SIMD across its chunks, while the writers emit a few bytes per call.
    fn hash_made(f: &Writer, to: impl Write) -> io::Result<(blake3::Hash, u64)> {
        let mut sink = Hashing::new(to);
        let mut w = BufWriter::with_capacity(1 << 16, &mut sink);
        f(&mut w)?;
        w.flush()?;
        drop(w);
        Ok((sink.hasher.finalize(), sink.len))
    }

    /// Writes the content to a new file at `path`.
    pub fn write_file(&self, path: &Path) -> io::Result<()> {
        match self {
            Content::Bytes(b) => fs::write(path, b),
            Content::Lazy(f) | Content::Recalled(_, _, f) => Self::make_file(f, path),
            Content::Spilled(f, spill) => {
                let mut made = Self::made(spill);
                if *made && fs::rename(&spill.file, path).is_ok() {
                    *made = false;
                    return Ok(());
                }
                drop(made);
                Self::make_file(f, path)
            }
        }
    }

    fn make_file(f: &Writer, path: &Path) -> io::Result<()> {
        let mut w = BufWriter::with_capacity(1 << 16, fs::File::create(path)?);
        f(&mut w)?;
        w.flush()
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
            Content::Recalled(_, len, _) => write!(f, "Recalled({len} bytes)"),
            Content::Spilled(_, spill) => write!(f, "Spilled({})", spill.file.display()),
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

    fn counted(
        calls: &std::sync::atomic::AtomicUsize,
    ) -> impl Fn(&mut dyn Write) -> io::Result<()> {
        move |w| {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            w.write_all(b"documents")
        }
    }

    #[test]
    fn spilled_content_is_made_once_when_hashed_and_moved_into_place() {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        let calls = AtomicUsize::new(0);
        let dir = tempfile::tempdir().unwrap();
        let spill = dir.path().join("spill").join("documents.json");
        let c = Content::spilled(counted(&calls), Some(spill.clone()));
        let eager = Content::from(b"documents".to_vec());
        assert_eq!(c.hash_and_len(), eager.hash_and_len());
        assert_eq!(fs::read(&spill).unwrap(), b"documents");
        assert_eq!(&*c.get(), b"documents", "read back from the spill file");
        let dest = dir.path().join("out.json");
        c.write_file(&dest).unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"documents");
        assert!(!spill.exists(), "moved, not copied");
        assert_eq!(
            calls.load(SeqCst),
            1,
            "made once for the hash, the read and the write"
        );
        // A second write (a hard link that failed) makes it again.
        let again = dir.path().join("again.json");
        c.write_file(&again).unwrap();
        assert_eq!(fs::read(&again).unwrap(), b"documents");
        assert_eq!(calls.load(SeqCst), 2);
    }

    #[test]
    fn content_that_cannot_spill_is_hashed_and_made_again() {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        let calls = AtomicUsize::new(0);
        let dir = tempfile::tempdir().unwrap();
        // The spill folder's place is taken by a file: nothing can be written there.
        fs::write(dir.path().join("spill"), b"x").unwrap();
        let c = Content::spilled(
            counted(&calls),
            Some(dir.path().join("spill").join("d.json")),
        );
        assert_eq!(
            c.hash_and_len(),
            Content::from(b"documents".to_vec()).hash_and_len()
        );
        let dest = dir.path().join("d.json");
        c.write_file(&dest).unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"documents");
        assert_eq!(calls.load(SeqCst), 2);
        // Without a spill file it is plain lazy content.
        assert!(matches!(
            Content::spilled(counted(&calls), None),
            Content::Lazy(_)
        ));
    }
}
