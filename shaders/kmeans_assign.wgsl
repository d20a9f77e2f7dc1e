// Nearest and runner-up centroid of each point by dot product (points and centroids are
// L2-normalized, so this is cosine). One thread per point; centroids are staged through
// workgroup memory in tiles of TILE_K centroids x TILE_D dimensions, so each centroid value
// read from global memory serves the whole workgroup. Dispatch is 2-D (x_groups per row)
// so more than 65,535 workgroups fit; the host splits points into chunks that fit
// max_storage_buffer_binding_size.

const WG: u32 = 64u;
const TILE_K: u32 = 16u;
const TILE_D: u32 = 64u;

struct Params {
    n: u32,        // points in this chunk
    k: u32,        // centroids
    d: u32,        // dimensions
    x_groups: u32, // workgroups per row of the 2-D dispatch
}

struct Assignment {
    best: u32,
    second: u32,
    s1: f32,
    s2: f32,
}

@group(0) @binding(0) var<storage, read> points: array<f32>;
@group(0) @binding(1) var<storage, read> centroids: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<Assignment>;
@group(0) @binding(3) var<uniform> params: Params;

var<workgroup> tile: array<f32, 1024>; // TILE_K * TILE_D

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = wg.x + wg.y * params.x_groups;
    let p = group * WG + lid;
    let live = p < params.n;
    var best = 0u;
    var second = 0xffffffffu;
    var s1 = -3.0e38;
    var s2 = -3.0e38;
    for (var c0 = 0u; c0 < params.k; c0 = c0 + TILE_K) {
        var acc: array<f32, 16>;
        for (var j = 0u; j < TILE_K; j = j + 1u) {
            acc[j] = 0.0;
        }
        for (var d0 = 0u; d0 < params.d; d0 = d0 + TILE_D) {
            // Each of the 64 threads stages one dimension of each of the TILE_K centroids.
            for (var j = 0u; j < TILE_K; j = j + 1u) {
                let c = c0 + j;
                let dd = d0 + lid;
                var v = 0.0;
                if (c < params.k && dd < params.d) {
                    v = centroids[c * params.d + dd];
                }
                tile[j * TILE_D + lid] = v;
            }
            workgroupBarrier();
            if (live) {
                let width = min(TILE_D, params.d - d0);
                for (var dd = 0u; dd < width; dd = dd + 1u) {
                    let x = points[p * params.d + d0 + dd];
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
                if (c < params.k) {
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
        out[p] = Assignment(best, second, s1, s2);
    }
}
