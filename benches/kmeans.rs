//! K-Means benchmark: the CPU path (and the GPU path when a real GPU adapter exists) on
//! deterministic clustered unit vectors. Writes the data for scikit-learn to read, prints one
//! JSON line per device. Run through `scripts/bench-kmeans.sh`.
//!
//! usage: cargo bench --bench kmeans -- N D K MAX_ITER DATA_FILE

use std::io::Write;
use std::time::Instant;

use c2s::kmeans::{CpuKmeans, GpuKmeans, KmeansBackend, KmeansParams};
use c2s::matrix::{Matrix, normalize};
use c2s::rng::Rng;

fn data(n: usize, d: usize, centers: usize, seed: u64) -> Matrix {
    let mut rng = Rng::new(seed);
    let normal = |rng: &mut Rng| {
        let (u, v) = (rng.next_f64().max(1e-12), rng.next_f64());
        ((-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32
    };
    let mut cs = Vec::with_capacity(centers);
    for _ in 0..centers {
        let mut c: Vec<f32> = (0..d).map(|_| normal(&mut rng)).collect();
        normalize(&mut c);
        cs.push(c);
    }
    let mut m = Matrix::new(d);
    for _ in 0..n {
        let c = &cs[rng.below(centers)];
        let mut v: Vec<f32> = c
            .iter()
            .map(|x| x + 0.6 * normal(&mut rng) / (d as f32).sqrt())
            .collect();
        normalize(&mut v);
        m.push(&v);
    }
    m
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let get =
        |i: usize, default: usize| args.get(i).and_then(|v| v.parse().ok()).unwrap_or(default);
    let (n, d, k, max_iter) = (get(0, 50_000), get(1, 384), get(2, 500), get(3, 20));
    let file = args
        .get(4)
        .cloned()
        .unwrap_or_else(|| "target/bench/kmeans-data.f32".into());
    let m = data(n, d, k, 7);
    let mut f = std::fs::File::create(&file).expect("data file");
    for x in &m.data {
        f.write_all(&x.to_le_bytes()).expect("write");
    }
    let params = KmeansParams {
        k,
        max_iter,
        n_init: 1,
        tol: 0.0,
        seed: 42,
        tau: 0.05,
    };
    let report = |device: &str, backend: &dyn KmeansBackend| {
        let t = Instant::now();
        let r = backend.run(&m, &params);
        let secs = t.elapsed().as_secs_f64();
        // Squared-Euclidean inertia to the (unit) centroids: 2 * (1 - cos), comparable with scikit-learn's.
        println!(
            "{{\"device\":\"{device}\",\"seconds\":{secs:.3},\"iterations\":{},\"inertia_cosine\":{:.3},\"inertia_sq_euclidean\":{:.3}}}",
            r.iterations,
            r.inertia,
            2.0 * r.inertia
        );
    };
    report(&CpuKmeans.device(), &CpuKmeans);
    // What a build runs for this k: coarse-to-fine above scaled::EXACT_MAX_K.
    if k > c2s::kmeans::scaled::EXACT_MAX_K {
        let t = Instant::now();
        let r = c2s::kmeans::scaled::run(&CpuKmeans, &m, &params);
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{{\"device\":\"cpu coarse-to-fine ({} threads)\",\"seconds\":{secs:.3},\"iterations\":{},\"inertia_cosine\":{:.3},\"inertia_sq_euclidean\":{:.3}}}",
            rayon::current_num_threads(),
            r.iterations,
            r.inertia,
            2.0 * r.inertia
        );
    }
    // C2S_BENCH_EMULATED=1 also takes a CPU-emulated adapter (lavapipe: checks the script).
    let emulated = std::env::var("C2S_BENCH_EMULATED").is_ok_and(|v| v == "1");
    match GpuKmeans::new(emulated) {
        Ok(g) => {
            report(&g.adapter(), &g);
            println!(
                "{{\"gpu_stats\":{}}}",
                serde_json::to_string(&g.stats()).unwrap()
            );
            if k > c2s::kmeans::scaled::EXACT_MAX_K {
                let t = Instant::now();
                let r = c2s::kmeans::scaled::run(&g, &m, &params);
                let secs = t.elapsed().as_secs_f64();
                println!(
                    "{{\"device\":\"{} coarse-to-fine\",\"seconds\":{secs:.3},\"iterations\":{},\"inertia_cosine\":{:.3},\"inertia_sq_euclidean\":{:.3}}}",
                    g.adapter(),
                    r.iterations,
                    r.inertia,
                    2.0 * r.inertia
                );
                println!(
                    "{{\"gpu_stats\":{}}}",
                    serde_json::to_string(&g.stats()).unwrap()
                );
            }
        }
        Err(e) => eprintln!("GPU path skipped: {e}"),
    }
}
