//! Bundle files (`<skill>/bundles/NNN.md`: several documents, each a section behind an anchor
//! named by its id) and the part files of a document split for the token cap.

use std::fmt::Write;

use super::nav::link_text;
use super::{Ctx, relative};
use crate::ingest::Document;
use crate::text::one_line;

/// How a document section starts in a bundle; a text line that starts the same is indented by
/// one space, so a section ends only where the next begins.
pub const SECTION_MARK: &str = "<a id=\"";

/// The bundle file `b` of the output.
pub fn bundle_file(ctx: &Ctx, b: usize) -> Vec<u8> {
    let bundle = &ctx.place.bundles[b];
    let size: usize = bundle.docs.iter().map(|&d| ctx.docs[d].text.len()).sum();
    let mut s = String::with_capacity(size + 256 * bundle.docs.len() + 512);
    let skill = &ctx.tree.nodes[ctx.tree.root_of(ctx.home[bundle.docs[0]])].folder;
    let _ = writeln!(
        s,
        "# Documents of {skill}\n\nThis file holds {} documents, each under its own heading and \
         anchor (`#<id>`). `get_document` with an id returns one alone.\n",
        bundle.docs.len()
    );
    for &d in &bundle.docs {
        list_line(&ctx.cards[d].title, &ctx.docs[d].id, &mut s);
    }
    for &d in &bundle.docs {
        s.push('\n');
        let text = ctx.linked_text(
            d,
            0..ctx.docs[d].text.len(),
            super::front::folder_of(&bundle.file),
        );
        section(&ctx.docs[d], &ctx.cards[d].title, &text, &mut s);
    }
    s.into_bytes()
}

/// A document's line in its bundle's list.
pub fn list_line(title: &str, id: &str, s: &mut impl Write) {
    let _ = writeln!(s, "- [{}](#{id})", link_text(title));
}

/// The bytes a document takes in a bundle: its line in the list, a blank line and its section
/// (counted as they are written, without making them: packing asks this of every document).
pub fn bundled_bytes(doc: &Document, title: &str) -> usize {
    let mut n = Counted(0);
    list_line(title, &doc.id, &mut n);
    n.0 += 1;
    section(doc, title, &doc.text, &mut n);
    n.0
}

/// A writer that only counts the bytes written to it.
struct Counted(usize);

impl Write for Counted {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

/// One document's section: its anchors (id and aliases), title, id line, and `text` (the
/// document's, its links written for the bundle).
fn section(doc: &Document, title: &str, text: &str, s: &mut impl Write) {
    for id in std::iter::once(&doc.id).chain(&doc.aliases) {
        let _ = write!(s, "{SECTION_MARK}{id}\"></a>");
    }
    let _ = writeln!(s, "\n## {}\n", one_line(title));
    let _ = write!(s, "`id: {}` · source: `{}`", doc.id, one_line(&doc.source));
    if !doc.aliases.is_empty() {
        let _ = write!(s, " · the same text as: {}", doc.aliases.join(", "));
    }
    let _ = s.write_str("\n\n");
    for line in text.lines() {
        if line.starts_with(SECTION_MARK) {
            let _ = s.write_char(' ');
        }
        let _ = s.write_str(line);
        let _ = s.write_char('\n');
    }
}

/// Part `k` (from 0) of a split document: its frontmatter, and in the first part the table of
/// every part with what it starts with; later parts link back to the first.
pub fn part_file(ctx: &Ctx, d: usize, k: usize) -> Vec<u8> {
    let place = &ctx.place.docs[d];
    let parts = &place.parts;
    let part = &parts[k];
    let folder = part.file.rsplit_once('/').map_or("", |(f, _)| f);
    let text = ctx.linked_text(d, part.range.clone(), folder);
    let mut s = String::with_capacity(text.len() + 1024);
    super::front::frontmatter(ctx, d, Some((k, parts.len())), &mut s);
    if k == 0 {
        let _ = writeln!(
            s,
            "This document is in {} parts, so that no file is over the host's token limit:",
            parts.len()
        );
        for (i, p) in parts.iter().enumerate() {
            let about = about(&ctx.docs[d].text[p.range.clone()]);
            if i == 0 {
                let _ = writeln!(s, "{}. this file — {about}", i + 1);
            } else {
                let _ = writeln!(
                    s,
                    "{}. [part {}]({}) — {about}",
                    i + 1,
                    i + 1,
                    relative(folder, &p.file)
                );
            }
        }
        s.push('\n');
    } else {
        let _ = writeln!(
            s,
            "Part {} of {} of [{}]({}).\n",
            k + 1,
            parts.len(),
            link_text(&ctx.cards[d].title),
            relative(folder, &parts[0].file)
        );
    }
    s.push_str(&text);
    if !text.ends_with('\n') {
        s.push('\n');
    }
    s.into_bytes()
}

/// What a part holds: its first heading, else its first words.
fn about(text: &str) -> String {
    let heading = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim());
    let first = heading
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| text.trim());
    crate::text::clip_line(&one_line(first), 10)
}

/// The section of document `id` in a bundle's text, from its anchor to the next one; `None`
/// when the bundle has no such anchor.
pub fn find_section<'a>(bundle: &'a str, id: &str) -> Option<&'a str> {
    let needle = format!("{SECTION_MARK}{id}\"></a>");
    let mut at = 0;
    for line in bundle.split_inclusive('\n') {
        if line.starts_with(SECTION_MARK) && line.contains(&needle) {
            let rest = &bundle[at..];
            let end = rest[line.len()..]
                .find(&format!("\n{SECTION_MARK}"))
                .map_or(rest.len(), |i| line.len() + i + 1);
            return Some(&rest[..end]);
        }
        at += line.len();
    }
    None
}

/// The document ids a bundle's text holds (each section's first anchor).
pub fn section_ids(bundle: &str) -> Vec<String> {
    bundle
        .lines()
        .filter_map(|l| l.strip_prefix(SECTION_MARK))
        .filter_map(|l| l.split_once('"').map(|(id, _)| id.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_are_found_by_id_and_alias() {
        let b = "# Documents\n\n- x\n\n<a id=\"a1\"></a>\n## A\n\ntext a\n <a id=\"fake\"></a>\n\n\
                 <a id=\"b2\"></a><a id=\"b2-old\"></a>\n## B\n\ntext b\n";
        let a = find_section(b, "a1").unwrap();
        assert!(a.starts_with("<a id=\"a1\"") && a.contains("text a") && !a.contains("## B"));
        assert!(find_section(b, "b2-old").unwrap().contains("text b"));
        assert!(
            find_section(b, "fake").is_none(),
            "an indented mark is text"
        );
        assert_eq!(section_ids(b), vec!["a1", "b2"]);
    }

    #[test]
    fn counted_bytes_are_the_bytes_written() {
        let mut doc = Document::served(
            "d1".into(),
            "docs/ü ber.md".into(),
            "Tïtle".into(),
            "# Tïtle\n\n<a id=\"x\"></a> a line that looks like a mark\r\nlast — line".into(),
            vec!["d0".into()],
        );
        for aliases in [vec!["d0".to_string()], Vec::new()] {
            doc.aliases = aliases;
            let mut s = String::new();
            list_line("Tïtle [x]", &doc.id, &mut s);
            s.push('\n');
            section(&doc, "Tïtle [x]", &doc.text, &mut s);
            assert_eq!(bundled_bytes(&doc, "Tïtle [x]"), s.len());
        }
    }
}
