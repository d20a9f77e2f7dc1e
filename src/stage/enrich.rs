//! Enrich stage: exemplar documents of non-leaf nodes, related skills by entity overlap, and the
//! corpus-wide entity index.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use crate::ingest::Document;
use crate::llm::Card;
use crate::matrix::Matrix;
use crate::matrix::simd::dot;
use crate::tree::Tree;

/// Sets `exemplars` of every non-leaf node: the documents nearest the mean of its documents.
pub fn exemplars(tree: &mut Tree, doc_vectors: &Matrix, count: usize) {
    let picks: Vec<(usize, Vec<usize>)> = (0..tree.nodes.len())
        .into_par_iter()
        .filter(|&i| tree.nodes[i].level > 1)
        .map(|i| {
            let docs = tree.descendant_docs(i);
            let mean = doc_vectors.centroid(&docs);
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

/// Sets `related` of every node: among top-level skills (for skills) or siblings (for groups),
/// the top `count` by the entities they share, each weighted by how few of the siblings hold it
/// (a name every sibling holds, such as the product's, relates nothing). A sibling is related
/// only when they share at least [`MIN_SHARED`] such names and their weighted overlap reaches
/// [`MIN_OVERLAP`]: none rather than all.
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
        let weight = rarity(g, &sets);
        let w = |e: &String| weight.get(e).copied().unwrap_or(0.0);
        for &a in g {
            let mut scored: Vec<(f32, usize)> = g
                .iter()
                .filter(|&&b| b != a)
                .filter_map(|&b| {
                    let shared: Vec<&String> = sets[a]
                        .intersection(&sets[b])
                        .filter(|e| w(e) > 0.0)
                        .collect();
                    let inter: f32 = shared.iter().map(|e| w(e)).sum();
                    let union: f32 = sets[a].union(&sets[b]).map(w).sum();
                    let score = inter / union.max(f32::MIN_POSITIVE);
                    (shared.len() >= MIN_SHARED && score >= MIN_OVERLAP).then_some((score, b))
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

/// Names two siblings must share to be related.
const MIN_SHARED: usize = 2;
/// The least weighted overlap (shared weight over the union's) of related siblings.
const MIN_OVERLAP: f32 = 0.05;

/// The weight of each entity among siblings: `ln(m / holders)`, zero for one that half of them or
/// more hold.
fn rarity(group: &[usize], sets: &[BTreeSet<String>]) -> BTreeMap<String, f32> {
    let m = group.len() as f32;
    let mut holders: BTreeMap<&String, usize> = BTreeMap::new();
    for &n in group {
        for e in &sets[n] {
            *holders.entry(e).or_default() += 1;
        }
    }
    holders
        .into_iter()
        .map(|(e, h)| {
            let w = if h as f32 * 2.0 >= m {
                0.0
            } else {
                (m / h as f32).ln()
            };
            (e.clone(), w)
        })
        .collect()
}

/// Where one entity is mentioned: tagged nodes with the number of documents below each that
/// mention it, most mentions first (then the more specific node, then the path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityEntry {
    /// Documents of the whole corpus whose title or text mention the entity.
    pub documents: usize,
    /// `(node, mentions)`, ordered.
    pub nodes: Vec<(usize, usize)>,
}

/// `lowercased entity -> entry` over the tags of every node, at every level. Call after paths are
/// assigned (ties are broken by path).
pub fn entity_index(
    tree: &Tree,
    docs: &[Document],
    cards: &[Card],
) -> BTreeMap<String, EntityEntry> {
    let mut tagged: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for (i, n) in tree.nodes.iter().enumerate() {
        for e in &n.tags.entities {
            let key = e.trim().to_lowercase();
            if !key.is_empty() {
                tagged.entry(key).or_default().insert(i);
            }
        }
    }
    let names: Vec<&str> = tagged.keys().map(String::as_str).collect();
    let mentions = mentions_per_doc(&names, docs, cards);
    let mut totals = vec![0usize; names.len()];
    for m in &mentions {
        for &e in m {
            totals[e as usize] += 1;
        }
    }
    tagged
        .into_iter()
        .enumerate()
        .map(|(e, (name, nodes))| {
            let mut scored: Vec<(usize, usize)> = nodes
                .into_iter()
                .map(|n| {
                    let count = tree
                        .descendant_docs(n)
                        .into_iter()
                        .filter(|&d| mentions[d].binary_search(&(e as u32)).is_ok())
                        .count();
                    (n, count)
                })
                .collect();
            scored.sort_by(|a, b| {
                b.1.cmp(&a.1)
                    .then(tree.nodes[a.0].level.cmp(&tree.nodes[b.0].level))
                    .then(tree.nodes[a.0].path.cmp(&tree.nodes[b.0].path))
            });
            let entry = EntityEntry {
                documents: totals[e],
                nodes: scored,
            };
            (name, entry)
        })
        .collect()
}

/// Per document, the sorted indices of `names` that its title or text mentions as whole words
/// (case-insensitive).
fn mentions_per_doc(names: &[&str], docs: &[Document], cards: &[Card]) -> Vec<Vec<u32>> {
    let Ok(ac) = aho_corasick::AhoCorasick::new(names) else {
        return vec![Vec::new(); docs.len()];
    };
    docs.par_iter()
        .zip(cards)
        .map(|(d, c)| {
            let text = format!("{}\n{}", c.title, d.nav_text()).to_lowercase();
            let bytes = text.as_bytes();
            let boundary = |i: Option<&u8>| i.is_none_or(|b| !b.is_ascii_alphanumeric());
            let mut found: Vec<u32> = ac
                .find_overlapping_iter(&text)
                .filter(|m| {
                    let before = m.start().checked_sub(1).map(|i| &bytes[i]);
                    boundary(before) && boundary(bytes.get(m.end()))
                })
                .map(|m| m.pattern().as_u32())
                .collect();
            found.sort_unstable();
            found.dedup();
            found
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::Node;

    fn skill(doc: usize, entities: &[&str]) -> Node {
        let mut n = Node {
            level: 1,
            docs: vec![doc],
            ..Node::default()
        };
        n.tags.entities = entities.iter().map(|e| e.to_string()).collect();
        n
    }

    #[test]
    fn related_skills_share_rare_names_or_are_none() {
        // Every skill names the product; only the two database skills share more.
        let mut tree = Tree {
            nodes: vec![
                skill(0, &["Acme", "Redis", "PgBouncer", "Backups"]),
                skill(1, &["Acme", "Redis", "PgBouncer", "Migrations"]),
                skill(2, &["Acme", "SAML", "Okta"]),
                skill(3, &["Acme", "Invoices", "SEPA"]),
                skill(4, &["Acme", "Okta", "Alerts"]),
            ],
            roots: vec![0, 1, 2, 3, 4],
            levels: 1,
        };
        related(&mut tree, 3);
        assert_eq!(tree.nodes[0].related, vec![1]);
        assert_eq!(tree.nodes[1].related, vec![0]);
        // One shared rare name (Okta) is not enough; the product name relates nothing.
        for n in 2..5 {
            assert!(
                tree.nodes[n].related.is_empty(),
                "{n}: {:?}",
                tree.nodes[n].related
            );
        }
    }
}
