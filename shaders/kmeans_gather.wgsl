// Greedy k-means++ on the device: one workgroup per run copies the rows of the candidates
// kmeans_sample.wgsl drew (`cand_slot`, slots of the batch) that lie in this chunk into
// `cands` (`params.extra` rows per run), where kmeans_potential.wgsl and kmeans_choose.wgsl
// read them. Dispatched once per chunk: the chunk holds blocks `params.base` to
// `params.base + params.span`.

@group(0) @binding(0) var<storage, read> points: array<f32>; // this chunk's
@group(0) @binding(1) var<storage, read> cand_slot: array<u32>;
@group(0) @binding(2) var<storage, read> ncand: array<u32>;
@group(0) @binding(3) var<storage, read_write> cands: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = wg.x + wg.y * params.x_groups;
    if (r >= params.n) {
        return;
    }
    let lo = params.base * WG;
    let hi = (params.base + params.span) * WG;
    for (var j = 0u; j < ncand[r]; j = j + 1u) {
        let slot = cand_slot[r * params.extra + j];
        if (slot >= lo && slot < hi) {
            let src = (slot - lo) * params.d;
            let dst = (r * params.extra + j) * params.d;
            for (var dd = lid; dd < params.d; dd = dd + WG) {
                cands[dst + dd] = points[src + dd];
            }
        }
    }
}
