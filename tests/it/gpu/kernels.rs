//! The batched GPU K-Means kernels on a real (software) Vulkan device, each against the CPU
//! path on fixtures: the centroid update (a reduction, with empty clusters and clusters of one
//! point), greedy k-means++ seeding (the same draws give the same seeds, in one round trip; in
//! f32 where a device lacks f64), and batches of runs
//! (each run as it comes out alone on the CPU, including runs of one point, k above the
//! number of points, runs spread over several chunks, and the coarse-to-fine path).

use c2s::kmeans::{
    CpuKmeans, GpuKmeans, Job, KmeansBackend, KmeansParams, index, scaled, seed_rows,
};
use c2s::matrix::{Matrix, normalize};
use c2s::rng::Rng;

use super::{device, gpu, random_unit};

/// `per` points around each of `centers` well-separated directions, blob by blob.
pub(super) fn blobs(per: usize, centers: usize, d: usize, seed: u64) -> Matrix {
    let mut rng = Rng::new(seed);
    let mut m = Matrix::new(d);
    for c in 0..centers {
        for _ in 0..per {
            let mut v: Vec<f32> = (0..d)
                .map(|j| if j % centers == c { 2.0 } else { 0.0 } + rng.next_f64() as f32 * 0.3)
                .collect();
            normalize(&mut v);
            m.push(&v);
        }
    }
    m
}

pub(super) fn params(k: usize, seed: u64) -> KmeansParams {
    KmeansParams {
        k,
        max_iter: 30,
        n_init: 2,
        tol: 0.0,
        seed,
        tau: 0.05,
    }
}

/// The unit-length mean of each cluster's members in f64, `old`'s row for an empty one.
fn reference_means(data: &Matrix, assign: &[u32], old: &Matrix) -> (Vec<Vec<f32>>, Vec<u32>) {
    let mut sums = vec![vec![0.0f64; data.dims]; old.rows];
    let mut counts = vec![0u32; old.rows];
    for (i, &a) in assign.iter().enumerate() {
        counts[a as usize] += 1;
        for (s, x) in sums[a as usize].iter_mut().zip(data.row(i)) {
            *s += *x as f64;
        }
    }
    let means = sums
        .iter()
        .enumerate()
        .map(|(c, s)| {
            if counts[c] == 0 {
                return old.row(c).to_vec();
            }
            let norm = s.iter().map(|x| x * x).sum::<f64>().sqrt();
            s.iter().map(|x| (x / norm) as f32).collect()
        })
        .collect();
    (means, counts)
}

#[test]
fn the_centroid_update_matches_the_mean_with_empty_and_single_member_clusters() {
    let Some(mut g) = gpu() else { return };
    // (A cluster of one is its point, up to the 2^-24 fixed-point step.)
    let (n, d, k) = (300, 37, 7);
    let data = random_unit(n, d, 21);
    let old = random_unit(k, d, 22);
    // Cluster 3 is empty, cluster 5 holds one point; the rest share the others.
    let assign: Vec<u32> = (0..n as u32)
        .map(|i| {
            if i == 17 {
                5
            } else {
                [0, 1, 2, 4, 6][i as usize % 5]
            }
        })
        .collect();
    let (want, want_counts) = reference_means(&data, &assign, &old);
    for chunk in [None, Some(64)] {
        g.chunk_points = chunk;
        let (got, counts) = g.centroid_update(&data, &assign, &old).expect("update");
        assert_eq!(counts, want_counts, "chunks {chunk:?}");
        for (c, want) in want.iter().enumerate() {
            for (j, (a, b)) in got.row(c).iter().zip(want).enumerate() {
                assert!((a - b).abs() < 2e-6, "cluster {c} dim {j}: {a} vs {b}");
            }
        }
        assert_eq!(
            got.row(3),
            old.row(3),
            "an empty cluster keeps its centroid"
        );
        let (again, _) = g.centroid_update(&data, &assign, &old).unwrap();
        assert_eq!(got, again, "deterministic");
    }
}

#[test]
fn seeding_on_the_device_draws_the_cpu_seeds() {
    let Some(mut g) = gpu() else { return };
    for (n, d, k, seed) in [
        (500, 16, 10, 1),
        (1000, 40, 50, 2),
        (130, 8, 130, 3),
        (70, 5, 1, 4),
        (3000, 24, 200, 5),
        // Above 1,000 centroids: plain k-means++, one candidate per step.
        (1300, 6, 1100, 6),
    ] {
        let data = random_unit(n, d, seed * 11);
        let cpu = seed_rows(&data, k, seed);
        for chunk in [None, Some(128)] {
            g.chunk_points = chunk;
            let trips = g.stats().round_trips;
            let got = g.seed_rows(&data, k, seed).expect("seeding");
            assert_eq!(got, cpu, "n={n} k={k} chunks {chunk:?}");
            // Every step on the device: the seeds come back in one read.
            assert_eq!(g.stats().round_trips, trips + 1, "n={n} k={k}");
        }
    }
    // Ten points on one spot and four elsewhere: once every spot is a seed, the rest are
    // distinct rows all the same.
    g.chunk_points = None;
    let mut data = Matrix::new(6);
    let spot = random_unit(5, 6, 9);
    for i in 0..14 {
        data.push(spot.row(if i < 10 { 0 } else { i - 9 }));
    }
    let got = g.seed_rows(&data, 8, 7).expect("seeding");
    let mut rows = got.clone();
    rows.sort_unstable();
    rows.dedup();
    assert_eq!(rows.len(), 8, "{got:?}");
    for spot in [0, 10, 11, 12, 13] {
        assert!(
            got.iter().any(|&r| data.row(r) == data.row(spot)),
            "{got:?} misses spot {spot}"
        );
    }
}

/// The sum of squared distances from each point to its nearest seed.
fn potential(data: &Matrix, seeds: &[usize]) -> f64 {
    (0..data.rows)
        .map(|i| {
            let x = data.row(i);
            seeds
                .iter()
                .map(|&s| {
                    let c = data.row(s);
                    x.iter()
                        .zip(c)
                        .map(|(a, b)| ((a - b) * (a - b)) as f64)
                        .sum::<f64>()
                })
                .fold(f64::INFINITY, f64::min)
        })
        .sum()
}

#[test]
fn seeding_without_f64_draws_in_f32() {
    let Some(mut dev) = device() else { return };
    dev.f64 = false;
    let mut g = GpuKmeans::on(dev).expect("the kernels compile without f64");
    // Small runs: f32 sums still draw the CPU seeds.
    for (n, d, k, seed) in [(500, 16, 10, 1), (130, 8, 130, 3), (70, 5, 1, 4)] {
        let data = random_unit(n, d, seed * 11);
        assert_eq!(
            g.seed_rows(&data, k, seed).unwrap(),
            seed_rows(&data, k, seed)
        );
    }
    // A larger one may part from the CPU's draws, but it seeds as well, the same every time,
    // over one chunk or several.
    let data = random_unit(3000, 24, 55);
    let cpu = potential(&data, &seed_rows(&data, 200, 5));
    let got = g.seed_rows(&data, 200, 5).unwrap();
    let mut distinct = got.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 200);
    let ratio = potential(&data, &got) / cpu;
    assert!((ratio - 1.0).abs() < 0.02, "potential {ratio} of the CPU's");
    g.chunk_points = Some(128);
    assert_eq!(g.seed_rows(&data, 200, 5).unwrap(), got, "deterministic");
}

#[test]
fn a_batch_of_runs_gives_each_run_its_cpu_result() {
    let Some(mut g) = gpu() else { return };
    let data = blobs(60, 6, 40, 11);
    let all: Vec<u32> = (0..360).collect();
    let one_blob: Vec<u32> = (60..120).collect();
    let two_blobs: Vec<u32> = (0..60).chain(240..300).collect();
    let lone = [200u32];
    let five = [3u32, 70, 130, 190, 250];
    let none: Vec<u32> = Vec::new();
    let jobs = [
        (Some(&all[..]), 6),
        (Some(&one_blob[..]), 1),
        (Some(&two_blobs[..]), 2),
        (Some(&lone[..]), 1),
        (Some(&five[..]), 9),
        (Some(&none[..]), 3),
        (None, 6),
    ];
    let jobs: Vec<Job> = jobs
        .iter()
        .enumerate()
        .map(|(j, &(rows, k))| Job {
            rows,
            params: params(k, 40 + j as u64),
        })
        .collect();
    for chunk in [None, Some(64)] {
        g.chunk_points = chunk;
        let got = g.run_batch(&data, &jobs);
        assert!(g.last_error.lock().unwrap().is_none(), "{:?}", g.last_error);
        assert_eq!(got.len(), jobs.len());
        for (j, (job, r)) in jobs.iter().zip(&got).enumerate() {
            let cpu = CpuKmeans.run_job(&data, job);
            assert_eq!(r.assign, cpu.assign, "job {j}, chunks {chunk:?}");
            assert_eq!(r.centroids.rows, cpu.centroids.rows, "job {j}");
            let diff = (r.inertia - cpu.inertia).abs();
            assert!(
                diff < 1e-4 * cpu.inertia.abs() || diff < 1e-4,
                "job {j}: inertia {} vs {}",
                r.inertia,
                cpu.inertia
            );
        }
        assert_eq!(got, g.run_batch(&data, &jobs), "deterministic");
    }
    assert!(g.device().contains(" batches on the GPU"), "{}", g.device());
}

#[test]
fn a_batch_mixing_greedy_and_plain_seeding_gives_each_run_its_cpu_result() {
    let Some(g) = gpu() else { return };
    // One run seeded greedily (k = 8) and one plainly (k = 1,050) in the same steps.
    let data = random_unit(1200, 6, 77);
    let few: Vec<u32> = (0..300).collect();
    let jobs = [
        Job {
            rows: Some(&few),
            params: KmeansParams {
                n_init: 1,
                max_iter: 3,
                ..params(8, 5)
            },
        },
        Job {
            rows: None,
            params: KmeansParams {
                n_init: 1,
                max_iter: 3,
                ..params(1050, 6)
            },
        },
    ];
    let got = g.run_batch(&data, &jobs);
    assert!(g.last_error.lock().unwrap().is_none(), "{:?}", g.last_error);
    for (j, (job, r)) in jobs.iter().zip(&got).enumerate() {
        let cpu = CpuKmeans.run_job(&data, job);
        let ratio = r.inertia / cpu.inertia;
        assert!(
            (ratio - 1.0).abs() < 1e-4,
            "job {j}: inertia {ratio} of the CPU's"
        );
    }
}

#[test]
fn the_coarse_to_fine_path_on_the_device_keeps_the_inertia() {
    let Some(g) = gpu() else { return };
    let data = random_clusters(3000, 300, 16, 5);
    let p = KmeansParams {
        n_init: 1,
        tol: 0.001,
        max_iter: 25,
        ..params(600, 42)
    };
    let cpu = scaled::run(&CpuKmeans, &data, &p);
    let gpu = scaled::run(&g, &data, &p);
    assert!(g.last_error.lock().unwrap().is_none(), "{:?}", g.last_error);
    assert_eq!(gpu.centroids.rows, 600);
    let ratio = gpu.inertia / cpu.inertia;
    assert!(
        (ratio - 1.0).abs() < 0.005,
        "inertia {} vs {} on the CPU",
        gpu.inertia,
        cpu.inertia
    );
    assert_eq!(gpu, scaled::run(&g, &data, &p), "deterministic");
}

/// `n` unit vectors around `centers` random directions.
fn random_clusters(n: usize, centers: usize, d: usize, seed: u64) -> Matrix {
    let dirs = random_unit(centers, d, seed);
    let mut rng = Rng::new(seed + 1);
    let mut m = Matrix::new(d);
    for i in 0..n {
        let mut v: Vec<f32> = dirs
            .row(i % centers)
            .iter()
            .map(|x| x + 0.2 * (rng.next_f64() as f32 - 0.5))
            .collect();
        normalize(&mut v);
        m.push(&v);
    }
    m
}

#[test]
fn the_nearest_centroid_index_buckets_on_the_device() {
    let Some(g) = gpu() else { return };
    // Past 1,024 centroids the index buckets them with a K-Means of its own, which runs on the
    // build's backend (the coarse-to-fine polish builds one per pass).
    let centroids = random_clusters(2000, 40, 16, 9);
    let all: Vec<usize> = (0..centroids.rows).collect();
    let runs = g.stats().gpu_runs;
    let on_gpu = index::NearestIndex::new(&g, &centroids, &all, 3);
    assert_eq!(
        g.stats().gpu_runs,
        runs + 1,
        "the bucketing ran on the device"
    );
    assert!(g.last_error.lock().unwrap().is_none(), "{:?}", g.last_error);
    let on_cpu = index::NearestIndex::new(&CpuKmeans, &centroids, &all, 3);
    let queries = random_unit(200, 16, 10);
    let agree = (0..queries.rows)
        .filter(|&i| on_gpu.best_two(queries.row(i)).0 == on_cpu.best_two(queries.row(i)).0)
        .count();
    assert!(
        agree >= 190,
        "{agree} of 200 queries find the same nearest centroid"
    );
}
