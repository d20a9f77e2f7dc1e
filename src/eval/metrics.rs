//! Retrieval and answer metrics: Recall@k, Hit@k, MRR@k, nDCG@k, and SQuAD-style exact match
//! and token F1.

use std::collections::{HashMap, HashSet};

/// Share of distinct gold ids found in the first `k` results (None without gold).
pub fn recall_at(results: &[String], gold: &[String], k: usize) -> Option<f64> {
    let gold: HashSet<&str> = gold.iter().map(String::as_str).collect();
    if gold.is_empty() {
        return None;
    }
    let found: HashSet<&str> = results
        .iter()
        .take(k)
        .map(String::as_str)
        .filter(|r| gold.contains(r))
        .collect();
    Some(found.len() as f64 / gold.len() as f64)
}

/// 1 if any gold id is in the first `k` results.
pub fn hit_at(results: &[String], gold: &[String], k: usize) -> Option<f64> {
    if gold.is_empty() {
        return None;
    }
    Some(f64::from(u8::from(
        results.iter().take(k).any(|r| gold.contains(r)),
    )))
}

/// Reciprocal rank of the first gold id within `k` (0 when none).
pub fn mrr_at(results: &[String], gold: &[String], k: usize) -> Option<f64> {
    if gold.is_empty() {
        return None;
    }
    Some(
        results
            .iter()
            .take(k)
            .position(|r| gold.contains(r))
            .map_or(0.0, |p| 1.0 / (p + 1) as f64),
    )
}

/// nDCG with binary relevance; a gold id counts once even if repeated in the results.
pub fn ndcg_at(results: &[String], gold: &[String], k: usize) -> Option<f64> {
    let gold: HashSet<&str> = gold.iter().map(String::as_str).collect();
    if gold.is_empty() {
        return None;
    }
    let mut seen = HashSet::new();
    let dcg: f64 = results
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, r)| gold.contains(r.as_str()) && seen.insert(r.as_str()))
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let ideal: f64 = (0..gold.len().min(k))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    Some(dcg / ideal)
}

/// Share of the cited documents that are gold (0 when nothing is cited).
pub fn citation_precision(cited: &[String], gold: &[String]) -> f64 {
    let cited: HashSet<&str> = cited.iter().map(String::as_str).collect();
    if cited.is_empty() {
        return 0.0;
    }
    let gold: HashSet<&str> = gold.iter().map(String::as_str).collect();
    cited.intersection(&gold).count() as f64 / cited.len() as f64
}

/// Share of the gold documents that are cited (None without gold).
pub fn citation_recall(cited: &[String], gold: &[String]) -> Option<f64> {
    recall_at(cited, gold, usize::MAX)
}

/// SQuAD normalization: lowercase, drop punctuation and articles, collapse whitespace.
pub fn normalize_answer(s: &str) -> Vec<String> {
    let lower: String = s
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_punctuation() { ' ' } else { c })
        .collect();
    lower
        .split_whitespace()
        .filter(|w| !matches!(*w, "a" | "an" | "the"))
        .map(str::to_string)
        .collect()
}

pub fn exact_match(prediction: &str, gold: &str) -> f64 {
    f64::from(u8::from(
        normalize_answer(prediction) == normalize_answer(gold),
    ))
}

/// Token-level F1 between normalized prediction and gold answer.
pub fn token_f1(prediction: &str, gold: &str) -> f64 {
    let p = normalize_answer(prediction);
    let g = normalize_answer(gold);
    if p.is_empty() || g.is_empty() {
        return f64::from(u8::from(p == g));
    }
    let mut counts: HashMap<&str, i32> = HashMap::new();
    for w in &g {
        *counts.entry(w).or_insert(0) += 1;
    }
    let mut common = 0;
    for w in &p {
        if let Some(c) = counts.get_mut(w.as_str()).filter(|c| **c > 0) {
            *c -= 1;
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }
    let precision = common as f64 / p.len() as f64;
    let recall = common as f64 / g.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ranking_metrics_by_hand() {
        let r = v(&["a", "x", "b", "y", "z", "c"]);
        let g = v(&["b", "c"]);
        assert_eq!(recall_at(&r, &g, 5), Some(0.5));
        assert_eq!(hit_at(&r, &g, 5), Some(1.0));
        assert_eq!(mrr_at(&r, &g, 10), Some(1.0 / 3.0));
        // Gold at ranks 3 and 6: DCG = 1/log2(4) + 1/log2(7); IDCG = 1 + 1/log2(3).
        let want = (0.5 + 1.0 / 7f64.log2()) / (1.0 + 1.0 / 3f64.log2());
        assert!((ndcg_at(&r, &g, 10).unwrap() - want).abs() < 1e-12);
    }

    #[test]
    fn edge_cases() {
        let g = v(&["a"]);
        assert_eq!(recall_at(&v(&["x"]), &[], 5), None, "no gold");
        assert_eq!(mrr_at(&[], &g, 10), Some(0.0), "no results");
        // Duplicates in results count once; k larger than the results is fine.
        assert_eq!(recall_at(&v(&["a", "a"]), &v(&["a", "b"]), 50), Some(0.5));
        assert_eq!(ndcg_at(&v(&["a", "a"]), &g, 10), Some(1.0));
        assert_eq!(hit_at(&v(&["x", "y"]), &g, 1), Some(0.0));
        // Duplicate gold ids count once.
        assert_eq!(recall_at(&v(&["a"]), &v(&["a", "a"]), 5), Some(1.0));
    }

    #[test]
    fn citations_against_gold() {
        let g = v(&["a", "b"]);
        assert_eq!(citation_precision(&v(&["a", "x"]), &g), 0.5);
        assert_eq!(citation_precision(&[], &g), 0.0);
        assert_eq!(
            citation_recall(&v(&["a", "x", "y", "z", "w", "b"]), &g),
            Some(1.0)
        );
        assert_eq!(citation_recall(&v(&["a"]), &[]), None);
    }

    #[test]
    fn squad_normalization() {
        assert_eq!(exact_match("The Cat!", "cat"), 1.0);
        // [black cat sat] vs [cat sat down]: 2 common of 3 and 3, so P = R = F1 = 2/3.
        assert!((token_f1("the black cat sat", "a cat sat down") - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(token_f1("", ""), 1.0);
        assert_eq!(token_f1("dog", "cat"), 0.0);
    }
}
