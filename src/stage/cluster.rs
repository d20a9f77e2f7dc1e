//! One level of the hierarchy: K-Means, merging of small clusters, and soft assignment (`@see` stubs).

use crate::kmeans::index::NearestIndex;
use crate::kmeans::{Job, KmeansBackend, KmeansParams, KmeansResult};
use crate::matrix::Matrix;
use crate::matrix::simd::dot;

/// The clusters of one level.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelClusters {
    /// Members of each cluster (indices into the level's inputs), most central first.
    pub groups: Vec<Vec<usize>>,
    /// Per cluster: members of other clusters that nearly belong here, smallest gap first.
    pub stubs: Vec<Vec<usize>>,
}

/// The knobs of one clustering level.
#[derive(Debug, Clone)]
pub struct LevelParams {
    pub k: usize,
    pub min_cluster_size: usize,
    pub tau: f32,
    pub max_stubs: usize,
    /// Target cluster size `p`; clusters above `1.5 p` are split locally.
    pub p: usize,
    /// Clusters of documents (level 1): a cluster of one joins its nearest neighbour, since a
    /// group that lists a single document is a hop that routes nothing.
    pub leaf: bool,
    pub kmeans: KmeansParams,
}

/// Number of clusters for a level of `n` nodes: `max(K, ceil(n/p))`, or `ceil(n/p)` when n <= K.
pub fn clusters_for(n: usize, p: usize, k_top: usize) -> usize {
    let by_p = n.div_ceil(p);
    if n <= k_top {
        by_p.max(1)
    } else {
        k_top.max(by_p).min(n)
    }
}

/// The merge threshold: `min_cluster_size`, but never above the level's average cluster size, so a
/// level of few nodes (n just above K) is not collapsed into one cluster.
pub fn effective_min_size(min_cluster_size: usize, n: usize, k: usize) -> usize {
    min_cluster_size.min((n / k.max(1)).max(1))
}

/// Clusters one level and applies the small-cluster merge and soft assignment. Also returns
/// the clusters' spread: the sum over members of 1 − the cosine to their cluster's mean.
pub fn cluster_level(
    data: &Matrix,
    params: &LevelParams,
    backend: &dyn KmeansBackend,
) -> (LevelClusters, f64) {
    let n = data.rows;
    let kp = KmeansParams {
        k: params.k.clamp(1, n.max(1)),
        ..params.kmeans.clone()
    };
    let (r, neighbours) = crate::kmeans::scaled::run_with_neighbours(backend, data, &kp);
    let k = r.centroids.rows;
    let mut sizes = vec![0usize; k];
    for &a in &r.assign {
        sizes[a as usize] += 1;
    }
    // Clusters below the minimum dissolve into the nearest surviving centroid.
    let min_size = effective_min_size(params.min_cluster_size, n, k);
    let mut alive: Vec<bool> = sizes.iter().map(|&s| s >= min_size).collect();
    if !alive.iter().any(|&a| a) {
        let biggest = (0..k)
            .max_by_key(|&j| (sizes[j], std::cmp::Reverse(j)))
            .unwrap_or(0);
        alive[biggest] = true;
    }
    let survivors: Vec<usize> = (0..k).filter(|&j| alive[j]).collect();
    let (assign, top1, second) = place_on_survivors(
        data,
        &r,
        &alive,
        &survivors,
        neighbours.as_deref(),
        backend,
        kp.seed,
    );
    let index_of: Vec<Option<usize>> = {
        let mut v = vec![None; k];
        for (pos, &j) in survivors.iter().enumerate() {
            v[j] = Some(pos);
        }
        v
    };
    let mut groups: Vec<Vec<(f32, usize)>> = vec![Vec::new(); survivors.len()];
    let mut stubs: Vec<Vec<(f32, usize)>> = vec![Vec::new(); survivors.len()];
    for i in 0..n {
        let g = index_of[assign[i]].expect("assigned to a survivor");
        groups[g].push((top1[i], i));
        if let Some((j, c2)) = second[i] {
            let gap = top1[i] - c2;
            if let Some(h) = index_of[j].filter(|_| gap < params.tau && j != assign[i]) {
                stubs[h].push((gap, i));
            }
        }
    }
    let order = |v: &mut Vec<(f32, usize)>, desc: bool| {
        v.sort_by(|a, b| {
            let c = if desc {
                b.0.total_cmp(&a.0)
            } else {
                a.0.total_cmp(&b.0)
            };
            c.then(a.1.cmp(&b.1))
        });
    };
    let groups = groups
        .into_iter()
        .map(|mut g| {
            order(&mut g, true);
            g.into_iter().map(|x| x.1).collect()
        })
        .collect();
    let stubs = stubs
        .into_iter()
        .map(|mut s| {
            order(&mut s, false);
            s.into_iter().take(params.max_stubs).map(|x| x.1).collect()
        })
        .collect();
    let mut lc = split_oversized(data, LevelClusters { groups, stubs }, params, backend);
    if params.leaf {
        absorb_singletons(data, &mut lc, backend);
    }
    let spread = lc
        .groups
        .iter_mut()
        .map(|g| order_by_centrality(g, data))
        .sum();
    (lc, spread)
}

/// Each point's cluster, its cosine and its runner-up among the surviving clusters (`alive`,
/// listed in `survivors`).
/// A point whose cluster and runner-up survive keeps them. Any other point is placed again by
/// a scan of all survivors when that is cheap; else among its cluster's nearest centroids
/// (`neighbours`, which the coarse-to-fine path found anyway) when at least two of them
/// survive, and through an index of the survivors when not.
fn place_on_survivors(
    data: &Matrix,
    r: &KmeansResult,
    alive: &[bool],
    survivors: &[usize],
    neighbours: Option<&[Vec<u32>]>,
    backend: &dyn KmeansBackend,
    seed: u64,
) -> Placed {
    let n = data.rows;
    let mut placed: Placed = (
        r.assign.iter().map(|&a| a as usize).collect(),
        r.top1.clone(),
        r.second
            .iter()
            .map(|s| s.map(|(j, c)| (j as usize, c)))
            .collect(),
    );
    let moved: Vec<usize> = (0..n)
        .filter(|&i| {
            let a = r.assign[i] as usize;
            !alive[a] || r.second[i].is_some_and(|(j, _)| !alive[j as usize])
        })
        .collect();
    let neighbours =
        neighbours.filter(|_| !NearestIndex::scans_whole(survivors.len(), moved.len()));
    let mut rest: Vec<usize> = Vec::new();
    for &i in &moved {
        let a = r.assign[i];
        let near = neighbours.map(|g| {
            let mut scored: Vec<(f32, usize)> = std::iter::once(&a)
                .chain(&g[a as usize])
                .map(|&j| j as usize)
                .filter(|&j| alive[j])
                .map(|j| (dot(data.row(i), r.centroids.row(j)), j))
                .collect();
            scored.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
            scored
        });
        match near {
            Some(scored) if scored.len() >= 2 => {
                placed.0[i] = scored[0].1;
                placed.1[i] = scored[0].0;
                placed.2[i] = Some((scored[1].1, scored[1].0));
            }
            _ => rest.push(i),
        }
    }
    if rest.is_empty() {
        return placed;
    }
    let index = NearestIndex::for_queries(backend, &r.centroids, survivors, rest.len(), seed);
    for i in rest {
        let (best, c1, sec) = index.best_two(data.row(i));
        placed.0[i] = best;
        placed.1[i] = c1;
        placed.2[i] = sec;
    }
    placed
}

/// Per point: its cluster, its cosine to it, and its runner-up with that one's cosine.
type Placed = (Vec<usize>, Vec<f32>, Vec<Option<(usize, f32)>>);

/// Sorts members by cosine to their normalized mean, most central first (ties by index), and
/// returns the sum of 1 − those cosines (how spread the group is). The order depends on the
/// members alone, so a cold build and a warm start agree on it.
pub fn order_by_centrality(members: &mut [usize], data: &Matrix) -> f64 {
    let c = data.centroid(members);
    let mut scored: Vec<(f32, usize)> =
        members.iter().map(|&m| (dot(&c, data.row(m)), m)).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    for (slot, (_, m)) in members.iter_mut().zip(&scored) {
        *slot = *m;
    }
    scored.iter().map(|(cos, _)| 1.0 - *cos as f64).sum()
}

/// Splits every cluster larger than `1.5 p` with a local K-Means into `ceil(size / p)` parts, so
/// no navigation file grows far past `p` rows. Identical vectors fall back to chunks of `p`.
/// The K-Means runs of each round (every cluster still too large) go to the backend as one
/// batch; the result is what splitting the clusters one by one gives.
fn split_oversized(
    data: &Matrix,
    lc: LevelClusters,
    params: &LevelParams,
    backend: &dyn KmeansBackend,
) -> LevelClusters {
    let items: Vec<Item> = lc.groups.into_iter().zip(lc.stubs).collect();
    let (groups, stubs) = split_round(data, items, params, backend)
        .into_iter()
        .flatten()
        .unzip();
    LevelClusters { groups, stubs }
}

/// A cluster: its members and its stubs.
type Item = (Vec<usize>, Vec<usize>);

/// One round of [`split_oversized`]: what each cluster becomes, in order. A cluster no larger
/// than `1.5 p` stays; each larger one is split (all of this round's in one batch) and its
/// parts go through the next round.
fn split_round(
    data: &Matrix,
    items: Vec<Item>,
    params: &LevelParams,
    backend: &dyn KmeansBackend,
) -> Vec<Vec<Item>> {
    let max_size = params.p + params.p / 2;
    let rows: Vec<Vec<u32>> = items
        .iter()
        .filter(|(members, _)| members.len() > max_size)
        .map(|(members, _)| members.iter().map(|&m| m as u32).collect())
        .collect();
    if rows.is_empty() {
        return items.into_iter().map(|item| vec![item]).collect();
    }
    let jobs: Vec<Job> = rows
        .iter()
        .map(|r| Job {
            rows: Some(r),
            params: KmeansParams {
                k: r.len().div_ceil(params.p),
                ..params.kmeans.clone()
            },
        })
        .collect();
    let mut runs = backend.run_batch(data, &jobs).into_iter();
    // The parts of every large cluster, and how many of them are each cluster's.
    let mut parts: Vec<Item> = Vec::new();
    let mut counts: Vec<Option<usize>> = Vec::with_capacity(items.len());
    for (members, stubs) in &items {
        if members.len() > max_size {
            let r = runs.next().expect("one result per large cluster");
            let before = parts.len();
            parts.extend(parts_of(data, members, stubs, &r, params.p));
            counts.push(Some(parts.len() - before));
        } else {
            counts.push(None);
        }
    }
    // What the next round makes of each part, in order: each large cluster takes its own.
    let mut made = split_round(data, parts, params, backend).into_iter();
    items
        .into_iter()
        .zip(counts)
        .map(|(item, count)| match count {
            None => vec![item],
            Some(n) => made.by_ref().take(n).flatten().collect(),
        })
        .collect()
}

/// The parts a local K-Means (`r`, over `members` in order) makes of a cluster, in output
/// order, each most central first; a stub goes to the part whose first member (in the
/// cluster's order) is nearest. With no structure to split on (one part), runs of `p` members, the last run first
/// and the first (with the stubs) last.
fn parts_of(
    data: &Matrix,
    members: &[usize],
    stubs: &[usize],
    r: &crate::kmeans::KmeansResult,
    p: usize,
) -> Vec<Item> {
    let mut parts: Vec<Vec<(f32, usize)>> = vec![Vec::new(); r.centroids.rows];
    for (pos, &m) in members.iter().enumerate() {
        parts[r.assign[pos] as usize].push((r.top1[pos], m));
    }
    parts.retain(|p| !p.is_empty());
    if parts.len() < 2 {
        let runs: Vec<Item> = members
            .chunks(p)
            .enumerate()
            .map(|(i, chunk)| {
                let s = if i == 0 { stubs.to_vec() } else { Vec::new() };
                (chunk.to_vec(), s)
            })
            .collect();
        return runs.into_iter().rev().collect();
    }
    let mut part_stubs: Vec<Vec<usize>> = vec![Vec::new(); parts.len()];
    for &st in stubs {
        let best = (0..parts.len())
            .max_by(|&a, &b| {
                let ca = dot(data.row(st), data.row(parts[a][0].1));
                let cb = dot(data.row(st), data.row(parts[b][0].1));
                ca.total_cmp(&cb).then(b.cmp(&a))
            })
            .unwrap_or(0);
        part_stubs[best].push(st);
    }
    parts
        .into_iter()
        .zip(part_stubs)
        .map(|(mut part, st)| {
            part.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            (part.into_iter().map(|x| x.1).collect(), st)
        })
        .collect()
}

/// Moves the member of every one-member cluster into the cluster whose centroid is nearest (its
/// stubs go along), as long as more than one cluster is left.
fn absorb_singletons(data: &Matrix, lc: &mut LevelClusters, backend: &dyn KmeansBackend) {
    let lone: Vec<usize> = (0..lc.groups.len())
        .filter(|&g| lc.groups[g].len() == 1)
        .collect();
    if lone.is_empty() || lone.len() == lc.groups.len() {
        return;
    }
    // Targets are the clusters of two or more, by their centroids before any move (so the
    // result does not depend on the order of the moves).
    let mut centroids = Matrix::new(data.dims);
    for g in &lc.groups {
        centroids.push(&data.centroid(g));
    }
    let targets: Vec<usize> = (0..lc.groups.len())
        .filter(|&g| lc.groups[g].len() > 1)
        .collect();
    let index = NearestIndex::for_queries(backend, &centroids, &targets, lone.len(), 0);
    for &g in &lone {
        let m = lc.groups[g][0];
        let (t, _, _) = index.best_two(data.row(m));
        lc.groups[t].push(m);
        lc.groups[g].clear();
        let stubs = std::mem::take(&mut lc.stubs[g]);
        for s in stubs {
            if !lc.groups[t].contains(&s) && !lc.stubs[t].contains(&s) {
                lc.stubs[t].push(s);
            }
        }
        lc.stubs[t].retain(|&s| s != m);
    }
    let keep: Vec<bool> = lc.groups.iter().map(|g| !g.is_empty()).collect();
    let mut k = keep.iter();
    lc.groups.retain(|_| *k.next().expect("one flag per group"));
    let mut k = keep.iter();
    lc.stubs.retain(|_| *k.next().expect("one flag per group"));
}

#[cfg(test)]
mod tests;
