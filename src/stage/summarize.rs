//! Summarize stage: builds each cluster's summarizer input and runs summary, label and tag calls.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::error::BuildError;
use crate::ingest::Document;
use crate::llm::{Card, ClusterInput, ClusterItem, Llm, Tags};
use crate::text::{clip_chars, one_line, plain_text};
use crate::tree::Tree;

/// Leaf summaries read at most this many members, this many characters each.
pub const LEAF_ITEMS: usize = 15;
pub const LEAF_CHARS: usize = 600;
/// Higher summaries read at most this many child summaries, this many characters each.
pub const PARENT_ITEMS: usize = 20;
pub const PARENT_CHARS: usize = 300;

/// The summarizer input of a node: central members (leaf) or largest children (higher).
pub fn cluster_input(tree: &Tree, node: usize, docs: &[Document], cards: &[Card]) -> ClusterInput {
    let n = &tree.nodes[node];
    if n.level == 1 {
        let items = n
            .docs
            .iter()
            .take(LEAF_ITEMS)
            .map(|&d| ClusterItem {
                title: cards[d].title.clone(),
                text: one_line(clip_chars(
                    &plain_text(clip_chars(&docs[d].text, LEAF_CHARS * 4)),
                    LEAF_CHARS,
                )),
            })
            .collect();
        return ClusterInput { leaf: true, items };
    }
    let mut kids: Vec<usize> = n.children.clone();
    kids.sort_by_key(|&c| (std::cmp::Reverse(tree.nodes[c].num_documents), c));
    let items = kids
        .into_iter()
        .take(PARENT_ITEMS)
        .map(|c| ClusterItem {
            title: tree.nodes[c].label.clone(),
            text: clip_chars(&tree.nodes[c].summary, PARENT_CHARS).to_string(),
        })
        .collect();
    ClusterInput { leaf: false, items }
}

/// (node, summary, label, tags of a leaf).
type NodeText = (usize, String, String, Option<Tags>);

/// Summary, label and tags of the given nodes; returns the number of LLM calls made.
pub fn summarize_nodes(
    tree: &mut Tree,
    nodes: &[usize],
    docs: &[Document],
    cards: &[Card],
    llm: &dyn Llm,
) -> Result<usize, BuildError> {
    let results: Result<Vec<NodeText>, BuildError> = nodes
        .par_iter()
        .map(|&i| {
            let input = cluster_input(tree, i, docs, cards);
            let wrap = |stage: &str, e: crate::llm::LlmError| {
                BuildError::Llm(format!("{stage} of cluster {i}: {e}"))
            };
            let summary = llm.summarize(&input).map_err(|e| wrap("summary", e))?;
            let label = llm.label(&input, &summary).map_err(|e| wrap("label", e))?;
            let tags = if input.leaf {
                Some(llm.tags(&input).map_err(|e| wrap("tags", e))?)
            } else {
                None
            };
            Ok((i, summary, clean_label(&label), tags))
        })
        .collect();
    let results = results?;
    let mut calls = 0;
    for (i, summary, label, tags) in results {
        calls += 2 + usize::from(tags.is_some());
        let tags = match tags {
            Some(t) => t,
            None => aggregate_tags(tree, i),
        };
        let n = &mut tree.nodes[i];
        n.summary = summary;
        n.label = label;
        n.tags = tags;
    }
    Ok(calls)
}

/// A label of at most 5 words, letters, digits and spaces only.
pub fn clean_label(raw: &str) -> String {
    let words: Vec<String> = raw
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(5)
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        "misc".into()
    } else {
        words.join(" ")
    }
}

/// Tags of a higher node: entities common among its children, doc types of at least a third of them.
fn aggregate_tags(tree: &Tree, node: usize) -> Tags {
    let kids = &tree.nodes[node].children;
    let mut ent: HashMap<&str, (usize, usize)> = HashMap::new();
    let mut types: HashMap<&str, usize> = HashMap::new();
    let mut order = 0;
    for &c in kids {
        for e in &tree.nodes[c].tags.entities {
            order += 1;
            ent.entry(e.as_str()).or_insert((0, order)).0 += 1;
        }
        for t in &tree.nodes[c].tags.doc_types {
            *types.entry(t.as_str()).or_insert(0) += 1;
        }
    }
    let mut ents: Vec<(&str, (usize, usize))> = ent.into_iter().collect();
    ents.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
    let mut doc_types: Vec<String> = types
        .into_iter()
        .filter(|(_, c)| c * 3 >= kids.len())
        .map(|(t, _)| t.to_string())
        .collect();
    doc_types.sort();
    Tags {
        entities: ents.into_iter().take(10).map(|e| e.0.to_string()).collect(),
        doc_types,
    }
}

/// The re-embedding text of a node: its summary plus sampled member excerpts.
pub fn reembed_text(tree: &Tree, node: usize, cards: &[Card]) -> String {
    let n = &tree.nodes[node];
    let mut t = format!("{}\n{}\n", n.label, n.summary);
    if n.level == 1 {
        for &d in n.docs.iter().take(5) {
            t.push_str(&format!("{} — {}\n", cards[d].title, cards[d].one_line));
        }
    } else {
        for &c in n.children.iter().take(8) {
            let k = &tree.nodes[c];
            t.push_str(&format!("{}: {}\n", k.label, clip_chars(&k.summary, 160)));
        }
    }
    t
}
