//! The one content-hash format of c2s: the first 32 hex digits of a blake3 hash (memo key
//! inputs, the lock's file hashes, publish folder hashes, multipart boundaries), and a writer
//! that hashes what goes through it.

/// The content hash of `bytes`.
pub fn content_hash(bytes: &[u8]) -> String {
    short_hash(&blake3::hash(bytes))
}

/// A finished blake3 hash in the same form.
pub fn short_hash(h: &blake3::Hash) -> String {
    h.to_hex()[..32].to_string()
}

/// A writer that hashes and counts what goes through it to `inner` (`io::sink()` to only hash).
/// Wrap it in a `BufWriter` when the writes are small: blake3 hashes a large piece with SIMD.
pub struct Hashing<W> {
    pub inner: W,
    pub hasher: blake3::Hasher,
    pub len: u64,
}

impl<W> Hashing<W> {
    pub fn new(inner: W) -> Self {
        Hashing {
            inner,
            hasher: blake3::Hasher::new(),
            len: 0,
        }
    }
}

impl<W: std::io::Write> std::io::Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
