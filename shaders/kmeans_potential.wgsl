// Greedy k-means++ on the device: the potential each of a run's `t` candidate centers would
// leave (the sum over the run's points of min(dist, distance to the candidate)²), as one sum
// per block of 64 points and candidate (`pot`, indexed across the batch, block-major), in a
// fixed-order tree reduction (deterministic). kmeans_choose.wgsl adds a run's blocks and keeps
// the candidate with the lowest potential. Candidates are `t` (`params.extra`) rows per run in
// `cands`; runs whose `ncand` is 0 take no center this step and are skipped. `dist` holds one
// distance per slot of the batch. Each candidate's distance to each point is kept (`cdist`,
// at `cdist_at`) for kmeans_seed.wgsl to lower the distances by the chosen one without reading
// the points again. The block's points are staged through workgroup memory 32 dimensions at a
// time (under the 16 KiB of workgroup memory every device has), so that global reads are
// coalesced.

const MAX_T: u32 = 16u;
const TILE_D: u32 = 32u;
const STRIDE: u32 = 33u;

@group(0) @binding(0) var<storage, read> points: array<f32>;
@group(0) @binding(1) var<storage, read> cands: array<f32>; // t rows per run
@group(0) @binding(2) var<storage, read> dist: array<f32>;
@group(0) @binding(3) var<storage, read_write> pot: array<f32>; // t per block
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read> work: array<Work>;
@group(0) @binding(6) var<storage, read> ncand: array<u32>;
@group(0) @binding(7) var<storage, read_write> cdist: array<f32>;

var<workgroup> tile: array<f32, 2112>; // WG * STRIDE
var<workgroup> ctile: array<f32, 512>; // MAX_T * TILE_D
var<workgroup> squares: array<f32, 1024>; // MAX_T * WG

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let b = wg.x + wg.y * params.x_groups;
    if (b >= params.n) {
        return;
    }
    let w = work[b];
    if (ncand[w.run] == 0u) {
        return;
    }
    let p = (params.base + b) * WG + lid; // the slot in the batch
    let live = lid < w.count;
    var di = 0.0;
    if (live) {
        di = dist[p];
    }
    var e2: array<f32, 16>;
    for (var j = 0u; j < MAX_T; j = j + 1u) {
        e2[j] = 0.0;
    }
    for (var d0 = 0u; d0 < params.d; d0 = d0 + TILE_D) {
        let width = min(TILE_D, params.d - d0);
        // Two points (two candidates) per pass: thread `lid` loads dimension d0 + lid % 32.
        let col = lid % TILE_D;
        if (col < width) {
            for (var q = lid / TILE_D; q < w.count; q = q + 2u) {
                tile[q * STRIDE + col] = points[(w.start + q) * params.d + d0 + col];
            }
            for (var j = lid / TILE_D; j < params.extra; j = j + 2u) {
                ctile[j * TILE_D + col] = cands[(w.run * params.extra + j) * params.d + d0 + col];
            }
        }
        workgroupBarrier();
        if (live) {
            for (var dd = 0u; dd < width; dd = dd + 1u) {
                let x = tile[lid * STRIDE + dd];
                // A constant trip count, so a compiler can unroll it and keep `e2` in
                // registers (indexed by a loop bound only known at run time, it would go
                // to memory).
                for (var j = 0u; j < MAX_T; j = j + 1u) {
                    if (j >= params.extra) {
                        break;
                    }
                    let diff = x - ctile[j * TILE_D + dd];
                    e2[j] = e2[j] + diff * diff;
                }
            }
        }
        workgroupBarrier();
    }
    for (var j = 0u; j < MAX_T; j = j + 1u) {
        if (j >= params.extra) {
            break;
        }
        let e = sqrt(e2[j]);
        if (live) {
            cdist[cdist_at(j, w.start + lid, params.span)] = e;
        }
        let nd = min(e, di);
        squares[j * WG + lid] = select(0.0, nd * nd, live);
    }
    workgroupBarrier();
    for (var half = WG / 2u; half > 0u; half = half / 2u) {
        if (lid < half) {
            for (var j = 0u; j < params.extra; j = j + 1u) {
                squares[j * WG + lid] = squares[j * WG + lid] + squares[j * WG + lid + half];
            }
        }
        workgroupBarrier();
    }
    if (lid < params.extra) {
        pot[(params.base + b) * params.extra + lid] = squares[lid * WG];
    }
}
