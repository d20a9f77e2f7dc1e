//! Placement: where each document, document part and navigation page of an output lives, chosen
//! per top-level skill so that the skill fits the host's limits (`[output] host`). One file per
//! document when that fits the files cap; else the documents packed into bundle files (one
//! anchor per document); else also leaf pages folded into their parent's page as sections, the
//! smallest first, while the parent's page stays under the token cap.
//! A document over the token cap is split into numbered parts in every packing.

use std::ops::Range;

use crate::config::{BYTES_PER_TOKEN, HostLimits};
use crate::ingest::Document;
use crate::llm::Card;
use crate::tree::Tree;

use super::split::{HEADER_ROOM, split_document};

/// A bundle's size when no token cap bounds it and the files cap leaves room: about one read.
const BUNDLE_BYTES: usize = 40_000;

/// How one top-level skill holds its documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// `<leaf>/docs/<name>.md` per document (see `naming`).
    Files,
    /// `<skill>/bundles/NNN.md`, documents packed leaf by leaf.
    Bundled,
    /// Bundled, and leaf pages made sections of their parent's page until the skill fits.
    Folded,
    /// No document files (`[output] documents = "by-id"`): rows give ids for `get_document`;
    /// leaf pages are folded as in `Folded` when the pages alone pass the files cap.
    ById,
}

impl Packing {
    pub fn name(self) -> &'static str {
        match self {
            Packing::Files => "files",
            Packing::Bundled => "bundled",
            Packing::Folded => "folded",
            Packing::ById => "by-id",
        }
    }
}

/// One piece of a document split for the token cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The part's file, relative to the output root.
    pub file: String,
    /// The bytes of the document's text it holds.
    pub range: Range<usize>,
}

/// Where a document is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocPlace {
    /// The file that holds the document (its first part), relative to the output root.
    pub file: String,
    /// The anchor of its section, when the file is a bundle.
    pub anchor: Option<String>,
    /// Its parts when it is split (the first is `file`); empty when it is one piece.
    pub parts: Vec<Part>,
}

impl DocPlace {
    /// The file, with `#anchor` when the document is a section of a bundle.
    pub fn link(&self) -> String {
        match &self.anchor {
            Some(a) => format!("{}#{a}", self.file),
            None => self.file.clone(),
        }
    }
}

/// A bundle file and the documents it holds, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle {
    pub file: String,
    pub docs: Vec<usize>,
}

/// The placement of a whole output.
#[derive(Debug, Clone)]
pub struct Placement {
    pub docs: Vec<DocPlace>,
    /// Per node: its page (`SKILL.md`/`INDEX.md`), or `<parent page>#<folder>` when folded.
    pub pages: Vec<String>,
    /// Per node: a section of its parent's page rather than a file of its own.
    pub folded: Vec<bool>,
    pub bundles: Vec<Bundle>,
    /// Per top-level skill (in `tree.roots` order).
    pub packing: Vec<Packing>,
    /// The most bytes of text one file may hold (the token cap), if any.
    pub file_bytes: Option<usize>,
    /// Documents are only in `documents.json`, opened by id (no document files).
    pub by_id: bool,
}

impl Placement {
    /// The folder of a node's page: its own folder, or its parent's when folded.
    pub fn page_folder(&self, tree: &Tree, node: usize) -> String {
        let file = self.pages[node].split('#').next().unwrap_or_default();
        file.rsplit_once('/')
            .map_or_else(|| tree.nodes[node].path.clone(), |(d, _)| d.to_string())
    }

    /// Where an entity index points for a node: its folder, or its page section when folded.
    pub fn node_location<'a>(&'a self, tree: &'a Tree, node: usize) -> &'a str {
        if self.folded[node] {
            &self.pages[node]
        } else {
            &tree.nodes[node].path
        }
    }
}

impl Placement {
    /// One line per top-level skill that is not one file per document: what was packed, and why.
    pub fn notes(&self, tree: &Tree) -> Vec<String> {
        let mut out = Vec::new();
        for (&root, &packing) in tree.roots.iter().zip(&self.packing) {
            if packing == Packing::Files {
                continue;
            }
            let path = &tree.nodes[root].path;
            let bundles = self
                .bundles
                .iter()
                .filter(|b| b.file.starts_with(&format!("{path}/")))
                .count();
            let folded = self
                .folded
                .iter()
                .enumerate()
                .filter(|&(n, &f)| f && tree.root_of(n) == root)
                .count();
            if packing == Packing::ById {
                if folded > 0 {
                    out.push(format!(
                        "{}: {folded} leaf groups shown as sections of their parent's page, to \
                         stay within the host's files per skill",
                        tree.nodes[root].folder
                    ));
                }
                continue;
            }
            let folded = match folded {
                0 => String::new(),
                n => format!(", {n} leaf groups shown as sections of their parent's page"),
            };
            out.push(format!(
                "{}: {} documents in {bundles} bundle files{folded} ({}), to stay within the \
                 host's files per skill",
                tree.nodes[root].folder,
                tree.nodes[root].num_documents,
                packing.name()
            ));
        }
        out
    }
}

/// What placement reads.
pub struct Inputs<'a> {
    pub tree: &'a Tree,
    pub docs: &'a [Document],
    pub cards: &'a [Card],
    pub home: &'a [usize],
    pub limits: HostLimits,
    /// `[output] documents = "by-id"`: no document files.
    pub by_id: bool,
}

/// Places every document and page.
pub fn place(inp: &Inputs) -> Placement {
    let tree = inp.tree;
    let file_bytes = inp
        .limits
        .tokens_per_file
        .map(|t| (t.saturating_mul(BYTES_PER_TOKEN) as usize).max(HEADER_ROOM * 4));
    let splits: Vec<Vec<Range<usize>>> = inp
        .docs
        .iter()
        .zip(inp.cards)
        .map(|(d, c)| match file_bytes {
            Some(cap) if !inp.by_id => split_document(&d.text, cap, d.id.len() + c.title.len()),
            _ => std::iter::once(0..d.text.len()).collect(),
        })
        .collect();
    let mut pl = Placement {
        docs: vec![
            DocPlace {
                file: String::new(),
                anchor: None,
                parts: Vec::new(),
            };
            inp.docs.len()
        ],
        pages: (0..tree.nodes.len()).map(|n| tree.nav_file(n)).collect(),
        folded: vec![false; tree.nodes.len()],
        bundles: Vec::new(),
        packing: Vec::new(),
        file_bytes,
        by_id: inp.by_id,
    };
    for &root in &tree.roots {
        let (packing, bundles, folded) = choose(inp, root, &splits, file_bytes);
        pl.packing.push(packing);
        fold(tree, &folded, &mut pl);
        // Documents served by id have no file.
        let leaves = match packing {
            Packing::ById => Vec::new(),
            _ => leaves_in_order(tree, root),
        };
        let mut own: Vec<(String, usize)> = Vec::new();
        for leaf in leaves {
            let folder = pl.page_folder(tree, leaf);
            for d in rows(inp, leaf) {
                if packing == Packing::Files || splits[d].len() > 1 {
                    own.push((folder.clone(), d));
                }
            }
        }
        let names = super::naming::unique_names(&own, inp.docs, inp.cards);
        for (folder, d) in &own {
            pl.docs[*d] = own_file(folder, &names[d], &splits[*d]);
        }
        for (i, docs) in bundles.into_iter().enumerate() {
            let file = format!("{}/bundles/{:03}.md", tree.nodes[root].path, i + 1);
            for &d in &docs {
                pl.docs[d] = DocPlace {
                    file: file.clone(),
                    anchor: Some(inp.docs[d].id.clone()),
                    parts: Vec::new(),
                };
            }
            pl.bundles.push(Bundle { file, docs });
        }
    }
    pl
}

/// A document's own file (`<folder>/docs/<name>.md`) and, when split, its later parts
/// (`<folder>/parts/<name>-N.md`: the number after the last `-` names the part, so no two
/// documents' parts share a name).
fn own_file(folder: &str, name: &str, ranges: &[Range<usize>]) -> DocPlace {
    let file = super::doc_file(folder, name);
    let parts = if ranges.len() > 1 {
        ranges
            .iter()
            .enumerate()
            .map(|(i, r)| Part {
                file: if i == 0 {
                    file.clone()
                } else {
                    format!("{folder}/parts/{name}-{}.md", i + 1)
                },
                range: r.clone(),
            })
            .collect()
    } else {
        Vec::new()
    };
    DocPlace {
        file,
        anchor: None,
        parts,
    }
}

/// The least packed layout whose file count fits the files cap, and its bundles.
fn choose(
    inp: &Inputs,
    root: usize,
    splits: &[Vec<Range<usize>>],
    file_bytes: Option<usize>,
) -> (Packing, Vec<Vec<usize>>, Vec<usize>) {
    let unpacked = if inp.by_id {
        Packing::ById
    } else {
        Packing::Files
    };
    let Some(cap) = inp.limits.files_per_skill else {
        return (unpacked, Vec::new(), Vec::new());
    };
    let tree = inp.tree;
    let members = subtree(tree, root);
    let nodes = members.len();
    let docs = tree.descendant_docs(root);
    // The skill's entities.md and its parts (estimated: the index is made later), and a few
    // files to spare for the estimates.
    let extra = 1 + file_bytes.map_or(0, |b| docs.len() * 96 / b) + (cap / 40).max(2);
    if inp.by_id {
        let folded = match (nodes + extra).checked_sub(cap) {
            None | Some(0) => Vec::new(),
            Some(need) => leaves_to_fold(inp, &members, need, file_bytes),
        };
        return (Packing::ById, Vec::new(), folded);
    }
    let doc_files: usize = docs
        .iter()
        .map(|&d| splits[d].len() + inp.docs[d].aliases.len())
        .sum();
    if nodes + doc_files + extra <= cap {
        return (Packing::Files, Vec::new(), Vec::new());
    }
    // (leaf, document, bytes in a bundle) of every document that is one piece, in page order
    // (each document's section measured in parallel).
    let one_piece: Vec<(usize, usize)> = leaves_in_order(tree, root)
        .into_iter()
        .flat_map(|l| rows(inp, l).into_iter().map(move |d| (l, d)))
        .filter(|&(_, d)| splits[d].len() == 1)
        .collect();
    let small: Vec<(usize, usize, usize)> = {
        use rayon::prelude::*;
        one_piece
            .into_par_iter()
            .map(|(l, d)| (l, d, section_bytes(inp, d)))
            .collect()
    };
    let long: usize = docs
        .iter()
        .filter(|&&d| splits[d].len() > 1)
        .map(|&d| splits[d].len())
        .sum();
    let budget = match file_bytes {
        Some(b) => b - HEADER_ROOM,
        // Room for bundles once every leaf page that can be is folded.
        None => {
            let pages = members
                .iter()
                .filter(|&&n| !tree.nodes[n].children.is_empty() || tree.nodes[n].parent.is_none())
                .count();
            spread(
                &small,
                cap.saturating_sub(pages + long + extra).max(cap / 2),
            )
        }
    };
    let bundles = pack(&small, budget);
    let files = nodes + bundles.len() + long + extra;
    if files <= cap {
        return (Packing::Bundled, bundles, Vec::new());
    }
    let leaves = leaves_to_fold(inp, &members, files - cap, file_bytes);
    (Packing::Folded, bundles, leaves)
}

/// The leaves whose pages become sections of their parent's page, so that `need` fewer files
/// are left: the smallest first, each while its parent's page stays under the token cap.
fn leaves_to_fold(
    inp: &Inputs,
    nodes: &[usize],
    need: usize,
    file_bytes: Option<usize>,
) -> Vec<usize> {
    let tree = inp.tree;
    let mut page: std::collections::HashMap<usize, usize> = nodes
        .iter()
        .filter(|&&n| !tree.nodes[n].children.is_empty())
        .map(|&n| (n, page_estimate(inp, n)))
        .collect();
    let mut leaves: Vec<(usize, usize, usize)> = nodes
        .iter()
        .copied()
        .filter(|&n| tree.nodes[n].children.is_empty())
        .filter_map(|n| tree.nodes[n].parent.map(|p| (n, p, page_estimate(inp, n))))
        .collect();
    leaves.sort_by(|a, b| {
        a.2.cmp(&b.2)
            .then_with(|| tree.nodes[a.0].path.cmp(&tree.nodes[b.0].path))
    });
    let page_cap = file_bytes.map_or(usize::MAX, |b| b - b / 8);
    let mut out = Vec::new();
    for (leaf, parent, bytes) in leaves {
        if out.len() >= need {
            break;
        }
        let total = page.get_mut(&parent).expect("a parent has a page");
        if *total + bytes <= page_cap {
            *total += bytes;
            out.push(leaf);
        }
    }
    out
}

/// About the bytes of a node's page (or its section, for a leaf): the summary, and a row per
/// document or a line per child.
fn page_estimate(inp: &Inputs, node: usize) -> usize {
    let n = &inp.tree.nodes[node];
    let row = |d: usize| {
        let c = &inp.cards[d];
        let phrases: usize = c.phrases.iter().take(2).map(String::len).sum();
        c.title.len() + c.one_line.len().min(100) + phrases + inp.docs[d].id.len() + 48
    };
    let rows: usize = n.docs.iter().map(|&d| row(d)).sum::<usize>()
        + n.see_also
            .iter()
            .map(|&d| inp.cards[d].title.len() + 64)
            .sum::<usize>();
    let children = n.children.len() * 200;
    400 + n.summary.len() + rows + children
}

/// Without a token cap, the bytes a bundle may hold to spread `small` over `room` files, with a
/// quarter to spare for whole leaves (at least [`BUNDLE_BYTES`]).
fn spread(small: &[(usize, usize, usize)], room: usize) -> usize {
    let total: usize = small.iter().map(|s| s.2).sum();
    let each = total.div_ceil(room.max(1));
    BUNDLE_BYTES.max(each + each / 4)
}

/// Packs documents into bundles in order, whole leaves together while they fit `budget`.
fn pack(small: &[(usize, usize, usize)], budget: usize) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut cur: Vec<usize> = Vec::new();
    let mut used = 0;
    for leaf in small.chunk_by(|a, b| a.0 == b.0) {
        let whole: usize = leaf.iter().map(|s| s.2).sum();
        if !cur.is_empty() && used + whole > budget {
            out.push(std::mem::take(&mut cur));
            used = 0;
        }
        for &(_, d, b) in leaf {
            if !cur.is_empty() && used + b > budget {
                out.push(std::mem::take(&mut cur));
                used = 0;
            }
            cur.push(d);
            used += b;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Bytes a document takes in a bundle, exactly as rendered.
fn section_bytes(inp: &Inputs, d: usize) -> usize {
    super::bundle::bundled_bytes(&inp.docs[d], &inp.cards[d].title)
}

/// The documents of a leaf in row order (by id).
fn rows(inp: &Inputs, leaf: usize) -> Vec<usize> {
    let mut v = inp.tree.nodes[leaf].docs.clone();
    v.sort_by(|a, b| inp.docs[*a].id.cmp(&inp.docs[*b].id));
    debug_assert!(v.iter().all(|&d| inp.home[d] == leaf));
    v
}

/// Every node of a skill.
fn subtree(tree: &Tree, root: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        out.push(n);
        stack.extend(&tree.nodes[n].children);
    }
    out
}

/// A skill's leaves in folder order.
fn leaves_in_order(tree: &Tree, root: usize) -> Vec<usize> {
    let mut v: Vec<usize> = subtree(tree, root)
        .into_iter()
        .filter(|&n| tree.nodes[n].children.is_empty())
        .collect();
    v.sort_by(|&a, &b| tree.nodes[a].path.cmp(&tree.nodes[b].path));
    v
}

/// Makes each of `leaves` a section of its parent's page.
fn fold(tree: &Tree, leaves: &[usize], pl: &mut Placement) {
    for &n in leaves {
        let p = tree.nodes[n].parent.expect("a folded leaf has a parent");
        pl.folded[n] = true;
        pl.pages[n] = format!("{}#{}", tree.nav_file(p), tree.nodes[n].folder);
    }
}
