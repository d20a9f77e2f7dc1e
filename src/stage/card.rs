//! Card stage: one card per document (frontmatter title + description need no LLM call).

use rayon::prelude::*;

use crate::error::BuildError;
use crate::ingest::Document;
use crate::llm::{Card, CardInput, Llm};

/// Cards for every document, in document order. Returns the cards and how many called the LLM.
pub fn cards(
    docs: &[Document],
    llm: &dyn Llm,
    bar: &indicatif::ProgressBar,
) -> Result<(Vec<Card>, usize), BuildError> {
    let cards: Result<Vec<Card>, BuildError> = docs
        .par_iter()
        .map(|d| {
            let input = CardInput {
                title: d.title.as_deref(),
                description: d.description.as_deref(),
                text: &d.text,
            };
            let card = llm.card(&input).map_err(|e| {
                BuildError::Llm(format!("card for document `{}` ({}): {e}", d.id, d.source))
            });
            bar.inc(1);
            card
        })
        .collect();
    Ok((cards?, docs.len()))
}
