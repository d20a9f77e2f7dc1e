//! The offline navigator: a beam search down the skill tree. A node is scored by its centroid's
//! cosine with the query, BM25 over its routing text (what its navigation file says), and its
//! best document's evidence (full-text BM25 and best-passage cosine: what opening or grepping
//! its folder would find); the documents of the leaves reached are ranked by their full text and
//! passages, as an agent that opens them would; the answer is the best-matching sentences of
//! the documents it fetched. Cosine signals weigh less when the embedder is itself lexical.

use serde::Serialize;

use super::answer::extractive_answer;
use super::compiled::Compiled;
use crate::matrix::Matrix;
use crate::retrieval::{Bm25, dense_scores, rrf, top_k};

/// Search knobs.
#[derive(Debug, Clone, Copy)]
pub struct NavParams {
    /// Nodes kept per level.
    pub beam: usize,
    /// Documents returned.
    pub k: usize,
    /// Fuse the flat ranking (the same evidence over every document) into the ranking when
    /// routing is not decisive.
    pub fallback: bool,
    /// Documents fetched for the extractive answer.
    pub fetch: usize,
    /// Weight of full-text BM25 against best-passage cosine in the documents' ranking.
    pub row_weight: f32,
    /// Weight of every cosine signal (routing and ranking) against the BM25 ones; `None` takes
    /// the embedder's own ([`dense_weight_for`]).
    pub dense_weight: Option<f32>,
}

impl Default for NavParams {
    fn default() -> Self {
        NavParams {
            beam: 4,
            k: 10,
            fallback: false,
            fetch: 3,
            row_weight: 1.0,
            dense_weight: None,
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
    /// The documents the answer was taken from (the fetched ones), with title and source file.
    pub sources: Vec<SourceRef>,
    pub nav_bytes: usize,
    pub doc_bytes: usize,
    /// Whether the flat fallback was fused in.
    pub fell_back: bool,
}

/// A query's evidence over one tree (see [`Navigator::route`]): what orders every menu a
/// guided walk shows.
pub struct Route {
    node_dense: Vec<f32>,
    node_bm25: Vec<f32>,
    best_text: Vec<f32>,
    best_dense: Vec<f32>,
    dense_weight: f32,
    row_weight: f32,
    pub docs: DocScores,
}

impl Route {
    /// The routing signals of the nodes, weighted.
    fn signals(&self) -> Vec<(&[f32], f32)> {
        let dw = self.dense_weight;
        vec![
            (&self.node_dense, dw),
            (&self.node_bm25, ROUTING_TEXT_WEIGHT),
            (&self.best_text, MEMBER_TEXT_WEIGHT),
            (&self.best_dense, MEMBER_WEIGHT * dw),
        ]
    }

    /// Nodes, best first.
    pub fn rank_nodes(&self, nodes: &[usize]) -> Vec<usize> {
        fuse(nodes, &self.signals())
    }

    /// Documents, best first, by the evidence a leaf's documents are ranked on.
    pub fn rank_docs(&self, docs: &[usize]) -> Vec<usize> {
        let s = &self.docs;
        fuse(
            docs,
            &[(&s.dense, self.dense_weight), (&s.text, self.row_weight)],
        )
    }
}

/// Weight of a node's best document by best-passage cosine (times the dense weight) against its
/// own routing text and centroid. Measured on the three shared sets: 2 removes top-level routing
/// misses on all of them against 1 (covidqa 0.937 → 0.952 with the onnx embedder).
const MEMBER_WEIGHT: f32 = 2.0;
/// Weight of a node's best document by full-text BM25 (what a grep of its folder finds), and of
/// BM25 over the node's own routing text (a long concatenation whose scores say less). Measured
/// with stemmed terms on the three shared sets and their union, Recall@5 hashed / onnx: 3 and
/// 0.5 give 0.876 / 0.896 / 0.864 / 0.876 and 0.934 / 0.929 / 0.875; the earlier 2 and 1 give
/// 0.867 / 0.872 / 0.863 / 0.868 and 0.928 / 0.919 / 0.870.
const MEMBER_TEXT_WEIGHT: f32 = 3.0;
const ROUTING_TEXT_WEIGHT: f32 = 0.5;
/// Routing is not decisive when the best top-level skill beats the first one the beam leaves
/// out by less than this (z units summed over the routing signals). On the shared sets 2.0
/// sends 0–3% of questions to the fallback (1.0 and 4.0: 0–2% and 0–8%; Recall@5 the same).
pub const UNDECIDED_MARGIN: f32 = 2.0;

/// A document an answer came from: its id, title and source file (relative to the project).
#[derive(Debug, Clone, Serialize)]
pub struct SourceRef {
    pub id: String,
    pub title: String,
    pub source: String,
}

/// The weight of cosine evidence for vectors from the embedder `model` (its model id). The
/// `hashed` embedder is a bag of words itself: its cosine repeats what BM25 says, with hash
/// collisions and without the corpus's term rarity, so at equal weight it mostly adds noise.
/// Measured on the three shared sets and their union (Recall@5, hashed): dense weight 1 gives
/// 0.817 / 0.835 / 0.843 / 0.838 against BM25's 0.854 / 0.876 / 0.862 / 0.870; 0.25 gives
/// 0.839 / 0.871 / 0.865 / 0.868; 0 gives 0.839 / 0.862 / 0.860 / 0.862. A neural embedder's
/// cosine carries meaning that BM25 misses and keeps weight 1.
pub fn dense_weight_for(model: &str) -> f32 {
    if model.starts_with("hashed") {
        LEXICAL_DENSE_WEIGHT
    } else {
        1.0
    }
}

/// The cosine weight for a lexical (hashed) embedder.
pub const LEXICAL_DENSE_WEIGHT: f32 = 0.25;

/// A compiled tree prepared for navigation.
pub struct Navigator<'a> {
    a: &'a Compiled,
    node_vectors: Matrix,
    node_bm25: Bm25,
    /// BM25 over each document's title and full text.
    text_bm25: Bm25,
    /// Documents below each node.
    below: Vec<Vec<usize>>,
    nav_bytes: Vec<usize>,
}

/// Per-document evidence for one query.
pub struct DocScores {
    /// BM25 over the document's title and full text.
    pub text: Vec<f32>,
    /// Cosine of the query with the document's best vector (its own or one of its passages').
    pub dense: Vec<f32>,
}

/// What BM25 routes on for a node: its label, summary, entities and doc types, plus the titles
/// one-lines and phrases of the documents below it (the rows its subtree lists).
fn routing_text(a: &Compiled, below: &[usize], node: usize) -> String {
    let n = &a.tree.nodes[node];
    let mut t = format!(
        "{} {} {} {}",
        n.label,
        n.summary,
        n.tags.entities.join(" "),
        n.tags.doc_types.join(" ")
    );
    for &d in below {
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

/// Ranks `candidates` by the sum of z-scored signals (each a score per candidate), weighted.
fn fuse(candidates: &[usize], signals: &[(&[f32], f32)]) -> Vec<usize> {
    fuse_scored(candidates, signals)
        .into_iter()
        .map(|(c, _)| c)
        .collect()
}

/// `fuse` with the fused scores, best first.
fn fuse_scored(candidates: &[usize], signals: &[(&[f32], f32)]) -> Vec<(usize, f32)> {
    let mut fused = vec![0.0f32; candidates.len()];
    for (values, w) in signals {
        let xs: Vec<f32> = candidates.iter().map(|&c| values[c]).collect();
        for (f, z) in fused.iter_mut().zip(zscores(&xs)) {
            *f += w * z;
        }
    }
    top_k(&fused, fused.len())
        .into_iter()
        .map(|i| (candidates[i], fused[i]))
        .collect()
}

impl<'a> Navigator<'a> {
    pub fn new(a: &'a Compiled) -> Navigator<'a> {
        let t = &a.tree;
        let below: Vec<Vec<usize>> = (0..t.nodes.len()).map(|i| t.descendant_docs(i)).collect();
        let mut node_vectors = Matrix::new(a.vectors.docs.dims);
        let mut routing = Vec::with_capacity(t.nodes.len());
        for (i, docs) in below.iter().enumerate() {
            node_vectors.push(&a.vectors.docs.centroid(docs));
            routing.push(routing_text(a, docs, i));
        }
        let texts: Vec<String> = a
            .docs
            .iter()
            .zip(&a.cards)
            .map(|(d, c)| format!("{}\n{}", c.title, d.text))
            .collect();
        Navigator {
            a,
            node_vectors,
            node_bm25: Bm25::new(&routing),
            text_bm25: Bm25::new(&texts),
            below,
            nav_bytes: a.nav_bytes.clone(),
        }
    }

    /// The documents below `node` (in its subtree).
    pub fn below(&self, node: usize) -> &[usize] {
        &self.below[node]
    }

    /// The per-document evidence for a query: full-text BM25, best-passage cosine.
    pub fn doc_scores(&self, query: &str, query_vec: &[f32]) -> DocScores {
        let v = &self.a.vectors;
        let mut dense = dense_scores(query_vec, &v.docs);
        for (row, &o) in v.owner.iter().enumerate() {
            let c = crate::matrix::simd::dot(query_vec, v.chunks.row(row));
            let d = &mut dense[o as usize];
            *d = d.max(c);
        }
        DocScores {
            text: self.text_bm25.scores(query),
            dense,
        }
    }

    /// The cosine weight `p` asks for, else the one for the output's embedder.
    pub fn dense_weight(&self, p: &NavParams) -> f32 {
        p.dense_weight.unwrap_or_else(|| {
            dense_weight_for(self.a.lock.models.get("embed").map_or("", String::as_str))
        })
    }

    /// The flat ranking of every document by the same evidence the leaves use.
    pub fn flat(&self, s: &DocScores, p: &NavParams) -> Vec<usize> {
        let all: Vec<usize> = (0..self.a.docs.len()).collect();
        fuse(
            &all,
            &[(&s.dense, self.dense_weight(p)), (&s.text, p.row_weight)],
        )
    }

    /// The evidence that orders a query's menus: routing signals for every node, full-text and
    /// best-passage evidence for every document.
    pub fn route(&self, query: &str, query_vec: &[f32], p: &NavParams) -> Route {
        let s = self.doc_scores(query, query_vec);
        // A node also routes on its best document: what a grep of its folder would find.
        let best = |v: &[f32]| -> Vec<f32> {
            self.below
                .iter()
                .map(|docs| docs.iter().map(|&d| v[d]).fold(f32::MIN, f32::max))
                .collect()
        };
        Route {
            node_dense: dense_scores(query_vec, &self.node_vectors),
            node_bm25: self.node_bm25.scores(query),
            best_text: best(&s.text),
            best_dense: best(&s.dense),
            dense_weight: self.dense_weight(p),
            row_weight: p.row_weight,
            docs: s,
        }
    }

    /// Navigates for one query (`query_vec` from the build's embedder).
    pub fn navigate(&self, query: &str, query_vec: &[f32], p: &NavParams) -> NavResult {
        let t = &self.a.tree;
        let route = self.route(query, query_vec, p);
        let (s, dw) = (&route.docs, route.dense_weight);
        let signals = route.signals();
        let roots = fuse_scored(&t.roots, &signals);
        // How clearly the best top-level skill stands above the first one the beam leaves out
        // (z units, summed over the signals): small when routing is not decisive.
        let margin = match (roots.first(), roots.get(p.beam)) {
            (Some(a), Some(b)) => a.1 - b.1,
            _ => f32::INFINITY,
        };
        let mut beam: Vec<usize> = roots.iter().take(p.beam).map(|x| x.0).collect();
        let root_beam = beam.iter().map(|&n| t.nodes[n].path.clone()).collect();
        let mut path = Vec::new();
        let mut nav_bytes = 0;
        let mut read = vec![false; t.nodes.len()];
        loop {
            // Leaves reached early stay in the beam while deeper branches descend; each
            // navigation file is read once.
            for &n in &beam {
                // A folded leaf is a section of its parent's page, read already.
                if !std::mem::replace(&mut read[n], true) && self.a.pages[n].is_none() {
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
            let mut next: Vec<usize> = fuse(&children, &signals).into_iter().take(p.beam).collect();
            next.extend(leaves);
            beam = next;
        }
        let mut candidates: Vec<usize> = beam
            .iter()
            .flat_map(|&n| t.nodes[n].docs.iter().chain(&t.nodes[n].see_also).copied())
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        // The leaves' documents are ranked by their full text, as an agent that opens them would.
        let leaf = [(&s.dense[..], dw), (&s.text[..], p.row_weight)];
        let mut ranking = fuse(&candidates, &leaf);
        let mut fell_back = false;
        if p.fallback {
            let flat = self.flat(s, p);
            // Routing is not decisive when the skills at the beam's edge score alike, or when
            // the flat search's best document lies outside the leaves reached.
            let outside = flat.first().is_some_and(|best| !candidates.contains(best));
            if outside || margin < UNDECIDED_MARGIN {
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
            sources: fetched
                .iter()
                .map(|&d| SourceRef {
                    id: self.a.docs[d].id.clone(),
                    title: self.a.cards[d].title.clone(),
                    source: self.a.docs[d].source.clone(),
                })
                .collect(),
            nav_bytes,
            doc_bytes,
            fell_back,
        }
    }
}
