//! Document file names: a document's own id when its source gave it a readable one, else the
//! slug of its source file's name (of its title, for a record of a multi-record file), unique
//! within each `docs/` folder; the id stays in the file's frontmatter.

use std::collections::{BTreeMap, HashSet};

use crate::ingest::Document;
use crate::llm::Card;

/// Longest name, in characters.
const MAX_NAME: usize = 60;

/// File stems that say nothing alone: their folder's name goes first (`deploy-index`).
const GENERIC_STEMS: &[&str] = &["index", "readme", "_index", "default", "main", "overview"];

/// Whether an id is one c2s made (a 16-hex hash of the source path, maybe with `-N` for a
/// repeated one) rather than the source's own.
pub fn generated_id(id: &str) -> bool {
    let hex = id.split('-').next().unwrap_or_default();
    let rest = &id[hex.len()..];
    hex.len() == 16
        && hex
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        && (rest.is_empty() || rest[1..].chars().all(|c| c.is_ascii_digit()))
}

/// Lowercase letters and digits, runs of anything else as one `-`, at most [`MAX_NAME`]
/// characters (cut at a `-`).
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') && c != '\'' && c != '’' {
            out.push('-');
        }
    }
    let mut out = out.trim_matches('-').to_string();
    if out.len() > MAX_NAME {
        out.truncate(MAX_NAME);
        if let Some(i) = out.rfind('-').filter(|&i| i > MAX_NAME / 2) {
            out.truncate(i);
        }
    }
    out
}

/// Whether an id says nothing to a reader: c2s made it, or it is a long run of hex digits (a
/// source's own content hash, as some exports use).
fn opaque_id(id: &str) -> bool {
    let head = id.split('-').next().unwrap_or_default();
    generated_id(id) || (head.len() >= 16 && head.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The name a document's file would have alone in its folder.
pub fn base_name(doc: &Document, card: &Card) -> String {
    if !opaque_id(&doc.id) {
        return doc.id.clone();
    }
    // `path:line` is a record of a multi-record file: its title names it.
    let record = doc
        .source
        .rsplit_once(':')
        .is_some_and(|(_, n)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    let name = if record {
        slug(&card.title)
    } else {
        let path = std::path::Path::new(&doc.source);
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parent = path
            .parent()
            .and_then(|p| p.file_name())
            .map(|s| s.to_string_lossy().into_owned());
        match parent {
            Some(p) if GENERIC_STEMS.contains(&stem.to_lowercase().as_str()) => {
                slug(&format!("{p}-{stem}"))
            }
            _ => slug(&stem),
        }
    };
    if name.is_empty() {
        doc.id.clone()
    } else {
        name
    }
}

/// Names for the documents that get a file of their own, `(folder, document)` pairs: unique in
/// each folder, where names of folded duplicates (`docs/<alias>.md`) are taken too. Of the
/// documents that would share a name, the one whose id sorts first keeps it; the others get
/// `-2`, `-3`, … in id order, so the names do not depend on the order documents are placed in.
pub fn unique_names(
    placed: &[(String, usize)],
    docs: &[Document],
    cards: &[Card],
) -> BTreeMap<usize, String> {
    let mut by_folder: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (folder, d) in placed {
        by_folder.entry(folder.as_str()).or_default().push(*d);
    }
    let mut out = BTreeMap::new();
    for members in by_folder.values() {
        let mut taken: HashSet<String> = members
            .iter()
            .flat_map(|&d| docs[d].aliases.iter().cloned())
            .collect();
        let mut wanted: Vec<(String, &str, usize)> = members
            .iter()
            .map(|&d| (base_name(&docs[d], &cards[d]), docs[d].id.as_str(), d))
            .collect();
        wanted.sort();
        for (name, _, d) in wanted {
            let mut n = 1;
            let mut candidate = name.clone();
            while !taken.insert(candidate.clone()) {
                n += 1;
                candidate = format!("{name}-{n}");
            }
            out.insert(d, candidate);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(id: &str, source: &str) -> Document {
        Document::served(
            id.into(),
            source.into(),
            String::new(),
            String::new(),
            Vec::new(),
        )
    }

    fn card(title: &str) -> Card {
        Card {
            title: title.into(),
            one_line: String::new(),
            phrases: Vec::new(),
        }
    }

    #[test]
    fn a_file_is_named_after_its_source() {
        let c = card("Installing Quill");
        assert_eq!(
            base_name(&doc("073e80874e2d4887", "docs/faq.md"), &c),
            "faq"
        );
        assert_eq!(
            base_name(&doc("073e80874e2d4887-2", "docs/My Page.md"), &c),
            "my-page"
        );
        assert_eq!(
            base_name(&doc("073e80874e2d4887", "deploy/index.md"), &c),
            "deploy-index"
        );
        // A record of a multi-record file: its title; a record's own id stays.
        assert_eq!(
            base_name(
                &doc("1e3a5c7e9b0d2f4a", "faq.jsonl:3"),
                &card("Which regions are available?")
            ),
            "which-regions-are-available"
        );
        assert_eq!(
            base_name(&doc("faq-regions", "faq.jsonl:3"), &c),
            "faq-regions"
        );
        // A record whose own id is a hash: its title too.
        let sha = "f346781bc6cf23c95342ce003927de9d985a99eeb7561c69f03e65da7c10f2fb";
        assert_eq!(
            base_name(
                &doc(sha, "corpus.jsonl:7"),
                &card("CMS: Managing Your Collection")
            ),
            "cms-managing-your-collection"
        );
        assert!(!generated_id("faq-regions") && !generated_id("073E80874E2D4887"));
    }

    #[test]
    fn names_are_unique_in_a_folder_whatever_the_order() {
        let docs = vec![
            doc("bbbbbbbbbbbbbbbb", "a/faq.md"),
            doc("aaaaaaaaaaaaaaaa", "b/faq.md"),
            doc("cccccccccccccccc", "c/faq.md"),
        ];
        let cards = vec![card("x"), card("y"), card("z")];
        let f = |order: &[usize]| {
            let placed: Vec<(String, usize)> =
                order.iter().map(|&d| ("g".to_string(), d)).collect();
            unique_names(&placed, &docs, &cards)
        };
        let a = f(&[0, 1, 2]);
        assert_eq!(a, f(&[2, 0, 1]));
        assert_eq!(
            (a[&1].as_str(), a[&0].as_str(), a[&2].as_str()),
            ("faq", "faq-2", "faq-3")
        );
    }
}
