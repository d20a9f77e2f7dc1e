// Greedy k-means++ on the device, the choice: one workgroup per run that takes a center this
// step (its `ncand` is not 0) adds its blocks' potentials per candidate
// (kmeans_potential.wgsl; a fixed-order reduction, so deterministic), keeps the candidate with
// the lowest potential (the first on ties, as the CPU path does), copies its row to `centers`,
// where kmeans_seed.wgsl takes it in the same submission, records its point as the run's next
// seed (`seeds`, at the run's first centroid plus `taken`), counts it in `taken` and writes
// which candidate it was (`chosen`, for kmeans_seed.wgsl). A run with one candidate takes it.
// Candidate rows and slots per run: `params.extra`.

@group(0) @binding(0) var<storage, read> pot: array<f32>; // t per block of the batch
@group(0) @binding(1) var<storage, read> cands: array<f32>; // t rows per run
@group(0) @binding(2) var<storage, read_write> centers: array<f32>; // one row per run
@group(0) @binding(3) var<uniform> params: Params;
@group(0) @binding(4) var<storage, read> runs: array<RunInfo>;
@group(0) @binding(5) var<storage, read> ncand: array<u32>; // per run: candidates (0: none)
@group(0) @binding(6) var<storage, read> cand_slot: array<u32>; // t slots of the batch per run
@group(0) @binding(7) var<storage, read_write> taken: array<u32>; // per run: centers so far
@group(0) @binding(8) var<storage, read_write> seeds: array<u32>; // per centroid: its point
@group(0) @binding(9) var<storage, read_write> chosen: array<u32>; // per run

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
    let info = runs[r];
    var best = 0u;
    var best_pot = 3.0e38;
    if (nc > 1u) {
        for (var j = 0u; j < nc; j = j + 1u) {
            var s = 0.0;
            for (var b = lid; b < info.blocks; b = b + WG) {
                s = s + pot[(info.first_block + b) * params.extra + j];
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
        let tk = taken[r];
        seeds[info.c_off + tk] = cand_slot[r * params.extra + best] - info.first_block * WG;
        taken[r] = tk + 1u;
    }
    let j = workgroupUniformLoad(&shared_best);
    for (var dd = lid; dd < params.d; dd = dd + WG) {
        centers[r * params.d + dd] = cands[(r * params.extra + j) * params.d + dd];
    }
}
