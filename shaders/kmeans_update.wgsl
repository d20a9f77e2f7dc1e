// The centroid update of a batch of K-Means runs, on the device: (1) here, each point is added
// to its cluster's sum and count; (2) kmeans_finish.wgsl turns every sum into the cluster's unit-length
// mean. Sums are 64-bit fixed point (2^24 per unit, two u32 words with carry) added with
// integer atomics, which are exact and so do not depend on the order the device runs in:
// the result is deterministic and as precise as the f32 inputs. A point's components are at
// most 1 in magnitude (unit vectors), so a block of 64 points sums to under 2^31 in 32 bits
// before it is added. Centroids are indexed across the batch (a run's cluster c is
// c_off + c). A cluster without members is left to the finish step; runs whose `running` flag is 0
// are left as they are.

const SCALE: f32 = 16777216.0; // 2^24

@group(0) @binding(0) var<storage, read> points: array<f32>;
@group(0) @binding(1) var<storage, read> assigned: array<Assignment>;
@group(0) @binding(2) var<storage, read_write> acc: array<atomic<u32>>; // (lo, hi) per centroid and dimension
@group(0) @binding(3) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read> work: array<Work>;
@group(0) @binding(6) var<storage, read> running: array<u32>;

var<workgroup> cluster: array<u32, 64>;

// Adds a signed 32-bit value to the 64-bit sum at word pair `i`: the low word's wrap-arounds
// are carried into the high word one by one, so the total is exact in any order.
fn add64(i: u32, v: i32) {
    let lo = bitcast<u32>(v);
    let old = atomicAdd(&acc[2u * i], lo);
    let carry = select(0u, 1u, old + lo < old);
    let hi = select(0u, 0xffffffffu, v < 0) + carry;
    if (hi != 0u) {
        atomicAdd(&acc[2u * i + 1u], hi);
    }
}

@compute @workgroup_size(64)
fn sums(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let block = wg.x + wg.y * params.x_groups;
    if (block >= params.n) {
        return;
    }
    let w = work[block];
    if (running[w.run] == 0u) {
        return;
    }
    if (lid < w.count) {
        cluster[lid] = w.c_off + assigned[w.start + lid].best;
    }
    workgroupBarrier();
    // Thread 0 counts; every thread sums its dimensions over the block's points, adding a run
    // of points of one cluster at once.
    if (lid == 0u) {
        var run_len = 0u;
        for (var i = 0u; i < w.count; i = i + 1u) {
            run_len = run_len + 1u;
            if (i + 1u == w.count || cluster[i + 1u] != cluster[i]) {
                atomicAdd(&counts[cluster[i]], run_len);
                run_len = 0u;
            }
        }
    }
    for (var dd = lid; dd < params.d; dd = dd + WG) {
        var s = 0i;
        for (var i = 0u; i < w.count; i = i + 1u) {
            s = s + i32(round(points[(w.start + i) * params.d + dd] * SCALE));
            if (i + 1u == w.count || cluster[i + 1u] != cluster[i]) {
                add64(cluster[i] * params.d + dd, s);
                s = 0i;
            }
        }
    }
}
