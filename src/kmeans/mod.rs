//! K-Means on L2-normalized vectors (spherical, cosine): the backend trait, its settings and
//! result, the CPU path (`cpu`, `simd`, `seed`), the GPU path (`gpu`) and the coarse-to-fine
//! path for large k (`scaled`).

mod cpu;
pub mod gpu;
pub mod scaled;
mod seed;

pub use cpu::{CpuKmeans, scan};
pub use gpu::{GpuDevice, GpuKmeans};

use crate::matrix::{Matrix, normalize};

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

/// A K-Means implementation (CPU now; the GPU path plugs in here).
pub trait KmeansBackend: Send + Sync {
    /// Which device ran, for the build summary.
    fn device(&self) -> String;
    fn run(&self, data: &Matrix, params: &KmeansParams) -> KmeansResult;
}
