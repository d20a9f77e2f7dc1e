// Greedy k-means++ on the device, the choice: one workgroup per run that takes a center this
// step adds its blocks' potentials per candidate (kmeans_potential.wgsl; a fixed-order
// reduction, so deterministic), keeps the candidate with the lowest potential (the first on
// ties, as the CPU path does), writes its index to `chosen` and copies its row to `centers`,
// where kmeans_seed.wgsl takes it in the same submission. A run with one candidate takes it.
// Candidate rows per run: `params.extra`.

@group(0) @binding(0) var<storage, read> pot: array<f32>; // t per block of the batch
@group(0) @binding(1) var<storage, read> cands: array<f32>; // t rows per run
@group(0) @binding(2) var<storage, read_write> centers: array<f32>; // one row per run
@group(0) @binding(3) var<storage, read_write> chosen: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read> blocks: array<vec2<u32>>; // per run: first block, blocks
@group(0) @binding(6) var<storage, read> ncand: array<u32>; // per run: candidates (0: none)

var<workgroup> part: array<f32, 64>;
var<workgroup> shared_n: u32;
var<workgroup> shared_best: u32;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = wg.x + wg.y * params.x_groups;
    if (r >= params.n) {
        return;
    }
    if (lid == 0u) {
        shared_n = ncand[r];
    }
    let nc = workgroupUniformLoad(&shared_n);
    if (nc == 0u) {
        return;
    }
    let span = blocks[r];
    var best = 0u;
    var best_pot = 3.0e38;
    if (nc > 1u) {
        for (var j = 0u; j < nc; j = j + 1u) {
            var s = 0.0;
            for (var b = lid; b < span.y; b = b + WG) {
                s = s + pot[(span.x + b) * params.extra + j];
            }
            part[lid] = s;
            workgroupBarrier();
            for (var half = WG / 2u; half > 0u; half = half / 2u) {
                if (lid < half) {
                    part[lid] = part[lid] + part[lid + half];
                }
                workgroupBarrier();
            }
            if (lid == 0u && part[0] < best_pot) {
                best_pot = part[0];
                best = j;
            }
            workgroupBarrier();
        }
    }
    if (lid == 0u) {
        shared_best = best;
        chosen[r] = best;
    }
    let j = workgroupUniformLoad(&shared_best);
    for (var dd = lid; dd < params.d; dd = dd + WG) {
        centers[r * params.d + dd] = cands[(r * params.extra + j) * params.d + dd];
    }
}
