//! Lloyd iterations of a resident batch on the device: each iteration is one round trip that
//! turns the cluster sums into centroids, assigns every point of the runs still iterating,
//! counts the changed assignments per run and sums the clusters again; only the per-run change
//! counts and the per-cluster member counts come back. A cluster left empty takes the point its
//! run serves worst (as on the CPU), which costs one extra read of the assignments.

use super::batch::{Assignment, Batch, Params};
use super::device::{Gpu, GpuError, cast, grid};
use crate::kmeans::{KmeansParams, KmeansResult};
use crate::matrix::Matrix;

/// Runs Lloyd's algorithm from `seeds` (rows of each run's points) until each run's share of
/// changed assignments is at most its `tol`, or `max_iter` iterations.
pub fn lloyd(
    gpu: &Gpu,
    batch: &Batch,
    seeds: &[Vec<usize>],
    params: &[&KmeansParams],
) -> Result<Vec<KmeansResult>, GpuError> {
    let n_runs = batch.runs.len();
    for (r, run) in batch.runs.iter().enumerate() {
        let rows: Vec<f32> = seeds[r]
            .iter()
            .flat_map(|&s| run.row(s).iter().copied())
            .collect();
        batch.write_centroid(gpu, r, 0, &rows);
    }
    let mut active = vec![true; n_runs];
    batch.set_active(gpu, &active);
    let mut iterations = vec![0usize; n_runs];
    let counts_bytes = (batch.c_total * 4) as u64;
    let first = gpu.round(
        |enc| {
            assign(gpu, batch, enc, false);
            sums(gpu, batch, enc);
        },
        &[(&batch.counts, 0, counts_bytes)],
    )?;
    let mut counts: Vec<u32> = cast(&first[0]);
    while active.iter().any(|&a| a) {
        for r in (0..n_runs).filter(|&r| active[r]) {
            iterations[r] += 1;
        }
        refill_empty(gpu, batch, &active, &counts)?;
        let got = gpu.round(
            |enc| {
                finish(gpu, batch, enc);
                enc.clear_buffer(&batch.changed, 0, None);
                assign(gpu, batch, enc, true);
                sums(gpu, batch, enc);
            },
            &[
                (&batch.changed, 0, (n_runs * 4) as u64),
                (&batch.counts, 0, counts_bytes),
            ],
        )?;
        let changed: Vec<u32> = cast(&got[0]);
        counts = cast(&got[1]);
        for r in 0..n_runs {
            let n = batch.runs[r].n as f64;
            if active[r]
                && ((changed[r] as f64) <= params[r].tol * n || iterations[r] >= params[r].max_iter)
            {
                active[r] = false;
            }
        }
        batch.set_active(gpu, &active);
    }
    let assigned = batch.read_assignments(gpu)?;
    let centroids = batch.read_centroids(gpu)?;
    Ok(assigned
        .into_iter()
        .zip(centroids)
        .zip(iterations)
        .map(|((a, c), it)| result(a, c, it))
        .collect())
}

/// The result of a run from its final assignments and centroids.
fn result(assigned: Vec<Assignment>, centroids: Matrix, iterations: usize) -> KmeansResult {
    KmeansResult {
        centroids,
        assign: assigned.iter().map(|a| a.best).collect(),
        top1: assigned.iter().map(|a| a.s1).collect(),
        second: assigned.iter().map(Assignment::runner_up).collect(),
        inertia: assigned.iter().map(|a| 1.0 - a.s1 as f64).sum(),
        iterations,
    }
}

/// Records the assignment of every point of the active runs (counting changes with `count`).
pub fn assign(gpu: &Gpu, batch: &Batch, enc: &mut wgpu::CommandEncoder, count: bool) {
    for chunk in &batch.chunks {
        let params = gpu.uniform(&batch.chunk_params(chunk, u32::from(count)));
        gpu.dispatch(
            enc,
            &gpu.kernels.assign,
            &[
                &chunk.points,
                &batch.centroids,
                &chunk.out,
                &params,
                &chunk.work,
                &batch.changed,
                &batch.active,
            ],
            chunk.blocks.len() as u32,
        );
    }
}

/// Records the clearing and filling of the cluster sums and counts of the active runs.
pub fn sums(gpu: &Gpu, batch: &Batch, enc: &mut wgpu::CommandEncoder) {
    enc.clear_buffer(&batch.acc, 0, None);
    enc.clear_buffer(&batch.counts, 0, None);
    for chunk in &batch.chunks {
        let params = gpu.uniform(&batch.chunk_params(chunk, 0));
        gpu.dispatch(
            enc,
            &gpu.kernels.sums,
            &[
                &chunk.points,
                &chunk.out,
                &batch.acc,
                &batch.counts,
                &params,
                &chunk.work,
                &batch.active,
            ],
            chunk.blocks.len() as u32,
        );
    }
}

/// Records the turning of the sums into centroids (clusters with members, active runs).
pub fn finish(gpu: &Gpu, batch: &Batch, enc: &mut wgpu::CommandEncoder) {
    let n = batch.c_total as u32;
    let params = gpu.uniform(&Params {
        d: batch.d as u32,
        x_groups: grid(n).0,
        n,
        ..Params::default()
    });
    gpu.dispatch(
        enc,
        &gpu.kernels.finish,
        &[
            &batch.acc,
            &batch.counts,
            &batch.centroids,
            &params,
            &batch.owner,
            &batch.active,
        ],
        n,
    );
}

/// Gives each empty cluster of an active run the point its run serves worst (lowest cosine to
/// its centroid, ties by index) among the points of clusters with more than one member, as the
/// CPU path does. Reads the assignments only when a cluster is empty.
fn refill_empty(gpu: &Gpu, batch: &Batch, active: &[bool], counts: &[u32]) -> Result<(), GpuError> {
    let empty: Vec<Vec<usize>> = batch
        .runs
        .iter()
        .enumerate()
        .map(|(r, run)| {
            if !active[r] {
                return Vec::new();
            }
            (0..run.k).filter(|&c| counts[run.c_off + c] == 0).collect()
        })
        .collect();
    if empty.iter().all(Vec::is_empty) {
        return Ok(());
    }
    let assigned = batch.read_assignments(gpu)?;
    for (r, run) in batch.runs.iter().enumerate() {
        if empty[r].is_empty() {
            continue;
        }
        let mut far: Vec<(f32, usize)> = assigned[r]
            .iter()
            .enumerate()
            .filter(|(_, a)| counts[run.c_off + a.best as usize] > 1)
            .map(|(i, a)| (a.s1, i))
            .collect();
        far.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (&c, (_, i)) in empty[r].iter().zip(far) {
            batch.write_centroid(gpu, r, c, run.row(i));
        }
    }
    Ok(())
}
