//! The WGSL K-Means shader on a real (software) Vulkan device: GPU and CPU agree on assignments
//! (except documented near-ties, gap < 1e-5) and inertia; odd sizes, D not a multiple of the
//! tile, k > N, one and several chunks, and a 2-D dispatch past 65,535 workgroups.

use c2s::kmeans::{CpuKmeans, GpuDevice, GpuError, GpuKmeans, KmeansBackend, KmeansParams, scan};
use c2s::matrix::{Matrix, normalize};
use c2s::rng::Rng;

use crate::common::skip;

mod kernels;
mod limits;
mod script;

/// The GPU backend on the first Vulkan adapter (lavapipe here), or a loud skip when there is
/// none. A device that opens but whose kernels fail to compile fails the test.
pub(crate) fn gpu() -> Option<GpuKmeans> {
    device().map(|dev| GpuKmeans::on(dev).expect("the K-Means kernels compile"))
}

/// The first Vulkan adapter's device, or a loud skip when there is none.
pub(crate) fn device() -> Option<GpuDevice> {
    match GpuDevice::acquire(true) {
        Ok(dev) => Some(dev),
        Err(e @ GpuError::NoAdapter(_)) => {
            skip(&format!(
                "no Vulkan adapter for the GPU K-Means tests ({e}); install mesa-vulkan-drivers"
            ));
            None
        }
        Err(e) => panic!("the Vulkan adapter did not open: {e}"),
    }
}

pub(crate) fn random_unit(n: usize, d: usize, seed: u64) -> Matrix {
    let mut rng = Rng::new(seed);
    let mut m = Matrix::new(d);
    for _ in 0..n {
        let mut v: Vec<f32> = (0..d).map(|_| rng.next_f64() as f32 - 0.5).collect();
        normalize(&mut v);
        m.push(&v);
    }
    m
}

/// Compares GPU assignments with the CPU scan; returns how many near-ties differed.
fn check_assign(g: &GpuKmeans, data: &Matrix, cents: &Matrix) -> usize {
    let got = g.assign(data, cents).expect("GPU assignment");
    assert_eq!(got.len(), data.rows);
    let mut ties = 0;
    for (i, &a) in got.iter().enumerate() {
        let (best, s1, second) = scan(data.row(i), cents);
        assert!(
            (a.s1 - s1).abs() < 1e-4,
            "point {i}: score {} vs {}",
            a.s1,
            s1
        );
        if a.best != best {
            let gap = s1 - second.map_or(f32::NEG_INFINITY, |s| s.1);
            assert!(
                gap < 1e-5,
                "point {i}: GPU {} vs CPU {best}, gap {gap}",
                a.best
            );
            ties += 1;
        }
        match (a.second, second) {
            (Some((_, s2)), Some((_, c2))) => {
                assert!((s2 - c2).abs() < 1e-4, "point {i}: runner-up {s2} vs {c2}")
            }
            (None, None) => {}
            (x, y) => panic!("point {i}: runner-up {x:?} vs {y:?}"),
        }
    }
    ties
}

#[test]
fn assignment_matches_the_cpu_on_odd_shapes() {
    let Some(g) = gpu() else { return };
    for (n, k, d) in [
        (1, 1, 3),
        (7, 3, 5),
        (100, 10, 65),
        (513, 37, 130),
        (1000, 64, 384),
        (5, 9, 8),
    ] {
        let data = random_unit(n, d, n as u64);
        let cents = random_unit(k, d, 1000 + k as u64);
        let ties = check_assign(&g, &data, &cents);
        assert!(ties <= n / 100 + 1, "{ties} near-ties for n={n}");
    }
}

#[test]
fn several_chunks_and_a_2d_dispatch() {
    let Some(mut g) = gpu() else { return };
    let data = random_unit(1000, 70, 3);
    let cents = random_unit(12, 70, 4);
    g.chunk_points = Some(97);
    check_assign(&g, &data, &cents);
    g.chunk_points = None;
    // 65,535 workgroups of 64 threads, plus one more: the dispatch needs a second row.
    let n = 65_535 * 64 + 64;
    let data = random_unit(n, 2, 5);
    let cents = random_unit(3, 2, 6);
    let got = g.assign(&data, &cents).expect("GPU assignment");
    for i in (0..n).step_by(997).chain([n - 1]) {
        let (best, s1, second) = scan(data.row(i), &cents);
        let gap = s1 - second.map_or(f32::NEG_INFINITY, |s| s.1);
        assert!(got[i].best == best || gap < 1e-5, "point {i}");
    }
}

#[test]
fn full_runs_agree_with_the_cpu_path() {
    let Some(g) = gpu() else { return };
    // Well-separated blobs: no near-ties, so both paths must find the same clustering.
    let (n_per, centers, d) = (60, 6, 40);
    let mut rng = Rng::new(11);
    let mut data = Matrix::new(d);
    for c in 0..centers {
        for _ in 0..n_per {
            let mut v: Vec<f32> = (0..d)
                .map(|j| if j % centers == c { 2.0 } else { 0.0 } + rng.next_f64() as f32 * 0.3)
                .collect();
            normalize(&mut v);
            data.push(&v);
        }
    }
    for k in [6, 9, 500] {
        let p = KmeansParams {
            k,
            max_iter: 50,
            n_init: 2,
            tol: 0.0,
            seed: 5,
            tau: 0.05,
        };
        let cpu = CpuKmeans.run(&data, &p);
        let gpu = g.run(&data, &p);
        assert!(
            g.last_error.lock().unwrap().is_none(),
            "{:?}",
            g.last_error.lock().unwrap()
        );
        assert_eq!(cpu.assign, gpu.assign, "k={k}");
        // Relative 1e-4, or absolute 1e-4 when the inertia is ~0 (one point per cluster).
        let diff = (cpu.inertia - gpu.inertia).abs();
        assert!(
            diff < 1e-4 * cpu.inertia.abs() || diff < 1e-4,
            "k={k}: inertia {} vs {}",
            cpu.inertia,
            gpu.inertia
        );
    }
    assert!(g.device().starts_with("gpu: "), "{}", g.device());
}

/// A device the test opened itself, with a storage-binding limit far below the real one: the
/// assignment splits into chunks by that limit, and centroids over it are refused, not sent.
#[test]
fn an_injected_device_with_a_small_binding_limit_chunks_and_refuses() {
    let dev = match c2s::kmeans::GpuDevice::acquire(true) {
        Ok(d) => d,
        Err(e) => {
            skip(&format!(
                "no Vulkan adapter for the GPU K-Means tests ({e}); install mesa-vulkan-drivers"
            ));
            return;
        }
    };
    let d = 8;
    let g = GpuKmeans::on(c2s::kmeans::GpuDevice {
        max_binding: 4096,
        ..dev
    })
    .expect("pipeline on the injected device");
    // 4096 bytes hold 128 points of 8 floats: 1000 points take 8 chunks.
    let data = random_unit(1000, d, 5);
    let cents = random_unit(10, d, 6);
    assert!(check_assign(&g, &data, &cents) <= 2);
    let too_many = random_unit(200, d, 7);
    let err = g.assign(&data, &too_many).unwrap_err().to_string();
    assert!(err.contains("200 centroids of 8 dimensions"), "{err}");
    // Points so wide that a block of 64 does not fit one binding are refused too.
    let wide = random_unit(10, 20, 8);
    let err = g
        .assign(&wide, &random_unit(2, 20, 9))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("a block of 64 points of 20 dimensions"),
        "{err}"
    );
}
