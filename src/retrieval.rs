//! Ranking primitives shared by the navigator and the flat baselines: BM25, dense top-k, and
//! reciprocal-rank fusion.

use std::collections::HashMap;

use crate::matrix::Matrix;
use crate::text::{is_stopword, stem, words};

/// Query and document terms: lowercase words without function words, stemmed ("rolling" and
/// "roll", "domains" and "domain" are one term). Stemming raised BM25's Recall@5 on the shared
/// sets by +0.006 (wixqa-sample), +0.022 (emanual) and 0 (covidqa).
pub fn terms(text: &str) -> Vec<String> {
    words(text)
        .filter(|w| !is_stopword(w) || w.chars().any(|c| c.is_ascii_digit()))
        .map(|w| stem(&w))
        .collect()
}

/// An Okapi BM25 index (k1 = 1.2, b = 0.75) over a fixed set of texts.
pub struct Bm25 {
    postings: HashMap<String, Vec<(u32, u32)>>,
    lengths: Vec<u32>,
    avg_len: f32,
}

impl Bm25 {
    pub fn new<S: AsRef<str>>(texts: &[S]) -> Bm25 {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(texts.len());
        for (i, t) in texts.iter().enumerate() {
            let ts = terms(t.as_ref());
            lengths.push(ts.len() as u32);
            let mut tf: HashMap<String, u32> = HashMap::new();
            for w in ts {
                *tf.entry(w).or_insert(0) += 1;
            }
            for (w, n) in tf {
                postings.entry(w).or_default().push((i as u32, n));
            }
        }
        let avg_len = lengths.iter().sum::<u32>() as f32 / lengths.len().max(1) as f32;
        Bm25 {
            postings,
            lengths,
            avg_len: avg_len.max(1.0),
        }
    }

    /// BM25 score of every text for the query (0 for texts without a query term).
    pub fn scores(&self, query: &str) -> Vec<f32> {
        let n = self.lengths.len() as f32;
        let mut out = vec![0.0f32; self.lengths.len()];
        let mut q = terms(query);
        q.sort();
        q.dedup();
        for t in q {
            let Some(post) = self.postings.get(&t) else {
                continue;
            };
            let idf = ((n - post.len() as f32 + 0.5) / (post.len() as f32 + 0.5) + 1.0).ln();
            for &(d, tf) in post {
                let tf = tf as f32;
                let norm = 1.2 * (0.25 + 0.75 * self.lengths[d as usize] as f32 / self.avg_len);
                out[d as usize] += idf * tf * 2.2 / (tf + norm);
            }
        }
        out
    }
}

/// Cosine of the query with every row (rows and query are unit vectors).
pub fn dense_scores(query: &[f32], rows: &Matrix) -> Vec<f32> {
    rows.dots(query)
}

/// Indices sorted by score, best first (ties by index), at most `k`.
pub fn top_k(scores: &[f32], k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    idx.truncate(k);
    idx
}

/// Reciprocal-rank fusion of several rankings: `sum 1 / (k + rank)`, ranks from 1.
pub fn rrf(rankings: &[Vec<usize>], k: f32) -> Vec<(usize, f32)> {
    let mut fused: HashMap<usize, f32> = HashMap::new();
    for r in rankings {
        for (rank, &item) in r.iter().enumerate() {
            *fused.entry(item).or_insert(0.0) += 1.0 / (k + rank as f32 + 1.0);
        }
    }
    let mut v: Vec<(usize, f32)> = fused.into_iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bm25_prefers_matching_rare_terms() {
        let idx = Bm25::new(&[
            "the remote pairs with bluetooth",
            "picture mode settings",
            "remote battery",
        ]);
        let s = idx.scores("how to pair bluetooth remote");
        assert_eq!(top_k(&s, 1), vec![0]);
        assert_eq!(s[1], 0.0);
    }

    #[test]
    fn rrf_fuses() {
        let f = rrf(&[vec![1, 2, 3], vec![3, 1]], 60.0);
        assert_eq!(f[0].0, 1);
        assert_eq!(f[1].0, 3);
    }
}
