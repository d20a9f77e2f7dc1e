//! Enrich stage: exemplar documents of non-leaf nodes, related skills by entity overlap, and the
//! corpus-wide entity index.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;
use serde::Serialize;

use crate::kmeans::simd::dot;
use crate::kmeans::{Matrix, normalize};
use crate::tree::Tree;

/// Sets `exemplars` of every non-leaf node: the documents nearest the mean of its documents.
pub fn exemplars(tree: &mut Tree, doc_vectors: &Matrix, count: usize) {
    let picks: Vec<(usize, Vec<usize>)> = (0..tree.nodes.len())
        .into_par_iter()
        .filter(|&i| tree.nodes[i].level > 1)
        .map(|i| {
            let docs = tree.descendant_docs(i);
            let mut mean = vec![0.0f32; doc_vectors.dims];
            for &d in &docs {
                mean.iter_mut()
                    .zip(doc_vectors.row(d))
                    .for_each(|(m, x)| *m += x);
            }
            normalize(&mut mean);
            let mut scored: Vec<(f32, usize)> = docs
                .iter()
                .map(|&d| (dot(&mean, doc_vectors.row(d)), d))
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            (i, scored.into_iter().take(count).map(|x| x.1).collect())
        })
        .collect();
    for (i, ex) in picks {
        tree.nodes[i].exemplars = ex;
    }
}

/// Entities of each node: its own tags plus those of all leaves below it.
fn entity_sets(tree: &Tree) -> Vec<BTreeSet<String>> {
    let mut sets: Vec<BTreeSet<String>> = tree
        .nodes
        .iter()
        .map(|n| n.tags.entities.iter().map(|e| e.to_lowercase()).collect())
        .collect();
    let mut by_level: Vec<usize> = (0..tree.nodes.len()).collect();
    by_level.sort_by_key(|&i| tree.nodes[i].level);
    for i in by_level {
        if let Some(p) = tree.nodes[i].parent {
            let child = sets[i].clone();
            sets[p].extend(child);
        }
    }
    sets
}

/// Sets `related` of every node: top-`count` by entity Jaccard among top-level skills (for skills)
/// or among siblings (for groups), only where they share an entity.
pub fn related(tree: &mut Tree, count: usize) {
    let sets = entity_sets(tree);
    let first_doc: Vec<usize> = (0..tree.nodes.len()).map(|i| tree.first_doc(i)).collect();
    let mut groups: Vec<Vec<usize>> = vec![tree.roots.clone()];
    groups.extend(
        tree.nodes
            .iter()
            .filter(|n| n.children.len() > 1)
            .map(|n| n.children.clone()),
    );
    let mut related: Vec<(usize, Vec<usize>)> = Vec::new();
    for g in &groups {
        for &a in g {
            let mut scored: Vec<(f32, usize)> = g
                .iter()
                .filter(|&&b| b != a)
                .filter_map(|&b| {
                    let inter = sets[a].intersection(&sets[b]).count();
                    let union = sets[a].union(&sets[b]).count();
                    (inter > 0).then(|| (inter as f32 / union as f32, b))
                })
                .collect();
            // Ties by first document, never by node index (which differs between builds).
            scored.sort_by(|x, y| {
                y.0.total_cmp(&x.0)
                    .then(first_doc[x.1].cmp(&first_doc[y.1]))
            });
            related.push((a, scored.into_iter().take(count).map(|x| x.1).collect()));
        }
    }
    for (a, r) in related {
        tree.nodes[a].related = r;
    }
}

/// One entry of `entity_index.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntityEntry {
    /// Number of groups tagged with the entity.
    pub count: usize,
    /// Folders (relative to the output root) of the groups that mention it.
    pub skill_paths: Vec<String>,
}

/// `entity -> {count, skill_paths}` over all leaf groups. Call after paths are assigned.
pub fn entity_index(tree: &Tree) -> BTreeMap<String, EntityEntry> {
    let mut idx: BTreeMap<String, EntityEntry> = BTreeMap::new();
    for n in tree.nodes.iter().filter(|n| n.level == 1) {
        for e in &n.tags.entities {
            let entry = idx.entry(e.clone()).or_insert(EntityEntry {
                count: 0,
                skill_paths: Vec::new(),
            });
            entry.count += 1;
            entry.skill_paths.push(n.path.clone());
        }
    }
    for e in idx.values_mut() {
        e.skill_paths.sort();
        e.skill_paths.dedup();
    }
    idx
}
