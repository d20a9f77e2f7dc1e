//! How the state file writes binary values as text: memo keys in hex, vectors in base64, and
//! mostly-zero vectors as their non-zero values by index.

use crate::db::cache::Key;

/// A vector of f32 bytes with at most a third of its values non-zero, as its length (u32) and
/// (index u16, value f32) pairs, all little-endian; `None` when that would not be smaller.
pub(super) fn sparse(bytes: &[u8]) -> Option<Vec<u8>> {
    let n = bytes.len() / 4;
    if n > u16::MAX as usize {
        return None;
    }
    // Counted first, without allocating: most vectors of a dense embedder are not sparse, and
    // the state file asks this of every vector of every build.
    let nonzero = |c: &&[u8]| *c != [0u8; 4];
    let mut count = 0;
    for _ in bytes.chunks_exact(4).filter(nonzero) {
        count += 1;
        if 3 * count > n {
            return None;
        }
    }
    let mut out = Vec::with_capacity(4 + 6 * count);
    out.extend_from_slice(&(n as u32).to_le_bytes());
    for (i, c) in bytes
        .chunks_exact(4)
        .enumerate()
        .filter(|(_, c)| nonzero(c))
    {
        out.extend_from_slice(&(i as u16).to_le_bytes());
        out.extend_from_slice(c);
    }
    Some(out)
}

/// The f32 bytes of a [`sparse`] vector; `None` when it is not one.
pub(super) fn dense(z: &[u8]) -> Option<Vec<u8>> {
    let n = u32::from_le_bytes(z.get(..4)?.try_into().ok()?) as usize;
    let pairs = &z[4..];
    if n > u16::MAX as usize || !pairs.len().is_multiple_of(6) {
        return None;
    }
    let mut out = vec![0u8; n * 4];
    for p in pairs.chunks_exact(6) {
        let i = u16::from_le_bytes([p[0], p[1]]) as usize;
        out.get_mut(i * 4..i * 4 + 4)?.copy_from_slice(&p[2..6]);
    }
    Some(out)
}

pub(super) fn hex_into(w: &mut Vec<u8>, key: &Key) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in key {
        w.push(DIGITS[(b >> 4) as usize]);
        w.push(DIGITS[(b & 15) as usize]);
    }
}

pub(super) fn unhex(s: &str) -> Option<Key> {
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, k) in key.iter_mut().enumerate() {
        *k = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(key)
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding, appended to `w`.
pub(super) fn base64_into(w: &mut Vec<u8>, bytes: &[u8]) {
    w.reserve(bytes.len().div_ceil(3) * 4);
    let mut whole = bytes.chunks_exact(3);
    for c in &mut whole {
        let n = (c[0] as u32) << 16 | (c[1] as u32) << 8 | c[2] as u32;
        w.extend_from_slice(&[
            B64[(n >> 18 & 63) as usize],
            B64[(n >> 12 & 63) as usize],
            B64[(n >> 6 & 63) as usize],
            B64[(n & 63) as usize],
        ]);
    }
    let rest = whole.remainder();
    if !rest.is_empty() {
        let n = (rest[0] as u32) << 16 | (*rest.get(1).unwrap_or(&0) as u32) << 8;
        w.push(B64[(n >> 18 & 63) as usize]);
        w.push(B64[(n >> 12 & 63) as usize]);
        w.push(if rest.len() == 2 {
            B64[(n >> 6 & 63) as usize]
        } else {
            b'='
        });
        w.push(b'=');
    }
}

/// Standard base64 with padding.
#[cfg(test)]
pub(super) fn base64(bytes: &[u8]) -> String {
    let mut w = Vec::new();
    base64_into(&mut w, bytes);
    String::from_utf8(w).expect("base64 is ASCII")
}

/// The value of each base64 character; [`NOT_BASE64`] for any other byte.
const BASE64_VALUES: [u8; 256] = {
    let mut t = [NOT_BASE64; 256];
    let mut i = 0;
    while i < 64 {
        t[B64[i] as usize] = i as u8;
        i += 1;
    }
    t
};
const NOT_BASE64: u8 = 0xff;

pub(super) fn unbase64(s: &str) -> Option<Vec<u8>> {
    let s = s.as_bytes();
    if !s.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    for c in s.chunks_exact(4) {
        // Most chunks are four plain characters (vectors are megabytes of them): one table
        // lookup each; a chunk with padding or anything else is read as before.
        let v = [c[0], c[1], c[2], c[3]].map(|ch| BASE64_VALUES[ch as usize]);
        if v.contains(&NOT_BASE64) {
            unbase64_chunk(c, &mut out)?;
            continue;
        }
        let n = (v[0] as u32) << 18 | (v[1] as u32) << 12 | (v[2] as u32) << 6 | v[3] as u32;
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8]);
    }
    Some(out)
}

/// One chunk of four characters that may end in padding (`=`).
fn unbase64_chunk(c: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let mut n = 0u32;
    let mut pad = 0;
    for (j, &ch) in c.iter().enumerate() {
        let v = match ch {
            b'=' if j >= 2 => {
                pad += 1;
                0
            }
            _ if BASE64_VALUES[ch as usize] != NOT_BASE64 => BASE64_VALUES[ch as usize],
            _ => return None,
        };
        if pad > 0 && ch != b'=' {
            return None;
        }
        n = n << 6 | v as u32;
    }
    let three = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
    out.extend_from_slice(&three[..3 - pad]);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_roundtrips() {
        for len in 0..10 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 5) as u8).collect();
            assert_eq!(unbase64(&base64(&bytes)).unwrap(), bytes);
        }
        assert_eq!(base64(b"Man"), "TWFu");
        assert_eq!(base64(b"Ma"), "TWE=");
        assert_eq!(base64(b"M"), "TQ==");
        assert!(unbase64("TW=u").is_none());
    }

    #[test]
    fn base64_decodes_every_byte_and_rejects_what_is_not_base64() {
        // Every byte value in every position of a chunk, and lengths that end in padding.
        for len in [255, 256, 257, 1000] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 131 + i / 256) as u8).collect();
            assert_eq!(unbase64(&base64(&bytes)).unwrap(), bytes, "{len}");
        }
        for bad in [
            "TW-u",
            "TWFu TWFu",
            "TWF\u{e9}",
            "TWFuTW",
            "=WFu",
            "TWFu\n\n\n\n",
            "T===",
        ] {
            assert!(unbase64(bad).is_none(), "{bad:?} decoded");
        }
    }
}
