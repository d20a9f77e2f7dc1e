//! Warm starts: the previous build's tree (a snapshot read back from the output's `tree.json` and
//! `state.jsonl`) updated for added, edited and deleted documents, so untouched clusters keep
//! their members and their folder names.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::ingest::Document;
use crate::kmeans::{KmeansBackend, KmeansParams};
use crate::matrix::Matrix;
use crate::matrix::simd::dot;
use crate::stage::cluster::order_by_centrality;
use crate::tree::{Node, Tree};

/// The shape of a built tree, by document id and folder name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// `Config::tree_hash` of the build: a warm start needs the same knobs and embedder.
    pub tree_hash: String,
    pub levels: usize,
    pub roots: Vec<usize>,
    pub nodes: Vec<SnapNode>,
    /// Content hash per document id: a warm start re-places the `@see` stubs of edited documents.
    #[serde(default)]
    pub doc_hashes: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapNode {
    pub level: usize,
    pub folder: String,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    pub docs: Vec<String>,
    pub see_also: Vec<String>,
}

/// What a warm start changed.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct WarmStats {
    pub added: usize,
    pub deleted: usize,
    pub split: usize,
    pub merged: usize,
}

/// Why a build starts from scratch instead.
pub type ColdReason = String;

/// Updates the previous tree for the current documents, or says why a full rebuild is needed.
pub fn warm_start(
    snap: &Snapshot,
    docs: &[Document],
    vectors: &Matrix,
    config: &Config,
    kmeans: &dyn KmeansBackend,
) -> Result<(Tree, WarmStats), ColdReason> {
    if snap.tree_hash != config.tree_hash() {
        return Err("tree, embedding or K-Means settings changed".into());
    }
    let index: HashMap<&str, usize> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i))
        .collect();
    let (mut tree, members) = restore(snap, &index, docs.len());
    let added: Vec<usize> = (0..docs.len()).filter(|&i| !members.present[i]).collect();
    let deleted = members.gone.len();
    let before = docs.len() - added.len() + deleted;
    let share = (added.len() + deleted) as f64 / before.max(1) as f64;
    if share > config.incremental.full_rebuild_share {
        return Err(format!(
            "{} of {} documents added or deleted, over incremental.full_rebuild_share = {}",
            added.len() + deleted,
            before,
            config.incremental.full_rebuild_share
        ));
    }
    // Only leaves that lost or gained documents are resized, so a warm start never reshapes
    // clusters the change did not touch.
    let shrunk: HashSet<usize> = (0..snap.nodes.len())
        .filter(|&i| tree.nodes[i].docs.len() < snap.nodes[i].docs.len())
        .collect();
    let mut stats = WarmStats {
        added: added.len(),
        deleted,
        ..WarmStats::default()
    };
    let grown = place_new(&mut tree, &added, vectors);
    let t = &config.tree;
    stats.split = split_large(&mut tree, &grown, vectors, 2 * t.p, t.p, config, kmeans);
    stats.merged = merge_small(&mut tree, &shrunk, vectors, t.min_cluster_size);
    let tree = compact(tree, t.k);
    let edited = (0..docs.len()).filter(|&i| {
        snap.doc_hashes
            .get(&docs[i].id)
            .is_some_and(|h| *h != docs[i].content_hash)
    });
    let changed: Vec<usize> = added.iter().copied().chain(edited).collect();
    let mut tree = tree;
    restub(&mut tree, &changed, vectors, t.tau, t.max_stubs);
    if tree.roots.is_empty() || tree.roots.len() > t.k {
        return Err(format!(
            "the tree would have {} top-level skills (K = {})",
            tree.roots.len(),
            t.k
        ));
    }
    Ok((finish(tree, vectors), stats))
}

/// Which documents the previous tree held: each current one (by index) that a node listed, and
/// the ids of those it listed that are gone.
struct Members<'s> {
    present: Vec<bool>,
    gone: HashSet<&'s str>,
}

/// The previous tree with current document indices (deleted documents dropped), and which
/// documents it held.
fn restore<'s>(
    snap: &'s Snapshot,
    index: &HashMap<&str, usize>,
    n_docs: usize,
) -> (Tree, Members<'s>) {
    let map = |ids: &[String]| {
        ids.iter()
            .filter_map(|id| index.get(id.as_str()).copied())
            .collect::<Vec<usize>>()
    };
    let mut members = Members {
        present: vec![false; n_docs],
        gone: HashSet::new(),
    };
    let mut nodes = Vec::with_capacity(snap.nodes.len());
    for s in &snap.nodes {
        // Mapped once: which documents the tree held is noted on the way.
        let mut docs = Vec::with_capacity(s.docs.len());
        for id in &s.docs {
            match index.get(id.as_str()) {
                Some(&i) => {
                    members.present[i] = true;
                    docs.push(i);
                }
                None => {
                    members.gone.insert(id.as_str());
                }
            }
        }
        let see_also = map(&s.see_also)
            .into_iter()
            .filter(|d| !docs.contains(d))
            .collect();
        nodes.push(Node {
            level: s.level,
            folder: s.folder.clone(),
            parent: s.parent,
            children: s.children.clone(),
            docs,
            see_also,
            ..Node::default()
        });
    }
    let tree = Tree {
        nodes,
        roots: snap.roots.clone(),
        levels: snap.levels,
    };
    (tree, members)
}

fn leaves(tree: &Tree) -> Vec<usize> {
    (0..tree.nodes.len())
        .filter(|&i| tree.nodes[i].level == 1)
        .collect()
}

/// New documents join the leaf whose centroid is nearest; returns the leaves that grew.
fn place_new(tree: &mut Tree, added: &[usize], vectors: &Matrix) -> HashSet<usize> {
    let mut grown = HashSet::new();
    if added.is_empty() {
        return grown;
    }
    let leaves: Vec<usize> = leaves(tree)
        .into_iter()
        .filter(|&l| !tree.nodes[l].docs.is_empty())
        .collect();
    let cents: Vec<Vec<f32>> = leaves
        .iter()
        .map(|&l| vectors.centroid(&tree.nodes[l].docs))
        .collect();
    for &d in added {
        let best = (0..leaves.len()).max_by(|&a, &b| {
            dot(vectors.row(d), &cents[a])
                .total_cmp(&dot(vectors.row(d), &cents[b]))
                .then(b.cmp(&a))
        });
        let leaf = match best {
            Some(b) => leaves[b],
            None => leaves_or_first(tree),
        };
        tree.nodes[leaf].docs.push(d);
        grown.insert(leaf);
    }
    grown
}

fn leaves_or_first(tree: &Tree) -> usize {
    leaves(tree).into_iter().next().unwrap_or(0)
}

/// Splits leaves over `max` members into `ceil(n / p)` parts; new parts become siblings.
fn split_large(
    tree: &mut Tree,
    grown: &HashSet<usize>,
    vectors: &Matrix,
    max: usize,
    p: usize,
    config: &Config,
    km: &dyn KmeansBackend,
) -> usize {
    let mut splits = 0;
    let mut candidates: Vec<usize> = grown.iter().copied().collect();
    candidates.sort_unstable();
    for leaf in candidates {
        let members = tree.nodes[leaf].docs.clone();
        if members.len() <= max {
            continue;
        }
        let mut sub = Matrix::new(vectors.dims);
        members.iter().for_each(|&m| sub.push(vectors.row(m)));
        let params = KmeansParams {
            k: members.len().div_ceil(p),
            max_iter: config.kmeans.max_iter,
            n_init: config.kmeans.n_init,
            tol: config.kmeans.tol,
            seed: config.tree.seed,
            tau: config.tree.tau,
        };
        let r = km.run(&sub, &params);
        let mut parts: Vec<Vec<usize>> = vec![Vec::new(); r.centroids.rows];
        for (pos, &m) in members.iter().enumerate() {
            parts[r.assign[pos] as usize].push(m);
        }
        parts.retain(|p| !p.is_empty());
        if parts.len() < 2 {
            parts = members.chunks(p).map(<[usize]>::to_vec).collect();
        }
        parts.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        tree.nodes[leaf].docs = parts[0].clone();
        let parent = tree.nodes[leaf].parent;
        for part in parts.into_iter().skip(1) {
            let idx = tree.nodes.len();
            tree.nodes.push(Node {
                level: 1,
                parent,
                docs: part,
                ..Node::default()
            });
            match parent {
                Some(pp) => tree.nodes[pp].children.push(idx),
                None => tree.roots.push(idx),
            }
        }
        splits += 1;
    }
    splits
}

/// Leaves that shrank under `min` members move into their nearest sibling leaf.
fn merge_small(tree: &mut Tree, shrunk: &HashSet<usize>, vectors: &Matrix, min: usize) -> usize {
    let mut merges = 0;
    let mut candidates: Vec<usize> = shrunk
        .iter()
        .copied()
        .filter(|&l| tree.nodes[l].level == 1)
        .collect();
    candidates.sort_unstable();
    for leaf in candidates {
        let n = tree.nodes[leaf].docs.len();
        if n == 0 || n >= min {
            continue;
        }
        let siblings: Vec<usize> = match tree.nodes[leaf].parent {
            Some(p) => tree.nodes[p].children.clone(),
            None => tree.roots.clone(),
        };
        let c = vectors.centroid(&tree.nodes[leaf].docs);
        let target = siblings
            .into_iter()
            .filter(|&s| s != leaf && tree.nodes[s].level == 1 && !tree.nodes[s].docs.is_empty())
            .max_by(|&a, &b| {
                let ca = dot(&c, &vectors.centroid(&tree.nodes[a].docs));
                let cb = dot(&c, &vectors.centroid(&tree.nodes[b].docs));
                ca.total_cmp(&cb).then(b.cmp(&a))
            });
        if let Some(t) = target {
            let moved = std::mem::take(&mut tree.nodes[leaf].docs);
            tree.nodes[t].docs.extend(moved);
            let stubs = std::mem::take(&mut tree.nodes[leaf].see_also);
            tree.nodes[t].see_also.extend(stubs);
            merges += 1;
        }
    }
    merges
}

/// Drops empty nodes (and parents left without children), renumbers the rest, and folds nodes
/// left with a single child.
fn compact(mut tree: Tree, max_roots: usize) -> Tree {
    let n = tree.nodes.len();
    let mut alive = vec![true; n];
    // Bottom-up by level: a leaf without documents or a node without live children goes.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| tree.nodes[i].level);
    for i in order {
        let nd = &tree.nodes[i];
        alive[i] = if nd.level == 1 {
            !nd.docs.is_empty()
        } else {
            nd.children.iter().any(|&c| alive[c])
        };
    }
    tree.retain(&alive);
    tree.fold_single_children(max_roots);
    tree
}

/// Soft assignment for added and edited documents: each leaves the stub lists it was on and
/// appears as an `@see` stub in the nearest other leaf when that leaf's centroid is within `tau`
/// of its home leaf's (the same rule as a cold build, against the updated leaves).
fn restub(tree: &mut Tree, changed: &[usize], vectors: &Matrix, tau: f32, cap: Option<usize>) {
    if changed.is_empty() {
        return;
    }
    let moved: HashSet<usize> = changed.iter().copied().collect();
    let leaves: Vec<usize> = leaves(tree)
        .into_iter()
        .filter(|&l| !tree.nodes[l].docs.is_empty())
        .collect();
    for &l in &leaves {
        tree.nodes[l].see_also.retain(|d| !moved.contains(d));
    }
    let cents: Vec<Vec<f32>> = leaves
        .iter()
        .map(|&l| vectors.centroid(&tree.nodes[l].docs))
        .collect();
    // Each document's leaf, by position in `leaves` (the last that lists it; none without one).
    let mut home: Vec<Option<usize>> = vec![None; vectors.rows];
    for (pos, &l) in leaves.iter().enumerate() {
        for &d in &tree.nodes[l].docs {
            home[d] = Some(pos);
        }
    }
    for &d in changed {
        let Some(h) = home.get(d).copied().flatten() else {
            continue;
        };
        let own = dot(vectors.row(d), &cents[h]);
        let best = (0..leaves.len())
            .filter(|&j| j != h)
            .map(|j| (dot(vectors.row(d), &cents[j]), j))
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
        if let Some((_, j)) = best.filter(|(c, _)| own - c < tau) {
            let stubs = &mut tree.nodes[leaves[j]].see_also;
            if cap.is_none_or(|m| stubs.len() < m) {
                stubs.push(d);
            }
        }
    }
}

/// Orders each leaf's documents by centrality, drops stubs that became home rows, counts documents.
fn finish(mut tree: Tree, vectors: &Matrix) -> Tree {
    for leaf in leaves(&tree) {
        let node = &mut tree.nodes[leaf];
        order_by_centrality(&mut node.docs, vectors);
        let own: HashSet<usize> = node.docs.iter().copied().collect();
        node.see_also.retain(|d| !own.contains(d));
        node.see_also.dedup();
    }
    tree.count_documents();
    tree
}
