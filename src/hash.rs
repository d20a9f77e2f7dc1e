//! The one content-hash format of c2s: the first 32 hex digits of a blake3 hash (memo key
//! inputs, the lock's file hashes, publish folder hashes, multipart boundaries).

/// The content hash of `bytes`.
pub fn content_hash(bytes: &[u8]) -> String {
    short_hash(&blake3::hash(bytes))
}

/// A finished blake3 hash in the same form.
pub fn short_hash(h: &blake3::Hash) -> String {
    h.to_hex()[..32].to_string()
}
