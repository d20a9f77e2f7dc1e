//! Document files (`<leaf>/docs/<name>.md`), `documents.json`, and the serving data that lets
//! `c2s ask --offline` navigate from the output alone: `tree.json` (the tree as data) and
//! `vectors.bin` (each document's embedding as f16).

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use super::front::{folder_of, frontmatter};
use super::{Ctx, yaml_str};
use crate::ingest::Document;
use crate::matrix::Matrix;
use crate::stage::embed::DocVectors;

/// The tree as data, for serving.
pub const SERVE_TREE: &str = "tree.json";
/// Document vectors, for serving.
pub const SERVE_VECTORS: &str = "vectors.bin";
const VECTORS_MAGIC: &[u8; 8] = b"C2SVEC2\n";

/// The file of one document (or the first part of a split one).
pub fn doc_file(ctx: &Ctx, d: usize) -> Vec<u8> {
    let doc = &ctx.docs[d];
    let parts = &ctx.place.docs[d].parts;
    if !parts.is_empty() {
        return super::bundle::part_file(ctx, d, 0);
    }
    let mut s = String::with_capacity(doc.text.len() + 256);
    frontmatter(ctx, d, None, &mut s);
    let folder = folder_of(&ctx.place.docs[d].file);
    s.push_str(&ctx.linked_text(d, 0..doc.text.len(), folder));
    if !doc.text.ends_with('\n') {
        s.push('\n');
    }
    s.into_bytes()
}

/// The small files that point a folded duplicate's id at the document it was folded into.
pub fn alias_files(ctx: &Ctx, d: usize) -> Vec<(String, Vec<u8>)> {
    let doc = &ctx.docs[d];
    let mut out = Vec::new();
    if ctx.place.docs[d].anchor.is_some() {
        // A bundled document's aliases are anchors in its bundle.
        return out;
    }
    let Some((folder, file)) = ctx.place.docs[d].file.rsplit_once("/docs/") else {
        return out;
    };
    for alias in &doc.aliases {
        let text = format!(
            "---\nid: {}\nsame_as: {}\n---\nThe same text as [{}]({file}).\n",
            yaml_str(alias),
            yaml_str(&doc.id),
            doc.id,
        );
        out.push((super::doc_file(folder, alias), text.into_bytes()));
    }
    out
}

/// One entry of `documents.json`: the document and its card.
#[derive(Serialize, Deserialize)]
pub struct DocEntry {
    pub title: String,
    pub source: String,
    pub text: String,
    pub one_line: String,
    pub phrases: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// The file that holds it (`…#<id>` for a bundle's section); absent when served by id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// One entry of `documents.json` as written: borrowed, so writing it copies nothing.
#[derive(Serialize)]
pub(super) struct DocEntryRef<'a> {
    pub title: &'a str,
    pub source: &'a str,
    pub text: &'a str,
    pub one_line: &'a str,
    pub phrases: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub aliases: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// One entry of a map as `serde_json::to_writer_pretty` writes the map (`  "<key>": …`, at the
/// map's indentation), appended to `buf`.
pub(super) fn pretty_entry<V: Serialize>(key: &str, v: &V, buf: &mut Vec<u8>) -> io::Result<()> {
    let at = buf.len();
    serde_json::to_writer_pretty(&mut *buf, &BTreeMap::from([(key, v)]))
        .map_err(io::Error::other)?;
    // "{\n" + the entry + "\n}": the entry alone.
    buf.truncate(buf.len() - 2);
    buf.drain(at..at + 2);
    Ok(())
}

/// Reads `documents.json` back, in id order.
pub fn doc_entries_json(bytes: &[u8]) -> serde_json::Result<BTreeMap<String, DocEntry>> {
    serde_json::from_slice(bytes)
}

/// One node of `tree.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServeNode {
    pub path: String,
    pub level: usize,
    pub label: String,
    pub summary: String,
    pub entities: Vec<String>,
    pub doc_types: Vec<String>,
    /// Child nodes, as indices into `nodes`.
    pub children: Vec<usize>,
    /// Member document ids (leaves).
    pub docs: Vec<String>,
    /// `@see` stub document ids (leaves).
    pub see_also: Vec<String>,
    /// The page that shows the node when it is not its own `INDEX.md`: `<parent page>#<folder>`
    /// for a leaf folded into its parent's page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
}

/// `tree.json`: the tree, nodes in path order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServeTree {
    pub version: u32,
    pub roots: Vec<usize>,
    pub nodes: Vec<ServeNode>,
}

/// `tree.json`, one node per line so that a diff shows which nodes changed.
pub fn serve_tree(ctx: &Ctx) -> String {
    let tree = ctx.tree;
    let mut order: Vec<usize> = (0..tree.nodes.len()).collect();
    order.sort_by(|&a, &b| tree.nodes[a].path.cmp(&tree.nodes[b].path));
    let mut pos = vec![0usize; tree.nodes.len()];
    for (p, &i) in order.iter().enumerate() {
        pos[i] = p;
    }
    let ids = |v: &[usize]| -> Vec<String> {
        let mut ids: Vec<String> = v.iter().map(|&d| ctx.docs[d].id.clone()).collect();
        ids.sort();
        ids
    };
    let mut roots: Vec<usize> = tree.roots.iter().map(|&r| pos[r]).collect();
    roots.sort_unstable();
    let mut s = format!("{{\"version\":1,\"roots\":{},\"nodes\":[\n", json(&roots));
    for (p, &i) in order.iter().enumerate() {
        let n = &tree.nodes[i];
        let node = ServeNode {
            path: n.path.clone(),
            level: n.level,
            label: n.label.clone(),
            summary: n.summary.clone(),
            entities: n.tags.entities.clone(),
            doc_types: n.tags.doc_types.clone(),
            children: n.children.iter().map(|&c| pos[c]).collect(),
            docs: ids(&n.docs),
            see_also: ids(&n.see_also),
            page: ctx.place.folded[i].then(|| ctx.place.pages[i].clone()),
        };
        s.push_str(&json(&node));
        s.push_str(if p + 1 < order.len() { ",\n" } else { "\n" });
    }
    s.push_str("]}\n");
    s
}

fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("serializes")
}

/// `vectors.bin`: magic; document count, dims and passage count (u32 LE); one f16 LE row per
/// document in id order (the order of `documents.json`); the passage rows, grouped by document
/// in the same order; and the document index (u32 LE) of each passage.
/// Streamed into `w` a row at a time (a million rows are 0.5–0.8 GB).
pub fn encode_vectors(docs: &[Document], v: &DocVectors, w: &mut dyn Write) -> io::Result<()> {
    let mut order: Vec<usize> = (0..docs.len()).collect();
    order.sort_by(|&a, &b| docs[a].id.cmp(&docs[b].id));
    let mut by_doc: Vec<Vec<usize>> = vec![Vec::new(); docs.len()];
    for (row, &o) in v.owner.iter().enumerate() {
        by_doc[o as usize].push(row);
    }
    let dims = v.docs.dims;
    let mut buf = Vec::with_capacity(dims * 2);
    buf.extend_from_slice(VECTORS_MAGIC);
    for n in [order.len(), dims, v.chunks.rows] {
        buf.extend_from_slice(&(n as u32).to_le_bytes());
    }
    w.write_all(&buf)?;
    let mut put_row = |w: &mut dyn Write, row: &[f32]| {
        buf.clear();
        for &x in row {
            buf.extend_from_slice(&half::f16::from_f32(x).to_le_bytes());
        }
        w.write_all(&buf)
    };
    for &i in &order {
        put_row(w, v.docs.row(i))?;
    }
    let mut owners = Vec::with_capacity(v.chunks.rows * 4);
    for (pos, &i) in order.iter().enumerate() {
        for &row in &by_doc[i] {
            put_row(w, v.chunks.row(row))?;
            owners.extend_from_slice(&(pos as u32).to_le_bytes());
        }
    }
    w.write_all(&owners)
}

/// Reads `vectors.bin` back (the inverse of [`encode_vectors`], documents in id order);
/// `Err` says what is wrong with the file.
pub fn decode_vectors(bytes: &[u8]) -> Result<DocVectors, String> {
    let header = bytes
        .get(..20)
        .filter(|h| h.starts_with(VECTORS_MAGIC))
        .ok_or("not a c2s vectors file (bad header)")?;
    let word =
        |i: usize| u32::from_le_bytes(header[i..i + 4].try_into().expect("4 bytes")) as usize;
    let (rows, dims, chunks) = (word(8), word(12), word(16));
    if dims == 0 {
        return Err("the vectors have no dimensions".into());
    }
    let body = &bytes[20..];
    let need = (rows + chunks) * dims * 2 + chunks * 4;
    if body.len() != need {
        return Err(format!(
            "{rows} documents and {chunks} passages of {dims} dimensions need {need} bytes, the file has {}",
            body.len()
        ));
    }
    let read = |data: &[u8]| {
        let mut m = Matrix::new(dims);
        let mut row = vec![0.0f32; dims];
        for chunk in data.chunks_exact(dims * 2) {
            for (x, b) in row.iter_mut().zip(chunk.chunks_exact(2)) {
                *x = half::f16::from_le_bytes([b[0], b[1]]).to_f32();
            }
            m.push(&row);
        }
        m
    };
    let split = rows * dims * 2;
    let tail = split + chunks * dims * 2;
    let owner: Vec<u32> = body[tail..]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect();
    if let Some(bad) = owner.iter().find(|&&o| o as usize >= rows) {
        return Err(format!("a passage belongs to document {bad} of {rows}"));
    }
    Ok(DocVectors {
        docs: read(&body[..split]),
        chunks: read(&body[split..tail]),
        owner,
        truncated: Vec::new(),
    })
}
