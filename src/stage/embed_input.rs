//! What the embed stage embeds per document: its head text (card + the start of its text) and
//! the passages of a long one, each keyed by the hash of its text. A document's hashes are
//! recalled by its recipe (`db::recipes`) when the last build recorded it, so an edit build
//! makes, hashes and cuts into passages only the texts of the documents that changed; a text
//! is made again only if the memo lacks its vector.

use std::borrow::Cow;
use std::sync::OnceLock;

use rayon::prelude::*;

use crate::db::cache::Key;
use crate::db::recipes::{Kept, Recipes};
use crate::ingest::Document;
use crate::llm::Card;
use crate::stage::chunk::{estimate_tokens, passages};
use crate::text::clip_chars;

/// Version of what an embed recipe names (bump when its value's layout changes).
const RECIPE_VERSION: u32 = 1;

/// The name under which embed recipes are counted.
pub const KIND: &str = "embed";

/// How documents are cut for embedding: `tree.max_doc_chars`, `embed.chunk_tokens` (0: no
/// passages) and `embed.max_chunks`.
#[derive(Debug, Clone, Copy)]
pub struct Cut {
    pub max_doc_chars: usize,
    pub limit: usize,
    pub max: usize,
}

/// The embedding input of a document: `card + "\n---\n" + text[..max_doc_chars]`.
pub fn document_text(card: &Card, doc: &Document, max_doc_chars: usize) -> String {
    format!(
        "{}\n---\n{}",
        card.render(),
        clip_chars(&doc.text, max_doc_chars)
    )
}

/// Where a text to embed comes from: made, or to be made again from its document (a passage:
/// from the document's passages, cut once into its cell however many of them are asked for).
enum Text<'a> {
    Made(Cow<'a, str>),
    Head(&'a Document, &'a Card, Cut),
    Passage(&'a Document, usize, Cut, &'a Cell),
}

/// A document's passages, cut when the first of them must be made again.
pub type Cell = OnceLock<Vec<String>>;

/// One text to embed: what it is about, the hash and length of its text, and the text.
pub struct ToEmbed<'a> {
    pub subject: String,
    pub hash: String,
    pub chars: usize,
    text: Text<'a>,
}

impl<'a> ToEmbed<'a> {
    /// A text made by the caller (owned, or borrowed from it).
    pub fn made(subject: String, text: impl Into<Cow<'a, str>>) -> ToEmbed<'a> {
        let text = text.into();
        ToEmbed {
            subject,
            hash: crate::hash::content_hash(text.as_bytes()),
            chars: text.len(),
            text: Text::Made(text),
        }
    }

    /// The text, made again from its document when only its hash was recalled; `None` when a
    /// recipe names a passage that the document's text does not give (a damaged record).
    pub fn text(&self) -> Option<Cow<'_, str>> {
        match &self.text {
            Text::Made(s) => Some(Cow::Borrowed(s.as_ref())),
            Text::Head(doc, card, cut) => {
                Some(Cow::Owned(document_text(card, doc, cut.max_doc_chars)))
            }
            Text::Passage(doc, k, cut, cell) => cell
                .get_or_init(|| cut_passages(doc, cut))
                .get(*k)
                .map(|p| Cow::Borrowed(p.as_str())),
        }
    }
}

/// A document's texts: its head, its passages (at most `embed.max_chunks`), and whether the
/// text went on past the last one.
pub struct DocTexts<'a> {
    pub head: ToEmbed<'a>,
    pub passages: Vec<ToEmbed<'a>>,
    pub truncated: bool,
}

/// The texts of every document, in order (`cells`: one per document); records each document's
/// recipe in `recipes`.
pub fn doc_texts<'a>(
    docs: &'a [Document],
    cards: &'a [Card],
    cells: &'a [Cell],
    cut: Cut,
    recipes: &mut Recipes,
) -> Vec<DocTexts<'a>> {
    let known: &Recipes = recipes;
    let made: Vec<(DocTexts, Option<(Key, Kept)>)> = docs
        .par_iter()
        .zip(cards)
        .zip(cells)
        .map(|((doc, card), cell)| {
            let key = recipe(doc, card, cut);
            match known
                .get(&key)
                .and_then(|v| recall(v, (doc, card, cell), cut))
            {
                Some(texts) => (texts, Some((key, Kept::Recorded))),
                None => {
                    let texts = make(doc, card, cut);
                    let value = encode(&texts);
                    (texts, Some((key, Kept::Made(KIND, value))))
                }
            }
        })
        .collect();
    recipes.keep_all(made)
}

/// A document's passages, with `cut.max + 1` asked for so that a cut text shows.
fn cut_passages(doc: &Document, cut: &Cut) -> Vec<String> {
    passages(&doc.text, cut.limit, cut.max + 1)
}

/// Whether `doc` (with `card`) is cut into passages: a document its head embedding covers
/// whole, and that would give fewer than two full passages, needs none (its passages would
/// repeat the head: at 10,000 short documents they doubled the vectors an edit build reads).
fn has_passages(doc: &Document, card: &Card, cut: &Cut) -> bool {
    if cut.limit == 0 {
        return false;
    }
    let whole = estimate_tokens(&card.render()) + estimate_tokens(&doc.text);
    !(whole <= 2 * cut.limit && doc.text.chars().count() <= cut.max_doc_chars)
}

/// Makes a document's texts.
fn make<'a>(doc: &'a Document, card: &'a Card, cut: Cut) -> DocTexts<'a> {
    let head = ToEmbed::made(doc.id.clone(), document_text(card, doc, cut.max_doc_chars));
    // Passages go in as they are: a title on each (measured on covidqa) pulls every passage of
    // a paper towards the same vector and costs dense retrieval 0.03 Recall@5.
    let mut cut_up = if has_passages(doc, card, &cut) {
        cut_passages(doc, &cut)
    } else {
        Vec::new()
    };
    let truncated = cut_up.len() > cut.max;
    cut_up.truncate(cut.max);
    let passages = cut_up
        .into_iter()
        .enumerate()
        .map(|(k, p)| ToEmbed::made(format!("{}#{}", doc.id, k + 1), p))
        .collect();
    DocTexts {
        head,
        passages,
        truncated,
    }
}

/// A document's recipe: the hash of everything its texts are made from (its content hash,
/// which covers its text, its card, the cut settings, and the code that cuts: the c2s version).
fn recipe(doc: &Document, card: &Card, cut: Cut) -> Key {
    let mut h = blake3::Hasher::new();
    h.update(b"c2s embed texts\x1f");
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(&RECIPE_VERSION.to_le_bytes());
    for n in [cut.max_doc_chars, cut.limit, cut.max] {
        h.update(&(n as u64).to_le_bytes());
    }
    h.update(doc.content_hash.as_bytes());
    // Every field of the card (a new one fails to compile here), without rendering it.
    let Card {
        title,
        one_line,
        phrases,
    } = card;
    for part in [title, one_line] {
        h.update(b"\x1f");
        h.update(part.as_bytes());
    }
    for phrase in phrases {
        h.update(b"\x1e");
        h.update(phrase.as_bytes());
    }
    *h.finalize().as_bytes()
}

/// `truncated` (0 or 1), then a line per text (head first): its hash and length.
fn encode(texts: &DocTexts) -> Vec<u8> {
    let mut out = String::from(if texts.truncated { "1" } else { "0" });
    for t in std::iter::once(&texts.head).chain(&texts.passages) {
        out.push_str(&format!("\n{} {}", t.hash, t.chars));
    }
    out.into_bytes()
}

/// The texts a recorded value names, to be made again only when needed.
fn recall<'a>(
    value: &[u8],
    (doc, card, cell): (&'a Document, &'a Card, &'a Cell),
    cut: Cut,
) -> Option<DocTexts<'a>> {
    let text = std::str::from_utf8(value).ok()?;
    let mut lines = text.split('\n');
    let truncated = match lines.next()? {
        "0" => false,
        "1" => true,
        _ => return None,
    };
    let mut texts = Vec::new();
    for (i, line) in lines.enumerate() {
        let (hash, chars) = line.split_once(' ')?;
        let (subject, text) = match i {
            0 => (doc.id.clone(), Text::Head(doc, card, cut)),
            k => (
                format!("{}#{k}", doc.id),
                Text::Passage(doc, k - 1, cut, cell),
            ),
        };
        texts.push(ToEmbed {
            subject,
            hash: hash.to_string(),
            chars: chars.parse().ok()?,
            text,
        });
    }
    let mut texts = texts.into_iter();
    let head = texts.next()?;
    Some(DocTexts {
        head,
        passages: texts.collect(),
        truncated,
    })
}
