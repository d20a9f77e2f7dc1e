//! Text from files that are not text: PDF (`pdf`: pages in reading order, the outline as
//! headings, one document per chapter) and Word (`office`: headings by style, lists, tables).
//! What they give is Markdown, so that the card, embedding and summary stages read headings
//! as they do in any page. A file that gives no text (damaged, truncated, encrypted, a scan
//! without a text layer) is a warning naming it and why, and the build goes on; a panic in a
//! reader is caught and reported the same way.

mod office;
mod pdf;

use super::formats::RawRecord;
use crate::diag::Diagnostics;

/// What a reader gave: the file's title (its properties), its documents, and notes on what it
/// left out (pages it could not read).
pub(super) struct Extracted {
    pub title: Option<String>,
    pub parts: Vec<Part>,
    pub notes: Vec<String>,
}

/// One document of a file: its title (a chapter's), the pages it spans (1-based; 0 for files
/// without pages) and its text.
pub(super) struct Part {
    pub title: Option<String>,
    pub page: usize,
    pub last_page: usize,
    pub text: String,
}

/// The first Markdown heading of `text` that is not a table of contents, else the name of the
/// file `display` without its extension.
fn first_heading(text: &str, display: &str) -> String {
    let heading = text
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|l| crate::text::one_line(l.trim_start_matches('#')).replace("**", ""))
        .find(|h| {
            let h = h.trim().to_lowercase();
            !h.is_empty() && h != "contents" && h != "table of contents"
        });
    heading.unwrap_or_else(|| {
        let name = display.rsplit('/').next().unwrap_or(display);
        name.rsplit_once('.')
            .map_or(name, |(stem, _)| stem)
            .to_string()
    })
}

/// The kinds of files read here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Pdf,
    Docx,
}

/// The reader of a format whose files are not text (None: a text format).
pub fn kind_of(format: super::Format) -> Option<Kind> {
    match format {
        super::Format::Pdf => Some(Kind::Pdf),
        super::Format::Docx => Some(Kind::Docx),
        _ => None,
    }
}

/// The records of the file `display` of `kind`, whose bytes are `bytes`; what it cannot read is
/// warned about.
pub fn records(kind: Kind, bytes: &[u8], display: &str, d: &mut Diagnostics) -> Vec<RawRecord> {
    let read = std::panic::catch_unwind(|| match kind {
        Kind::Pdf => pdf::read(bytes),
        Kind::Docx => office::read_docx(bytes),
    });
    let extracted = match read {
        Ok(Ok(x)) => x,
        Ok(Err(why)) => {
            d.warn(display, None, format!("{why}; skipped"));
            return Vec::new();
        }
        Err(_) => {
            let what = if kind == Kind::Pdf { "PDF" } else { "Word" };
            d.warn(
                display,
                None,
                format!("the {what} reader failed on this file (an internal error); skipped"),
            );
            return Vec::new();
        }
    };
    for note in &extracted.notes {
        d.warn(display, None, note.clone());
    }
    let several = extracted.parts.len() > 1;
    extracted
        .parts
        .into_iter()
        .map(|p| {
            let title = match (&p.title, &extracted.title) {
                (Some(chapter), Some(file)) if several => Some(format!("{file}: {chapter}")),
                (Some(chapter), _) => Some(chapter.clone()),
                (None, Some(file)) if several => {
                    Some(format!("{file} (pages {}–{})", p.page, p.last_page))
                }
                (None, file) => file.clone(),
            };
            // A Word file without a title property: its first heading, else its name.
            let title =
                title.or_else(|| (kind == Kind::Docx).then(|| first_heading(&p.text, display)));
            RawRecord {
                title,
                text: p.text,
                anchor: (p.page > 0 && (several || p.page > 1)).then(|| format!("page={}", p.page)),
                ..RawRecord::default()
            }
        })
        .collect()
}
