//! K-Means on L2-normalized vectors (spherical, cosine): the backend trait, its data types and the CPU path.

mod cpu;
pub mod gpu;
pub mod scaled;
mod seed;
pub mod simd;

pub use cpu::{CpuKmeans, scan};
pub use gpu::GpuKmeans;

/// A dense row-major matrix of f32 vectors.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matrix {
    pub rows: usize,
    pub dims: usize,
    pub data: Vec<f32>,
}

impl Matrix {
    pub fn new(dims: usize) -> Matrix {
        Matrix {
            rows: 0,
            dims,
            data: Vec::new(),
        }
    }

    pub fn from_rows(dims: usize, rows: &[Vec<f32>]) -> Matrix {
        let mut m = Matrix::new(dims);
        for r in rows {
            m.push(r);
        }
        m
    }

    pub fn push(&mut self, row: &[f32]) {
        assert_eq!(row.len(), self.dims, "row dimension");
        self.data.extend_from_slice(row);
        self.rows += 1;
    }

    #[inline]
    /// The normalized mean of the given rows.
    pub fn centroid(&self, rows: &[usize]) -> Vec<f32> {
        let mut c = vec![0.0f32; self.dims];
        for &r in rows {
            c.iter_mut().zip(self.row(r)).for_each(|(a, x)| *a += x);
        }
        normalize(&mut c);
        c
    }

    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dims..(i + 1) * self.dims]
    }

    pub fn row_mut(&mut self, i: usize) -> &mut [f32] {
        &mut self.data[i * self.dims..(i + 1) * self.dims]
    }
}

/// Scales a vector to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let n = simd::dot(v, v).sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
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

/// A K-Means implementation (CPU now; the GPU path plugs in here).
pub trait KmeansBackend: Send + Sync {
    /// Which device ran, for the build summary.
    fn device(&self) -> String;
    fn run(&self, data: &Matrix, params: &KmeansParams) -> KmeansResult;
}
