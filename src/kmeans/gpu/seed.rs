//! Greedy k-means++ seeding of a resident batch, on the device: the same algorithm and random
//! draws as the CPU path (`kmeans::seed`), with every run of the batch taking its next center
//! in the same step, and no round trip between steps. The host draws each run's first point and
//! all the uniform numbers its steps will use, from the run's random state in the CPU path's
//! order; then each step is five kernels recorded back to back: D² sampling of the candidates
//! from the distances and block sums (`kmeans_sample.wgsl`), their rows gathered
//! (`kmeans_gather.wgsl`), their potentials (`kmeans_potential.wgsl`), the choice
//! (`kmeans_choose.wgsl`) and the new center's distances (`kmeans_seed.wgsl`). Steps go to the
//! queue in submissions of [`STEPS_PER_SUBMIT`] without waiting; the seeds come back in one
//! read at the end.
//!
//! Where the device lacks f64 the draws sum in f32, so they may differ from the CPU path's; a
//! run whose points all sit on its centers takes a point without a draw, and then its later
//! steps use the numbers drawn for them (the CPU path shifts them by one step).

use super::batch::Batch;
use super::device::{Gpu, GpuError, cast, run};
use crate::rng::Rng;

/// Seeding steps per submission: the queue never waits between them, and a submission stays
/// short enough for a driver's watchdog.
const STEPS_PER_SUBMIT: usize = 32;

/// Seed rows of each run (`k` of its points), drawing from each run's `rng` exactly as the CPU
/// path draws.
pub fn seed(gpu: &Gpu, batch: &Batch, rngs: &mut [Rng]) -> Result<Vec<Vec<usize>>, GpuError> {
    let runs = &batch.runs;
    let mut firsts = Vec::with_capacity(runs.len());
    let mut draws: Vec<f64> = Vec::new();
    for (run, rng) in runs.iter().zip(rngs.iter_mut()) {
        firsts.push(rng.below(run.n));
        draws.extend((0..run.draws()).map(|_| rng.next_f64()));
    }
    let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
    if gpu.f64 {
        gpu.queue
            .write_buffer(&batch.draws, 0, bytemuck::cast_slice(&draws));
    } else {
        let narrow: Vec<f32> = draws.iter().map(|&x| narrow(x)).collect();
        gpu.queue
            .write_buffer(&batch.draws, 0, bytemuck::cast_slice(&narrow));
    }
    start(gpu, batch, &firsts);
    let steps = runs.iter().map(|r| r.k - 1).max().unwrap_or(0);
    let kernels = Steps::new(gpu, batch);
    gpu.submit(|pass| kernels.distances(pass, Distances::First));
    let mut done = 0;
    while done < steps {
        let now = STEPS_PER_SUBMIT.min(steps - done);
        gpu.submit(|pass| {
            for _ in 0..now {
                kernels.step(pass);
            }
        });
        done += now;
    }
    let got = gpu.round(|_| {}, &[(&batch.seeds, 0, (batch.c_total * 4) as u64)]);
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(GpuError::Wgpu(e.to_string()));
    }
    let seeds: Vec<u32> = cast(&got?[0]);
    Ok(runs
        .iter()
        .map(|r| {
            seeds[r.c_off..r.c_off + r.k]
                .iter()
                .map(|&s| s as usize)
                .collect()
        })
        .collect())
}

/// A uniform number in [0, 1) as f32, still below 1 (one that rounded up to 1 would draw
/// past the last point).
fn narrow(x: f64) -> f32 {
    (x as f32).min(1.0 - f32::EPSILON / 2.0)
}

/// Writes each run's first center: its row in `centers`, its point as the first seed, one
/// center taken, and one candidate (so the first distances kernel takes the run).
fn start(gpu: &Gpu, batch: &Batch, firsts: &[usize]) {
    let mut rows = Vec::with_capacity(batch.runs.len() * batch.d);
    let mut seeds = vec![0u32; batch.c_total];
    for (run, &first) in batch.runs.iter().zip(firsts) {
        rows.extend_from_slice(run.row(first));
        seeds[run.c_off] = first as u32;
    }
    let ones = vec![1u32; batch.runs.len()];
    let q = &gpu.queue;
    q.write_buffer(&batch.centers, 0, bytemuck::cast_slice(&rows));
    q.write_buffer(&batch.seeds, 0, bytemuck::cast_slice(&seeds));
    q.write_buffer(&batch.taken, 0, bytemuck::cast_slice(&ones));
    q.write_buffer(&batch.ncand, 0, bytemuck::cast_slice(&ones));
}

/// The bind groups of a seeding's kernels, made once and recorded every step.
struct Steps<'a> {
    gpu: &'a Gpu,
    runs: u32,
    greedy: bool,
    sample: wgpu::BindGroup,
    choose: wgpu::BindGroup,
    chunks: Vec<ChunkSteps>,
}

/// A chunk's blocks and the bind groups of the kernels dispatched once per chunk.
struct ChunkSteps {
    blocks: u32,
    gather: wgpu::BindGroup,
    potential: wgpu::BindGroup,
    /// The distances kernel in its three modes ([`Distances`]).
    distances: [wgpu::BindGroup; 3],
}

/// Where the distances kernel (`kmeans_seed.wgsl`) takes the distance to each run's new
/// center from (its `params.extra`).
#[derive(Clone, Copy)]
enum Distances {
    /// Computed from the center's row.
    Computed = 0,
    /// Computed, and the center is the run's first: they replace the old distances.
    First = 1,
    /// Stored by the potentials kernel for the chosen candidate.
    Stored = 2,
}

impl<'a> Steps<'a> {
    fn new(gpu: &'a Gpu, b: &Batch) -> Steps<'a> {
        let k = &gpu.kernels;
        let stride = b.stride as u32;
        let per_run = gpu.uniform(&b.run_params(None, stride));
        let sample = gpu.bind(
            &k.sample,
            &[
                &b.block_sums,
                &b.dist,
                &b.draws,
                &b.run_table,
                &b.taken,
                &b.seeds,
                &b.cand_slot,
                &b.ncand,
                &per_run,
            ],
        );
        let choose = gpu.bind(
            &k.choose,
            &[
                &b.pots,
                &b.cands,
                &b.centers,
                &per_run,
                &b.run_table,
                &b.ncand,
                &b.cand_slot,
                &b.taken,
                &b.seeds,
                &b.chosen,
            ],
        );
        let chunks = b
            .chunks
            .iter()
            .map(|c| {
                let gather = gpu.uniform(&b.run_params(Some(c), stride));
                let pot = gpu.uniform(&b.chunk_params(c, stride));
                let distances =
                    [Distances::Computed, Distances::First, Distances::Stored].map(|mode| {
                        let params = gpu.uniform(&b.chunk_params(c, mode as u32));
                        gpu.bind(
                            &k.seed,
                            &[
                                &c.points,
                                &b.centers,
                                &b.dist,
                                &b.block_sums,
                                &params,
                                &c.work,
                                &b.ncand,
                                &c.cdist,
                                &b.chosen,
                            ],
                        )
                    });
                ChunkSteps {
                    blocks: c.blocks.len() as u32,
                    gather: gpu.bind(
                        &k.gather,
                        &[&c.points, &b.cand_slot, &b.ncand, &b.cands, &gather],
                    ),
                    potential: gpu.bind(
                        &k.potential,
                        &[
                            &c.points, &b.cands, &b.dist, &b.pots, &pot, &c.work, &b.ncand,
                            &c.cdist,
                        ],
                    ),
                    distances,
                }
            })
            .collect();
        Steps {
            gpu,
            runs: b.runs.len() as u32,
            greedy: b.stride > 1,
            sample,
            choose,
            chunks,
        }
    }

    /// Records the lowering of each stepping run's distances by its new center, and the block
    /// sums.
    fn distances(&self, pass: &mut wgpu::ComputePass, mode: Distances) {
        for c in &self.chunks {
            run(
                pass,
                &self.gpu.kernels.seed,
                &c.distances[mode as usize],
                c.blocks,
            );
        }
    }

    /// Records one step: every run short of its `k` centers takes one more.
    fn step(&self, pass: &mut wgpu::ComputePass) {
        let k = &self.gpu.kernels;
        run(pass, &k.sample, &self.sample, self.runs);
        for c in &self.chunks {
            run(pass, &k.gather, &c.gather, self.runs);
        }
        if self.greedy {
            for c in &self.chunks {
                run(pass, &k.potential, &c.potential, c.blocks);
            }
        }
        run(pass, &k.choose, &self.choose, self.runs);
        // After a greedy step the potentials kernel has computed the distances.
        let mode = if self.greedy {
            Distances::Stored
        } else {
            Distances::Computed
        };
        self.distances(pass, mode);
    }
}

#[cfg(test)]
mod tests {
    use super::narrow;

    #[test]
    fn a_draw_in_f32_stays_below_one() {
        assert_eq!(narrow(0.25), 0.25);
        assert!(narrow(1.0 - 1e-12) < 1.0);
        assert_eq!(narrow(1.0 - 1e-12), 1.0 - f32::EPSILON / 2.0);
    }
}
