//! Card stage: one card per document, memoized by the document's content hash and the model.

use crate::db::cache::KeyParts;
use crate::db::exec::{Executor, Json, Maybe, Plan, Vet};
use crate::error::BuildError;
use crate::ingest::Document;
use crate::llm::{Card, CardInput, Extractive, Llm, Stored};
use crate::stage::fallback::{Item, or_fallback};

/// Version of the card stage's key layout.
pub const CARD_VERSION: u32 = 1;

/// The memo key of a document's card. A document whose navigation text leaves something out
/// (planted sentences, HTML comments) is keyed by that text too, so a change of the rules
/// recomputes exactly those cards.
pub fn card_key(doc: &Document, llm: &dyn Llm) -> KeyParts {
    let mut inputs = vec![doc.content_hash.clone()];
    if let Some(nav) = &doc.navigation {
        inputs.push(format!(
            "planted@{}:{}",
            crate::planted::PLANTED_VERSION,
            crate::hash::content_hash(nav.as_bytes())
        ));
    }
    KeyParts {
        stage: "card".into(),
        stage_version: CARD_VERSION,
        prompt: llm.prompt_version("card"),
        model: llm.stage_model("card"),
        inputs,
    }
}

/// Whether frontmatter already gives the card's title and one-line (no LLM call needed).
pub fn has_own_card(doc: &Document) -> bool {
    doc.title.is_some() && doc.description.is_some()
}

/// What a document's card is made from: its frontmatter and its navigation text.
fn card_input(d: &Document) -> CardInput<'_> {
    CardInput {
        title: d.title.as_deref(),
        description: d.description.as_deref(),
        text: d.nav_text(),
    }
}

/// Cards for every document, in document order.
pub fn cards(
    docs: &[Document],
    llm: &dyn Llm,
    exec: &mut Executor,
) -> Result<Vec<Card>, BuildError> {
    let sink = exec.warnings.clone();
    let cards: Vec<Maybe<Json<Card>>> = exec.run(
        "card",
        docs,
        |d| Plan {
            subject: d.id.clone(),
            parts: card_key(d, llm),
            input_chars: d.nav_text().len(),
        },
        |d| {
            let input = card_input(d);
            // Frontmatter title + description: the extractive card keeps them and only adds phrases.
            let card = if has_own_card(d) {
                Extractive.card(&input)
            } else {
                llm.card(&input)
            };
            let what = format!("card for `{}`", d.id);
            let context = format!("card for document `{}` ({})", d.id, d.source);
            let item = Item {
                file: &d.source,
                what: &what,
                instead: "using the extractive card",
                context: &context,
            };
            or_fallback(card, item, &sink, || Extractive.card(&input))
        },
        |d, card| {
            if has_own_card(d) {
                return Vet::Recompute;
            }
            let input = card_input(d);
            Vet::from(llm.check_stored(Stored::Card(&input, &card.value.0)))
                .or_stand_in(&card.value.0, || Extractive.card(&input).ok())
        },
    )?;
    Ok(cards
        .into_iter()
        .zip(docs)
        .map(|(c, d)| without_planted_phrases(c.value.0, d))
        .collect())
}

/// A card without the key phrases that come from the document's planted sentences (by
/// construction none should: the card is made from the navigation text; this holds it for
/// any backend and any stored card).
fn without_planted_phrases(mut card: Card, d: &Document) -> Card {
    if let Some(plants) = crate::planted::Plants::of(&d.flags, d.nav_text()) {
        card.phrases.retain(|p| !plants.hold_only(p));
    }
    card
}
