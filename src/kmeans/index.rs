//! The nearest-centroid index: the nearest and runner-up among a set of centroids, near-linear
//! for large sets. The set is bucketed by a small K-Means over the centroids themselves (on the
//! build's K-Means backend), and a query scans the buckets nearest to it. Small sets, and sets
//! asked too few queries to repay the bucketing, are scanned whole.

use super::seed::seed_trials;
use super::{KmeansBackend, KmeansParams};
use crate::matrix::Matrix;
use crate::matrix::simd::dot;

/// Buckets a query scans.
const NEIGHBOUR_GROUPS: usize = 3;
/// Up to this many candidates an index scans them whole.
const WHOLE_SCAN_MAX: usize = 1024;
/// Lloyd iterations of the bucketing K-Means.
const BUCKET_ITERS: usize = 5;

/// The nearest and runner-up among a set of centroids (see the module doc).
pub struct NearestIndex<'a> {
    centroids: &'a Matrix,
    /// Per bucket: indices into `centroids`, ascending.
    members: Vec<Vec<usize>>,
    /// Bucket centroids (empty for a whole scan, with one bucket).
    heads: Matrix,
}

impl<'a> NearestIndex<'a> {
    /// Indexes `candidates` (rows of `centroids`), bucketing them on `backend` past
    /// `WHOLE_SCAN_MAX` of them.
    pub fn new(
        backend: &dyn KmeansBackend,
        centroids: &'a Matrix,
        candidates: &[usize],
        seed: u64,
    ) -> NearestIndex<'a> {
        if candidates.len() <= WHOLE_SCAN_MAX {
            return Self::whole(centroids, candidates);
        }
        let mut sub = Matrix::new(centroids.dims);
        for &c in candidates {
            sub.push(centroids.row(c));
        }
        let k = bucket_count(candidates.len());
        let r = backend.run(
            &sub,
            &KmeansParams {
                k,
                max_iter: BUCKET_ITERS,
                n_init: 1,
                tol: 0.01,
                seed,
                tau: 0.0,
            },
        );
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); r.centroids.rows];
        for (pos, &a) in r.assign.iter().enumerate() {
            members[a as usize].push(candidates[pos]);
        }
        for m in &mut members {
            m.sort_unstable();
        }
        let mut index = NearestIndex {
            centroids,
            members,
            heads: r.centroids,
        };
        index.drop_empty();
        index
    }

    /// An index for `queries` lookups: [`NearestIndex::new`], or a whole scan of `candidates`
    /// when scanning them all for every query costs less than bucketing them (a few queries
    /// into many candidates, such as the few one-member clusters of a level).
    pub fn for_queries(
        backend: &dyn KmeansBackend,
        centroids: &'a Matrix,
        candidates: &[usize],
        queries: usize,
        seed: u64,
    ) -> NearestIndex<'a> {
        if Self::scans_whole(candidates.len(), queries) {
            Self::whole(centroids, candidates)
        } else {
            Self::new(backend, centroids, candidates, seed)
        }
    }

    /// Whether an index of `candidates` asked `queries` lookups scans them whole: up to
    /// `WHOLE_SCAN_MAX` of them, or when scanning them all for every query costs no more than
    /// bucketing them first.
    pub fn scans_whole(candidates: usize, queries: usize) -> bool {
        let m = candidates as u64;
        if candidates <= WHOLE_SCAN_MAX {
            return true;
        }
        let k = bucket_count(candidates) as u64;
        // Bucketing is a K-Means of m points into k (seeding plus its iterations); a query
        // then scans the k heads and about NEIGHBOUR_GROUPS buckets of m / k.
        let bucketing = (seed_trials(k as usize) + BUCKET_ITERS) as u64 * m * k;
        let per_query = k + NEIGHBOUR_GROUPS as u64 * m.div_ceil(k);
        let q = queries as u64;
        q.saturating_mul(m) <= bucketing.saturating_add(q.saturating_mul(per_query))
    }

    /// A whole scan of `candidates`.
    fn whole(centroids: &'a Matrix, candidates: &[usize]) -> NearestIndex<'a> {
        let mut all = candidates.to_vec();
        all.sort_unstable();
        NearestIndex {
            centroids,
            members: vec![all],
            heads: Matrix::new(centroids.dims),
        }
    }

    /// Removes buckets with no members, so that no query spends a scan on one.
    fn drop_empty(&mut self) {
        if self.members.iter().all(|m| !m.is_empty()) {
            return;
        }
        let mut heads = Matrix::new(self.heads.dims);
        for (j, m) in self.members.iter().enumerate() {
            if !m.is_empty() {
                heads.push(self.heads.row(j));
            }
        }
        self.members.retain(|m| !m.is_empty());
        self.heads = heads;
    }

    /// `(best, its cosine, runner-up and its cosine)` among the indexed centroids.
    pub fn best_two(&self, x: &[f32]) -> (usize, f32, Option<(usize, f32)>) {
        let near = self.nearest(x, 2);
        let (best, c1) = near[0];
        (best, c1, near.get(1).copied())
    }

    /// The `m` indexed centroids nearest `x`, best first (ties by index).
    pub fn nearest(&self, x: &[f32], m: usize) -> Vec<(usize, f32)> {
        let groups: Vec<usize> = if self.heads.rows == 0 {
            vec![0]
        } else {
            best_first(scores(x, &self.heads), NEIGHBOUR_GROUPS)
                .into_iter()
                .map(|(_, g)| g as usize)
                .collect()
        };
        let scored: Vec<(f32, usize)> = groups
            .iter()
            .flat_map(|&g| self.members[g].iter())
            .map(|&c| (dot(x, self.centroids.row(c)), c))
            .collect();
        best_first(scored, m)
            .into_iter()
            .map(|(c, j)| (j, c))
            .collect()
    }
}

/// How many buckets an index of `m` candidates has: ⌈√m⌉.
fn bucket_count(m: usize) -> usize {
    (m as f64).sqrt().ceil() as usize
}

/// `x`'s cosine to each row of `rows`, with the row's index.
fn scores(x: &[f32], rows: &Matrix) -> Vec<(f32, u32)> {
    rows.dots(x).into_iter().zip(0u32..).collect()
}

/// The `m` highest-scoring entries, best first (ties by the smaller id).
fn best_first<T: Ord + Copy>(mut scored: Vec<(f32, T)>, m: usize) -> Vec<(f32, T)> {
    let order = |a: &(f32, T), b: &(f32, T)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    let m = m.min(scored.len());
    if m == 0 {
        return Vec::new();
    }
    scored.select_nth_unstable_by(m - 1, order);
    scored.truncate(m);
    scored.sort_by(order);
    scored
}

#[cfg(test)]
mod tests;
