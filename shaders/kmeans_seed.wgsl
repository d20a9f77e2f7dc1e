// One step of k-means++ seeding for a batch of runs, on the device: every point of a run that
// takes a center this step (its `ncand` is not 0) lowers its distance to the nearest chosen
// center (`dist`, one per slot of the batch) with the run's new center (`centers`, one row per
// run), and each block of 64 points writes the sum of its squared distances (`block`, indexed
// across the batch), in a fixed-order tree reduction (deterministic), from which
// kmeans_sample.wgsl draws the next candidates. `params.extra` says where the distance to the
// new center comes from: 0, computed from `centers`; 1, the same, and the new center is the
// run's first, so it replaces the distance; 2, the one kmeans_potential.wgsl stored for the
// chosen candidate (`cdist`, `chosen`), so the points are not read again.
// Blocks of runs that take no center this step only write their sums. Distances are the norm
// of the difference, so a point identical to a center is exactly 0 from it and is never drawn
// again (2 - 2 dot may round above 0). The block's points are staged through workgroup memory
// 32 dimensions at a time (under the 16 KiB of workgroup memory every device has), so that
// global reads are coalesced.

const TILE_D: u32 = 32u;
const STRIDE: u32 = 33u; // TILE_D + 1: no bank conflicts when a thread walks its own point

@group(0) @binding(0) var<storage, read> points: array<f32>;
@group(0) @binding(1) var<storage, read> centers: array<f32>; // one row per run
@group(0) @binding(2) var<storage, read_write> dist: array<f32>;
@group(0) @binding(3) var<storage, read_write> block: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read> work: array<Work>;
@group(0) @binding(6) var<storage, read> ncand: array<u32>; // per run: 0 if it takes no center
@group(0) @binding(7) var<storage, read> cdist: array<f32>; // at cdist_at
@group(0) @binding(8) var<storage, read> chosen: array<u32>; // per run: the candidate it took

var<workgroup> tile: array<f32, 2112>; // WG * STRIDE
var<workgroup> center: array<f32, 32>;
var<workgroup> squares: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let b = wg.x + wg.y * params.x_groups;
    if (b >= params.n) {
        return;
    }
    let w = work[b];
    let p = (params.base + b) * WG + lid; // the slot in the batch
    let live = lid < w.count;
    var di = 0.0;
    if (live) {
        di = dist[p];
    }
    if (params.extra == 2u) {
        if (live && ncand[w.run] != 0u) {
            let nd = cdist[cdist_at(chosen[w.run], w.start + lid, params.span)];
            if (nd < di) {
                di = nd;
                dist[p] = di;
            }
        }
    } else if (ncand[w.run] != 0u) {
        var e2 = 0.0;
        for (var d0 = 0u; d0 < params.d; d0 = d0 + TILE_D) {
            let width = min(TILE_D, params.d - d0);
            // Two points per pass: thread `lid` loads dimension d0 + lid % 32 of point lid / 32.
            let col = lid % TILE_D;
            if (col < width) {
                for (var q = lid / TILE_D; q < w.count; q = q + 2u) {
                    tile[q * STRIDE + col] = points[(w.start + q) * params.d + d0 + col];
                }
                if (lid < TILE_D) {
                    center[col] = centers[w.run * params.d + d0 + col];
                }
            }
            workgroupBarrier();
            if (live) {
                for (var dd = 0u; dd < width; dd = dd + 1u) {
                    let diff = tile[lid * STRIDE + dd] - center[dd];
                    e2 = e2 + diff * diff;
                }
            }
            workgroupBarrier();
        }
        let nd = sqrt(e2);
        if (live && (params.extra == 1u || nd < di)) {
            di = nd;
            dist[p] = di;
        }
    }
    squares[lid] = select(0.0, di * di, live);
    workgroupBarrier();
    for (var half = WG / 2u; half > 0u; half = half / 2u) {
        if (lid < half) {
            squares[lid] = squares[lid] + squares[lid + half];
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        block[params.base + b] = squares[0];
    }
}
