//! K-Means on L2-normalized vectors (spherical, cosine): the backend trait, its settings and
//! result, the CPU path (`cpu`, `simd`, `seed`), the GPU path (`gpu`, batches of runs on the
//! device), the coarse-to-fine path for large k (`scaled`) and the nearest-centroid index
//! (`index`).

mod cpu;
pub mod gpu;
pub mod index;
pub mod scaled;
mod seed;

pub use cpu::{CpuKmeans, scan};
pub use gpu::{GpuDevice, GpuError, GpuKmeans, GpuStats};

use crate::matrix::{Matrix, normalize};

/// The first `k` seeds of greedy k-means++ over `data` for `seed`, as every CPU run draws them
/// (tests compare the GPU's [`GpuKmeans::seed_rows`] with it).
pub fn seed_rows(data: &Matrix, k: usize, seed: u64) -> Vec<usize> {
    seed::kmeans_pp(data, k, &mut crate::rng::Rng::new(seed))
}

/// Normalized mean of each cluster's members (`assign[i]` is point i's cluster); an empty
/// cluster keeps its old centroid. Returns the members too. Deterministic: each cluster sums
/// its members in index order.
pub(crate) fn member_means(
    data: &Matrix,
    assign: impl Iterator<Item = u32>,
    old: &Matrix,
) -> (Vec<f32>, Vec<Vec<u32>>) {
    use rayon::prelude::*;
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); old.rows];
    for (i, a) in assign.enumerate() {
        members[a as usize].push(i as u32);
    }
    let dims = data.dims;
    let out = members
        .par_iter()
        .enumerate()
        .flat_map_iter(|(j, m)| {
            let mut c = vec![0.0f32; dims];
            if m.is_empty() {
                c.copy_from_slice(old.row(j));
            } else {
                for &i in m {
                    c.iter_mut()
                        .zip(data.row(i as usize))
                        .for_each(|(a, x)| *a += x);
                }
                normalize(&mut c);
            }
            c
        })
        .collect();
    (out, members)
}

/// K-Means settings.
#[derive(Debug, Clone, PartialEq)]
pub struct KmeansParams {
    pub k: usize,
    pub max_iter: usize,
    pub n_init: usize,
    /// Stop when at most this share of points changed cluster.
    pub tol: f64,
    pub seed: u64,
    /// Points whose top-1 vs top-2 cosine gap may be below this get an exact runner-up.
    pub tau: f32,
}

/// The clustering of `n` points into `k` clusters.
#[derive(Debug, Clone, PartialEq)]
pub struct KmeansResult {
    /// k × dims, unit length.
    pub centroids: Matrix,
    pub assign: Vec<u32>,
    /// Cosine to the assigned centroid.
    pub top1: Vec<f32>,
    /// Runner-up centroid and its cosine, exact whenever the gap could be below `tau`.
    pub second: Vec<Option<(u32, f32)>>,
    /// Sum of cosine distances `1 - top1`.
    pub inertia: f64,
    pub iterations: usize,
}

/// A K-Means implementation: the CPU path, or the GPU path.
pub trait KmeansBackend: Send + Sync {
    /// Which device ran, for the build summary.
    fn device(&self) -> String;
    fn run(&self, data: &Matrix, params: &KmeansParams) -> KmeansResult;
    /// Many independent runs over rows of `data`, results in job order, each as
    /// [`KmeansBackend::run`] gives it on those rows (so batching never changes a result). By
    /// default they run one after the other, so that only one job's rows are copied at a time;
    /// the CPU runs its small jobs side by side, and the GPU puts them on the device together.
    fn run_batch(&self, data: &Matrix, jobs: &[Job<'_>]) -> Vec<KmeansResult> {
        jobs.iter().map(|job| self.run_job(data, job)).collect()
    }

    /// One job alone: [`KmeansBackend::run`] on its rows of `data`.
    fn run_job(&self, data: &Matrix, job: &Job<'_>) -> KmeansResult {
        match job.rows {
            None => self.run(data, &job.params),
            Some(rows) => self.run(&data.subset(rows), &job.params),
        }
    }
}

/// One K-Means of a batch: the rows of the batch's data it clusters (None: every row), and
/// its settings.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    pub rows: Option<&'a [u32]>,
    pub params: KmeansParams,
}

impl Job<'_> {
    /// How many points it clusters.
    pub fn points(&self, data: &Matrix) -> usize {
        self.rows.map_or(data.rows, <[u32]>::len)
    }

    /// How many clusters it makes: its `k`, at least 1 and at most its points (when it has
    /// any).
    pub fn clusters(&self, data: &Matrix) -> usize {
        self.params.k.clamp(1, self.points(data).max(1))
    }

    /// Its size: points × clusters × dimensions.
    pub fn work(&self, data: &Matrix) -> u64 {
        (self.points(data) as u64)
            .saturating_mul(self.clusters(data) as u64)
            .saturating_mul(data.dims as u64)
    }
}
