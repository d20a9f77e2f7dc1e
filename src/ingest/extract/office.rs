//! Word files (`.docx`), read by `office_oxide`: paragraphs, headings by their styles, lists
//! and tables, rendered as Markdown (so that cards and summaries see the headings), and the
//! title the file's properties give.

use office_oxide::{Document, DocumentFormat};

use super::{Extracted, Part};

/// Reads the Word file in `bytes`. `Err` says why it gives no text.
pub(super) fn read_docx(bytes: &[u8]) -> Result<Extracted, String> {
    let cursor = std::io::Cursor::new(bytes.to_vec());
    let doc = Document::from_reader(cursor, DocumentFormat::Docx).map_err(|e| {
        format!("cannot be read as a Word file ({e}): it is damaged, encrypted or not a .docx")
    })?;
    let title = doc
        .as_docx()
        .and_then(|d| d.core_properties.as_ref())
        .and_then(|p| p.title.clone())
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty());
    let text = doc.to_markdown();
    if text.trim().is_empty() {
        return Err("has no text (only images or empty pages?); nothing to include".into());
    }
    Ok(Extracted {
        title,
        parts: vec![Part {
            title: None,
            page: 0,
            last_page: 0,
            text,
        }],
        notes: Vec::new(),
    })
}
