//! GPU K-Means for batches of runs: the points of every run uploaded once and kept on the
//! device (`batch`), greedy k-means++ seeding (`seed`), and Lloyd iterations whose assignment
//! and centroid update both run in WGSL compute shaders (`lloyd`), via wgpu (`device`). A
//! level's many small runs go to the device together, so the level costs a few dispatches per
//! iteration rather than a round trip per run. Batches smaller than `min_work` stay on the CPU.
//! A batch is laid out before anything is allocated (`layout`); one the device cannot hold is
//! split until its parts fit, and a run too large alone runs on the CPU (`fit`).

mod batch;
mod device;
mod fit;
mod layout;
mod lloyd;
mod seed;

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

pub use device::{GpuDevice, GpuError};

use super::{CpuKmeans, Job, KmeansBackend, KmeansParams, KmeansResult};
use crate::matrix::Matrix;
use crate::rng::Rng;
use batch::Batch;
use device::Gpu;
use fit::fit;

/// One (nearest, runner-up) result per point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Assigned {
    pub best: u32,
    pub s1: f32,
    pub second: Option<(u32, f32)>,
}

/// What [`GpuKmeans::stats`] reports.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct GpuStats {
    pub gpu_runs: usize,
    pub batches: usize,
    pub cpu_runs: usize,
    /// Runs too large for the device alone, on the CPU.
    pub large_runs: usize,
    pub round_trips: usize,
    pub upload_secs: f64,
    pub seed_secs: f64,
    pub lloyd_secs: f64,
}

/// The GPU K-Means backend.
pub struct GpuKmeans {
    gpu: Gpu,
    /// Points per chunk (None: as many as the binding limit allows). Tests set it.
    pub chunk_points: Option<usize>,
    /// A batch with fewer points × clusters × dimensions runs on the CPU (0: every batch on
    /// the GPU; builds set `kmeans.gpu_min_work`).
    min_work: u64,
    /// Runs and batches on the GPU, and runs in batches below `min_work` on the CPU.
    gpu_runs: AtomicUsize,
    batches: AtomicUsize,
    small_runs: AtomicUsize,
    /// Runs the device refused alone (too large for a buffer limit or its memory), run on
    /// the CPU, and the last reason.
    large_runs: AtomicUsize,
    large_why: Mutex<Option<String>>,
    /// Runs of batches the GPU failed on (run on the CPU; `last_error` says why).
    failed_runs: AtomicUsize,
    /// Seconds spent uploading, seeding and iterating, summed over batches.
    secs: Mutex<[f64; 3]>,
    /// The last error the GPU path hit (the batch then ran on the CPU; later batches still
    /// try the GPU).
    pub last_error: Mutex<Option<String>>,
    /// One batch on the device at a time.
    busy: Mutex<()>,
}

impl GpuKmeans {
    /// Opens a device ([`GpuDevice::acquire`]) and compiles the kernels on it.
    pub fn new(allow_cpu_adapter: bool) -> Result<GpuKmeans, GpuError> {
        GpuKmeans::on(GpuDevice::acquire(allow_cpu_adapter)?)
    }

    /// Compiles the kernels on a device the caller opened (tests inject one).
    pub fn on(dev: GpuDevice) -> Result<GpuKmeans, GpuError> {
        Ok(GpuKmeans {
            gpu: Gpu::on(dev)?,
            chunk_points: None,
            min_work: 0,
            gpu_runs: AtomicUsize::new(0),
            batches: AtomicUsize::new(0),
            small_runs: AtomicUsize::new(0),
            large_runs: AtomicUsize::new(0),
            large_why: Mutex::new(None),
            failed_runs: AtomicUsize::new(0),
            secs: Mutex::new([0.0; 3]),
            last_error: Mutex::new(None),
            busy: Mutex::new(()),
        })
    }

    /// Batches with fewer than `min_work` points × clusters × dimensions go to the CPU.
    pub fn with_min_work(mut self, min_work: u64) -> GpuKmeans {
        self.min_work = min_work;
        self
    }

    /// The adapter in words.
    pub fn adapter(&self) -> String {
        let info = &self.gpu.info;
        format!("{} ({:?}, {:?})", info.name, info.device_type, info.backend)
    }

    /// Nearest and runner-up centroid of every point, on the GPU.
    pub fn assign(&self, data: &Matrix, centroids: &Matrix) -> Result<Vec<Assigned>, GpuError> {
        let _busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        let gpu = &self.gpu;
        let b = Batch::new(gpu, data, &[(None, centroids.rows)], self.chunk_points)?;
        b.write_centroid(gpu, 0, 0, &centroids.data);
        b.set_active(gpu, &[true]);
        gpu.round(|enc| lloyd::assign(gpu, &b, enc, false), &[])?;
        let got = b.read_assignments(gpu)?;
        Ok(got[0]
            .iter()
            .map(|a| Assigned {
                best: a.best,
                s1: a.s1,
                second: a.runner_up(),
            })
            .collect())
    }

    /// The first `k` seeds of greedy k-means++ over `data` for `seed`, drawn on the device
    /// (the kernels a batch seeds with; [`crate::kmeans::seed_rows`] is the CPU path).
    pub fn seed_rows(&self, data: &Matrix, k: usize, seed: u64) -> Result<Vec<usize>, GpuError> {
        let _busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        let b = Batch::new(
            &self.gpu,
            data,
            &[(None, k.clamp(1, data.rows))],
            self.chunk_points,
        )?;
        Ok(seed::seed(&self.gpu, &b, &mut [Rng::new(seed)])?.remove(0))
    }

    /// One centroid update on the device: the unit-length mean of each cluster's members
    /// (`assign[i]` is point i's cluster), `old`'s row for a cluster without members, and the
    /// member counts (the kernels a batch updates with).
    pub fn centroid_update(
        &self,
        data: &Matrix,
        assign: &[u32],
        old: &Matrix,
    ) -> Result<(Matrix, Vec<u32>), GpuError> {
        let _busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        let gpu = &self.gpu;
        let b = Batch::new(gpu, data, &[(None, old.rows)], self.chunk_points)?;
        b.write_centroid(gpu, 0, 0, &old.data);
        b.write_assignments(gpu, assign);
        b.set_active(gpu, &[true]);
        let counts = gpu.round(
            |enc| {
                lloyd::sums(gpu, &b, enc);
                lloyd::finish(gpu, &b, enc);
            },
            &[(&b.counts, 0, (old.rows * 4) as u64)],
        )?;
        let centroids = b.read_centroids(gpu)?.remove(0);
        Ok((centroids, device::cast(&counts[0])))
    }

    /// Every job on the device as one batch: seeding and Lloyd iterations, `n_init` restarts
    /// (each job keeps its lowest inertia, its random state running on as on the CPU).
    fn batch(&self, data: &Matrix, jobs: &[&Job<'_>]) -> Result<Vec<KmeansResult>, GpuError> {
        let _busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        let gpu = &self.gpu;
        let shapes: Vec<(Option<&[u32]>, usize)> =
            jobs.iter().map(|j| (j.rows, j.clusters(data))).collect();
        let clock = std::time::Instant::now();
        let b = Batch::new(gpu, data, &shapes, self.chunk_points)?;
        let mut secs = [clock.elapsed().as_secs_f64(), 0.0, 0.0];
        let params: Vec<&KmeansParams> = jobs.iter().map(|j| &j.params).collect();
        let mut rngs: Vec<Rng> = params.iter().map(|p| Rng::new(p.seed)).collect();
        let restarts = params.iter().map(|p| p.n_init.max(1)).max().unwrap_or(1);
        let mut best: Vec<Option<KmeansResult>> = vec![None; jobs.len()];
        for i in 0..restarts {
            let clock = std::time::Instant::now();
            let seeds = seed::seed(gpu, &b, &mut rngs)?;
            secs[1] += clock.elapsed().as_secs_f64();
            let clock = std::time::Instant::now();
            let results = lloyd::lloyd(gpu, &b, &seeds, &params)?;
            secs[2] += clock.elapsed().as_secs_f64();
            for (j, r) in results.into_iter().enumerate() {
                if i < params[j].n_init.max(1)
                    && best[j].as_ref().is_none_or(|b| r.inertia < b.inertia)
                {
                    best[j] = Some(r);
                }
            }
        }
        let mut total = self.secs.lock().unwrap_or_else(|e| e.into_inner());
        for (t, s) in total.iter_mut().zip(secs) {
            *t += s;
        }
        self.gpu_runs.fetch_add(jobs.len(), Ordering::Relaxed);
        self.batches.fetch_add(1, Ordering::Relaxed);
        Ok(best
            .into_iter()
            .map(|b| b.expect("at least one restart"))
            .collect())
    }

    /// Notes a job of a batch the GPU failed on (the CPU runs it).
    fn failed(&self, why: &GpuError) {
        self.failed_runs.fetch_add(1, Ordering::Relaxed);
        *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.to_string());
    }

    /// Notes a job the device refused alone (the CPU runs it).
    fn refused(&self, why: &GpuError) {
        self.large_runs.fetch_add(1, Ordering::Relaxed);
        *self.large_why.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.to_string());
    }

    /// What the GPU path did so far: runs and batches on the device, runs left to the CPU,
    /// round trips, and seconds spent uploading, seeding and iterating.
    pub fn stats(&self) -> GpuStats {
        let [upload_secs, seed_secs, lloyd_secs] =
            *self.secs.lock().unwrap_or_else(|e| e.into_inner());
        GpuStats {
            gpu_runs: self.gpu_runs.load(Ordering::Relaxed),
            batches: self.batches.load(Ordering::Relaxed),
            cpu_runs: self.small_runs.load(Ordering::Relaxed),
            large_runs: self.large_runs.load(Ordering::Relaxed),
            round_trips: self.gpu.rounds.load(Ordering::Relaxed),
            upload_secs,
            seed_secs,
            lloyd_secs,
        }
    }
}

impl KmeansBackend for GpuKmeans {
    fn device(&self) -> String {
        let st = self.stats();
        let (gpu, small) = (st.gpu_runs, st.cpu_runs);
        let on_gpu = format!(
            "{gpu} run{} in {} batch{} on the GPU, {} round trips; upload {:.2}s, seeding {:.2}s, iterations {:.2}s",
            if gpu == 1 { "" } else { "s" },
            st.batches,
            if st.batches == 1 { "" } else { "es" },
            st.round_trips,
            st.upload_secs,
            st.seed_secs,
            st.lloyd_secs,
        );
        // What the CPU ran instead, and why.
        let mut cpu = Vec::new();
        if small > 0 {
            cpu.push(format!(
                "{small} in batches smaller than kmeans.gpu_min_work on the CPU"
            ));
        }
        if st.large_runs > 0 {
            let why = self.large_why.lock().unwrap_or_else(|e| e.into_inner());
            cpu.push(format!(
                "{} too large for the device alone on the CPU ({})",
                st.large_runs,
                why.as_deref().unwrap_or("")
            ));
        }
        let failed = self.failed_runs.load(Ordering::Relaxed);
        if let Some(e) = self
            .last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            if gpu == 0 && cpu.is_empty() {
                return format!("cpu (the GPU {} failed: {e})", self.adapter());
            }
            cpu.push(format!("{failed} on the CPU after the GPU failed: {e}"));
        }
        match (gpu, st.large_runs + failed) {
            (0, 0) if small > 0 => format!(
                "cpu (every batch of runs was smaller than kmeans.gpu_min_work; the GPU {} was not used)",
                self.adapter()
            ),
            (0, _) if !cpu.is_empty() => {
                format!(
                    "cpu ({}; the GPU {} ran none)",
                    cpu.join("; "),
                    self.adapter()
                )
            }
            _ if cpu.is_empty() => format!("gpu: {} ({on_gpu})", self.adapter()),
            _ => format!("gpu: {} ({on_gpu}; {})", self.adapter(), cpu.join("; ")),
        }
    }

    fn run(&self, data: &Matrix, params: &KmeansParams) -> KmeansResult {
        let job = Job {
            rows: None,
            params: params.clone(),
        };
        self.run_batch(data, &[job])
            .pop()
            .expect("one result per job")
    }

    fn run_batch(&self, data: &Matrix, jobs: &[Job<'_>]) -> Vec<KmeansResult> {
        // Jobs without points have nothing to put on the device.
        let full: Vec<usize> = (0..jobs.len())
            .filter(|&j| jobs[j].points(data) > 0)
            .collect();
        let work: u64 = full
            .iter()
            .map(|&j| jobs[j].work(data))
            .fold(0, u64::saturating_add);
        if full.is_empty() || work < self.min_work {
            self.small_runs.fetch_add(full.len(), Ordering::Relaxed);
            return CpuKmeans.run_batch(data, jobs);
        }
        let on_device: Vec<&Job> = full.iter().map(|&j| &jobs[j]).collect();
        let fitted = fit(&on_device, &mut |part: &[&Job]| self.batch(data, part));
        let mut out: Vec<Option<KmeansResult>> = vec![None; jobs.len()];
        for (j, r) in full.into_iter().zip(fitted) {
            match r {
                Ok(r) => out[j] = Some(r),
                Err(e) if e.splits() => self.refused(&e),
                Err(e) => self.failed(&e),
            }
        }
        // Jobs without points, and jobs the device refused or failed on: the CPU.
        let left: Vec<usize> = (0..jobs.len()).filter(|&j| out[j].is_none()).collect();
        let rest: Vec<Job> = left.iter().map(|&j| jobs[j].clone()).collect();
        for (j, r) in left.into_iter().zip(CpuKmeans.run_batch(data, &rest)) {
            out[j] = Some(r);
        }
        out.into_iter().map(|r| r.expect("every job ran")).collect()
    }
}
