//! Embed stage: each document's card text plus its raw text (truncated), and re-embedding of clusters.

use crate::embed::Embedder;
use crate::error::BuildError;
use crate::ingest::Document;
use crate::kmeans::Matrix;
use crate::llm::Card;
use crate::text::clip_chars;

/// The embedding input of a document: `card + "\n---\n" + text[..max_doc_chars]`.
pub fn document_text(card: &Card, doc: &Document, max_doc_chars: usize) -> String {
    format!(
        "{}\n---\n{}",
        card.render(),
        clip_chars(&doc.text, max_doc_chars)
    )
}

/// Embeds texts into a matrix, checking the dimension of what comes back.
pub fn embed_texts(texts: &[String], embedder: &dyn Embedder) -> Result<Matrix, BuildError> {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embedder
        .embed(&refs)
        .map_err(|e| BuildError::Embed(e.to_string()))?;
    let dims = embedder.dims();
    let mut m = Matrix::new(dims);
    for (i, v) in vectors.iter().enumerate() {
        if v.len() != dims {
            return Err(BuildError::Embed(format!(
                "vector {i} has {} dimensions, expected {dims} ({})",
                v.len(),
                embedder.model_id()
            )));
        }
        m.push(v);
    }
    Ok(m)
}
