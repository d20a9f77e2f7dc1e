//! Paired bootstrap: resample queries with replacement (fixed seed) to test whether one method's
//! mean beats another's.

use serde::Serialize;

use crate::rng::Rng;

/// The outcome of one paired comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Mean of `a - b` over the queries.
    pub mean_diff: f64,
    /// Two-sided p-value: twice the share of resamples on the far side of zero (capped at 1).
    pub p_value: f64,
    /// "win", "tie" or "loss" for `a` at p < 0.05.
    pub verdict: &'static str,
}

/// Compares paired per-query scores `a` and `b`.
pub fn paired_bootstrap(a: &[f64], b: &[f64], resamples: usize, seed: u64) -> Comparison {
    assert_eq!(a.len(), b.len(), "paired samples");
    let n = a.len();
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let mean_diff = if n == 0 {
        0.0
    } else {
        diffs.iter().sum::<f64>() / n as f64
    };
    if n == 0 {
        return Comparison {
            mean_diff,
            p_value: 1.0,
            verdict: "tie",
        };
    }
    let mut rng = Rng::new(seed);
    let (mut le, mut ge) = (0usize, 0usize);
    for _ in 0..resamples {
        let s: f64 = (0..n).map(|_| diffs[rng.below(n)]).sum::<f64>() / n as f64;
        if s <= 0.0 {
            le += 1;
        }
        if s >= 0.0 {
            ge += 1;
        }
    }
    let p_value = (2.0 * le.min(ge) as f64 / resamples as f64).min(1.0);
    let verdict = match (p_value < 0.05, mean_diff > 0.0) {
        (true, true) => "win",
        (true, false) => "loss",
        _ => "tie",
    };
    Comparison {
        mean_diff,
        p_value,
        verdict,
    }
}

/// The 95% percentile interval of the mean of `xs` over `resamples` bootstrap resamples.
pub fn mean_ci(xs: &[f64], resamples: usize, seed: u64) -> (f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (0.0, 0.0);
    }
    let mut rng = Rng::new(seed);
    let mut means: Vec<f64> = (0..resamples.max(1))
        .map(|_| (0..n).map(|_| xs[rng.below(n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((means.len() - 1) as f64 * q).round() as usize];
    (at(0.025), at(0.975))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_with_its_seed_and_sensible() {
        let a: Vec<f64> = (0..50)
            .map(|i| if i % 3 == 0 { 1.0 } else { 0.8 })
            .collect();
        let b: Vec<f64> = (0..50)
            .map(|i| if i % 2 == 0 { 0.5 } else { 0.6 })
            .collect();
        let x = paired_bootstrap(&a, &b, 10_000, 7);
        assert_eq!(x, paired_bootstrap(&a, &b, 10_000, 7));
        assert_eq!(x.verdict, "win");
        let same = paired_bootstrap(&a, &a, 1000, 7);
        assert_eq!(same.verdict, "tie");
        assert_eq!(paired_bootstrap(&b, &a, 10_000, 7).verdict, "loss");
    }

    #[test]
    fn intervals_cover_the_mean() {
        let xs: Vec<f64> = (0..40).map(|i| (i % 5) as f64 / 4.0).collect();
        let (lo, hi) = mean_ci(&xs, 10_000, 42);
        let mean = xs.iter().sum::<f64>() / 40.0;
        assert!(lo < mean && mean < hi && hi - lo < 0.4, "{lo} {mean} {hi}");
        assert_eq!(mean_ci(&[0.5; 9], 1000, 1), (0.5, 0.5));
        assert_eq!(mean_ci(&xs, 500, 9), mean_ci(&xs, 500, 9));
    }
}
