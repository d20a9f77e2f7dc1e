//! k-means++ seeding, accelerated with the triangle inequality so large k stays cheap.

use rayon::prelude::*;

use super::Matrix;
use super::simd::dot;
use crate::rng::Rng;

/// Euclidean distance between unit vectors from their dot product.
#[inline]
pub fn unit_dist(dot: f32) -> f32 {
    (2.0 - 2.0 * dot).max(0.0).sqrt()
}

/// Picks `k` distinct seed rows by D² sampling. Deterministic for a seed.
pub fn kmeans_pp(data: &Matrix, k: usize, rng: &mut Rng) -> Vec<usize> {
    let n = data.rows;
    let k = k.min(n);
    if k == 0 {
        return Vec::new();
    }
    let mut centers = vec![rng.below(n)];
    // d[i]: distance from point i to its nearest chosen center; near[i]: which center.
    let first = data.row(centers[0]);
    let mut d: Vec<f32> = (0..n)
        .into_par_iter()
        .map(|i| unit_dist(dot(data.row(i), first)))
        .collect();
    let mut near: Vec<u32> = vec![0; n];
    while centers.len() < k {
        let total: f64 = d.iter().map(|&x| (x as f64) * (x as f64)).sum();
        let next = if total <= 0.0 {
            // All remaining points coincide with centers: take the first unused row.
            match (0..n).find(|i| !centers.contains(i)) {
                Some(i) => i,
                None => break,
            }
        } else {
            let mut target = rng.next_f64() * total;
            let mut pick = n - 1;
            for (i, &x) in d.iter().enumerate() {
                target -= (x as f64) * (x as f64);
                if target < 0.0 {
                    pick = i;
                    break;
                }
            }
            pick
        };
        let c = data.row(next);
        // Distances from the new center to the old ones; a point is skipped when
        // d(new, its center) >= 2 d(point, its center), which rules the new center out.
        let cc: Vec<f32> = centers
            .par_iter()
            .map(|&j| unit_dist(dot(c, data.row(j))))
            .collect();
        let idx = centers.len() as u32;
        d.par_iter_mut()
            .zip(near.par_iter_mut())
            .enumerate()
            .for_each(|(i, (di, ni))| {
                if cc[*ni as usize] >= 2.0 * *di {
                    return;
                }
                let nd = unit_dist(dot(data.row(i), c));
                if nd < *di {
                    *di = nd;
                    *ni = idx;
                }
            });
        centers.push(next);
    }
    centers
}
