//! From parsed records to documents: ids (sanitized, made unique), texts seen twice folded into
//! one document, titles that name nothing dropped, planted sentences flagged, and the content
//! hash that keys every stage.

use std::collections::HashMap;

use super::ids::{self, path_id, sanitize_id};
use super::{Document, IngestOptions, Origin, RawRecord};
use crate::diag::Diagnostics;
use crate::planted;

/// Where a record comes from.
pub(super) struct Location<'a> {
    pub(super) file: &'a str,
    pub(super) rel: &'a str,
    pub(super) root: usize,
    pub(super) multi: bool,
}

/// What a record's text alone decides: its hash (to fold duplicates), its planted sentences and
/// its navigation text.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Scan {
    pub(super) text_hash: String,
    pub(super) flags: Vec<crate::planted::Flag>,
    pub(super) navigation: Option<String>,
}

impl Scan {
    pub(super) fn of(text: &str) -> Scan {
        let flags = planted::flags(text);
        // Most documents have neither: one pass over their sentences (`flags`) is enough.
        let navigation = (!flags.is_empty() || text.contains("<!--"))
            .then(|| planted::navigation_text(text).into_owned());
        Scan {
            text_hash: blake3::hash(text.trim().as_bytes()).to_hex().to_string(),
            flags,
            navigation,
        }
    }
}

/// Assigns the id and appends the document; drops empty records, folds duplicate texts into the
/// first copy (its id becomes an alias), and warns about long texts.
pub(super) fn add_document(
    (rec, scan): (RawRecord, Scan),
    loc: &Location,
    opts: &IngestOptions,
    ids: &mut ids::IdAllocator,
    seen_text: &mut HashMap<String, usize>,
    docs: &mut Vec<Document>,
    diags: &mut Diagnostics,
) {
    let (file, line) = (loc.file, rec.line);
    let (source, id_basis) = match (loc.multi, line, &rec.anchor) {
        (_, _, Some(a)) => (format!("{file}#{a}"), format!("{}#{a}", loc.rel)),
        (true, Some(l), _) => (format!("{file}:{l}"), format!("{}:{l}", loc.rel)),
        _ => (file.to_string(), loc.rel.to_string()),
    };
    if rec.text.trim().is_empty() {
        diags.warn(
            file,
            line,
            "empty document: no text besides markup and components; skipped",
        );
        return;
    }
    let Scan {
        text_hash,
        mut flags,
        navigation,
    } = scan;
    // An attack quoted as an example stays out of navigation text, but is no plant.
    flags.retain(|f| !f.quoted);
    let wanted = match rec.id.as_deref() {
        Some(raw) => sanitize_id(raw).unwrap_or_else(|| {
            diags.warn(
                file,
                line,
                format!("id {raw:?} has no usable characters; using a path hash"),
            );
            path_id(&id_basis)
        }),
        None => path_id(&id_basis),
    };
    if let Some(&first) = seen_text.get(&text_hash) {
        let kept = &mut docs[first];
        diags.warn(
            file,
            line,
            format!(
                "same text as document `{}`; folded into it (alias `{wanted}`)",
                kept.id
            ),
        );
        if wanted != kept.id && !kept.aliases.contains(&wanted) {
            kept.aliases.push(wanted);
        }
        return;
    }
    let (id, changed) = ids.allocate(&wanted);
    if changed {
        diags.warn(
            file,
            line,
            format!("duplicate id `{wanted}`; renamed to `{id}`"),
        );
    }
    seen_text.insert(text_hash, docs.len());
    let chars = rec.text.chars().count();
    if let Some(max) = opts.max_doc_chars.filter(|&m| chars > m) {
        diags.warn(
            file,
            line,
            format!(
                "document is {chars} characters; only the first tree.max_doc_chars = {max} are embedded (the full text is kept; set embed.chunk_tokens to embed it all as passages)"
            ),
        );
    }
    // A "title" that is only the record's id or has no letter (`"630"`, `"doc-17"` when the id
    // is `doc-17`) names nothing: the card takes its title from the text instead.
    let mut rec = rec;
    let hidden = std::mem::take(&mut rec.hidden);
    if rec.title.as_deref().is_some_and(|t| {
        let t = t.trim();
        t == id
            || Some(t) == rec.id.as_deref().map(str::trim)
            || !t.chars().any(char::is_alphabetic)
    }) {
        rec.title = None;
    }
    let content_hash = content_hash(&rec);
    // A frontmatter title or description is a card as written: a planted one is not used.
    for (field, value) in [
        ("title", &mut rec.title),
        ("description", &mut rec.description),
    ] {
        if let Some(rule) = value.as_deref().and_then(planted::check_sentence) {
            diags.warn(
                file,
                line,
                format!("the {field} {rule}; it is not used (the card is made from the text)"),
            );
            *value = None;
        }
    }
    for f in &flags {
        let at = match (loc.multi, rec.body_line) {
            (true, _) => line,
            (false, 0) => None,
            (false, first) => Some(first + f.line - 1),
        };
        diags.warn(
            file,
            at,
            format!(
                "a sentence {}{} (\"{}\"); it stays in the document but is never used for navigation text",
                f.rule,
                f.place.map(|p| format!(" {p}")).unwrap_or_default(),
                crate::text::clip_words(&f.text, 12)
            ),
        );
    }
    docs.push(Document {
        id,
        source,
        title: rec.title,
        description: rec.description,
        tags: rec.tags,
        text: rec.text,
        aliases: Vec::new(),
        content_hash,
        navigation,
        flags: flags.into_iter().chain(hidden).collect(),
        origin: Some(Origin {
            root: loc.root,
            rel: loc.rel.to_string(),
            multi: loc.multi,
            line: rec.body_line,
            position: rec.position,
        }),
    });
}

fn content_hash(rec: &RawRecord) -> String {
    let mut h = blake3::Hasher::new();
    for part in [rec.title.as_deref(), rec.description.as_deref()] {
        h.update(part.unwrap_or("\u{0}").as_bytes());
        h.update(b"\x1f");
    }
    for t in &rec.tags {
        h.update(t.as_bytes());
        h.update(b"\x1e");
    }
    h.update(b"\x1f");
    h.update(rec.text.as_bytes());
    crate::hash::short_hash(&h.finalize())
}
