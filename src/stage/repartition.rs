//! Verify-and-repartition (offline form): clusters of one level whose labels collide are merged when
//! they are close and small enough together; the rest keep their members and get told apart by label.

use std::collections::BTreeMap;

use crate::matrix::simd::dot;

/// Clusters with the same label merge when their centroids are at least this similar.
pub const MERGE_COSINE: f32 = 0.6;

/// Pairs `(keep, absorb)` to merge. Each cluster takes part in at most one merge, and a merged
/// cluster stays within `max_size` members. Deterministic: lowest indices first.
pub fn plan_merges(
    labels: &[String],
    centroids: &[Vec<f32>],
    sizes: &[usize],
    max_size: usize,
) -> Vec<(usize, usize)> {
    let mut by_label: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, l) in labels.iter().enumerate() {
        by_label.entry(l.as_str()).or_default().push(i);
    }
    let mut used = vec![false; labels.len()];
    let mut merges = Vec::new();
    for group in by_label.values().filter(|g| g.len() > 1) {
        for (x, &a) in group.iter().enumerate() {
            for &b in &group[x + 1..] {
                if used[a] || used[b] || sizes[a] + sizes[b] > max_size {
                    continue;
                }
                if cosine(&centroids[a], &centroids[b]) >= MERGE_COSINE {
                    used[a] = true;
                    used[b] = true;
                    merges.push((a, b));
                }
            }
        }
    }
    merges
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let d = dot(a, b);
    let n = (dot(a, a) * dot(b, b)).sqrt();
    if n > 0.0 { d / n } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_close_duplicates_only() {
        let labels: Vec<String> = ["a", "b", "a", "a"].iter().map(|s| s.to_string()).collect();
        let c = vec![
            vec![1.0, 0.0],
            vec![1.0, 0.0],
            vec![0.9, 0.1],
            vec![0.0, 1.0],
        ];
        assert_eq!(plan_merges(&labels, &c, &[3, 3, 3, 3], 20), vec![(0, 2)]);
        assert!(plan_merges(&labels, &c, &[15, 3, 15, 3], 20).is_empty());
    }
}
