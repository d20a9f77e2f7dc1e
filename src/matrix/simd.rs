//! Dot-product kernels: blocked with 16 independent accumulators, and an AVX2+FMA build in
//! intrinsics chosen at run time, also four dot products of one slice at once.

/// Dot product of two equal-length slices.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let [d] = dots(a, [b]);
    d
}

/// The dot products of `a` with each of four slices: bit for bit what four [`dot`] calls give
/// (each keeps the same 16 accumulators and the same reduction), with each chunk of `a` loaded
/// once for all four. K-Means scans a point against its centroids four at a time with it.
#[inline]
pub fn dot4(a: &[f32], b: [&[f32]; 4]) -> [f32; 4] {
    dots(a, b)
}

/// `R` dot products of `a`: the AVX2+FMA kernel when the CPU has it, else the portable one.
#[inline]
fn dots<const R: usize>(a: &[f32], b: [&[f32]; R]) -> [f32; R] {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2_fma() {
            // SAFETY: the CPU supports AVX2 and FMA (checked above).
            return unsafe { dots_avx2(a, b) };
        }
    }
    b.map(|r| dot_portable(a, r))
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx2_fma() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    })
}

/// Portable build of the same kernel.
pub fn dot_portable(a: &[f32], b: &[f32]) -> f32 {
    dot_blocked::<false>(a, b)
}

#[inline(always)]
fn dot_blocked<const FMA: bool>(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; 16];
    let chunks = n / 16;
    for c in 0..chunks {
        let x = &a[c * 16..c * 16 + 16];
        let y = &b[c * 16..c * 16 + 16];
        for j in 0..16 {
            acc[j] = if FMA {
                x[j].mul_add(y[j], acc[j])
            } else {
                x[j] * y[j] + acc[j]
            };
        }
    }
    let mut tail = 0.0f32;
    for i in chunks * 16..n {
        tail += a[i] * b[i];
    }
    let mut s = [0.0f32; 8];
    for j in 0..8 {
        s[j] = acc[j] + acc[j + 8];
    }
    ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7])) + tail
}

/// `R` dot products of `a`, each what `dot_blocked::<true>` gives, in AVX2 intrinsics (what the
/// compiler made of the blocked loop ran at half this speed): lanes 0-7 and 8-15 of each
/// accumulator are two registers, the multiply-adds fused as `mul_add`, then the same scalar
/// reduction. Each chunk of `a` is loaded once for all `R`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dots_avx2<const R: usize>(a: &[f32], b: [&[f32]; R]) -> [f32; R] {
    use std::arch::x86_64::*;
    let Some(n) = common_len(a, &b) else {
        return b.map(|r| {
            let [d] = unsafe { dots_avx2(a, [r]) };
            d
        });
    };
    let chunks = n / 16;
    let (pa, pb) = (a.as_ptr(), b.map(|r| r.as_ptr()));
    // SAFETY: every load reads 8 floats at an offset below chunks * 16 <= n, within each slice.
    let acc = unsafe {
        let mut lo = [_mm256_setzero_ps(); R];
        let mut hi = [_mm256_setzero_ps(); R];
        for c in 0..chunks {
            let (x0, x1) = (
                _mm256_loadu_ps(pa.add(c * 16)),
                _mm256_loadu_ps(pa.add(c * 16 + 8)),
            );
            for r in 0..R {
                lo[r] = _mm256_fmadd_ps(x0, _mm256_loadu_ps(pb[r].add(c * 16)), lo[r]);
                hi[r] = _mm256_fmadd_ps(x1, _mm256_loadu_ps(pb[r].add(c * 16 + 8)), hi[r]);
            }
        }
        let mut s = [[0.0f32; 8]; R];
        for r in 0..R {
            _mm256_storeu_ps(s[r].as_mut_ptr(), _mm256_add_ps(lo[r], hi[r]));
        }
        s
    };
    let mut out = [0.0f32; R];
    for (r, o) in out.iter_mut().enumerate() {
        let mut tail = 0.0f32;
        for i in chunks * 16..n {
            tail += a[i] * b[r][i];
        }
        let s = &acc[r];
        *o = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7])) + tail;
    }
    out
}

/// The length `dot` would pair each slice with `a` at (the shorter of the two), when it is the
/// same for all; `None` when it is not (then each pair takes its own length).
#[inline(always)]
fn common_len<const R: usize>(a: &[f32], b: &[&[f32]; R]) -> Option<usize> {
    let n = b.first().map_or(0, |r| a.len().min(r.len()));
    b.iter().all(|r| a.len().min(r.len()) == n).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_naive() {
        for n in [0usize, 1, 7, 16, 17, 33, 384, 385] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - naive).abs() < 1e-4, "n={n}");
            assert!((dot_portable(&a, &b) - naive).abs() < 1e-4, "n={n}");
        }
    }

    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut rng = crate::rng::Rng::new(seed);
        (0..n)
            .map(|_| (rng.next_f64() * 2.0 - 1.0) as f32)
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            rng_seed: proptest::test_runner::RngSeed::Fixed(4),
            failure_persistence: None,
            ..Default::default()
        })]

        /// `dot4` gives, bit for bit, the four `dot`s it stands for, and the AVX2 `dot` what
        /// the blocked loop gives: every length (tails included), slices of different lengths.
        #[test]
        fn dot4_is_four_dots(n in 0usize..80, longer in 0usize..3, extra in proptest::collection::vec(0usize..3, 4), seed in 0u64..1000) {
            let a = values(n + longer, seed);
            let rows: Vec<Vec<f32>> = (0..4).map(|j| values(n + extra[j], seed + 1 + j as u64)).collect();
            let b = [&rows[0][..], &rows[1][..], &rows[2][..], &rows[3][..]];
            let got = dot4(&a, b);
            for j in 0..4 {
                proptest::prop_assert_eq!(got[j].to_bits(), dot(&a, b[j]).to_bits(), "n={} j={}", n, j);
                // The intrinsics against the blocked loop they stand for (`mul_add` is exact
                // in software too).
                #[cfg(target_arch = "x86_64")]
                if has_avx2_fma() {
                    proptest::prop_assert_eq!(dot(&a, b[j]).to_bits(), dot_blocked::<true>(&a, b[j]).to_bits());
                }
            }
        }
    }
}
