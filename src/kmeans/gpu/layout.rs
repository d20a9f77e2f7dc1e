//! How a batch of K-Means runs lies on the device, worked out before anything is allocated:
//! each run's blocks of 64 points, the chunks they fall in under the storage-binding limit, the
//! work and run tables the kernels read, and the bytes of every buffer the batch keeps. A batch
//! that one of those buffers would not fit is refused here, so the caller can split it.

use super::device::{BLOCK, GpuError};
use crate::kmeans::seed::seed_trials;
use crate::matrix::Matrix;

/// One block of the work table, as the kernels read it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
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

/// One run of the batch, as the kernels that work per run read it.
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

/// Where a block of a run lies: its chunk, its index in the batch, its first slot in the
/// chunk, and how many points it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
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
    pub fn rows_of(&self, range: std::ops::Range<usize>) -> std::borrow::Cow<'_, [f32]> {
        let d = self.data.dims;
        match self.rows {
            None => std::borrow::Cow::Borrowed(&self.data.data[range.start * d..range.end * d]),
            Some(_) => range.flat_map(|i| self.row(i).iter().copied()).collect(),
        }
    }
}

/// Most candidates per greedy k-means++ step (`kmeans_potential.wgsl`'s MAX_T).
const MAX_TRIALS: usize = 16;

/// Candidates per greedy k-means++ step of a run with `k` centroids (0 when k is 1: no step).
fn trials(k: usize) -> usize {
    if k > 1 {
        seed_trials(k).min(MAX_TRIALS)
    } else {
        0
    }
}

/// What a layout must respect: the device's largest storage binding and largest buffer, and
/// whether the seeding's draws are f64 (8 bytes each) or f32.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub binding: u64,
    pub buffer: u64,
    pub f64: bool,
    /// Slots per chunk at most (tests set it; the binding limit always caps it).
    pub chunk_points: Option<usize>,
}

/// A batch's runs, blocks and chunks, and the sizes of its buffers.
pub struct Layout<'a> {
    pub d: usize,
    pub runs: Vec<Run<'a>>,
    /// Each chunk's work table: its blocks, in order.
    pub tables: Vec<Vec<Work>>,
    pub n_blocks: usize,
    pub c_total: usize,
    /// Candidates per run and seeding step, at most (the stride of the per-candidate buffers).
    pub stride: usize,
}

impl<'a> Layout<'a> {
    /// Lays the runs out: each job is the rows of `data` it clusters (None: all) and its
    /// number of clusters (1 to its number of points). Fails when a buffer of the batch would
    /// exceed a limit: [`GpuError::splits`] says whether a smaller batch could fit.
    pub fn plan(
        data: &'a Matrix,
        jobs: &[(Option<&'a [u32]>, usize)],
        limits: Limits,
    ) -> Result<Layout<'a>, GpuError> {
        let d = data.dims.max(1);
        let c_total: usize = jobs.iter().map(|j| j.1).sum();
        let limit = limits.binding.min(limits.buffer);
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
        let cap = limits.chunk_points.unwrap_or(by_limit).min(by_limit) / BLOCK * BLOCK;
        if cap == 0 {
            return Err(GpuError::TooWide(d));
        }
        let mut layout = Layout {
            d,
            runs: Vec::with_capacity(jobs.len()),
            tables: vec![Vec::new()],
            n_blocks: 0,
            c_total,
            stride,
        };
        for &(rows, k) in jobs {
            layout.push(data, rows, k, cap);
        }
        layout.check(limits)?;
        Ok(layout)
    }

    /// Adds a run: its blocks go to the last chunk until it holds `cap` slots.
    fn push(&mut self, data: &'a Matrix, rows: Option<&'a [u32]>, k: usize, cap: usize) {
        let n = rows.map_or(data.rows, <[u32]>::len);
        let r = self.runs.len();
        let c_off = self.runs.last().map_or(0, |l| l.c_off + l.k);
        let mut places = Vec::new();
        for b0 in (0..n).step_by(BLOCK) {
            if self.tables.last().expect("a chunk").len() * BLOCK >= cap {
                self.tables.push(Vec::new());
            }
            let chunk = self.tables.len() - 1;
            let table = self.tables.last_mut().expect("a chunk");
            let count = BLOCK.min(n - b0);
            places.push(Place {
                chunk,
                global: self.n_blocks,
                start: table.len() * BLOCK,
                count,
            });
            self.n_blocks += 1;
            table.push(Work {
                start: (table.len() * BLOCK) as u32,
                count: count as u32,
                c_off: c_off as u32,
                c_n: k as u32,
                run: r as u32,
            });
        }
        self.runs.push(Run {
            data,
            rows,
            n,
            k,
            c_off,
            trials: trials(k),
            places,
        });
    }

    /// The buffers the whole batch shares (not one per chunk), with their bytes; each is
    /// bound whole, so each must fit one binding. (The centroids and their sums are checked
    /// first, by [`Layout::plan`].)
    pub fn shared_buffers(&self, f64: bool) -> [(&'static str, u64); 7] {
        let (d, stride) = (self.d as u64, self.stride as u64);
        let (runs, blocks) = (self.runs.len() as u64, self.n_blocks as u64);
        [
            ("seed distances", blocks * BLOCK as u64 * 4),
            ("seed potentials", blocks * stride * 4),
            ("seed candidates' rows", runs * stride * d * 4),
            ("seed rows", runs * d * 4),
            ("run table", runs * std::mem::size_of::<RunInfo>() as u64),
            ("seed candidates' slots", runs * stride * 4),
            ("seed draws", self.draw_bytes(f64)),
        ]
    }

    /// The bytes of a seeding's uniform numbers: every run's draws, each an f64 or an f32.
    pub fn draw_bytes(&self, f64: bool) -> u64 {
        let draws: u64 = self.runs.iter().map(|r| r.draws() as u64).sum();
        draws * if f64 { 8 } else { 4 }
    }

    /// Fails when a shared buffer exceeds the binding limit, or the assignments' read-back
    /// (16 bytes per slot, one buffer) exceeds the largest buffer.
    fn check(&self, limits: Limits) -> Result<(), GpuError> {
        let limit = limits.binding.min(limits.buffer);
        for (buffer, bytes) in self.shared_buffers(limits.f64) {
            if bytes > limit {
                return Err(GpuError::BatchTooLarge {
                    buffer,
                    bytes,
                    limit,
                });
            }
        }
        let readback = (self.n_blocks * BLOCK * 16) as u64;
        if readback > limits.buffer {
            return Err(GpuError::BatchTooLarge {
                buffer: "assignments read back",
                bytes: readback,
                limit: limits.buffer,
            });
        }
        Ok(())
    }

    /// The run table: each run's blocks, sizes and where its draws start (a seeding draws
    /// `trials` numbers per step, `k - 1` steps).
    pub fn run_table(&self) -> Vec<RunInfo> {
        let mut draw_off = 0;
        self.runs
            .iter()
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
}

#[cfg(test)]
mod tests;
