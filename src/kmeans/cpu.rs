//! CPU K-Means: k-means++ seeding, then Lloyd iterations pruned with Hamerly's bounds (exact), on rayon.

use rayon::prelude::*;

use super::seed::{kmeans_pp, unit_dist};
use super::{Job, KmeansBackend, KmeansParams, KmeansResult, member_means};
use crate::matrix::Matrix;
use crate::matrix::simd::dot;
use crate::rng::Rng;

/// The rayon CPU path.
#[derive(Debug, Default, Clone, Copy)]
pub struct CpuKmeans;

impl KmeansBackend for CpuKmeans {
    fn device(&self) -> String {
        format!("cpu ({} threads)", rayon::current_num_threads())
    }

    fn run(&self, data: &Matrix, params: &KmeansParams) -> KmeansResult {
        let mut rng = Rng::new(params.seed);
        let mut best: Option<KmeansResult> = None;
        for _ in 0..params.n_init.max(1) {
            let r = run_once(data, params, &mut rng);
            if best.as_ref().is_none_or(|b| r.inertia < b.inertia) {
                best = Some(r);
            }
        }
        best.expect("at least one restart")
    }

    /// Small jobs side by side (each too small to keep every thread busy on its own), larger
    /// ones one after the other on all threads; results in job order, each as `run` gives it.
    fn run_batch(&self, data: &Matrix, jobs: &[Job<'_>]) -> Vec<KmeansResult> {
        let small: Vec<bool> = jobs.iter().map(|j| j.work(data) < SMALL_JOB).collect();
        let done: Vec<KmeansResult> = (jobs.par_iter().zip(&small))
            .filter(|(_, s)| **s)
            .map(|(job, _)| self.run_job(data, job))
            .collect();
        let mut done = done.into_iter();
        (jobs.iter().zip(small))
            .map(|(job, s)| {
                if s {
                    done.next().expect("a result per small job")
                } else {
                    self.run_job(data, job)
                }
            })
            .collect()
    }
}

/// Points × clusters × dimensions under which a job of a batch runs beside the others.
const SMALL_JOB: u64 = 1 << 22;

/// (best, best cosine, runner-up and its cosine).
pub type Scan = (u32, f32, Option<(u32, f32)>);

/// Nearest and runner-up centroid of `x`: (best, best cosine, second, second cosine).
pub fn scan(x: &[f32], centroids: &Matrix) -> Scan {
    let mut b = (0u32, f32::NEG_INFINITY);
    let mut s: Option<(u32, f32)> = None;
    // Four centroids per load of the point (the same cosines as one at a time, in order).
    centroids.each_dot(x, |j, v| {
        if v > b.1 {
            if b.1 > f32::NEG_INFINITY {
                s = Some(b);
            }
            b = (j as u32, v);
        } else if s.is_none_or(|(_, sv)| v > sv) {
            s = Some((j as u32, v));
        }
    });
    (b.0, b.1, s)
}

struct PointState {
    a: u32,
    /// Upper bound on the distance to the assigned centroid.
    u: f32,
    /// Lower bound on the distance to every other centroid.
    l: f32,
}

fn run_once(data: &Matrix, params: &KmeansParams, rng: &mut Rng) -> KmeansResult {
    let n = data.rows;
    let k = params.k.clamp(1, n.max(1));
    let seeds = kmeans_pp(data, k, rng);
    let mut centroids = Matrix::new(data.dims);
    for &s in &seeds {
        centroids.push(data.row(s));
    }
    let mut state: Vec<PointState> = (0..n)
        .into_par_iter()
        .map(|i| full_state(data.row(i), &centroids))
        .collect();
    let mut iterations = 0;
    for _ in 0..params.max_iter {
        iterations += 1;
        let old = centroids.clone();
        centroids = update_centroids(data, &state, &old);
        shift_bounds(&mut state, &old, &centroids);
        let changed = assign_step(data, &centroids, &mut state);
        if (changed as f64) <= params.tol * n as f64 {
            break;
        }
    }
    finish(data, centroids, state, params.tau, iterations)
}

fn full_state(x: &[f32], centroids: &Matrix) -> PointState {
    let (a, c1, second) = scan(x, centroids);
    PointState {
        a,
        u: unit_dist(c1),
        l: second.map_or(f32::INFINITY, |(_, c2)| unit_dist(c2)),
    }
}

/// New centroids: normalized member means. An empty cluster takes the point farthest from its centroid.
fn update_centroids(data: &Matrix, state: &[PointState], old: &Matrix) -> Matrix {
    let k = old.rows;
    let dims = data.dims;
    let (mut out, members) = member_means(data, state.iter().map(|s| s.a), old);
    // Re-seed empty clusters with the points worst served by their centroid, deterministically.
    let empty: Vec<usize> = (0..k).filter(|&j| members[j].is_empty()).collect();
    if !empty.is_empty() {
        let mut far: Vec<(f32, usize)> = state
            .iter()
            .enumerate()
            .filter(|(_, s)| members[s.a as usize].len() > 1)
            .map(|(i, s)| (s.u, i))
            .collect();
        far.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        for (j, (_, i)) in empty.iter().zip(far) {
            out[j * dims..(j + 1) * dims].copy_from_slice(data.row(i));
        }
    }
    Matrix {
        rows: k,
        dims,
        data: out,
    }
}

/// Moves each point's bounds by how far the centroids moved (Hamerly).
fn shift_bounds(state: &mut [PointState], old: &Matrix, new: &Matrix) {
    let moved: Vec<f32> = (0..old.rows)
        .into_par_iter()
        .map(|j| unit_dist(dot(old.row(j), new.row(j))))
        .collect();
    let (mut m1, mut m1j, mut m2) = (0.0f32, usize::MAX, 0.0f32);
    for (j, &p) in moved.iter().enumerate() {
        if p > m1 {
            m2 = m1;
            m1 = p;
            m1j = j;
        } else if p > m2 {
            m2 = p;
        }
    }
    state.par_iter_mut().for_each(|s| {
        let a = s.a as usize;
        s.u += moved[a];
        s.l -= if a == m1j { m2 } else { m1 };
    });
}

/// Reassigns the points whose bounds allow a change; returns how many moved.
fn assign_step(data: &Matrix, centroids: &Matrix, state: &mut [PointState]) -> usize {
    state
        .par_iter_mut()
        .enumerate()
        .map(|(i, s)| {
            if s.u <= s.l {
                return 0;
            }
            let x = data.row(i);
            s.u = unit_dist(dot(x, centroids.row(s.a as usize)));
            if s.u <= s.l {
                return 0;
            }
            let before = s.a;
            *s = full_state(x, centroids);
            usize::from(s.a != before)
        })
        .sum()
}

/// Exact top-1 cosine for every point; exact runner-up wherever the gap could be below `tau`.
fn finish(
    data: &Matrix,
    centroids: Matrix,
    state: Vec<PointState>,
    tau: f32,
    iterations: usize,
) -> KmeansResult {
    let rows: Vec<Scan> = state
        .par_iter()
        .enumerate()
        .map(|(i, s)| {
            let x = data.row(i);
            let c1 = dot(x, centroids.row(s.a as usize));
            let d1 = unit_dist(c1);
            // cos2 <= 1 - l²/2, so gap >= (l² - d1²)/2.
            let guaranteed_gap = if s.l.is_finite() {
                (s.l * s.l - d1 * d1) / 2.0
            } else {
                f32::INFINITY
            };
            if centroids.rows > 1 && guaranteed_gap < tau {
                let (a, c, second) = scan(x, &centroids);
                if a == s.a {
                    (a, c, second)
                } else {
                    (s.a, c1, Some((a, c)))
                }
            } else {
                (s.a, c1, None)
            }
        })
        .collect();
    let inertia = rows.iter().map(|r| 1.0 - r.1 as f64).sum();
    KmeansResult {
        centroids,
        assign: rows.iter().map(|r| r.0).collect(),
        top1: rows.iter().map(|r| r.1).collect(),
        second: rows.iter().map(|r| r.2).collect(),
        inertia,
        iterations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::normalize;

    fn blobs(n_per: usize, centers: usize, dims: usize, seed: u64) -> Matrix {
        let mut rng = Rng::new(seed);
        let mut m = Matrix::new(dims);
        for c in 0..centers {
            for _ in 0..n_per {
                let mut v: Vec<f32> = (0..dims)
                    .map(|d| if d % centers == c { 3.0 } else { 0.0 } + rng.next_f64() as f32 * 0.5)
                    .collect();
                normalize(&mut v);
                m.push(&v);
            }
        }
        m
    }

    fn params(k: usize) -> KmeansParams {
        KmeansParams {
            k,
            max_iter: 50,
            n_init: 2,
            tol: 0.0,
            seed: 7,
            tau: 0.05,
        }
    }

    #[test]
    fn recovers_blobs_and_matches_lloyd() {
        let data = blobs(40, 4, 24, 1);
        let r = CpuKmeans.run(&data, &params(4));
        for c in 0..4 {
            let first = r.assign[c * 40];
            assert!(r.assign[c * 40..(c + 1) * 40].iter().all(|&a| a == first));
        }
        // Every point is assigned to its truly nearest centroid (Hamerly is exact).
        for i in 0..data.rows {
            let (a, _, _) = scan(data.row(i), &r.centroids);
            assert_eq!(a, r.assign[i]);
        }
    }

    #[test]
    fn a_batch_gives_each_job_its_own_run() {
        // Jobs both sides of SMALL_JOB (the small ones run side by side), all rows and subsets.
        let data = blobs(400, 4, 64, 5);
        let evens: Vec<u32> = (0..data.rows as u32).step_by(2).collect();
        let few: Vec<u32> = (0..9).collect();
        let jobs: Vec<Job<'_>> = [
            (None, 40),
            (Some(&few[..]), 3),
            (Some(&evens[..]), 4),
            (None, 200),
            (Some(&few[..]), 1),
        ]
        .into_iter()
        .map(|(rows, k)| Job {
            rows,
            params: params(k),
        })
        .collect();
        assert!(
            jobs.iter().any(|j| j.work(&data) < SMALL_JOB)
                && jobs.iter().any(|j| j.work(&data) >= SMALL_JOB)
        );
        let got = CpuKmeans.run_batch(&data, &jobs);
        for (job, r) in jobs.iter().zip(&got) {
            assert_eq!(*r, CpuKmeans.run_job(&data, job));
        }
    }

    #[test]
    fn deterministic_and_edge_sizes() {
        let data = blobs(5, 3, 8, 2);
        let a = CpuKmeans.run(&data, &params(3));
        let b = CpuKmeans.run(&data, &params(3));
        assert_eq!(a, b);
        let one = CpuKmeans.run(&data, &params(1));
        assert!(one.assign.iter().all(|&x| x == 0));
        let many = CpuKmeans.run(&data, &params(100));
        assert_eq!(many.centroids.rows, data.rows);
    }
}
