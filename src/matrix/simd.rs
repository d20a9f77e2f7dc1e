//! Dot-product kernels: blocked with 16 independent accumulators, and an AVX2+FMA build chosen at run time.

/// Dot product of two equal-length slices.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2_fma() {
            // SAFETY: the CPU supports AVX2 and FMA (checked above).
            return unsafe { dot_avx2(a, b) };
        }
    }
    dot_portable(a, b)
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

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
    dot_blocked::<true>(a, b)
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
}
