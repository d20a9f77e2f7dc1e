//! A compiled output opened for serving, from its files alone (no config, no memo, no build):
//! the manifest (`c2s.lock`), documents and cards (`documents.json`), the tree (`tree.json`),
//! document vectors (`vectors.bin`), and the sizes of the navigation files.

use std::path::{Path, PathBuf};

use crate::config::{EmbedBackendKind, EmbedConfig, Loaded};
use crate::embed::Embedder;
use crate::format::LOCK_FILE;
use crate::format::lock::Lock;
use crate::ingest::Document;
use crate::llm::Card;
use crate::serve::ServeError;
use crate::stage::embed::DocVectors;
use crate::stage::render::{
    SERVE_TREE, SERVE_VECTORS, ServeTree, decode_vectors, doc_entries_json,
};
use crate::tree::Tags;
use crate::tree::{Node, Tree};

/// What serving reads of an output.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub out: PathBuf,
    pub lock: Lock,
    /// Documents in id order.
    pub docs: Vec<Document>,
    pub cards: Vec<Card>,
    /// One row per document, and the passage vectors of the long ones.
    pub vectors: DocVectors,
    pub tree: Tree,
    /// Bytes of each node's navigation file (0 for a leaf folded into its parent's page).
    pub nav_bytes: Vec<usize>,
    /// Per node: `<parent page>#<folder>` when the node is a section of its parent's page.
    pub pages: Vec<Option<String>>,
}

impl Compiled {
    /// Opens the output folder `out`.
    pub fn open(out: &Path) -> Result<Compiled, ServeError> {
        let lock = read_lock(out)?;
        // Each file must be the one the build wrote (the lock holds its hash).
        let read = |name: &str| {
            let path = out.join(name);
            let bytes = std::fs::read(&path).map_err(|e| ServeError::Corrupt {
                message: format!("cannot read it: {e}"),
                path: path.clone(),
            })?;
            if lock.outputs.get(name) != Some(&crate::format::lock::file_hash(&bytes)) {
                return Err(ServeError::Corrupt {
                    path,
                    message: "it differs from what the build wrote (see c2s.lock)".into(),
                });
            }
            Ok(bytes)
        };
        let corrupt = |name: &str, message: String| ServeError::Corrupt {
            path: out.join(name),
            message,
        };
        let entries = doc_entries_json(&read("documents.json")?)
            .map_err(|e| corrupt("documents.json", e.to_string()))?;
        let mut docs = Vec::with_capacity(entries.len());
        let mut cards = Vec::with_capacity(entries.len());
        for (id, e) in entries {
            cards.push(Card {
                title: e.title.clone(),
                one_line: e.one_line,
                phrases: e.phrases,
            });
            docs.push(Document::served(id, e.source, e.title, e.text, e.aliases));
        }
        let vectors =
            decode_vectors(&read(SERVE_VECTORS)?).map_err(|m| corrupt(SERVE_VECTORS, m))?;
        if vectors.docs.rows != docs.len() {
            return Err(corrupt(
                SERVE_VECTORS,
                format!("{} vectors for {} documents", vectors.docs.rows, docs.len()),
            ));
        }
        let st: ServeTree = serde_json::from_slice(&read(SERVE_TREE)?)
            .map_err(|e| corrupt(SERVE_TREE, e.to_string()))?;
        let pages: Vec<Option<String>> = st.nodes.iter().map(|n| n.page.clone()).collect();
        let tree = to_tree(st, &docs).map_err(|m| corrupt(SERVE_TREE, m))?;
        let nav_bytes = (0..tree.nodes.len())
            .map(|i| match pages[i] {
                Some(_) => 0,
                None => {
                    std::fs::metadata(out.join(tree.nav_file(i))).map_or(0, |m| m.len() as usize)
                }
            })
            .collect();
        Ok(Compiled {
            out: out.to_path_buf(),
            lock,
            docs,
            cards,
            vectors,
            tree,
            nav_bytes,
            pages,
        })
    }

    /// The embedder that built the output, for embedding questions. Its settings come from the
    /// lock (model paths relative to the output folder); when the model is not found there, a
    /// config's own `[embed.onnx]` paths are tried. The model must be the one that built it.
    pub fn query_embedder(&self, config: Option<&Loaded>) -> Result<Box<dyn Embedder>, ServeError> {
        let fail = |message: String, help: &str| ServeError::Embedder {
            out: self.out.clone(),
            message,
            help: help.to_string(),
        };
        let Some(e) = self.lock.embed.as_ref().map(|e| e.config()) else {
            return Err(fail(
                "its c2s.lock records no embedder settings".into(),
                "rebuild it with this version of c2s (`c2s build`)",
            ));
        };
        let built = self.lock.models.get("embed").cloned().unwrap_or_default();
        let mut tries: Vec<(EmbedConfig, PathBuf)> = vec![(e.clone(), self.out.clone())];
        if let Some(l) = config.filter(|l| l.config.embed.backend == e.backend) {
            let mut mine = e.clone();
            mine.onnx.model_dir = l.config.embed.onnx.model_dir.clone();
            mine.onnx.library = l.config.embed.onnx.library.clone();
            mine.openai = l.config.embed.openai.clone();
            tries.push((mine, l.base_dir.clone()));
        }
        let mut last = String::new();
        for (cfg, base) in tries {
            match crate::embed::open(&cfg, &base) {
                Ok(emb) if emb.model_id() == built => return Ok(emb),
                Ok(emb) => {
                    last = format!(
                        "the output was embedded with `{built}`, the model found is `{}`",
                        emb.model_id()
                    )
                }
                Err(err) => last = err.to_string(),
            }
        }
        let help = match e.backend {
            EmbedBackendKind::Onnx => {
                "point --set embed.onnx.model_dir=DIR (and embed.onnx.library) at the model that built the output, e.g. after `scripts/fetch-models.sh`"
            }
            _ => "rebuild the output, or serve it with the settings that built it",
        };
        Err(fail(last, help))
    }
}

/// Reads `c2s.lock`; a folder without one is not a c2s output.
pub fn read_lock(out: &Path) -> Result<Lock, ServeError> {
    if !out.is_dir() {
        return Err(ServeError::NotOutput {
            path: out.to_path_buf(),
            why: "no such folder".into(),
        });
    }
    let path = out.join(LOCK_FILE);
    let bytes = std::fs::read(&path).map_err(|_| ServeError::NotOutput {
        path: out.to_path_buf(),
        why: format!("it has no {LOCK_FILE}"),
    })?;
    serde_json::from_slice(&bytes).map_err(|e| ServeError::Corrupt {
        path,
        message: e.to_string(),
    })
}

/// The tree of `tree.json` over the documents (in id order).
fn to_tree(st: ServeTree, docs: &[Document]) -> Result<Tree, String> {
    let index: std::collections::HashMap<&str, usize> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i))
        .collect();
    let n = st.nodes.len();
    let ids = |v: &[String]| -> Result<Vec<usize>, String> {
        v.iter()
            .map(|id| {
                index
                    .get(id.as_str())
                    .copied()
                    .ok_or_else(|| format!("unknown document id `{id}`"))
            })
            .collect()
    };
    let mut nodes: Vec<Node> = Vec::with_capacity(n);
    for s in &st.nodes {
        if let Some(bad) = s.children.iter().find(|&&c| c >= n) {
            return Err(format!("node {} has no child {bad}", s.path));
        }
        nodes.push(Node {
            level: s.level,
            children: s.children.clone(),
            docs: ids(&s.docs)?,
            see_also: ids(&s.see_also)?,
            summary: s.summary.clone(),
            label: s.label.clone(),
            tags: Tags {
                entities: s.entities.clone(),
                doc_types: s.doc_types.clone(),
            },
            folder: s.path.rsplit('/').next().unwrap_or_default().to_string(),
            path: s.path.clone(),
            ..Node::default()
        });
    }
    for i in 0..n {
        for c in nodes[i].children.clone() {
            nodes[c].parent = Some(i);
        }
    }
    if let Some(bad) = st.roots.iter().find(|&&r| r >= n) {
        return Err(format!("no root node {bad}"));
    }
    let mut tree = Tree {
        nodes,
        roots: st.roots,
        levels: 0,
    };
    tree.count_documents();
    Ok(tree)
}
