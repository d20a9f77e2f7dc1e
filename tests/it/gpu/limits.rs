//! A batch the device cannot hold, on a real (software) Vulkan device whose storage-binding
//! limit the test lowers: the runs split into batches that fit, each run's result the same as
//! in one batch and as on the CPU, and a run too large alone goes to the CPU, which the build
//! summary's device line says; a batch the GPU fails on runs on the CPU, and later ones still
//! try the GPU.

use c2s::kmeans::{CpuKmeans, GpuDevice, GpuKmeans, Job, KmeansBackend};

use super::device;
use super::kernels::{blobs, params};

/// The GPU backend on a device that says its bindings hold at most `max_binding` bytes.
fn limited(dev: GpuDevice, max_binding: u64) -> GpuKmeans {
    GpuKmeans::on(GpuDevice { max_binding, ..dev }).expect("the kernels compile")
}

#[test]
fn runs_too_many_for_one_binding_split_into_batches_with_the_same_results() {
    let (Some(small), Some(large)) = (device(), device()) else {
        return;
    };
    // 8 dimensions: a binding of 4,096 bytes holds 128 points, and the seed distances of
    // 16 blocks of 64 points (4 bytes each).
    let small = limited(small, 4096);
    let large = GpuKmeans::on(large).expect("the kernels compile");
    let data = blobs(300, 6, 8, 3);
    // Six runs of 250 points (4 blocks each: 24 blocks in all, too many for one batch's
    // seed distances), and one of 1,100 points (18 blocks: too many even alone).
    let rows: Vec<Vec<u32>> = (0..6)
        .map(|r| (r * 300..r * 300 + 250).collect())
        .chain([(0..1100).collect()])
        .collect();
    let jobs: Vec<Job> = rows
        .iter()
        .enumerate()
        .map(|(j, rows)| Job {
            rows: Some(rows),
            params: params(5, 70 + j as u64),
        })
        .collect();
    let got = small.run_batch(&data, &jobs);
    assert!(
        small.last_error.lock().unwrap().is_none(),
        "{:?}",
        small.last_error
    );
    let st = small.stats();
    assert_eq!((st.gpu_runs, st.large_runs), (6, 1), "{st:?}");
    assert!(st.batches >= 2, "{st:?}");
    let line = small.device();
    assert!(
        line.starts_with("gpu: ")
            && line.contains("6 runs in ")
            && line.contains(
                "1 too large for the device alone on the CPU (the batch's seed distances (4608 bytes)"
            ),
        "{line}"
    );
    // Splitting changes no result: one batch on the device that holds them all gives the
    // same, and each run is the CPU's run.
    let whole = large.run_batch(&data, &jobs[..6]);
    assert_eq!(large.stats().batches, 1);
    assert_eq!(got[..6], whole[..], "split vs one batch");
    for (j, (job, r)) in jobs.iter().zip(&got).enumerate() {
        let cpu = CpuKmeans.run_job(&data, job);
        assert_eq!(r.assign, cpu.assign, "job {j}");
        let diff = (r.inertia - cpu.inertia).abs();
        assert!(diff < 1e-4 * cpu.inertia.abs() || diff < 1e-4, "job {j}");
    }
    assert_eq!(got[6], CpuKmeans.run_job(&data, &jobs[6]), "the CPU ran it");
}

#[test]
fn a_single_run_too_large_for_the_device_runs_on_the_cpu_and_says_why() {
    let Some(dev) = device() else { return };
    let g = limited(dev, 4096);
    let data = blobs(200, 6, 8, 4);
    let p = params(6, 9);
    let got = g.run(&data, &p);
    assert_eq!(got, CpuKmeans.run(&data, &p));
    assert!(g.last_error.lock().unwrap().is_none());
    let line = g.device();
    assert!(
        line.starts_with("cpu (1 too large for the device alone on the CPU (the batch's seed distances (4864 bytes) exceed the device's limit of 4096 bytes); the GPU ")
            && line.ends_with(" ran none)"),
        "{line}"
    );
}

#[test]
fn a_batch_the_gpu_fails_on_runs_on_the_cpu_and_later_batches_still_use_the_gpu() {
    let Some(dev) = device() else { return };
    let g = limited(dev, 4096);
    // 64 points of 20 dimensions are 5,120 bytes: no chunk can hold a block, and no split
    // helps, so the batch fails and runs on the CPU.
    let wide = blobs(20, 4, 20, 5);
    let p = params(4, 1);
    assert_eq!(g.run(&wide, &p), CpuKmeans.run(&wide, &p));
    let line = g.device();
    assert!(
        line.starts_with("cpu (the GPU ")
            && line.ends_with(
                " failed: a block of 64 points of 20 dimensions exceeds the device's storage-binding limit)"
            ),
        "{line}"
    );
    // A batch that fits still goes to the GPU, and the line counts both.
    let narrow = blobs(20, 4, 8, 6);
    let got = g.run(&narrow, &p);
    assert_eq!(got.assign, CpuKmeans.run(&narrow, &p).assign);
    let line = g.device();
    assert!(
        line.starts_with("gpu: ")
            && line.contains("(1 run in 1 batch on the GPU, ")
            && line.ends_with(
                "; 1 on the CPU after the GPU failed: a block of 64 points of 20 dimensions exceeds the device's storage-binding limit)"
            ),
        "{line}"
    );
}
