//! A batch of K-Means runs resident on the device: every run's points uploaded once, in blocks
//! of 64 that never mix runs (one workgroup each, told its run and centroid range by a work
//! table), chunked under the storage-binding limit; every run's centroids side by side in one
//! buffer; and the per-point, per-cluster and per-run state the kernels keep between
//! dispatches. A single run is a batch of one.

use super::device::{BLOCK, Gpu, GpuError, cast, grid};
pub use super::layout::{Assignment, Run};
use super::layout::{Layout, Limits, Work};
use crate::matrix::Matrix;

/// The params uniform every kernel reads (`extra` means what the kernel says).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Params {
    pub d: u32,
    pub x_groups: u32,
    pub n: u32,
    pub extra: u32,
    /// The chunk's first block in the batch.
    pub base: u32,
    /// The chunk's blocks (for kernels dispatched per run and chunk).
    pub span: u32,
    pub pad: [u32; 2],
}

/// Point slots of a chunk, and the buffers that hold one value per slot or per block.
pub struct Chunk {
    /// Slots (a multiple of 64; unused slots are zero).
    pub slots: usize,
    pub points: wgpu::Buffer,
    pub out: wgpu::Buffer,
    /// Per seeding candidate (`stride`), then slot: the candidate's distance to the point.
    pub cdist: wgpu::Buffer,
    pub work: wgpu::Buffer,
    pub blocks: Vec<Work>,
    /// Its first block in the batch.
    pub base: usize,
}

/// The resident batch.
pub struct Batch<'a> {
    pub d: usize,
    pub runs: Vec<Run<'a>>,
    pub chunks: Vec<Chunk>,
    /// Every run's centroids, `c_total` × d.
    pub centroids: wgpu::Buffer,
    pub c_total: usize,
    /// 64-bit fixed-point sums, two words per centroid and dimension.
    pub acc: wgpu::Buffer,
    /// Members per centroid.
    pub counts: wgpu::Buffer,
    /// Centroid → run.
    pub owner: wgpu::Buffer,
    /// Per run: changed assignments in the last assignment step.
    pub changed: wgpu::Buffer,
    /// Per run: 1 while it iterates (or, when seeding, takes a center this step).
    pub active: wgpu::Buffer,
    /// Per run: one seed row (the center it takes this step).
    pub centers: wgpu::Buffer,
    /// Candidates per run and seeding step, at most (the stride of the per-candidate buffers).
    pub stride: usize,
    /// Per run: `stride` candidate rows.
    pub cands: wgpu::Buffer,
    /// Per run: `stride` candidates' slots in the batch.
    pub cand_slot: wgpu::Buffer,
    /// The uniform numbers of a seeding, each run's `draws` from its `draw_off` (f64 where the
    /// device has it, else f32).
    pub draws: wgpu::Buffer,
    /// Per slot of the batch (64 per block): the distance to the nearest seed.
    pub dist: wgpu::Buffer,
    /// Per block: the sum of its squared seed distances.
    pub block_sums: wgpu::Buffer,
    /// Per block and candidate: potentials.
    pub pots: wgpu::Buffer,
    /// Per run: its [`RunInfo`].
    pub run_table: wgpu::Buffer,
    /// Per run: candidates this seeding step (0: it takes no center).
    pub ncand: wgpu::Buffer,
    /// Per run: the centers it has taken so far.
    pub taken: wgpu::Buffer,
    /// Per run: the candidate it took in the last seeding step.
    pub chosen: wgpu::Buffer,
    /// Per centroid: its seed (a point of its run).
    pub seeds: wgpu::Buffer,
}

impl<'a> Batch<'a> {
    /// Lays the runs out ([`Layout::plan`]) and uploads their points: each job is the rows of
    /// `data` it clusters (None: all) and its number of clusters (1 to its number of points).
    /// `chunk_points` caps the slots per chunk (tests use it); the binding limit always does.
    /// A batch the device has no memory for fails with [`GpuError::OutOfMemory`] (its buffers
    /// are freed), so the caller can split it.
    pub fn new(
        gpu: &Gpu,
        data: &'a Matrix,
        jobs: &[(Option<&'a [u32]>, usize)],
        chunk_points: Option<usize>,
    ) -> Result<Batch<'a>, GpuError> {
        let limits = Limits {
            binding: gpu.max_binding,
            buffer: gpu.max_buffer,
            f64: gpu.f64,
            chunk_points,
        };
        let layout = Layout::plan(data, jobs, limits)?;
        let oom = gpu.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let invalid = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let batch = Batch::allocate(gpu, layout);
        let invalid = pollster::block_on(invalid.pop());
        if let Some(e) = pollster::block_on(oom.pop()) {
            return Err(GpuError::OutOfMemory(e.to_string()));
        }
        if let Some(e) = invalid {
            return Err(GpuError::Wgpu(e.to_string()));
        }
        Ok(batch)
    }

    /// Makes the buffers of a layout and writes the points and tables.
    fn allocate(gpu: &Gpu, layout: Layout<'a>) -> Batch<'a> {
        let table = layout.run_table();
        let draw_bytes = layout.draw_bytes(gpu.f64);
        let Layout {
            d,
            runs,
            tables,
            n_blocks,
            c_total,
            stride,
        } = layout;
        let storage = wgpu::BufferUsages::STORAGE;
        let mut base = 0;
        let chunks = tables
            .into_iter()
            .map(|blocks| {
                let slots = blocks.len() * BLOCK;
                base += blocks.len();
                Chunk {
                    base: base - blocks.len(),
                    slots,
                    points: gpu.zeroed("points", (slots * d * 4) as u64, storage),
                    out: gpu.zeroed("assignments", (slots * 16) as u64, storage),
                    cdist: gpu.zeroed("candidate distances", (slots * stride * 4) as u64, storage),
                    work: gpu.upload("work", bytemuck::cast_slice(&blocks), storage),
                    blocks,
                }
            })
            .collect::<Vec<Chunk>>();
        upload_points(gpu, &runs, &chunks, d);
        let owner: Vec<u32> = runs
            .iter()
            .enumerate()
            .flat_map(|(r, run)| std::iter::repeat_n(r as u32, run.k))
            .collect();
        let n_runs = runs.len();
        Batch {
            dist: gpu.zeroed("seed distances", (n_blocks * BLOCK * 4) as u64, storage),
            block_sums: gpu.zeroed("block sums", (n_blocks * 4) as u64, storage),
            pots: gpu.zeroed("potentials", (n_blocks * stride * 4) as u64, storage),
            run_table: gpu.upload("runs", bytemuck::cast_slice(&table), storage),
            ncand: gpu.zeroed("candidates", (n_runs * 4) as u64, storage),
            taken: gpu.zeroed("centers taken", (n_runs * 4) as u64, storage),
            chosen: gpu.zeroed("chosen", (n_runs * 4) as u64, storage),
            seeds: gpu.zeroed("seeds", (c_total * 4) as u64, storage),
            cand_slot: gpu.zeroed("candidate slots", (n_runs * stride * 4) as u64, storage),
            draws: gpu.zeroed("draws", draw_bytes, storage),
            stride,
            d,
            centroids: gpu.zeroed("centroids", (c_total * d * 4) as u64, storage),
            acc: gpu.zeroed("sums", (c_total * d * 8) as u64, storage),
            counts: gpu.zeroed("counts", (c_total * 4) as u64, storage),
            owner: gpu.upload("owner", bytemuck::cast_slice(&owner), storage),
            changed: gpu.zeroed("changed", (n_runs * 4) as u64, storage),
            active: gpu.zeroed("active", (n_runs * 4) as u64, storage),
            centers: gpu.zeroed("seed rows", (n_runs * d * 4) as u64, storage),
            cands: gpu.zeroed("candidate rows", (n_runs * stride * d * 4) as u64, storage),
            runs,
            chunks,
            c_total,
        }
    }

    /// Params for a kernel over one chunk's blocks.
    pub fn chunk_params(&self, chunk: &Chunk, extra: u32) -> Params {
        Params {
            d: self.d as u32,
            x_groups: grid(chunk.blocks.len() as u32).0,
            n: chunk.blocks.len() as u32,
            extra,
            base: chunk.base as u32,
            span: chunk.blocks.len() as u32,
            pad: [0; 2],
        }
    }

    /// Params for a kernel over the runs (one workgroup each), for one chunk if given.
    pub fn run_params(&self, chunk: Option<&Chunk>, extra: u32) -> Params {
        let n = self.runs.len() as u32;
        Params {
            d: self.d as u32,
            x_groups: grid(n).0,
            n,
            extra,
            base: chunk.map_or(0, |c| c.base as u32),
            span: chunk.map_or(0, |c| c.blocks.len() as u32),
            pad: [0; 2],
        }
    }

    /// Sets each run's flag (1 or 0) in `active`.
    pub fn set_active(&self, gpu: &Gpu, flags: &[bool]) {
        let v: Vec<u32> = flags.iter().map(|&f| u32::from(f)).collect();
        gpu.queue
            .write_buffer(&self.active, 0, bytemuck::cast_slice(&v));
    }

    /// Writes centroid `c` of run `r`.
    pub fn write_centroid(&self, gpu: &Gpu, r: usize, c: usize, row: &[f32]) {
        let at = ((self.runs[r].c_off + c) * self.d * 4) as u64;
        gpu.queue
            .write_buffer(&self.centroids, at, bytemuck::cast_slice(row));
    }

    /// Sets the nearest centroid of the one run's points (no runner-up).
    pub fn write_assignments(&self, gpu: &Gpu, best: &[u32]) {
        let run = &self.runs[0];
        for (b, p) in run.places.iter().enumerate() {
            let slots: Vec<Assignment> = best[b * BLOCK..b * BLOCK + p.count]
                .iter()
                .map(|&best| Assignment {
                    best,
                    second: u32::MAX,
                    s1: 0.0,
                    s2: 0.0,
                })
                .collect();
            gpu.queue.write_buffer(
                &self.chunks[p.chunk].out,
                (p.start * 16) as u64,
                bytemuck::cast_slice(&slots),
            );
        }
    }

    /// Every point's assignment, per run in point order (one round trip).
    pub fn read_assignments(&self, gpu: &Gpu) -> Result<Vec<Vec<Assignment>>, GpuError> {
        let reads: Vec<(&wgpu::Buffer, u64, u64)> = self
            .chunks
            .iter()
            .map(|c| (&c.out, 0, (c.slots * 16) as u64))
            .collect();
        let bytes = gpu.round(|_| {}, &reads)?;
        let slots: Vec<Vec<Assignment>> = bytes.iter().map(|b| cast(b)).collect();
        Ok(self
            .runs
            .iter()
            .map(|run| {
                run.places
                    .iter()
                    .flat_map(|p| slots[p.chunk][p.start..p.start + p.count].iter().copied())
                    .collect()
            })
            .collect())
    }

    /// Every run's centroids (one round trip).
    pub fn read_centroids(&self, gpu: &Gpu) -> Result<Vec<Matrix>, GpuError> {
        let bytes = gpu.round(
            |_| {},
            &[(&self.centroids, 0, (self.c_total * self.d * 4) as u64)],
        )?;
        let all: Vec<f32> = cast(&bytes[0]);
        Ok(self
            .runs
            .iter()
            .map(|run| Matrix {
                rows: run.k,
                dims: self.d,
                data: all[run.c_off * self.d..(run.c_off + run.k) * self.d].to_vec(),
            })
            .collect())
    }
}

/// Writes the runs' points into their chunks: one write per run and chunk (a run's blocks in
/// a chunk are contiguous).
fn upload_points(gpu: &Gpu, runs: &[Run], chunks: &[Chunk], d: usize) {
    for run in runs {
        let mut i = 0;
        while i < run.places.len() {
            let first = run.places[i];
            let mut j = i;
            while j + 1 < run.places.len() && run.places[j + 1].chunk == first.chunk {
                j += 1;
            }
            let bytes = run.rows_of(i * BLOCK..(j * BLOCK + run.places[j].count));
            gpu.queue.write_buffer(
                &chunks[first.chunk].points,
                (first.start * d * 4) as u64,
                bytemuck::cast_slice(&bytes),
            );
            i = j + 1;
        }
    }
}
