//! The offline navigator: a beam search down the skill tree that fuses dense similarity (query
//! vs node vector) with BM25 over each node's routing text, then ranks the document rows of the
//! leaves it reached, and answers with the best-matching sentences of the documents it fetched.

use serde::Serialize;

use super::compiled::Compiled;
use crate::kmeans::{Matrix, normalize};
use crate::retrieval::{Bm25, dense_scores, rrf, terms, top_k};
use crate::text::{distinctiveness, plain_text, sentences};

/// Search knobs.
#[derive(Debug, Clone, Copy)]
pub struct NavParams {
    /// Nodes kept per level.
    pub beam: usize,
    /// Documents returned.
    pub k: usize,
    /// Fuse a flat search over document rows into the ranking when routing looks weak.
    pub fallback: bool,
    /// Documents fetched for the extractive answer.
    pub fetch: usize,
    /// Weight of BM25 over document rows against dense similarity in a leaf's ranking.
    pub row_weight: f32,
}

impl Default for NavParams {
    fn default() -> Self {
        NavParams {
            beam: 3,
            k: 10,
            fallback: false,
            fetch: 3,
            row_weight: 1.0,
        }
    }
}

/// What one navigation found and read.
#[derive(Debug, Clone, Serialize)]
pub struct NavResult {
    pub ids: Vec<String>,
    /// Navigation files read, in order.
    pub path: Vec<String>,
    /// Top-level skills in the first beam.
    pub root_beam: Vec<String>,
    pub answer: String,
    pub nav_bytes: usize,
    pub doc_bytes: usize,
    /// Whether the flat fallback was fused in.
    pub fell_back: bool,
}

/// A compiled tree prepared for navigation.
pub struct Navigator<'a> {
    a: &'a Compiled,
    node_vectors: Matrix,
    node_bm25: Bm25,
    row_bm25: Bm25,
    nav_bytes: Vec<usize>,
}

/// What BM25 routes on for a node: its label, summary, entities and doc types, plus the titles
/// one-lines and phrases of the documents below it (the rows its subtree lists).
fn routing_text(a: &Compiled, node: usize) -> String {
    let n = &a.tree.nodes[node];
    let mut t = format!(
        "{} {} {} {}",
        n.label,
        n.summary,
        n.tags.entities.join(" "),
        n.tags.doc_types.join(" ")
    );
    for d in a.tree.descendant_docs(node) {
        let c = &a.cards[d];
        t.push(' ');
        t.push_str(&c.title);
        t.push(' ');
        t.push_str(&c.one_line);
        t.push(' ');
        t.push_str(&c.phrases.join(" "));
    }
    t
}

fn zscores(xs: &[f32]) -> Vec<f32> {
    let n = xs.len().max(1) as f32;
    let mean = xs.iter().sum::<f32>() / n;
    let sd = (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / n).sqrt();
    xs.iter()
        .map(|x| if sd > 1e-9 { (x - mean) / sd } else { 0.0 })
        .collect()
}

impl<'a> Navigator<'a> {
    pub fn new(a: &'a Compiled) -> Navigator<'a> {
        let t = &a.tree;
        let mut node_vectors = Matrix::new(a.doc_vectors.dims);
        let mut routing = Vec::with_capacity(t.nodes.len());
        for i in 0..t.nodes.len() {
            let mut v = vec![0.0f32; a.doc_vectors.dims];
            for d in t.descendant_docs(i) {
                v.iter_mut()
                    .zip(a.doc_vectors.row(d))
                    .for_each(|(x, y)| *x += y);
            }
            normalize(&mut v);
            node_vectors.push(&v);
            routing.push(routing_text(a, i));
        }
        let rows: Vec<String> = a
            .cards
            .iter()
            .map(|c| format!("{} {} {}", c.title, c.one_line, c.phrases.join(" ")))
            .collect();
        let nav_bytes = a.nav_bytes.clone();
        Navigator {
            a,
            node_vectors,
            node_bm25: Bm25::new(&routing),
            row_bm25: Bm25::new(&rows),
            nav_bytes,
        }
    }

    /// Ranks `candidates` by z-scored dense plus z-scored BM25.
    fn fuse(candidates: &[usize], dense: &[f32], bm25: &[f32]) -> Vec<usize> {
        Self::fuse_weighted(candidates, dense, bm25, 1.0)
    }

    /// Ranks `candidates` by z-scored dense plus `w` × z-scored BM25.
    fn fuse_weighted(candidates: &[usize], dense: &[f32], bm25: &[f32], w: f32) -> Vec<usize> {
        let d: Vec<f32> = candidates.iter().map(|&c| dense[c]).collect();
        let b: Vec<f32> = candidates.iter().map(|&c| bm25[c]).collect();
        let (zd, zb) = (zscores(&d), zscores(&b));
        let fused: Vec<f32> = zd.iter().zip(&zb).map(|(x, y)| x + w * y).collect();
        top_k(&fused, fused.len())
            .into_iter()
            .map(|i| candidates[i])
            .collect()
    }

    /// Navigates for one query (`query_vec` from the build's embedder).
    pub fn navigate(&self, query: &str, query_vec: &[f32], p: &NavParams) -> NavResult {
        let t = &self.a.tree;
        let node_dense = dense_scores(query_vec, &self.node_vectors);
        let node_bm25 = self.node_bm25.scores(query);
        let mut beam: Vec<usize> = Self::fuse(&t.roots, &node_dense, &node_bm25)
            .into_iter()
            .take(p.beam)
            .collect();
        let root_beam = beam.iter().map(|&n| t.nodes[n].path.clone()).collect();
        let mut path = Vec::new();
        let mut nav_bytes = 0;
        let mut read = vec![false; t.nodes.len()];
        loop {
            // Leaves reached early stay in the beam while deeper branches descend; each
            // navigation file is read once.
            for &n in &beam {
                if !std::mem::replace(&mut read[n], true) {
                    path.push(t.nav_file(n));
                    nav_bytes += self.nav_bytes[n];
                }
            }
            let children: Vec<usize> = beam
                .iter()
                .flat_map(|&n| t.nodes[n].children.iter().copied())
                .collect();
            if children.is_empty() {
                break;
            }
            let leaves: Vec<usize> = beam
                .iter()
                .copied()
                .filter(|&n| t.nodes[n].children.is_empty())
                .collect();
            let mut next: Vec<usize> = Self::fuse(&children, &node_dense, &node_bm25)
                .into_iter()
                .take(p.beam)
                .collect();
            next.extend(leaves);
            beam = next;
        }
        let mut candidates: Vec<usize> = beam
            .iter()
            .flat_map(|&n| t.nodes[n].docs.iter().chain(&t.nodes[n].see_also).copied())
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        let doc_dense = dense_scores(query_vec, &self.a.doc_vectors);
        let row_bm25 = self.row_bm25.scores(query);
        let mut ranking = Self::fuse_weighted(&candidates, &doc_dense, &row_bm25, p.row_weight);
        let mut fell_back = false;
        if p.fallback {
            let all: Vec<usize> = (0..self.a.docs.len()).collect();
            let flat = Self::fuse_weighted(&all, &doc_dense, &row_bm25, p.row_weight);
            // Routing is weak when the flat search's best document lies outside the leaves reached.
            if flat.first().is_some_and(|best| !candidates.contains(best)) {
                fell_back = true;
                ranking = rrf(&[ranking, flat.into_iter().take(50).collect()], 60.0)
                    .into_iter()
                    .map(|x| x.0)
                    .collect();
            }
        }
        ranking.truncate(p.k);
        let fetched: Vec<usize> = ranking.iter().take(p.fetch).copied().collect();
        let doc_bytes = fetched.iter().map(|&d| self.a.docs[d].text.len()).sum();
        NavResult {
            ids: ranking.iter().map(|&d| self.a.docs[d].id.clone()).collect(),
            path,
            root_beam,
            answer: extractive_answer(query, fetched.iter().map(|&d| self.a.docs[d].text.as_str())),
            nav_bytes,
            doc_bytes,
            fell_back,
        }
    }
}

/// The two sentences of the fetched documents that share the most distinctive words with the query.
pub fn extractive_answer<'t>(query: &str, docs: impl Iterator<Item = &'t str>) -> String {
    let q: Vec<String> = terms(query);
    let mut scored: Vec<(f32, usize, String)> = Vec::new();
    for (rank, text) in docs.enumerate() {
        for (pos, s) in sentences(&plain_text(text)).into_iter().enumerate() {
            let words: Vec<String> = terms(&s);
            let overlap: f32 = q
                .iter()
                .filter(|w| words.contains(w))
                .map(|w| distinctiveness(w).max(0.5))
                .sum();
            if overlap > 0.0 {
                // Earlier documents and earlier sentences win ties.
                let bonus = 1.0 / (1.0 + rank as f32 + pos as f32 / 50.0);
                scored.push((overlap + 0.1 * bonus, rank * 10_000 + pos, s));
            }
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut best: Vec<(usize, String)> = scored.into_iter().take(2).map(|x| (x.1, x.2)).collect();
    best.sort_by_key(|x| x.0);
    best.into_iter().map(|x| x.1).collect::<Vec<_>>().join(" ")
}
