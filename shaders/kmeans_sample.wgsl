// Greedy k-means++ on the device, the draw: one workgroup per run draws the run's candidates
// for its next center by D² sampling, with no round trip to the host. Each run's uniform
// numbers were drawn on the host from the run's random state, in the CPU path's order
// (`draws`, `trials` per step); a candidate is the point where the running sum of squared
// distances (`dist`) passes the number times their total, found block first (`block`, the
// block sums kmeans_seed.wgsl wrote) and then point by point. Sums are in `real`: f64 where
// the device has it (then the draws are the CPU path's), else f32 (src/kmeans/gpu/device.rs
// says which). Every sum runs in a fixed order, so a seed gives the same draws on a device.
// Writes each candidate's slot in the batch (`cand_slot`, `params.extra` per run) and the
// run's number of candidates (`ncand`; 0 once the run has its `k` centers). A run whose
// points all sit on its centers takes its first point that is not a center (no draw), as
// the CPU path does.

@group(0) @binding(0) var<storage, read> block: array<f32>; // per block of the batch
@group(0) @binding(1) var<storage, read> dist: array<f32>; // per slot of the batch
@group(0) @binding(2) var<storage, read> draws: array<real>;
@group(0) @binding(3) var<storage, read> runs: array<RunInfo>;
@group(0) @binding(4) var<storage, read> taken: array<u32>; // per run: centers so far
@group(0) @binding(5) var<storage, read> seeds: array<u32>; // per centroid: its point
@group(0) @binding(6) var<storage, read_write> cand_slot: array<u32>;
@group(0) @binding(7) var<storage, read_write> ncand: array<u32>;
@group(0) @binding(8) var<uniform> params: Params;

var<workgroup> part: array<real, 64>;
var<workgroup> before: array<real, 65>; // before[t]: the sum of part[..t]
var<workgroup> shared_taken: u32;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = wg.x + wg.y * params.x_groups;
    if (r >= params.n) {
        return;
    }
    let info = runs[r];
    if (lid == 0u) {
        shared_taken = taken[r];
    }
    let tk = workgroupUniformLoad(&shared_taken);
    if (tk >= info.k) {
        if (lid == 0u) {
            ncand[r] = 0u;
        }
        return;
    }
    // Thread t sums blocks [t per, (t + 1) per) of the run.
    let per = (info.blocks + WG - 1u) / WG;
    let lo = min(lid * per, info.blocks);
    let hi = min(lo + per, info.blocks);
    var s = real(0.0);
    for (var b = lo; b < hi; b = b + 1u) {
        s = s + real(block[info.first_block + b]);
    }
    part[lid] = s;
    workgroupBarrier();
    if (lid == 0u) {
        var acc = real(0.0);
        for (var t = 0u; t < WG; t = t + 1u) {
            before[t] = acc;
            acc = acc + part[t];
        }
        before[WG] = acc;
    }
    workgroupBarrier();
    let total = before[WG];
    let first_slot = info.first_block * WG;
    if (total <= real(0.0)) {
        // Every point sits on a center: the first point that is not one.
        if (lid == 0u) {
            var i = 0u;
            loop {
                var used = false;
                for (var c = 0u; c < tk; c = c + 1u) {
                    if (seeds[info.c_off + c] == i) {
                        used = true;
                        break;
                    }
                }
                if (!used || i + 1u >= info.n) {
                    break;
                }
                i = i + 1u;
            }
            cand_slot[r * params.extra] = first_slot + i;
            ncand[r] = 1u;
        }
        return;
    }
    if (lid < info.trials) {
        let goal = draws[info.draw_off + (tk - 1u) * info.trials + lid] * total;
        // The thread whose blocks hold the target (the last one that has blocks at most).
        let last = (info.blocks - 1u) / per;
        var t = 0u;
        while (t < last && before[t + 1u] <= goal) {
            t = t + 1u;
        }
        var rest = goal - before[t];
        var b = t * per;
        let end = min(b + per, info.blocks);
        loop {
            let sb = real(block[info.first_block + b]);
            if (rest < sb || b + 1u >= end) {
                break;
            }
            rest = rest - sb;
            b = b + 1u;
        }
        // The point inside the block.
        let count = min(WG, info.n - b * WG);
        let at = first_slot + b * WG;
        var acc = real(0.0);
        var pick = count - 1u;
        for (var i = 0u; i < count; i = i + 1u) {
            let x = real(dist[at + i]);
            acc = acc + x * x;
            if (acc > rest) {
                pick = i;
                break;
            }
        }
        cand_slot[r * params.extra + lid] = at + pick;
    }
    if (lid == 0u) {
        ncand[r] = info.trials;
    }
}
