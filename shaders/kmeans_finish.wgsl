// The second half of the device-side centroid update (see kmeans_update.wgsl): each cluster's
// 64-bit fixed-point sum becomes its unit-length mean, one workgroup per centroid (a fixed-order
// tree reduction of the squares, so the result is deterministic). A cluster without members,
// or whose sum is zero, keeps its old centroid; runs whose `running` flag is 0 are left alone.

const SCALE: f32 = 16777216.0; // 2^24

@group(0) @binding(0) var<storage, read> total: array<u32>; // (lo, hi) per centroid and dimension
@group(0) @binding(1) var<storage, read> members: array<u32>;
@group(0) @binding(2) var<storage, read_write> centroids: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;
@group(0) @binding(4) var<storage, read> owner: array<u32>; // centroid -> run
@group(0) @binding(5) var<storage, read> running: array<u32>;

var<workgroup> squares: array<f32, 64>;

// The value of the 64-bit fixed-point sum at word pair `i`, in units.
fn value(i: u32) -> f32 {
    var lo = total[2u * i];
    var hi = total[2u * i + 1u];
    let negative = (hi & 0x80000000u) != 0u;
    if (negative) {
        // Two's complement negation of (hi, lo).
        lo = ~lo + 1u;
        hi = ~hi + select(0u, 1u, lo == 0u);
    }
    let magnitude = (f32(hi) * 4294967296.0 + f32(lo)) / SCALE;
    return select(magnitude, -magnitude, negative);
}

@compute @workgroup_size(64)
fn finish(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let c = wg.x + wg.y * params.x_groups;
    if (c >= params.n) {
        return;
    }
    if (running[owner[c]] == 0u || members[c] == 0u) {
        return;
    }
    var ss = 0.0;
    for (var dd = lid; dd < params.d; dd = dd + WG) {
        let v = value(c * params.d + dd);
        ss = ss + v * v;
    }
    squares[lid] = ss;
    workgroupBarrier();
    for (var half = WG / 2u; half > 0u; half = half / 2u) {
        if (lid < half) {
            squares[lid] = squares[lid] + squares[lid + half];
        }
        workgroupBarrier();
    }
    let norm = sqrt(squares[0]);
    if (norm > 0.0) {
        for (var dd = lid; dd < params.d; dd = dd + WG) {
            centroids[c * params.d + dd] = value(c * params.d + dd) / norm;
        }
    }
}
