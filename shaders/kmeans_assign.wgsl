// Nearest and runner-up centroid of each point by dot product (points and centroids are
// L2-normalized, so this is cosine), for a batch of K-Means runs at once. The host lays every
// run's points out in blocks of 64 (one workgroup each; a block never mixes runs) and gives
// each block its run's centroid range in `work`. The block's points and a tile of TILE_K
// centroids are staged through workgroup memory TILE_D dimensions at a time, both read from
// global memory in coalesced rows (a warp reads 32 consecutive values of one row), so each
// centroid value read serves the whole workgroup and each thread then reads its own point from
// workgroup memory (rows padded to STRIDE: no bank conflicts). Dispatch is 2-D (x_groups per
// row) so more than 65,535 workgroups fit; the host splits points into chunks that fit
// max_storage_buffer_binding_size.
// With `params.extra` set, a point whose nearest centroid changed adds one to its run's `changed`.
// Runs whose `running` flag is 0 (converged) are left as they are.

const TILE_K: u32 = 16u;
const TILE_D: u32 = 32u;
const STRIDE: u32 = 33u; // TILE_D + 1

@group(0) @binding(0) var<storage, read> points: array<f32>;
@group(0) @binding(1) var<storage, read> centroids: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<Assignment>;
@group(0) @binding(3) var<uniform> params: Params;
@group(0) @binding(4) var<storage, read> work: array<Work>;
@group(0) @binding(5) var<storage, read_write> changed: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read> running: array<u32>;

var<workgroup> ptile: array<f32, 2112>; // WG * STRIDE
var<workgroup> tile: array<f32, 512>; // TILE_K * TILE_D

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let block = wg.x + wg.y * params.x_groups;
    if (block >= params.n) {
        return;
    }
    let w = work[block];
    if (running[w.run] == 0u) {
        return;
    }
    let p = w.start + lid;
    let live = lid < w.count;
    var best = 0u;
    var second = 0xffffffffu;
    var s1 = -3.0e38;
    var s2 = -3.0e38;
    for (var c0 = 0u; c0 < w.c_n; c0 = c0 + TILE_K) {
        var acc: array<f32, 16>;
        for (var j = 0u; j < TILE_K; j = j + 1u) {
            acc[j] = 0.0;
        }
        for (var d0 = 0u; d0 < params.d; d0 = d0 + TILE_D) {
            let width = min(TILE_D, params.d - d0);
            // Two rows per pass: thread `lid` loads dimension d0 + lid % 32 of the block's
            // points and of the tile's centroids (0 past the run's last centroid).
            let col = lid % TILE_D;
            if (col < width) {
                for (var q = lid / TILE_D; q < w.count; q = q + 2u) {
                    ptile[q * STRIDE + col] = points[(w.start + q) * params.d + d0 + col];
                }
                for (var j = lid / TILE_D; j < TILE_K; j = j + 2u) {
                    let c = c0 + j;
                    var v = 0.0;
                    if (c < w.c_n) {
                        v = centroids[(w.c_off + c) * params.d + d0 + col];
                    }
                    tile[j * TILE_D + col] = v;
                }
            }
            workgroupBarrier();
            if (live) {
                for (var dd = 0u; dd < width; dd = dd + 1u) {
                    let x = ptile[lid * STRIDE + dd];
                    for (var j = 0u; j < TILE_K; j = j + 1u) {
                        acc[j] = acc[j] + x * tile[j * TILE_D + dd];
                    }
                }
            }
            workgroupBarrier();
        }
        if (live) {
            for (var j = 0u; j < TILE_K; j = j + 1u) {
                let c = c0 + j;
                if (c < w.c_n) {
                    let s = acc[j];
                    if (s > s1) {
                        s2 = s1;
                        second = best;
                        s1 = s;
                        best = c;
                    } else if (s > s2) {
                        s2 = s;
                        second = c;
                    }
                }
            }
        }
    }
    if (live) {
        if (params.extra == 1u && out[p].best != best) {
            atomicAdd(&changed[w.run], 1u);
        }
        out[p] = Assignment(best, second, s1, s2);
    }
}
