//! Render stage: folder names and paths, SKILL.md / INDEX.md navigation files, `documents.json`,
//! `entity_index.json` (the manifest is added by the build).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::ingest::Document;
use crate::llm::Card;
use crate::stage::enrich::EntityEntry;
use crate::stage::label::{sibling_slugs, strip_common_words};
use crate::text::{clip_chars, clip_words};
use crate::tree::Tree;

/// Document rows show at most this many words of the one-line and this many phrases, so a
/// group of `p` documents stays near 2 KB (the full card is in the document's own entry).
pub const ROW_WORDS: usize = 12;
pub const ROW_PHRASES: usize = 2;

/// Top-level descriptions are capped to the Agent Skills limit.
pub const MAX_DESCRIPTION: usize = 1024;

/// Names every node's folder (`skill-NN-slug` at the top, `group-NN-slug` below) and sets its path.
pub fn assign_paths(tree: &mut Tree) {
    let roots = tree.roots.clone();
    tree.roots = name_siblings(tree, &roots, "skill");
    let mut stack: Vec<(usize, String)> = tree
        .roots
        .iter()
        .map(|&r| (r, format!("skills/{}", tree.nodes[r].folder)))
        .collect();
    while let Some((node, path)) = stack.pop() {
        tree.nodes[node].path = path.clone();
        let kids = tree.nodes[node].children.clone();
        if kids.is_empty() {
            continue;
        }
        tree.nodes[node].children = name_siblings(tree, &kids, "group");
        for &c in &tree.nodes[node].children {
            stack.push((c, format!("{path}/{}", tree.nodes[c].folder)));
        }
    }
}

/// Names one sibling set and returns it in folder order. Nodes that already have a folder (from
/// the previous build) keep it, so untouched clusters never move; new nodes get the next free
/// numbers. A fresh set is numbered in label order.
fn name_siblings(tree: &mut Tree, siblings: &[usize], prefix: &str) -> Vec<usize> {
    strip_common_words(tree, siblings);
    let named = sibling_slugs(tree, siblings);
    let number = |folder: &str| {
        folder
            .split('-')
            .nth(1)
            .and_then(|n| n.parse::<usize>().ok())
    };
    let mut next = siblings
        .iter()
        .filter_map(|&s| number(&tree.nodes[s].folder))
        .max()
        .map_or(0, |m| m + 1);
    let width = digits(named.len().max(next + named.len()));
    let fresh = next == 0;
    for (pos, (node, slug)) in named.iter().enumerate() {
        if !tree.nodes[*node].folder.is_empty() {
            continue;
        }
        let n = if fresh { pos } else { next };
        next += usize::from(!fresh);
        tree.nodes[*node].folder = format!("{prefix}-{n:0width$}-{slug}");
    }
    let mut order: Vec<usize> = siblings.to_vec();
    order.sort_by(|&a, &b| tree.nodes[a].folder.cmp(&tree.nodes[b].folder));
    order
}

fn digits(n: usize) -> usize {
    n.saturating_sub(1).to_string().len().max(2)
}

/// A YAML double-quoted scalar (JSON string syntax is valid YAML).
fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// Renders the navigation file of one node.
pub fn nav_file(tree: &Tree, node: usize, docs: &[Document], cards: &[Card]) -> String {
    let n = &tree.nodes[node];
    let mut s = String::with_capacity(2048);
    let description = description(n);
    let description = description.as_str();
    s.push_str("---\n");
    let _ = writeln!(s, "name: {}", n.folder);
    let _ = writeln!(s, "description: {}", yaml_str(description));
    let _ = writeln!(s, "level: {}", n.level);
    let _ = writeln!(s, "num_documents: {}", n.num_documents);
    s.push_str("metadata:\n");
    let _ = writeln!(s, "  label: {}", yaml_str(&n.label));
    let _ = writeln!(s, "  entities: {}", yaml_str(&n.tags.entities.join(", ")));
    let _ = writeln!(s, "  doc_types: {}", yaml_str(&n.tags.doc_types.join(", ")));
    s.push_str("---\n");
    let _ = writeln!(s, "# {}\n", title_case(&n.label));
    let _ = writeln!(s, "## Overview\n{}\n", n.summary);
    s.push_str("## Related skills\n");
    if n.related.is_empty() {
        s.push_str("- (none)\n");
    }
    for &r in &n.related {
        let rn = &tree.nodes[r];
        let _ = writeln!(
            s,
            "- [{}](../{}) — {}",
            rn.folder,
            nav_name(tree, r, &rn.folder),
            rn.label
        );
    }
    s.push_str("\n## Example documents\n");
    if n.level == 1 {
        s.push_str(
            "- (every document of this group is listed under Contents)
",
        );
    }
    for &d in &n.exemplars {
        let _ = writeln!(s, "- `{}` — {}", docs[d].id, cards[d].title);
    }
    s.push_str("\n## Contents\n");
    if n.level == 1 {
        let mut rows: Vec<usize> = n.docs.clone();
        rows.sort_by(|a, b| docs[*a].id.cmp(&docs[*b].id));
        for d in rows {
            let c = &cards[d];
            let _ = writeln!(
                s,
                "- `{}` — {} — {} — [{}]",
                docs[d].id,
                c.title,
                clip_words(&c.one_line, ROW_WORDS),
                row_phrases(c).join("; ")
            );
        }
        for &d in &n.see_also {
            let _ = writeln!(s, "- @see `{}` — {}", docs[d].id, cards[d].title);
        }
    } else {
        for &c in &n.children {
            let k = &tree.nodes[c];
            let _ = writeln!(
                s,
                "- [{}]({}) — {} documents — {}",
                k.folder,
                nav_name(tree, c, &k.folder),
                k.num_documents,
                clip_words(first_sentence(&k.summary), 20)
            );
        }
    }
    s
}

/// Top-level skills carry the whole summary (what an agent routes on, at most 1024 chars);
/// groups carry its first sentence, since their Overview follows right below.
fn description(n: &crate::tree::Node) -> String {
    let full = if n.summary.trim().is_empty() {
        n.label.as_str()
    } else {
        n.summary.as_str()
    };
    let text = if n.parent.is_none() {
        full
    } else {
        first_sentence(full)
    };
    clip_chars(text, MAX_DESCRIPTION).to_string()
}

/// Phrases that add to the title: ones the title already contains are left out of the row.
fn row_phrases(c: &Card) -> Vec<&str> {
    let title = c.title.to_lowercase();
    c.phrases
        .iter()
        .filter(|p| !title.contains(&p.to_lowercase()))
        .take(ROW_PHRASES)
        .map(String::as_str)
        .collect()
}

fn nav_name(tree: &Tree, node: usize, folder: &str) -> String {
    let file = if tree.nodes[node].parent.is_none() {
        "SKILL.md"
    } else {
        "INDEX.md"
    };
    format!("{folder}/{file}")
}

fn first_sentence(s: &str) -> &str {
    match s.find(". ") {
        Some(i) => &s[..=i],
        None => s,
    }
}

fn title_case(label: &str) -> String {
    let mut c = label.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

#[derive(Serialize)]
struct DocEntry<'a> {
    title: &'a str,
    source: &'a str,
    text: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    aliases: &'a [String],
}

/// `documents.json`: `{id: {title, source, text, aliases?}}`, sorted by id.
pub fn documents_json(docs: &[Document], cards: &[Card]) -> String {
    let map: BTreeMap<&str, DocEntry> = docs
        .iter()
        .zip(cards)
        .map(|(d, c)| {
            (
                d.id.as_str(),
                DocEntry {
                    title: &c.title,
                    source: &d.source,
                    text: &d.text,
                    aliases: &d.aliases,
                },
            )
        })
        .collect();
    serde_json::to_string_pretty(&map).expect("documents serialize") + "\n"
}

/// `entity_index.json`.
pub fn entity_index_json(index: &BTreeMap<String, EntityEntry>) -> String {
    serde_json::to_string_pretty(index).expect("index serializes") + "\n"
}

/// All navigation files: relative path → contents.
pub fn nav_files(tree: &Tree, docs: &[Document], cards: &[Card]) -> BTreeMap<String, String> {
    use rayon::prelude::*;
    (0..tree.nodes.len())
        .into_par_iter()
        .map(|i| (tree.nav_file(i), nav_file(tree, i, docs, cards)))
        .collect::<Vec<_>>()
        .into_iter()
        .collect()
}
