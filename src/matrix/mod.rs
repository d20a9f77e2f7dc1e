//! `Matrix`, the project's vector type: dense row-major f32 rows (embeddings, centroids), and
//! `normalize`, and the SIMD dot-product kernels (`simd`).

pub mod simd;

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

    /// A matrix of these rows, in this order.
    pub fn subset(&self, rows: &[u32]) -> Matrix {
        let mut m = Matrix::new(self.dims);
        m.data.reserve(rows.len() * self.dims);
        for &r in rows {
            m.push(self.row(r as usize));
        }
        m
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
