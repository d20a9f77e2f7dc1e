//! Embed stage: each document's card text plus its raw text (truncated), the passages of long
//! documents (what to embed: `embed_input`), and re-embedding of clusters; memoized by the
//! text's hash and the embedder's identity.

use crate::db::cache::KeyParts;
use crate::db::exec::{Batching, Executor, Plan, Vet};
use crate::embed::{EmbedError, Embedder};
use crate::error::BuildError;
use crate::ingest::Document;
use crate::llm::Card;
use crate::matrix::Matrix;
use crate::stage::embed_input::{Cell, Cut, ToEmbed, doc_texts};

/// Version of the embed stage's key layout.
pub const EMBED_VERSION: u32 = 1;

/// A corpus's vectors: one per document (what clustering and routing use) and one per passage
/// of the long documents (what ranking uses: a document matches as well as its best passage).
#[derive(Debug, Clone)]
pub struct DocVectors {
    /// Per document: the normalized mean of its card embedding and its passages' vectors.
    pub docs: Matrix,
    /// Passage vectors, grouped by document in document order.
    pub chunks: Matrix,
    /// The document of each passage.
    pub owner: Vec<u32>,
    /// Documents whose passages reached `embed.max_chunks` before the end of the text.
    pub truncated: Vec<usize>,
}

/// Embeds every document (card + the start of its text, stage `embed`) and, with chunking on,
/// the passages of the long ones (stage `chunk`); each text is memoized on its own. The texts
/// are made only for documents whose recipe the last build did not record (`embed_input`).
pub fn embed_documents(
    docs: &[Document],
    cards: &[Card],
    cut: Cut,
    embedder: &dyn Embedder,
    exec: &mut Executor,
) -> Result<DocVectors, BuildError> {
    let cells: Vec<Cell> = (0..docs.len()).map(|_| Cell::new()).collect();
    let texts = doc_texts(docs, cards, &cells, cut, &mut exec.recipes);
    let heads: Vec<&ToEmbed> = texts.iter().map(|t| &t.head).collect();
    let heads = embed_items("embed", &heads, embedder, exec)?;
    let truncated: Vec<usize> = (0..texts.len()).filter(|&i| texts[i].truncated).collect();
    let mut items: Vec<&ToEmbed> = Vec::new();
    let mut owner: Vec<u32> = Vec::new();
    for (i, t) in texts.iter().enumerate() {
        for p in &t.passages {
            items.push(p);
            owner.push(i as u32);
        }
    }
    let chunks = if items.is_empty() {
        Matrix::new(heads.dims)
    } else {
        embed_items("chunk", &items, embedder, exec)?
    };
    if chunks.rows > 0 && chunks.dims != heads.dims {
        return Err(BuildError::Embed(EmbedError::Backend(format!(
            "passage vectors have {} dimensions, document vectors {}\n  help: the cache holds vectors of another shape; run `c2s clean --cache` and build again",
            chunks.dims, heads.dims
        ))));
    }
    // A long document's vector is its head's plus its passages', normalized (in place: a
    // million vectors are 1.5 GB).
    let mut doc_m = heads;
    for (row, &o) in owner.iter().enumerate() {
        doc_m
            .row_mut(o as usize)
            .iter_mut()
            .zip(chunks.row(row))
            .for_each(|(a, x)| *a += x);
    }
    for i in 0..doc_m.rows {
        crate::matrix::normalize(doc_m.row_mut(i));
    }
    Ok(DocVectors {
        docs: doc_m,
        chunks,
        owner,
        truncated,
    })
}

/// The memo key of one embedding (of the text whose content hash is `hash`).
pub fn embed_key(hash: &str, embedder: &dyn Embedder) -> KeyParts {
    KeyParts {
        stage: "embed".into(),
        stage_version: EMBED_VERSION,
        prompt: String::new(),
        model: embedder.model_id(),
        inputs: vec![hash.to_string()],
    }
}

/// Embeds `(subject, text)` pairs through the memo (see [`embed_items`]).
pub fn embed_texts(
    stage: &'static str,
    items: &[(String, String)],
    embedder: &dyn Embedder,
    exec: &mut Executor,
) -> Result<Matrix, BuildError> {
    let items: Vec<ToEmbed> = items
        .iter()
        .map(|(subject, text)| ToEmbed::made(subject.clone(), text.as_str()))
        .collect();
    let refs: Vec<&ToEmbed> = items.iter().collect();
    embed_items(stage, &refs, embedder, exec)
}

/// Embeds `items` through the memo, in length-sorted batches of the backend's size; counts go
/// to `stage`. Every vector (cached or new) must have one size.
pub fn embed_items(
    stage: &'static str,
    items: &[&ToEmbed],
    embedder: &dyn Embedder,
    exec: &mut Executor,
) -> Result<Matrix, BuildError> {
    let batching = Batching {
        size: embedder.batch_size(),
        order: |t: &&ToEmbed| t.chars,
    };
    let vectors: Vec<Vec<f32>> = exec.run_batched(
        stage,
        items,
        |t| Plan {
            subject: t.subject.clone(),
            parts: embed_key(&t.hash, embedder),
            input_chars: t.chars,
        },
        batching,
        |group| {
            let made: Vec<std::borrow::Cow<str>> = group
                .iter()
                .map(|t| {
                    t.text().ok_or_else(|| {
                        BuildError::Embed(EmbedError::Backend(format!(
                            "the recipes beside the memo name a passage `{}` that its document no longer has\n  help: run `c2s clean --cache` and build again",
                            t.subject
                        )))
                    })
                })
                .collect::<Result<_, _>>()?;
            let texts: Vec<&str> = made.iter().map(|t| t.as_ref()).collect();
            let v = embedder.embed(&texts)?;
            if v.len() != texts.len() {
                return Err(BuildError::Embed(EmbedError::Backend(format!(
                    "{} returned {} vectors for {} texts",
                    embedder.model_id(),
                    v.len(),
                    texts.len()
                ))));
            }
            Ok(v)
        },
        // The text is made only where the check reads it (a recomputation makes it anyway).
        |t, v| Vet::from(embedder.check_stored(&|| t.text().map(|c| c.into_owned()), v)),
    )?;
    let mut vectors = vectors;
    if exec.is_dry() {
        harmonize(&mut vectors);
    }
    let dims = vectors.first().map_or(0, Vec::len);
    let mut m = Matrix::new(dims);
    m.data.reserve(dims * vectors.len());
    // Consumed one by one, so the vectors are not held twice.
    for (v, t) in vectors.into_iter().zip(items) {
        if v.len() != dims || dims == 0 {
            return Err(BuildError::Embed(EmbedError::Backend(format!(
                "the vector of `{}` has {} dimensions, but others from {} have {dims}\n  help: the cache holds vectors of another shape; run `c2s clean --cache` and build again",
                t.subject,
                v.len(),
                embedder.model_id()
            ))));
        }
        m.push(&v);
    }
    Ok(m)
}

/// Dry runs mix cached vectors with stand-in ones: bring all to the most common size (zero-padded
/// or cut, then renormalized). The result only feeds the dry run's clustering.
fn harmonize(vectors: &mut [Vec<f32>]) {
    let mut counts: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
    for v in vectors.iter() {
        *counts.entry(v.len()).or_default() += 1;
    }
    let Some((&dims, _)) = counts.iter().max_by_key(|(_, n)| **n) else {
        return;
    };
    for v in vectors.iter_mut().filter(|v| v.len() != dims) {
        v.resize(dims, 0.0);
        crate::matrix::normalize(v);
    }
}
