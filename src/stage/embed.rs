//! Embed stage: each document's card text plus its raw text (truncated), and re-embedding of
//! clusters; memoized by the text's hash and the embedder's identity.

use crate::db::cache::KeyParts;
use crate::db::exec::{Batching, Executor, Plan};
use crate::embed::{EmbedError, Embedder};
use crate::error::BuildError;
use crate::ingest::Document;
use crate::llm::Card;
use crate::matrix::Matrix;
use crate::text::clip_chars;

/// Version of the embed stage's key layout.
pub const EMBED_VERSION: u32 = 1;

/// The embedding input of a document: `card + "\n---\n" + text[..max_doc_chars]`.
pub fn document_text(card: &Card, doc: &Document, max_doc_chars: usize) -> String {
    format!(
        "{}\n---\n{}",
        card.render(),
        clip_chars(&doc.text, max_doc_chars)
    )
}

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
/// the passages of the long ones (stage `chunk`); each text is memoized on its own.
pub fn embed_documents(
    docs: &[Document],
    cards: &[Card],
    max_doc_chars: usize,
    chunking: (usize, usize),
    embedder: &dyn Embedder,
    exec: &mut Executor,
) -> Result<DocVectors, BuildError> {
    use rayon::prelude::*;
    let texts: Vec<(String, String)> = docs
        .iter()
        .zip(cards)
        .map(|(d, c)| (d.id.clone(), document_text(c, d, max_doc_chars)))
        .collect();
    let heads = embed_texts("embed", &texts, embedder, exec)?;
    let (limit, max) = chunking;
    let per_doc: Vec<Vec<String>> = docs
        .par_iter()
        .zip(cards)
        .map(|(d, c)| {
            // A document the head embedding covers whole, and that would give fewer than two
            // full passages, needs none (its passages would repeat the head: at 10,000 short
            // documents they doubled the vectors an edit build reads).
            let whole = crate::stage::chunk::estimate_tokens(&c.render())
                + crate::stage::chunk::estimate_tokens(&d.text);
            if limit == 0 || (whole <= 2 * limit && d.text.chars().count() <= max_doc_chars) {
                return Vec::new();
            }
            // Passages go in as they are: a title on each (measured on covidqa) pulls every
            // passage of a paper towards the same vector and costs dense retrieval 0.03 Recall@5.
            crate::stage::chunk::passages(&d.text, limit, max + 1)
        })
        .collect();
    let truncated: Vec<usize> = (0..per_doc.len())
        .filter(|&i| per_doc[i].len() > max)
        .collect();
    let per_doc: Vec<Vec<String>> = per_doc
        .into_iter()
        .map(|mut ps| {
            ps.truncate(max);
            ps
        })
        .collect();
    let mut items: Vec<(String, String)> = Vec::new();
    let mut owner: Vec<u32> = Vec::new();
    for (i, ps) in per_doc.into_iter().enumerate() {
        for (k, p) in ps.into_iter().enumerate() {
            items.push((format!("{}#{}", docs[i].id, k + 1), p));
            owner.push(i as u32);
        }
    }
    let chunks = if items.is_empty() {
        Matrix::new(heads.dims)
    } else {
        embed_texts("chunk", &items, embedder, exec)?
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

/// The memo key of one embedding.
pub fn embed_key(text: &str, embedder: &dyn Embedder) -> KeyParts {
    KeyParts {
        stage: "embed".into(),
        stage_version: EMBED_VERSION,
        prompt: String::new(),
        model: embedder.model_id(),
        inputs: vec![crate::hash::content_hash(text.as_bytes())],
    }
}

/// Embeds `(subject, text)` pairs through the memo, in length-sorted batches of the
/// backend's size; counts go to `stage`. Every vector (cached or new) must have one size.
pub fn embed_texts(
    stage: &'static str,
    items: &[(String, String)],
    embedder: &dyn Embedder,
    exec: &mut Executor,
) -> Result<Matrix, BuildError> {
    let batching = Batching {
        size: embedder.batch_size(),
        order: |(_, text): &(String, String)| text.len(),
    };
    let vectors: Vec<Vec<f32>> = exec.run_batched(
        stage,
        items,
        |(subject, text)| Plan {
            subject: subject.clone(),
            parts: embed_key(text, embedder),
            input_chars: text.len(),
        },
        batching,
        |group| {
            let texts: Vec<&str> = group.iter().map(|(_, t)| t.as_str()).collect();
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
    )?;
    let mut vectors = vectors;
    if exec.is_dry() {
        harmonize(&mut vectors);
    }
    let dims = vectors.first().map_or(0, Vec::len);
    let mut m = Matrix::new(dims);
    m.data.reserve(dims * vectors.len());
    // Consumed one by one, so the vectors are not held twice.
    for (v, (subject, _)) in vectors.into_iter().zip(items) {
        if v.len() != dims || dims == 0 {
            return Err(BuildError::Embed(EmbedError::Backend(format!(
                "the vector of `{subject}` has {} dimensions, but others from {} have {dims}\n  help: the cache holds vectors of another shape; run `c2s clean --cache` and build again",
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
