//! PDF files, read by `pdf_oxide`: each page's text in reading order, the document's title
//! (its Info dictionary), and its outline (bookmarks) as headings. A PDF with an outline becomes
//! one document per top-level entry (a chapter, from its first page to the next entry's), with
//! the entries below it as headings where their pages begin; one without an outline becomes
//! one document, or one per [`PAGES_PER_PART`] pages when it is longer. Each document names the
//! page it starts on (`file.pdf#page=12`), and every later page begins with a `[page N]` line,
//! so that a cited passage can be found.

use pdf_oxide::PdfDocument;
use pdf_oxide::outline::{Destination, OutlineItem};

use super::{Extracted, Part};

/// Pages of a PDF without an outline per document (a longer one is cut into parts).
pub const PAGES_PER_PART: usize = 30;

/// Characters of text per page below which a page is taken to have no text layer.
const EMPTY_PAGE: usize = 16;

/// A heading of the outline: its depth (0: top level), title and page (0-based).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Heading {
    pub depth: usize,
    pub title: String,
    pub page: usize,
}

/// Reads the PDF in `bytes`. `Err` says why it gives no text (damaged, encrypted, scanned).
pub(super) fn read(bytes: &[u8]) -> Result<Extracted, String> {
    let doc = PdfDocument::from_bytes(bytes.to_vec()).map_err(|e| {
        format!("cannot be read as a PDF ({e}): it is damaged, truncated or not a PDF")
    })?;
    if doc.is_encrypted() && !doc.authenticate(b"").unwrap_or(false) {
        return Err(
            "is encrypted with a password; decrypt it (e.g. `qpdf --decrypt`) to include it".into(),
        );
    }
    let n = doc
        .page_count()
        .map_err(|e| format!("cannot be read as a PDF ({e}): its page tree is damaged"))?;
    let mut pages = Vec::with_capacity(n);
    let mut unreadable = Vec::new();
    for i in 0..n {
        match doc.extract_text(i) {
            Ok(t) => pages.push(clean(&t)),
            Err(_) => {
                unreadable.push(i + 1);
                pages.push(String::new());
            }
        }
    }
    let with_text = pages
        .iter()
        .filter(|p| p.trim().len() >= EMPTY_PAGE)
        .count();
    if with_text == 0 {
        return Err(format!(
            "has no text layer ({n} pages, none with text: a scan?); run OCR on it (e.g. `ocrmypdf`) to include it"
        ));
    }
    let headings = doc
        .get_outline()
        .ok()
        .flatten()
        .map(|items| flatten(&doc, &items, n))
        .unwrap_or_default();
    let mut notes = Vec::new();
    // Every complete PDF ends with `%%EOF` (an update appends another): a file without one
    // was cut short, and the reader recovered what it could.
    let tail = &bytes[bytes.len().saturating_sub(1024)..];
    if !tail.windows(5).any(|w| w == b"%%EOF") {
        notes.push(format!(
            "is truncated or damaged (it does not end with %%EOF): read as far as it goes ({with_text} of {n} pages with text); replace it with a complete copy"
        ));
    }
    if !unreadable.is_empty() {
        notes.push(format!(
            "{} of {n} pages could not be read and are left out (pages {})",
            unreadable.len(),
            ranges(&unreadable)
        ));
    }
    let empty: Vec<usize> = (0..n)
        .filter(|&i| pages[i].trim().len() < EMPTY_PAGE && !unreadable.contains(&(i + 1)))
        .map(|i| i + 1)
        .collect();
    if empty.len() * 10 > n {
        notes.push(format!(
            "{} of {n} pages have no text (scanned pages or images?): pages {}",
            empty.len(),
            ranges(&empty)
        ));
    }
    Ok(Extracted {
        title: info_title(&doc),
        parts: parts(&pages, &headings),
        notes,
    })
}

/// Page text as lines without trailing spaces or the form feeds some producers end pages with.
fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        out.push_str(line.trim_end().trim_end_matches('\u{c}'));
        out.push('\n');
    }
    out
}

/// The document's title from its Info dictionary, when it has a useful one.
fn info_title(doc: &PdfDocument) -> Option<String> {
    use pdf_oxide::object::Object;
    let trailer = doc.trailer().clone();
    let info = trailer.as_dict()?.get("Info")?.clone();
    let info = doc.resolve_references(&info, 1).ok()?;
    let Object::String(bytes) = info.as_dict()?.get("Title")? else {
        return None;
    };
    let title = pdf_string(bytes);
    let title = title.trim();
    let junk = title.is_empty()
        || title.eq_ignore_ascii_case("untitled")
        || title.to_ascii_lowercase().ends_with(".dvi")
        || title.starts_with("Microsoft Word - ");
    (!junk).then(|| title.to_string())
}

/// A PDF text string: UTF-16BE with its byte order mark, else PDFDocEncoding (read as Latin-1,
/// which agrees with it on letters).
fn pdf_string(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        let units: Vec<u16> = rest
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        return String::from_utf16_lossy(&units);
    }
    if let Ok(s) = std::str::from_utf8(bytes) {
        return s.to_string();
    }
    bytes.iter().map(|&b| b as char).collect()
}

/// The outline as headings in reading order, each at the page it points to (entries that
/// point nowhere are left out).
fn flatten(doc: &PdfDocument, items: &[OutlineItem], pages: usize) -> Vec<Heading> {
    fn walk(
        doc: &PdfDocument,
        items: &[OutlineItem],
        depth: usize,
        pages: usize,
        out: &mut Vec<Heading>,
    ) {
        for item in items {
            let page = match &item.dest {
                Some(Destination::PageIndex(p)) => Some(*p),
                Some(Destination::Named(name)) => {
                    doc.resolve_named_destination(name).ok().flatten()
                }
                None => None,
            };
            let title = crate::text::one_line(&item.title);
            if let Some(page) = page.filter(|&p| p < pages)
                && !title.is_empty()
            {
                out.push(Heading { depth, title, page });
            }
            // Deep outlines are kept to three levels of headings.
            if depth < 2 {
                walk(doc, &item.children, depth + 1, pages, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(doc, items, 0, pages, &mut out);
    out
}

/// The documents of a PDF: one per top-level outline entry (the pages before the first one
/// too, when they hold text), else one per [`PAGES_PER_PART`] pages.
pub(super) fn parts(pages: &[String], headings: &[Heading]) -> Vec<Part> {
    let mut starts: Vec<(usize, Option<&str>)> = headings
        .iter()
        .filter(|h| h.depth == 0)
        .map(|h| (h.page, Some(h.title.as_str())))
        .collect();
    // Entries out of page order (or two on one page) do not make documents of their own.
    starts.dedup_by(|b, a| b.0 <= a.0);
    if starts.len() < 2 {
        starts = (0..pages.len())
            .step_by(PAGES_PER_PART)
            .map(|p| (p, None))
            .collect();
    } else if starts[0].0 > 0 {
        starts.insert(0, (0, None));
    }
    let mut parts = Vec::with_capacity(starts.len());
    for (k, &(first, title)) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(pages.len(), |s| s.0);
        let inside: Vec<&Heading> = headings
            .iter()
            .filter(|h| h.page >= first && h.page < end && (h.depth > 0 || title.is_none()))
            .collect();
        let text = part_text(pages, first..end, title, &inside);
        if text.trim().len() >= EMPTY_PAGE {
            parts.push(Part {
                title: title.map(str::to_string),
                page: first + 1,
                last_page: end,
                text,
            });
        }
    }
    parts
}

/// The text of pages `range` as Markdown: the part's title as its heading, each heading of the
/// outline at its page (the line that holds its title made a heading, when one does; else
/// before the page), and a `[page N]` line where each later page begins.
fn part_text(
    pages: &[String],
    range: std::ops::Range<usize>,
    title: Option<&str>,
    headings: &[&Heading],
) -> String {
    let mut s = String::new();
    if let Some(t) = title {
        s.push_str(&format!("# {t}\n\n"));
    }
    let first = range.start;
    for p in range {
        if p > first {
            s.push_str(&format!("\n[page {}]\n\n", p + 1));
        }
        let mut page = pages[p].clone();
        for h in headings.iter().filter(|h| h.page == p) {
            let level = "#".repeat((h.depth + 1).min(4));
            page = match find_line(&page, &h.title) {
                // The page's own line, which keeps the section's number ("1.1 The R environment").
                Some(at) => {
                    let end = page[at..].find('\n').map_or(page.len(), |e| at + e);
                    let line = page[at..end].trim();
                    format!("{}\n{level} {line}\n{}", &page[..at], &page[end..])
                }
                None => format!("{level} {}\n\n{page}", h.title),
            };
        }
        s.push_str(&page);
    }
    s
}

/// Where the line that holds `title` (a heading's text, perhaps after its number: "2.3 Title")
/// begins in `page`.
fn find_line(page: &str, title: &str) -> Option<usize> {
    let want = crate::text::one_line(title).to_lowercase();
    let mut at = 0;
    for line in page.split_inclusive('\n') {
        let l = line.trim().to_lowercase();
        if !l.is_empty()
            && (l == want || l.ends_with(&format!(" {want}")))
            && l.len() < want.len() + 12
        {
            return Some(at);
        }
        at += line.len();
    }
    None
}

/// Page numbers as ranges: `3–5, 9`.
fn ranges(pages: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < pages.len() {
        let mut j = i;
        while j + 1 < pages.len() && pages[j + 1] == pages[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            pages[i].to_string()
        } else {
            format!("{}–{}", pages[i], pages[j])
        });
        i = j + 1;
    }
    if out.len() > 8 {
        let more = out.len() - 8;
        out.truncate(8);
        out.push(format!("and {more} more ranges"));
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pages(n: usize) -> Vec<String> {
        (1..=n)
            .map(|i| format!("Text of page {i} with enough words.\n"))
            .collect()
    }

    #[test]
    fn an_outline_makes_one_document_per_chapter_with_its_sections_as_headings() {
        let h = |depth, title: &str, page| Heading {
            depth,
            title: title.into(),
            page,
        };
        let mut p = pages(6);
        p[3] = "Intro text.\n2.1 Installing\nSome install text here.\n".into();
        let outline = [
            h(0, "Getting started", 1),
            h(1, "Installing", 3),
            h(0, "Reference", 4),
        ];
        let parts = parts(&p, &outline);
        let got: Vec<(Option<&str>, usize, usize)> = parts
            .iter()
            .map(|x| (x.title.as_deref(), x.page, x.last_page))
            .collect();
        assert_eq!(
            got,
            [
                (None, 1, 1),
                (Some("Getting started"), 2, 4),
                (Some("Reference"), 5, 6)
            ]
        );
        let chapter = &parts[1].text;
        assert!(chapter.starts_with("# Getting started\n"), "{chapter}");
        assert!(chapter.contains("\n[page 3]\n"), "{chapter}");
        assert!(
            chapter.contains("Intro text.\n\n## 2.1 Installing\n"),
            "the line of the section's title is its heading: {chapter}"
        );
        assert!(
            !chapter.contains("[page 2]"),
            "the first page is the part's own"
        );
    }

    #[test]
    fn without_an_outline_long_files_are_cut_into_parts() {
        let parts = parts(&pages(PAGES_PER_PART * 2 + 3), &[]);
        let got: Vec<(usize, usize)> = parts.iter().map(|x| (x.page, x.last_page)).collect();
        assert_eq!(got, [(1, 30), (31, 60), (61, 63)]);
        assert!(parts.iter().all(|p| p.title.is_none()));
    }

    #[test]
    fn page_lists_read_as_ranges() {
        assert_eq!(ranges(&[1, 2, 3, 7, 9, 10]), "1–3, 7, 9–10");
    }
}
