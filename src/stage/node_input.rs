//! A node's summarizer input, as the summary, label and tags stages key it: made from its
//! members (a leaf: their titles, excerpts and headings; a higher node: its children's labels
//! and summaries), or, for a leaf group whose recipe the last build recorded, recalled by that
//! recipe without reading its members (see `db::recipes`), and made only if a stage computes.

use std::sync::OnceLock;

use crate::db::cache::Key;
use crate::db::recipes::{Kept, Recipes};
use crate::ingest::Document;
use crate::llm::phrases::{self, Member};
use crate::llm::{Card, ClusterInput, ClusterItem, Marks, members_of};
use crate::markdown::Block;
use crate::text::clip_chars;
use crate::tree::Tree;

/// Leaf summaries read at most this many members, this many characters each.
pub const LEAF_ITEMS: usize = 15;
pub const LEAF_CHARS: usize = 600;
/// Higher summaries read at most this many child summaries, this many characters each.
pub const PARENT_ITEMS: usize = 20;
pub const PARENT_CHARS: usize = 300;

/// The summarizer input of a node: central members (leaf) or largest children (higher). With
/// `names`, a leaf's members carry their names too (which only the extractive tags read, see
/// [`member_names`]): found from the same parse of each member's text as its excerpt.
pub fn cluster_input(
    tree: &Tree,
    node: usize,
    docs: &[Document],
    cards: &[Card],
    names: bool,
) -> ClusterInput {
    let n = &tree.nodes[node];
    if n.level == 1 {
        let items = n
            .docs
            .iter()
            .take(LEAF_ITEMS)
            .map(|&d| {
                let head = clip_chars(docs[d].nav_text(), LEAF_CHARS * 4);
                let blocks = crate::markdown::blocks(head);
                let title = &cards[d].title;
                let headings = headings(&blocks, title);
                let names = if names {
                    member_names(title, &headings, head, &blocks)
                } else {
                    Vec::new()
                };
                ClusterItem {
                    title: title.clone(),
                    text: clip_chars(&excerpt(&blocks, title), LEAF_CHARS).to_string(),
                    marks: Marks { headings, names },
                }
            })
            .collect();
        return ClusterInput {
            leaf: true,
            items,
            avoid: Vec::new(),
        };
    }
    let mut kids: Vec<usize> = n.children.clone();
    // Largest first; ties by content, never by node index (which differs between builds).
    kids.sort_by(|&a, &b| {
        let (x, y) = (&tree.nodes[a], &tree.nodes[b]);
        y.num_documents
            .cmp(&x.num_documents)
            .then_with(|| x.label.cmp(&y.label))
            .then_with(|| x.summary.cmp(&y.summary))
    });
    let items = kids
        .into_iter()
        .take(PARENT_ITEMS)
        .map(|c| ClusterItem {
            title: tree.nodes[c].label.clone(),
            text: clip_chars(&tree.nodes[c].summary, PARENT_CHARS).to_string(),
            marks: Marks::default(),
        })
        .collect();
    ClusterInput {
        leaf: false,
        items,
        avoid: Vec::new(),
    }
}

/// The names of a leaf member (at most [`MARKS`]): from its card title, its headings, the text
/// lines of `blocks` (the parse of `head`, the start of its navigation text) and the code spans
/// of `head`. They follow from the member's title and text, which the input's key holds (see
/// [`input_hash`]).
fn member_names(title: &str, headings: &[String], head: &str, blocks: &[Block]) -> Vec<String> {
    let lines: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.lines()),
            _ => None,
        })
        .flatten()
        .collect();
    let code = crate::markdown::code_spans(head);
    crate::llm::names::of_document(title, headings, &lines, &code, MARKS)
}

/// Headings of a document's text (not its title), at most [`MARKS`].
fn headings(blocks: &[Block], title: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for b in blocks {
        if let Block::Heading(h) = b
            && out.len() < MARKS
            && !h.eq_ignore_ascii_case(title)
            && !out.contains(h)
        {
            out.push(h.clone());
        }
    }
    out
}

/// The text of a leaf member as the summarizer sees it: its lines in order, one line, a
/// heading or a first line that repeats the title left out, and every line ended as a sentence
/// (so a heading never runs into the sentence after it).
fn excerpt(blocks: &[Block], title: &str) -> String {
    let mut out = String::new();
    let mut push = |line: &str| {
        let line = line.trim();
        if line.is_empty() || (out.is_empty() && line.eq_ignore_ascii_case(title.trim())) {
            return;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(line);
        if !line.ends_with(['.', '!', '?', ':', ';', '…']) {
            out.push('.');
        }
    };
    for b in blocks {
        match b {
            Block::Heading(h) => push(h),
            Block::Text(t) => t.lines().for_each(&mut push),
            Block::Code { .. } => {}
        }
    }
    out
}

/// Headings and names kept per member.
pub const MARKS: usize = 12;

/// The hash of a cluster input; with `marks`, the members' headings and the content hashes of
/// the documents (`members`) whose names [`member_names`] finds.
pub fn input_hash(input: &ClusterInput, marks: bool, members: &[&str]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(if input.leaf { b"leaf" } else { b"node" });
    if marks {
        for m in members {
            h.update(m.as_bytes());
            h.update(b"\x1f");
        }
    }
    for i in &input.items {
        h.update(i.title.as_bytes());
        h.update(b"\x1f");
        h.update(i.text.as_bytes());
        if marks {
            for x in &i.marks.headings {
                h.update(b"\x1d");
                h.update(x.as_bytes());
            }
            h.update(b"\x1c");
        }
        h.update(b"\x1e");
    }
    crate::hash::short_hash(&h.finalize())
}

pub fn chars(input: &ClusterInput) -> usize {
    input
        .items
        .iter()
        .map(|i| i.title.len() + i.text.len())
        .sum()
}

/// How `--explain` names a node: its level and its first document.
pub fn node_subject(tree: &Tree, node: usize, docs: &[Document]) -> String {
    let first = tree
        .descendant_docs(node)
        .into_iter()
        .min_by(|a, b| docs[*a].id.cmp(&docs[*b].id));
    format!(
        "level {} group of `{}`",
        tree.nodes[node].level,
        first.map_or("?", |d| docs[d].id.as_str())
    )
}

/// Bumped when what a leaf's input is made of changes within one c2s version.
const RECIPE_VERSION: u32 = 2;

/// The name under which leaf group recipes are counted.
pub const GROUP: &str = "group";

/// What a node's input is made from, for inputs made on demand.
#[derive(Clone, Copy)]
pub struct Sources<'a> {
    pub tree: &'a Tree,
    pub docs: &'a [Document],
    pub cards: &'a [Card],
}

/// One node's input as the stages take it.
pub struct NodeInput {
    pub node: usize,
    /// A group of documents (level 1), not of groups.
    pub leaf: bool,
    /// How `--explain` names it.
    pub subject: String,
    /// The hash of its input: the input part of its memo keys.
    pub hash: String,
    /// Characters of its input (for estimates).
    pub chars: usize,
    /// The words that a quarter of its members hold (see [`phrases::held_words`]), for the
    /// extractive labeller's level-wide [`phrases::common_of`]; empty for other backends.
    pub held: Vec<String>,
    /// Whether the backend reads the members' marks: then a leaf's input carries their names.
    marks: bool,
    input: OnceLock<ClusterInput>,
}

impl NodeInput {
    /// Its input, with `avoid` (its level's [`ClusterInput::avoid`]) when it is made now (it
    /// was recalled by recipe); see [`NodeInput::set_avoid`] for one made already.
    pub fn input(&self, from: Sources, avoid: &[String]) -> &ClusterInput {
        self.input.get_or_init(|| {
            let (tree, docs, cards) = (from.tree, from.docs, from.cards);
            let mut input = cluster_input(tree, self.node, docs, cards, self.marks);
            input.avoid = avoid.to_vec();
            input
        })
    }

    /// Sets what the extractive labeller avoids on the input, if it is made already.
    pub fn set_avoid(&mut self, avoid: &[String]) {
        if let Some(input) = self.input.get_mut() {
            input.avoid = avoid.to_vec();
        }
    }
}

/// The inputs of `nodes`, in order: a leaf's recalled by its recipe when `recipes` holds it,
/// every other one made. Records in `recipes` what each leaf used.
pub fn node_inputs(
    from: Sources,
    nodes: &[usize],
    reads_marks: bool,
    recipes: &mut Recipes,
) -> Vec<NodeInput> {
    use rayon::prelude::*;
    let known: &Recipes = recipes;
    let made: Vec<(NodeInput, Option<(Key, Kept)>)> = nodes
        .par_iter()
        .map(|&i| node_input(from, i, reads_marks, known))
        .collect();
    recipes.keep_all(made)
}

fn node_input(
    from: Sources,
    node: usize,
    reads_marks: bool,
    recipes: &Recipes,
) -> (NodeInput, Option<(Key, Kept)>) {
    let Sources { tree, docs, cards } = from;
    let subject = node_subject(tree, node, docs);
    let recipe = (tree.nodes[node].level == 1).then(|| leaf_recipe(from, node, reads_marks));
    let recalled = recipe
        .as_ref()
        .and_then(|r| Some((*r, decode(recipes.get(r)?)?)));
    if let Some((recipe, (hash, chars, held))) = recalled {
        let input = NodeInput {
            node,
            leaf: true,
            subject,
            hash,
            chars,
            held,
            marks: reads_marks,
            input: OnceLock::new(),
        };
        return (input, Some((recipe, Kept::Recorded)));
    }
    let input = cluster_input(tree, node, docs, cards, reads_marks);
    let members: Vec<&str> = if input.leaf {
        tree.nodes[node].docs[..input.items.len()]
            .iter()
            .map(|&d| docs[d].content_hash.as_str())
            .collect()
    } else {
        Vec::new()
    };
    let hash = input_hash(&input, reads_marks, &members);
    let held = if reads_marks {
        let pairs = members_of(&input);
        let group: Vec<Member> = pairs
            .iter()
            .map(|(title, headings)| Member { title, headings })
            .collect();
        phrases::held_words(&group)
    } else {
        Vec::new()
    };
    let chars = chars(&input);
    let entry = recipe.map(|r| (r, Kept::Made(GROUP, encode(&hash, chars, &held))));
    let input = NodeInput {
        node,
        leaf: input.leaf,
        subject,
        hash,
        chars,
        held,
        marks: reads_marks,
        input: OnceLock::from(input),
    };
    (input, entry)
}

/// Everything a leaf's input, its hash and its held words are made from: its first
/// [`LEAF_ITEMS`] members' content hashes (their text, from which the navigation text, the
/// excerpt and the headings follow) and card titles, whether the marks are read, and the code
/// that makes them (the c2s version, the planted-sentence rules).
fn leaf_recipe(from: Sources, node: usize, reads_marks: bool) -> Key {
    let mut h = blake3::Hasher::new();
    h.update(b"c2s leaf input\x1f");
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(&RECIPE_VERSION.to_le_bytes());
    h.update(&crate::planted::PLANTED_VERSION.to_le_bytes());
    h.update(&[u8::from(reads_marks)]);
    for &d in from.tree.nodes[node].docs.iter().take(LEAF_ITEMS) {
        h.update(from.docs[d].content_hash.as_bytes());
        h.update(b"\x1f");
        h.update(from.cards[d].title.as_bytes());
        h.update(b"\x1e");
    }
    *h.finalize().as_bytes()
}

/// `hash`, `chars` and the held words, a line each.
fn encode(hash: &str, chars: usize, held: &[String]) -> Vec<u8> {
    let mut out = format!("{hash}\n{chars}");
    for w in held {
        out.push('\n');
        out.push_str(w);
    }
    out.into_bytes()
}

fn decode(value: &[u8]) -> Option<(String, usize, Vec<String>)> {
    let text = std::str::from_utf8(value).ok()?;
    let mut lines = text.split('\n');
    let hash = lines.next()?.to_string();
    let chars = lines.next()?.parse().ok()?;
    Some((hash, chars, lines.map(str::to_string).collect()))
}
