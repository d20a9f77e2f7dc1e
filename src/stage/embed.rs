//! Embed stage: each document's card text plus its raw text (truncated), and re-embedding of
//! clusters; memoized by the text's hash and the embedder's identity.

use crate::db::cache::KeyParts;
use crate::db::exec::{Executor, Plan};
use crate::embed::Embedder;
use crate::error::BuildError;
use crate::ingest::Document;
use crate::kmeans::Matrix;
use crate::llm::Card;
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

/// The memo key of one embedding.
pub fn embed_key(text: &str, embedder: &dyn Embedder) -> KeyParts {
    KeyParts {
        stage: "embed".into(),
        stage_version: EMBED_VERSION,
        prompt: String::new(),
        model: embedder.model_id(),
        inputs: vec![blake3::hash(text.as_bytes()).to_hex()[..32].to_string()],
    }
}

/// Embeds `(subject, text)` pairs through the memo; counts go to `stage`.
pub fn embed_texts(
    stage: &'static str,
    items: &[(String, String)],
    embedder: &dyn Embedder,
    exec: &mut Executor,
) -> Result<Matrix, BuildError> {
    let dims = embedder.dims();
    let vectors: Vec<Vec<f32>> = exec.run(
        stage,
        items,
        |(subject, text)| Plan {
            subject: subject.clone(),
            parts: embed_key(text, embedder),
            input_chars: text.len(),
        },
        |(_, text)| {
            let mut v = embedder
                .embed(&[text.as_str()])
                .map_err(|e| BuildError::Embed(e.to_string()))?;
            v.pop().ok_or_else(|| {
                BuildError::Embed(format!("{} returned no vector", embedder.model_id()))
            })
        },
    )?;
    let mut m = Matrix::new(dims);
    for (v, (subject, _)) in vectors.iter().zip(items) {
        if v.len() != dims {
            return Err(BuildError::Embed(format!(
                "the vector of `{subject}` has {} dimensions, but {} gives {dims}\n  help: the cache holds vectors of another shape; run `c2s clean --cache` and build again",
                v.len(),
                embedder.model_id()
            )));
        }
        m.push(v);
    }
    Ok(m)
}
