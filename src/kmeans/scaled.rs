//! K-Means for large k, near-linear in the number of points: a coarse clustering into at most
//! 64 (about √k) groups, each group clustered into its share of k, recursively while a share is
//! still large, then a few polishing passes in which every point may move to one of its
//! centroid's 16 nearest centroids. The work is about n·d·(64 per split level + 16 per pass)
//! instead of n·k·d per Lloyd iteration. Small k runs the exact backend as it is. Works over
//! any backend (CPU or GPU).

use rayon::prelude::*;

use super::cpu::Scan;
use super::index::NearestIndex;
use super::{Job, KmeansBackend, KmeansParams, KmeansResult, member_means};
use crate::matrix::Matrix;
use crate::matrix::simd::dot;

/// Up to this k the exact backend runs (its cost per iteration, n·k·d, is still small).
pub const EXACT_MAX_K: usize = 256;
/// At most this many groups per split: deeper splits keep every K-Means small.
const MAX_BRANCH: usize = 64;
/// Neighbouring centroids a point may move to in the polishing passes.
const NEIGHBOURS: usize = 16;
/// Polishing passes over the full set of centroids.
const POLISH_PASSES: usize = 3;

/// Runs `backend` exactly for small k, coarse-to-fine above `EXACT_MAX_K`.
pub fn run(backend: &dyn KmeansBackend, data: &Matrix, params: &KmeansParams) -> KmeansResult {
    run_with_neighbours(backend, data, params).0
}

/// [`run`], and for the coarse-to-fine path each final centroid's `NEIGHBOURS` nearest other
/// centroids (nearest first), which the polishing worked out anyway: a caller that must move
/// points off some centroids looks there first.
pub fn run_with_neighbours(
    backend: &dyn KmeansBackend,
    data: &Matrix,
    params: &KmeansParams,
) -> (KmeansResult, Option<Vec<Vec<u32>>>) {
    let k = params.k.clamp(1, data.rows.max(1));
    if k <= EXACT_MAX_K || data.rows <= 2 * EXACT_MAX_K {
        return (backend.run(data, params), None);
    }
    let (centroids, assign) = split(
        backend,
        data,
        &KmeansParams {
            k,
            ..params.clone()
        },
    );
    let (result, graph) = polish(backend, data, centroids, assign, params);
    (result, Some(graph))
}

/// Coarse-to-fine: at most `MAX_BRANCH` (about √k) groups, each split into its share of k,
/// recursively until a share is small enough for the exact backend. Returns the centroids and
/// each point's cluster.
fn split(backend: &dyn KmeansBackend, data: &Matrix, params: &KmeansParams) -> (Matrix, Vec<u32>) {
    let task = Job {
        rows: None,
        params: params.clone(),
    };
    split_all(backend, data, &[task])
        .pop()
        .expect("one result per task")
}

/// [`split`] for many sets of rows of `data` at once, depth by depth: the K-Means runs of one
/// depth (the exact runs and the coarse runs of the sets split further) go to the backend as
/// one batch, so a GPU runs a whole depth together. Each result is what splitting its set
/// alone gives.
fn split_all(
    backend: &dyn KmeansBackend,
    data: &Matrix,
    tasks: &[Job<'_>],
) -> Vec<(Matrix, Vec<u32>)> {
    let exact = |t: &Job| t.clusters(data) <= EXACT_MAX_K || t.points(data) <= 2 * EXACT_MAX_K;
    let jobs: Vec<Job> = tasks
        .iter()
        .map(|t| {
            let k = if exact(t) {
                t.clusters(data)
            } else {
                ((t.clusters(data) as f64).sqrt().ceil() as usize).min(MAX_BRANCH)
            };
            Job {
                rows: t.rows,
                params: KmeansParams {
                    k,
                    ..t.params.clone()
                },
            }
        })
        .collect();
    let runs = backend.run_batch(data, &jobs);
    // The groups of each task split further: their points' positions in the task, and the
    // same points as rows of `data`.
    let mut groups: Vec<Vec<(Vec<u32>, Vec<u32>)>> = vec![Vec::new(); tasks.len()];
    for (i, (t, r)) in tasks.iter().zip(&runs).enumerate() {
        if exact(t) {
            continue;
        }
        groups[i] = members(&r.assign, r.centroids.rows)
            .into_iter()
            .map(|pos| {
                let rows = match t.rows {
                    Some(rows) => pos.iter().map(|&p| rows[p as usize]).collect(),
                    None => pos.clone(),
                };
                (pos, rows)
            })
            .collect();
    }
    let mut children: Vec<Job> = Vec::new();
    for (i, t) in tasks.iter().enumerate() {
        let sizes: Vec<usize> = groups[i].iter().map(|g| g.0.len()).collect();
        let shares = apportion(t.clusters(data), &sizes);
        for (g, ((_, rows), &share)) in groups[i].iter().zip(&shares).enumerate() {
            if !rows.is_empty() {
                children.push(Job {
                    rows: Some(rows),
                    params: KmeansParams {
                        k: share,
                        seed: t.params.seed.wrapping_add(1 + g as u64),
                        ..t.params.clone()
                    },
                });
            }
        }
    }
    let mut fine = if children.is_empty() {
        Vec::new()
    } else {
        split_all(backend, data, &children)
    }
    .into_iter();
    tasks
        .iter()
        .zip(runs)
        .enumerate()
        .map(|(i, (t, r))| {
            if exact(t) {
                return (r.centroids, r.assign);
            }
            let mut centroids = Matrix::new(data.dims);
            let mut assign = vec![0u32; t.points(data)];
            for (pos, _) in groups[i].iter().filter(|g| !g.0.is_empty()) {
                let (c, a) = fine.next().expect("one result per group");
                let offset = centroids.rows as u32;
                for j in 0..c.rows {
                    centroids.push(c.row(j));
                }
                for (&p, &x) in pos.iter().zip(&a) {
                    assign[p as usize] = offset + x;
                }
            }
            (centroids, assign)
        })
        .collect()
}

/// The points of each cluster, in index order.
fn members(assign: &[u32], k: usize) -> Vec<Vec<u32>> {
    let mut m: Vec<Vec<u32>> = vec![Vec::new(); k];
    for (i, &a) in assign.iter().enumerate() {
        m[a as usize].push(i as u32);
    }
    m
}

/// Splits `k` over groups in proportion to their sizes (largest remainders; at least 1 for a
/// non-empty group, never more than its size).
fn apportion(k: usize, sizes: &[usize]) -> Vec<usize> {
    let n: usize = sizes.iter().sum();
    let mut shares: Vec<usize> = sizes
        .iter()
        .map(|&s| {
            if s == 0 {
                0
            } else {
                (k * s / n.max(1)).clamp(1, s)
            }
        })
        .collect();
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    // Largest remainder first; ties by index.
    order.sort_by(|&a, &b| {
        let ra = (k * sizes[a]) % n.max(1);
        let rb = (k * sizes[b]) % n.max(1);
        rb.cmp(&ra).then(a.cmp(&b))
    });
    let mut total: usize = shares.iter().sum();
    // The minimum of one per group can overshoot: take back from the largest shares.
    while total > k {
        let Some(g) = (0..shares.len())
            .filter(|&g| shares[g] > 1)
            .max_by_key(|&g| (shares[g], std::cmp::Reverse(g)))
        else {
            break;
        };
        shares[g] -= 1;
        total -= 1;
    }
    for &g in order.iter().cycle().take(order.len() * 4) {
        if total >= k {
            break;
        }
        if shares[g] < sizes[g] {
            shares[g] += 1;
            total += 1;
        }
    }
    shares
}

/// Lloyd passes where each point may move to one of its centroid's `NEIGHBOURS` nearest
/// centroids (so a point left on the wrong side of a coarse split finds its way), then the
/// top-1 and runner-up among those candidates. Each pass costs n·`NEIGHBOURS`·d. Returns the
/// result and the final centroids' neighbour graph.
fn polish(
    backend: &dyn KmeansBackend,
    data: &Matrix,
    mut centroids: Matrix,
    mut assign: Vec<u32>,
    params: &KmeansParams,
) -> (KmeansResult, Vec<Vec<u32>>) {
    let recentre = |assign: &[u32], old: &Matrix| -> Matrix {
        let (flat, _) = member_means(data, assign.iter().copied(), old);
        Matrix {
            rows: old.rows,
            dims: old.dims,
            data: flat,
        }
    };
    let scan_point = |i: usize, a: u32, graph: &[Vec<u32>], centroids: &Matrix| -> Scan {
        let x = data.row(i);
        let mut best = (u32::MAX, f32::NEG_INFINITY);
        let mut second: Option<(u32, f32)> = None;
        for &j in std::iter::once(&a).chain(&graph[a as usize]) {
            let v = dot(x, centroids.row(j as usize));
            if v > best.1 {
                if best.0 != u32::MAX {
                    second = Some(best);
                }
                best = (j, v);
            } else if second.is_none_or(|(_, s)| v > s) {
                second = Some((j, v));
            }
        }
        (best.0, best.1, second)
    };
    // A new index each pass (not the last one re-fitted): its buckets differ from pass to
    // pass, so a point meets other near centroids each time, which lowers the inertia more.
    let all: Vec<usize> = (0..centroids.rows).collect();
    let graph_of = |centroids: &Matrix| -> Vec<Vec<u32>> {
        let index = NearestIndex::new(backend, centroids, &all, params.seed);
        neighbour_graph(&index, centroids)
    };
    let mut iterations = 0;
    for _ in 0..POLISH_PASSES {
        iterations += 1;
        centroids = recentre(&assign, &centroids);
        let graph = graph_of(&centroids);
        let next: Vec<u32> = (0..data.rows)
            .into_par_iter()
            .map(|i| scan_point(i, assign[i], &graph, &centroids).0)
            .collect();
        let changed = next.iter().zip(&assign).filter(|(a, b)| a != b).count();
        assign = next;
        if (changed as f64) <= params.tol * data.rows as f64 {
            break;
        }
    }
    centroids = recentre(&assign, &centroids);
    let graph = graph_of(&centroids);
    let rows: Vec<Scan> = (0..data.rows)
        .into_par_iter()
        .map(|i| scan_point(i, assign[i], &graph, &centroids))
        .collect();
    let result = KmeansResult {
        inertia: rows.iter().map(|r| 1.0 - r.1 as f64).sum(),
        assign: rows.iter().map(|r| r.0).collect(),
        top1: rows.iter().map(|r| r.1).collect(),
        second: rows.iter().map(|r| r.2).collect(),
        centroids,
        iterations,
    };
    (result, graph)
}

/// Each centroid's `NEIGHBOURS` nearest other centroids, through `index` (over all of them).
fn neighbour_graph(index: &NearestIndex, centroids: &Matrix) -> Vec<Vec<u32>> {
    (0..centroids.rows)
        .into_par_iter()
        .map(|j| {
            index
                .nearest(centroids.row(j), NEIGHBOURS + 1)
                .into_iter()
                .filter(|&(c, _)| c != j)
                .take(NEIGHBOURS)
                .map(|(c, _)| c as u32)
                .collect()
        })
        .collect()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::kmeans::CpuKmeans;
    use crate::matrix::normalize;
    use crate::rng::Rng;

    /// `n` unit vectors around `centers` random directions.
    pub fn blobs(n: usize, centers: usize, dims: usize, seed: u64) -> Matrix {
        let mut rng = Rng::new(seed);
        let dirs: Vec<Vec<f32>> = (0..centers)
            .map(|_| (0..dims).map(|_| rng.next_f64() as f32 - 0.5).collect())
            .collect();
        let mut m = Matrix::new(dims);
        for i in 0..n {
            let c = &dirs[i % centers];
            let mut v: Vec<f32> = c
                .iter()
                .map(|x| x + 0.35 * (rng.next_f64() as f32 - 0.5))
                .collect();
            normalize(&mut v);
            m.push(&v);
        }
        m
    }

    fn params(k: usize, seed: u64) -> KmeansParams {
        KmeansParams {
            k,
            max_iter: 25,
            n_init: 1,
            tol: 0.001,
            seed,
            tau: 0.05,
        }
    }

    #[test]
    fn the_large_k_path_matches_the_exact_inertia_and_is_deterministic() {
        let data = blobs(12_000, 400, 48, 3);
        let p = params(1200, 42);
        let exact = CpuKmeans.run(&data, &p);
        assert_eq!(
            exact,
            CpuKmeans.run(&data, &p),
            "exact: deterministic for a seed"
        );
        let scaled = run(&CpuKmeans, &data, &p);
        let again = run(&CpuKmeans, &data, &p);
        assert_eq!(scaled, again, "coarse-to-fine: deterministic for a seed");
        assert_ne!(
            scaled,
            run(&CpuKmeans, &data, &params(1200, 43)),
            "the seed matters"
        );
        assert_eq!(scaled.centroids.rows, 1200);
        let ratio = scaled.inertia / exact.inertia;
        eprintln!(
            "inertia exact {:.2} scaled {:.2} ratio {ratio:.4}",
            exact.inertia, scaled.inertia
        );
        assert!(
            ratio < 1.03,
            "coarse-to-fine inertia is {ratio:.4} × the exact one"
        );
        // Every point's runner-up is a real second centroid.
        assert!(
            scaled
                .second
                .iter()
                .zip(&scaled.assign)
                .all(|(s, a)| s.is_none_or(|(j, _)| j != *a))
        );
    }

    #[test]
    fn apportioning_sums_to_k() {
        let s = apportion(10, &[5, 3, 2, 0]);
        assert_eq!(s.iter().sum::<usize>(), 10);
        assert_eq!(s[3], 0);
        let s = apportion(7, &[1, 1, 100]);
        assert_eq!(s.iter().sum::<usize>(), 7);
        assert!(s[0] == 1 && s[1] == 1);
        assert_eq!(apportion(3, &[1, 1, 1]), vec![1, 1, 1]);
    }
}
