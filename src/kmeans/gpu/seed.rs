//! Greedy k-means++ seeding of a resident batch, on the device: the same algorithm and random
//! draws as the CPU path (`kmeans::seed`), with every run of the batch taking its next center
//! in the same step. Each point's distance to its nearest center stays on the device. A step is
//! one round trip for the whole batch, whatever its size: the host draws each run's candidates
//! by D² sampling from the distances and block sums the last step read back (in f64, as the CPU
//! path does), then one submission computes every candidate's potential, keeps the lowest per
//! run, adds it to the distances, and reads back the choices, the distances and the block sums.

use super::batch::{Batch, MAX_TRIALS, Params};
use super::device::{BLOCK, Gpu, GpuError, cast, grid};
use crate::kmeans::seed::seed_trials;
use crate::rng::Rng;

/// What a step reads back: per run the candidate it took, per block the sum of its squared
/// distances, and per chunk every slot's distance.
struct Readback {
    chosen: Vec<u32>,
    sums: Vec<f32>,
    dist: Vec<Vec<f32>>,
}

/// Seed rows of each run (`k` of its points), drawing from each run's `rng` exactly as the CPU
/// path draws.
pub fn seed(gpu: &Gpu, batch: &Batch, rngs: &mut [Rng]) -> Result<Vec<Vec<usize>>, GpuError> {
    let runs = &batch.runs;
    let mut centers: Vec<Vec<usize>> = runs
        .iter()
        .zip(rngs.iter_mut())
        .map(|(run, rng)| vec![rng.below(run.n)])
        .collect();
    // The first centers: written by the host, taken without a choice.
    let firsts: Vec<Vec<usize>> = centers.clone();
    let mut state = step(gpu, batch, &firsts, true)?;
    loop {
        let need: Vec<bool> = runs
            .iter()
            .zip(&centers)
            .map(|(run, c)| c.len() < run.k)
            .collect();
        if !need.iter().any(|&x| x) {
            return Ok(centers);
        }
        let cands = draw(batch, &need, &state, &centers, rngs);
        state = step(gpu, batch, &cands, false)?;
        for (r, c) in cands.iter().enumerate() {
            if !c.is_empty() {
                centers[r].push(c[state.chosen[r] as usize]);
            }
        }
    }
}

/// One step: each run with candidates (rows of its points) takes the one with the lowest
/// potential (the only one, or with `first` its first center) and adds it to its points'
/// distances; reads back the choices, block sums and distances.
fn step(gpu: &Gpu, batch: &Batch, cands: &[Vec<usize>], first: bool) -> Result<Readback, GpuError> {
    let d = batch.d;
    let t = cands.iter().map(Vec::len).max().unwrap_or(0).max(1);
    // Candidate rows, `t` per run (a run with fewer repeats its first).
    let mut rows = vec![0.0f32; batch.runs.len() * t * d];
    for (r, c) in cands.iter().enumerate() {
        for j in 0..t {
            if let Some(&row) = c.get(j).or(c.first()) {
                let at = (r * t + j) * d;
                rows[at..at + d].copy_from_slice(batch.runs[r].row(row));
            }
        }
    }
    gpu.queue
        .write_buffer(&batch.cands, 0, bytemuck::cast_slice(&rows));
    let counts: Vec<u32> = cands.iter().map(|c| c.len() as u32).collect();
    gpu.queue
        .write_buffer(&batch.ncand, 0, bytemuck::cast_slice(&counts));
    batch.set_active(gpu, &counts.iter().map(|&c| c > 0).collect::<Vec<_>>());
    let n_runs = batch.runs.len();
    let mut reads: Vec<(&wgpu::Buffer, u64, u64)> = vec![
        (&batch.chosen, 0, (n_runs * 4) as u64),
        (&batch.block_sums, 0, (batch.n_blocks * 4) as u64),
    ];
    reads.extend(
        batch
            .chunks
            .iter()
            .map(|c| (&c.dist, 0, (c.slots * 4) as u64)),
    );
    let got = gpu.round(
        |enc| {
            if t > 1 {
                potentials(gpu, batch, enc, t);
            }
            choose(gpu, batch, enc, t);
            add_centers(gpu, batch, enc, first);
        },
        &reads,
    )?;
    Ok(Readback {
        chosen: cast(&got[0]),
        sums: cast(&got[1]),
        dist: got[2..].iter().map(|b| cast(b)).collect(),
    })
}

/// Records the potentials of every run's `t` candidates, per block.
fn potentials(gpu: &Gpu, batch: &Batch, enc: &mut wgpu::CommandEncoder, t: usize) {
    for chunk in &batch.chunks {
        let params = gpu.uniform(&batch.chunk_params(chunk, t as u32));
        gpu.dispatch(
            enc,
            &gpu.kernels.potential,
            &[
                &chunk.points,
                &batch.cands,
                &chunk.dist,
                &batch.pots,
                &params,
                &chunk.work,
                &batch.active,
            ],
            chunk.blocks.len() as u32,
        );
    }
}

/// Records each run's choice among its candidates (its row goes to `centers`).
fn choose(gpu: &Gpu, batch: &Batch, enc: &mut wgpu::CommandEncoder, t: usize) {
    let n = batch.runs.len() as u32;
    let params = gpu.uniform(&Params {
        d: batch.d as u32,
        x_groups: grid(n).0,
        n,
        extra: t as u32,
        ..Params::default()
    });
    gpu.dispatch(
        enc,
        &gpu.kernels.choose,
        &[
            &batch.pots,
            &batch.cands,
            &batch.centers,
            &batch.chosen,
            &params,
            &batch.run_blocks,
            &batch.ncand,
        ],
        n,
    );
}

/// Records the lowering of each stepping run's distances by its new center, and the block sums.
fn add_centers(gpu: &Gpu, batch: &Batch, enc: &mut wgpu::CommandEncoder, first: bool) {
    for chunk in &batch.chunks {
        let params = gpu.uniform(&batch.chunk_params(chunk, u32::from(first)));
        gpu.dispatch(
            enc,
            &gpu.kernels.seed,
            &[
                &chunk.points,
                &batch.centers,
                &chunk.dist,
                &batch.block_sums,
                &params,
                &chunk.work,
                &batch.active,
            ],
            chunk.blocks.len() as u32,
        );
    }
}

/// D² sampling of each needy run's candidates from the last step's block sums and distances,
/// on the host in f64: the block first, then the point inside it. A run whose points all sit
/// on centers takes its first row that is not a center (no draw), as the CPU path does.
fn draw(
    batch: &Batch,
    need: &[bool],
    state: &Readback,
    centers: &[Vec<usize>],
    rngs: &mut [Rng],
) -> Vec<Vec<usize>> {
    let mut cands: Vec<Vec<usize>> = vec![Vec::new(); batch.runs.len()];
    for (r, run) in batch.runs.iter().enumerate() {
        if !need[r] {
            continue;
        }
        let block_sums: Vec<f64> = run
            .places
            .iter()
            .map(|p| state.sums[p.global] as f64)
            .collect();
        let total: f64 = block_sums.iter().sum();
        if total <= 0.0 {
            let free = (0..run.n).find(|i| !centers[r].contains(i));
            cands[r].extend(free);
            continue;
        }
        for _ in 0..seed_trials(run.k).min(MAX_TRIALS) {
            let mut rest = rngs[r].next_f64() * total;
            let mut b = 0;
            while b + 1 < block_sums.len() && rest >= block_sums[b] {
                rest -= block_sums[b];
                b += 1;
            }
            let p = run.places[b];
            let dist = &state.dist[p.chunk][p.start..p.start + p.count];
            let mut acc = 0.0f64;
            let at = dist
                .iter()
                .position(|&x| {
                    acc += (x as f64) * (x as f64);
                    acc > rest
                })
                .unwrap_or(p.count - 1);
            cands[r].push(b * BLOCK + at);
        }
    }
    cands
}
