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

    /// The dot product of `a` with every row, four rows per load of `a` (the same bits as one
    /// [`simd::dot`] a row).
    pub fn dots(&self, a: &[f32]) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.rows);
        self.each_dot(a, |_, v| out.push(v));
        out
    }

    /// Calls `f(row, dot)` for every row in order, as [`Matrix::dots`] computes them, without
    /// collecting them.
    #[inline]
    pub fn each_dot(&self, a: &[f32], mut f: impl FnMut(usize, f32)) {
        let mut i = 0;
        while i + 4 <= self.rows {
            let rows = [0, 1, 2, 3].map(|o| self.row(i + o));
            for (o, v) in simd::dot4(a, rows).into_iter().enumerate() {
                f(i + o, v);
            }
            i += 4;
        }
        for r in i..self.rows {
            f(r, simd::dot(a, self.row(r)));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `dots` gives every row's `dot`, bit for bit, whatever the rows left after the fours.
    #[test]
    fn dots_are_each_rows_dot() {
        let mut rng = crate::rng::Rng::new(3);
        let mut value = || (rng.next_f64() * 2.0 - 1.0) as f32;
        for rows in 0..10 {
            let dims = 37;
            let a: Vec<f32> = (0..dims).map(|_| value()).collect();
            let mut m = Matrix::new(dims);
            for _ in 0..rows {
                m.push(&(0..dims).map(|_| value()).collect::<Vec<_>>());
            }
            let want: Vec<u32> = (0..rows)
                .map(|r| simd::dot(&a, m.row(r)).to_bits())
                .collect();
            let got: Vec<u32> = m.dots(&a).iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "{rows} rows");
        }
    }
}
