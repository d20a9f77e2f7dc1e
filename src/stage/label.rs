//! Label stage, final step: sibling labels are told apart (by their members' own title phrases,
//! or by dropping the words most of them share), then folders get distinct slugs and stable
//! `NN` numbering.

use std::collections::HashSet;

use crate::llm::Card;
use crate::llm::phrases::{self, LABEL_WORDS, Member};
use crate::text::is_stopword;
use crate::tree::{Tree, slugify};

/// Titles a relabelled group reads (its documents, most central first).
const RELABEL_TITLES: usize = 40;

/// Groups of one level that share a label are told apart by their members' titles: each gets
/// the phrase its own documents share most (avoiding the shared label's words and `avoid`, the
/// words most of the level's groups share) after the shared label, or alone when that would
/// pass [`LABEL_WORDS`]. For the extractive backend's labels, made of title phrases themselves;
/// run where a level's labels are set, so that the level above is summarized from told-apart
/// labels.
pub fn distinct_labels(tree: &mut Tree, group: &[usize], cards: &[Card], avoid: &HashSet<String>) {
    let labels: Vec<String> = group.iter().map(|&s| tree.nodes[s].label.clone()).collect();
    // Counted once (a level of 10,000 groups compared each label with every other).
    let mut count: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for l in &labels {
        *count.entry(l.as_str()).or_default() += 1;
    }
    for (k, &s) in group.iter().enumerate() {
        if count[labels[k].as_str()] < 2 {
            continue;
        }
        let mut avoid = avoid.clone();
        avoid.extend(labels[k].split_whitespace().map(str::to_string));
        let docs = tree.descendant_docs(s);
        let none: Vec<String> = Vec::new();
        let members: Vec<Member> = docs
            .iter()
            .take(RELABEL_TITLES)
            .map(|&d| Member {
                title: &cards[d].title,
                headings: &none,
            })
            .collect();
        let Some(extra) = phrases::label(&members, &avoid) else {
            continue;
        };
        let words = labels[k].split_whitespace().count() + extra.split_whitespace().count();
        tree.nodes[s].label = if words <= LABEL_WORDS {
            format!("{} {extra}", labels[k])
        } else {
            extra
        };
    }
}

/// Orders siblings and gives each a unique slug: a collision takes a distinguishing word from the
/// node's entities or summary, then a numeric suffix. Returns `(node, slug)` in folder order.
pub fn sibling_slugs(tree: &Tree, siblings: &[usize]) -> Vec<(usize, String)> {
    let mut order: Vec<(String, usize)> = siblings
        .iter()
        .map(|&s| (slugify(&tree.nodes[s].label), s))
        .collect();
    order.sort_by_cached_key(|(slug, node)| (slug.clone(), tree.first_doc(*node)));
    let mut counts = std::collections::HashMap::new();
    for (s, _) in &order {
        *counts.entry(s.clone()).or_insert(0usize) += 1;
    }
    let mut taken: HashSet<String> = order
        .iter()
        .filter(|(s, _)| counts[s] == 1)
        .map(|(s, _)| s.clone())
        .collect();
    let mut out = Vec::with_capacity(order.len());
    for (slug, node) in order {
        if counts[&slug] == 1 {
            out.push((node, slug));
            continue;
        }
        let unique = distinguishing_words(tree, node, &slug)
            .into_iter()
            .map(|w| slugify(&format!("{slug} {w}")))
            .chain((2..).map(|i| format!("{slug}-{i}")))
            .find(|cand| !taken.contains(cand))
            .expect("an unbounded candidate list");
        taken.insert(unique.clone());
        out.push((node, unique));
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

/// Drops words that most siblings' labels share (a product name, say), so labels tell siblings
/// apart. A label never loses its last word. Runs on sibling sets of three or more.
pub fn strip_common_words(tree: &mut Tree, siblings: &[usize]) {
    if siblings.len() < 3 {
        return;
    }
    let mut freq: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for &s in siblings {
        let words: HashSet<&str> = tree.nodes[s].label.split_whitespace().collect();
        for w in words {
            *freq.entry(w.to_string()).or_insert(0) += 1;
        }
    }
    let common: HashSet<&String> = freq
        .iter()
        .filter(|(_, n)| **n * 2 > siblings.len())
        .map(|(w, _)| w)
        .collect();
    if common.is_empty() {
        return;
    }
    for &s in siblings {
        let kept: Vec<&str> = tree.nodes[s]
            .label
            .split_whitespace()
            .filter(|w| !common.contains(&w.to_string()))
            .collect();
        if !kept.is_empty() {
            tree.nodes[s].label = kept.join(" ");
        }
    }
}

/// Words that summaries use for their form, not their topic.
const BOILERPLATE: &[&str] = &[
    "covers",
    "documents",
    "document",
    "topics",
    "such",
    "typical",
    "questions",
    "answers",
    "groups",
    "cover",
    "other",
];

/// Words of the node's entities and summary that are not already in its slug.
fn distinguishing_words(tree: &Tree, node: usize, slug: &str) -> Vec<String> {
    let n = &tree.nodes[node];
    let have: HashSet<&str> = slug.split('-').collect();
    let mut seen = HashSet::new();
    n.tags
        .entities
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(n.summary.as_str()))
        .flat_map(|t| t.split(|c: char| !c.is_alphanumeric()))
        .map(str::to_lowercase)
        .filter(|w| w.len() >= 3 && !is_stopword(w) && !have.contains(w.as_str()) && w.is_ascii())
        .filter(|w| !BOILERPLATE.contains(&w.as_str()))
        .filter(|w| seen.insert(w.clone()))
        .take(4)
        .collect()
}
