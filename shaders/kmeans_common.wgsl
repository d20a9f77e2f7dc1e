// What every K-Means kernel shares (prepended to each by src/kmeans/gpu/device.rs): the params
// uniform, the work table of blocks, the run table, and a point's assignment. A batch lays
// every run's points out in blocks of 64 (one workgroup each; a block never mixes runs).

const WG: u32 = 64u;

struct Params {
    d: u32,        // dimensions
    x_groups: u32, // workgroups per row of the 2-D dispatch
    n: u32,        // blocks in this chunk (centroids for kmeans_finish, runs for kmeans_choose)
    extra: u32,    // what the kernel says
    base: u32,     // the chunk's first block in the batch
    span: u32,     // the chunk's blocks (for kernels dispatched per run and chunk)
    pad2: u32,
    pad3: u32,
}

// Where candidate `j`'s distance to the point in slot `slot` of a chunk of `span` blocks is
// kept (kmeans_potential.wgsl writes it, kmeans_seed.wgsl reads the chosen one's):
// candidate-major, so a block's 64 points are side by side.
fn cdist_at(j: u32, slot: u32, span: u32) -> u32 {
    return j * span * WG + slot;
}

// One block of at most 64 points of one run.
struct Work {
    start: u32, // first point, in this chunk
    count: u32, // points in the block
    c_off: u32, // the run's first centroid
    c_n: u32,   // the run's centroids
    run: u32,   // the run
}

// One run of the batch, for the kernels that work per run.
struct RunInfo {
    first_block: u32, // its first block in the batch (its blocks are consecutive)
    blocks: u32,
    n: u32,           // its points
    k: u32,           // its centroids
    c_off: u32,       // its first centroid in the batch
    trials: u32,      // candidates per greedy k-means++ step
    draw_off: u32,    // its first uniform number in kmeans_sample.wgsl's `draws`
    pad: u32,
}

struct Assignment {
    best: u32,
    second: u32,
    s1: f32,
    s2: f32,
}
