//! The offline `hashed` embedder: signed feature hashing of word uni- and bigrams, sublinear TF,
//! weighted by the built-in background table (never by corpus statistics), L2-normalized.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::{EmbedError, Embedder};
use crate::text::{distinctiveness, word_key_into, word_pieces};

/// Feature-hashing embedder. A document's vector depends on its own text only.
#[derive(Debug, Clone, Copy)]
pub struct Hashed {
    pub dims: usize,
}

impl Embedder for Hashed {
    fn model_id(&self) -> String {
        format!("hashed-2:{}", self.dims)
    }

    /// Hashing a text again is cheap and exact: a stored vector is recomputed and compared.
    fn check_stored(&self, _text: super::Lazy<'_>, _v: &[f32]) -> Option<Result<(), String>> {
        None
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.par_iter().map(|t| self.embed_one(t)).collect())
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// FNV-1a over `bytes`, from the state `h`.
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// The finalizer after FNV-1a: a feature's hash, stable on every platform and release.
fn finish(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

impl Hashed {
    fn embed_one(&self, text: &str) -> Vec<f32> {
        // Keys already hashed, and sorted below: a fast map (the order never shows).
        // Sized once for about a word in six bytes, each with its bigram.
        let words = text.len() / 6 + 1;
        let mut tf: FxHashMap<u64, (u32, f32)> =
            FxHashMap::with_capacity_and_hasher(words * 2, Default::default());
        // Each word's key is made in one buffer; its weight is one lookup in the background
        // table, as cheap as a lookup in a map of the words seen (and nothing to copy).
        let mut word = String::new();
        // The previous word's FNV state and weight (a bigram is the two words joined by a space).
        let mut before: Option<(u64, f32)> = None;
        for raw in word_pieces(text) {
            if !word_key_into(raw, &mut word) {
                continue;
            }
            let weight = distinctiveness(&word);
            let h = fnv(FNV_OFFSET, word.as_bytes());
            if let Some((hp, wp)) = before
                && wp > 0.0
                && weight > 0.0
            {
                let wb = 0.5 * (wp + weight);
                let bigram = finish(fnv(fnv(hp, b" "), word.as_bytes()));
                tf.entry(bigram).or_insert((0, wb * 0.8)).0 += 1;
            }
            if weight > 0.0 {
                tf.entry(finish(h)).or_insert((0, weight)).0 += 1;
            }
            before = Some((h, weight));
        }
        let mut v = vec![0.0f32; self.dims];
        let mut feats: Vec<(u64, (u32, f32))> = tf.into_iter().collect();
        feats.sort_unstable_by_key(|f| f.0);
        for (h, (count, weight)) in feats {
            let idx = (h % self.dims as u64) as usize;
            let sign = if h >> 63 == 1 { -1.0 } else { 1.0 };
            v[idx] += sign * weight * (1.0 + (count as f32).ln());
        }
        crate::matrix::normalize(&mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::simd::dot;

    #[test]
    fn similar_texts_are_closer() {
        let e = Hashed { dims: 256 };
        let v = e
            .embed(&[
                "pair the smart remote with the tv",
                "smart remote pairing with a tv",
                "refund policy for ad credits",
            ])
            .unwrap();
        assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-5);
        assert!(dot(&v[0], &v[1]) > dot(&v[0], &v[2]));
        assert_eq!(
            v,
            e.embed(&[
                "pair the smart remote with the tv",
                "smart remote pairing with a tv",
                "refund policy for ad credits"
            ])
            .unwrap()
        );
    }
}
