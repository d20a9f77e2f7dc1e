//! Splitting a document longer than the token cap into parts: pieces of at most the cap's
//! bytes, cut at a blank line, else a line end, else a space, else a character boundary.

use std::ops::Range;

/// Bytes kept free in every capped file for its header (frontmatter, parts table, anchors).
pub(super) const HEADER_ROOM: usize = 1024;

/// Bytes of one line of a part table, besides the title and id.
const LIST_LINE: usize = 48;

/// Splits a text into pieces of at most `cap` bytes of file, leaving room for a part's header
/// (`extra`: the bytes of the id and title it repeats) and, in the first, the table of parts.
/// Cuts at a blank line, else a line end, else a space, else a character boundary.
pub fn split_document(text: &str, cap: usize, extra: usize) -> Vec<Range<usize>> {
    let room = cap.saturating_sub(HEADER_ROOM + 2 * extra).max(256);
    if text.len() <= room {
        return std::iter::once(0..text.len()).collect();
    }
    // The first part also carries the table: one line per part.
    let guess = text.len().div_ceil(room) + 1;
    let first = room
        .saturating_sub(guess * (LIST_LINE + extra + 80))
        .max(room / 2);
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let budget = if out.is_empty() { first } else { room };
        let end = cut_point(text, start, budget);
        out.push(start..end);
        start = end;
    }
    out
}

/// Where a piece that starts at `start` and holds at most `budget` bytes ends.
fn cut_point(text: &str, start: usize, budget: usize) -> usize {
    let hard = start + budget;
    if hard >= text.len() {
        return text.len();
    }
    let mut hard = hard;
    while !text.is_char_boundary(hard) {
        hard -= 1;
    }
    let window = &text[start..hard];
    let min = window.len() / 2;
    for sep in ["\n\n", "\n", " "] {
        if let Some(i) = window.rfind(sep).filter(|&i| i >= min) {
            return start + i + sep.len();
        }
    }
    hard
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_pieces_fit_and_cover_the_text() {
        let text = "A paragraph about rivers and their deltas. ".repeat(40) + "\n\n";
        let text = text.repeat(30) + &"x".repeat(9000) + "é".repeat(3000).as_str();
        let cap = 8000;
        let parts = split_document(&text, cap, 40);
        assert!(parts.len() > 3, "{}", parts.len());
        let mut at = 0;
        for r in &parts {
            assert_eq!(r.start, at);
            assert!(r.len() <= cap - HEADER_ROOM, "{}", r.len());
            assert!(text.is_char_boundary(r.end));
            at = r.end;
        }
        assert_eq!(at, text.len());
        // Paragraphs are kept whole where they can be.
        assert!(text[parts[0].clone()].ends_with("\n\n"));
        let short = split_document("short", cap, 10);
        assert_eq!((short.len(), short[0].clone()), (1, 0..5));
    }
}
