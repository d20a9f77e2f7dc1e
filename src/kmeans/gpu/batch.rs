//! A batch of K-Means runs resident on the device: every run's points uploaded once, in blocks
//! of 64 that never mix runs (one workgroup each, told its run and centroid range by a work
//! table), chunked under the storage-binding limit; every run's centroids side by side in one
//! buffer; and the per-point, per-cluster and per-run state the kernels keep between
//! dispatches. A single run is a batch of one.

use super::device::{BLOCK, Gpu, GpuError, cast, grid};
use crate::kmeans::seed::seed_trials;
use crate::matrix::Matrix;

/// One block of the work table, as the kernels read it.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Work {
    /// First point, in its chunk.
    pub start: u32,
    /// Points in the block (1..=64).
    pub count: u32,
    /// The run's first centroid in the batch.
    pub c_off: u32,
    /// The run's centroids.
    pub c_n: u32,
    /// The run.
    pub run: u32,
}

/// The kernels' `Assignment`, one per point slot, as read back.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Assignment {
    pub best: u32,
    /// `u32::MAX` when there is no runner-up.
    pub second: u32,
    pub s1: f32,
    pub s2: f32,
}

impl Assignment {
    /// The runner-up centroid and its cosine, if the run has a second centroid.
    pub fn runner_up(&self) -> Option<(u32, f32)> {
        (self.s2 > -1.0e38 && self.second != u32::MAX).then_some((self.second, self.s2))
    }
}

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

/// One run of the batch, as the kernels that work per run read it (`RunInfo`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct RunInfo {
    pub first_block: u32,
    pub blocks: u32,
    pub n: u32,
    pub k: u32,
    pub c_off: u32,
    /// Candidates per greedy k-means++ step.
    pub trials: u32,
    /// The run's first uniform number among a seeding's draws.
    pub draw_off: u32,
    pub pad: u32,
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

/// Where a block of a run lies: its chunk, its index in the batch, its first slot in the
/// chunk, and how many points it holds.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    pub chunk: usize,
    /// The block's index in the batch.
    pub global: usize,
    pub start: usize,
    pub count: usize,
}

/// A run's points, centroids and blocks.
pub struct Run<'a> {
    data: &'a Matrix,
    /// Its points: these rows of `data` (None: every row).
    rows: Option<&'a [u32]>,
    /// Points.
    pub n: usize,
    pub k: usize,
    /// First centroid in the batch.
    pub c_off: usize,
    /// Candidates per greedy k-means++ step (0 when k is 1: no step).
    pub trials: usize,
    /// The run's blocks, in point order (block b holds points 64 b ..).
    pub places: Vec<Place>,
}

/// Most candidates per greedy k-means++ step (`kmeans_potential.wgsl`'s MAX_T).
const MAX_TRIALS: usize = 16;

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

/// Candidates per greedy k-means++ step of a run with `k` centroids (0 when k is 1: no step).
fn trials(k: usize) -> usize {
    if k > 1 {
        seed_trials(k).min(MAX_TRIALS)
    } else {
        0
    }
}

/// The run table: each run's blocks, sizes and where its draws start (a seeding draws
/// `trials` numbers per step, `k - 1` steps).
fn run_table(runs: &[Run]) -> Vec<RunInfo> {
    let mut draw_off = 0;
    runs.iter()
        .map(|r| {
            let info = RunInfo {
                first_block: r.places.first().map_or(0, |p| p.global) as u32,
                blocks: r.places.len() as u32,
                n: r.n as u32,
                k: r.k as u32,
                c_off: r.c_off as u32,
                trials: r.trials as u32,
                draw_off: draw_off as u32,
                pad: 0,
            };
            draw_off += r.draws();
            info
        })
        .collect()
}

impl Run<'_> {
    /// The uniform numbers a seeding of the run draws.
    pub fn draws(&self) -> usize {
        self.k.saturating_sub(1) * self.trials
    }

    /// Point `i` of the run.
    pub fn row(&self, i: usize) -> &[f32] {
        match self.rows {
            Some(rows) => self.data.row(rows[i] as usize),
            None => self.data.row(i),
        }
    }

    /// Points `range` of the run, contiguous (copied when the run is a subset of rows).
    fn rows_of(&self, range: std::ops::Range<usize>) -> std::borrow::Cow<'_, [f32]> {
        let d = self.data.dims;
        match self.rows {
            None => std::borrow::Cow::Borrowed(&self.data.data[range.start * d..range.end * d]),
            Some(_) => range.flat_map(|i| self.row(i).iter().copied()).collect(),
        }
    }
}

impl<'a> Batch<'a> {
    /// Lays the runs out and uploads their points: each job is the rows of `data` it clusters
    /// (None: all) and its number of clusters (1 to its number of points). `chunk_points` caps
    /// the slots per chunk (tests use it); the binding limit always does.
    pub fn new(
        gpu: &Gpu,
        data: &'a Matrix,
        jobs: &[(Option<&'a [u32]>, usize)],
        chunk_points: Option<usize>,
    ) -> Result<Batch<'a>, GpuError> {
        let d = data.dims.max(1);
        let c_total: usize = jobs.iter().map(|j| j.1).sum();
        let limit = gpu.max_binding;
        // Centroids and their sums (8 bytes per value) must each fit one binding.
        if (c_total * d * 8) as u64 > limit {
            return Err(GpuError::TooLarge(c_total, d));
        }
        let stride = jobs.iter().map(|j| trials(j.1)).max().unwrap_or(0).max(1);
        // A slot's point, its assignment and its candidates' distances each fit a binding.
        let slot_bytes = (d * 4)
            .max(std::mem::size_of::<Assignment>())
            .max(stride * 4) as u64;
        let by_limit = (limit / slot_bytes) as usize;
        let cap = chunk_points.unwrap_or(by_limit).min(by_limit) / BLOCK * BLOCK;
        if cap == 0 {
            return Err(GpuError::TooWide(d));
        }
        // Places, and the work tables.
        let mut tables: Vec<Vec<Work>> = vec![Vec::new()];
        let mut runs = Vec::with_capacity(jobs.len());
        let mut c_off = 0;
        let mut n_blocks = 0;
        for (r, &(rows, k)) in jobs.iter().enumerate() {
            let n = rows.map_or(data.rows, <[u32]>::len);
            let mut places = Vec::new();
            for b0 in (0..n).step_by(BLOCK) {
                if tables.last().expect("a chunk").len() * BLOCK >= cap {
                    tables.push(Vec::new());
                }
                let chunk = tables.len() - 1;
                let table = tables.last_mut().expect("a chunk");
                let count = BLOCK.min(n - b0);
                places.push(Place {
                    chunk,
                    global: n_blocks,
                    start: table.len() * BLOCK,
                    count,
                });
                n_blocks += 1;
                table.push(Work {
                    start: (table.len() * BLOCK) as u32,
                    count: count as u32,
                    c_off: c_off as u32,
                    c_n: k as u32,
                    run: r as u32,
                });
            }
            runs.push(Run {
                data,
                rows,
                n,
                k,
                c_off,
                trials: trials(k),
                places,
            });
            c_off += k;
        }
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
        // Points: one write per run and chunk (a run's blocks in a chunk are contiguous).
        for run in &runs {
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
        let owner: Vec<u32> = runs
            .iter()
            .enumerate()
            .flat_map(|(r, run)| std::iter::repeat_n(r as u32, run.k))
            .collect();
        let n_runs = runs.len();
        let table = run_table(&runs);
        Ok(Batch {
            dist: gpu.zeroed("seed distances", (n_blocks * BLOCK * 4) as u64, storage),
            block_sums: gpu.zeroed("block sums", (n_blocks * 4) as u64, storage),
            pots: gpu.zeroed("potentials", (n_blocks * stride * 4) as u64, storage),
            run_table: gpu.upload("runs", bytemuck::cast_slice(&table), storage),
            ncand: gpu.zeroed("candidates", (n_runs * 4) as u64, storage),
            taken: gpu.zeroed("centers taken", (n_runs * 4) as u64, storage),
            chosen: gpu.zeroed("chosen", (n_runs * 4) as u64, storage),
            seeds: gpu.zeroed("seeds", (c_total * 4) as u64, storage),
            cand_slot: gpu.zeroed("candidate slots", (n_runs * stride * 4) as u64, storage),
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
        })
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
