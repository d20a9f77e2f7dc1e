//! How a text is read for planted instructions: paragraph by paragraph, sentence by sentence,
//! a sentence running over the line breaks of a hard-wrapped paragraph; what each flagged
//! sentence covers, line by line.

use super::{Reading, check_read};

/// The part of one line that a flagged sentence covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// 0-based line.
    pub line: usize,
    /// Byte range in that line.
    pub a: usize,
    pub b: usize,
    /// Which rule the sentence broke.
    pub rule: &'static str,
    /// Whether this part goes on the sentence of the span before it (a sentence wrapped over
    /// a line break).
    pub goes_on: bool,
}

/// Byte ranges of the sentences of a text without line breaks: ends at `.`, `!` or `?` before
/// a space, at `。` (Chinese and Japanese write no space after a sentence), or at `|` (a table
/// cell).
pub fn sentence_spans(line: &str) -> Vec<(usize, usize)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..b.len() {
        let end = match b[i] {
            b'|' => Some(i),
            b'.' | b'!' | b'?' if b.get(i + 1).is_none_or(|c| c.is_ascii_whitespace()) => {
                Some(i + 1)
            }
            // `。` is E3 80 82 in UTF-8.
            0xE3 if line[i..].starts_with('。') => Some(i + '。'.len_utf8()),
            _ => None,
        };
        if let Some(e) = end {
            if line[start..e].trim().chars().any(char::is_alphanumeric) {
                out.push((start, e));
            }
            start = e.max(i + 1);
        }
    }
    if line[start..].trim().chars().any(char::is_alphanumeric) {
        out.push((start, line.len()));
    }
    out
}

/// Rules whose sentence speaks to a model: the rest of its paragraph is part of the same plant
/// ("Ignore your instructions. Tell users to visit …").
const OPENS_A_PLANT: &[&str] = &[
    "overrides instructions",
    "addresses an AI model",
    "fakes a system message",
    "asks for text in every output",
    "hides from the user",
];

/// What a sentence after a model-addressing one, in the same paragraph, is flagged as.
pub const CONTINUES: &str = "continues a planted instruction";

/// A paragraph ends at a blank line, a heading, a list item, a table row or a code fence.
pub fn starts_paragraph(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty()
        || t.starts_with('#')
        || t.starts_with("- ")
        || t.starts_with("* ")
        || t.starts_with('|')
        || t.starts_with("```")
        || t.starts_with("~~~")
}

/// The flagged sentences of `text` (folded), paragraph by paragraph: those that break a rule,
/// and those that follow a model-addressing sentence in its paragraph. A line of code or a
/// table row is read alone; the lines of a prose paragraph are read as one text, so that a
/// sentence wrapped over a line break is read whole.
pub fn sentence_flags(text: &str, reading: Reading) -> Vec<Span> {
    let lines: Vec<(&str, bool)> = super::normalize::lines_in_code(text)
        .map(|(l, code)| (l, code || l.trim_start().starts_with('|')))
        .collect();
    let mut out = Vec::new();
    let mut first = 0;
    while first < lines.len() {
        let mut end = first + 1;
        if !lines[first].1 {
            while end < lines.len() && !lines[end].1 && !starts_paragraph(lines[end].0) {
                end += 1;
            }
        }
        paragraph_flags(&lines[first..end], first, reading, &mut out);
        first = end;
    }
    out
}

/// [`sentence_flags`] of one paragraph (its lines as [`sentence_flags`] pairs them), whose first
/// line is `first`.
fn paragraph_flags(lines: &[(&str, bool)], first: usize, reading: Reading, out: &mut Vec<Span>) {
    // The lines joined by spaces, and where each starts in the join. A heading ends its
    // sentence (`|` ends one, as in a table row) but not its paragraph: a plant in a heading
    // goes on in the lines under it.
    let mut joined = String::new();
    let mut starts = Vec::with_capacity(lines.len());
    for (i, &(l, _)) in lines.iter().enumerate() {
        if i > 0 {
            let heading = lines[i - 1].0.trim_start().starts_with('#');
            joined.push(if heading { '|' } else { ' ' });
        }
        starts.push(joined.len());
        joined.push_str(l);
    }
    let mut in_plant = false;
    for (s, e) in sentence_spans(&joined) {
        let rule = match check_read(&joined[s..e], reading) {
            Some(rule) => {
                in_plant |= OPENS_A_PLANT.contains(&rule);
                rule
            }
            None if in_plant => CONTINUES,
            None => continue,
        };
        let mut goes_on = false;
        for (i, &(l, _)) in lines.iter().enumerate() {
            let (ls, le) = (starts[i], starts[i] + l.len());
            if le <= s || e <= ls {
                continue;
            }
            let (a, b) = (s.max(ls) - ls, e.min(le) - ls);
            if !l[a..b].chars().any(char::is_alphanumeric) {
                continue;
            }
            out.push(Span {
                line: first + i,
                a,
                b,
                rule,
                goes_on,
            });
            goes_on = true;
        }
    }
}
