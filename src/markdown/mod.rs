//! Markdown, and the HTML inside it, as clean text: each link's text once, no raw tags or
//! reference definitions, entities decoded, and code blocks kept apart as code.

pub mod dialect;
mod html;
pub mod links;

pub use html::without_html_tags;
use html::{Tag, decode_entities, tag_end, without_hidden_html};

/// One block of a Markdown document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// An ATX heading (`# …`), markup removed.
    Heading(String),
    /// A paragraph or a run of list items, markup removed: one line per item or unwrapped
    /// paragraph (a source line that continues the one before is joined to it).
    Text(String),
    /// A fenced code block: its info string's first word and its lines, verbatim.
    Code { lang: String, code: String },
}

/// The blocks of `md`: text paragraphs (markup removed, one line per source line) and fenced code.
pub fn blocks(md: &str) -> Vec<Block> {
    let md = without_hidden_html(md);
    let mut out = Vec::new();
    let mut para: Vec<String> = Vec::new();
    let mut fence: Option<(char, usize, String, Vec<&str>)> = None;
    let flush = |para: &mut Vec<String>, out: &mut Vec<Block>| {
        if !para.is_empty() {
            out.push(Block::Text(std::mem::take(para).join("\n")));
        }
    };
    for line in md.lines() {
        let t = line.trim_start();
        if let Some((ch, len, lang, lines)) = &mut fence {
            if is_fence_close(t, *ch, *len) {
                out.push(Block::Code {
                    lang: std::mem::take(lang),
                    code: lines.join("\n"),
                });
                fence = None;
            } else {
                lines.push(line);
            }
            continue;
        }
        if let Some((ch, len, info)) = fence_open(t) {
            flush(&mut para, &mut out);
            let lang = info.split_whitespace().next().unwrap_or("").to_string();
            fence = Some((ch, len, lang, Vec::new()));
            continue;
        }
        if t.is_empty() || is_reference_definition(t) {
            flush(&mut para, &mut out);
            continue;
        }
        if is_heading(t) {
            flush(&mut para, &mut out);
            let h = clean_line(t)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if !h.is_empty() {
                out.push(Block::Heading(h));
            }
            continue;
        }
        let item = is_list_item(t);
        let cleaned = clean_line(t);
        for (k, piece) in cleaned.split('\n').enumerate() {
            let piece = piece.trim();
            if piece.is_empty() {
                continue;
            }
            match para.last_mut() {
                Some(prev) if k == 0 && !item && soft_wrapped(prev, piece) => {
                    prev.push(' ');
                    prev.push_str(piece);
                }
                _ => para.push(piece.to_string()),
            }
        }
    }
    flush(&mut para, &mut out);
    if let Some((_, _, lang, lines)) = fence {
        // An unclosed fence runs to the end of the document, as CommonMark reads it.
        out.push(Block::Code {
            lang,
            code: lines.join("\n"),
        });
    }
    out
}

/// `md` as plain text: the text blocks' lines, code left out, markup removed.
pub fn plain_text(md: &str) -> String {
    plain_of(&blocks(md))
}

/// The plain text of parsed blocks (headings and text; code left out).
pub fn plain_of(blocks: &[Block]) -> String {
    let mut out = String::new();
    for b in blocks {
        if let Block::Text(t) | Block::Heading(t) = b {
            out.push_str(t);
            out.push_str("\n\n");
        }
    }
    out
}

/// The inline code spans of `md` outside code blocks (`` `quill check` ``, `` `DATABASE_URL` ``),
/// trimmed, in order; a span of more than 40 characters or with no letter is left out.
pub fn code_spans(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for line in md.lines() {
        let t = line.trim_start();
        if let Some((ch, len)) = fence {
            if is_fence_close(t, ch, len) {
                fence = None;
            }
            continue;
        }
        if let Some((ch, len, _)) = fence_open(t) {
            fence = Some((ch, len));
            continue;
        }
        let chars: Vec<char> = t.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] != '`' {
                i += 1;
                continue;
            }
            let ticks = chars[i..].iter().take_while(|&&x| x == '`').count();
            match find_ticks(&chars, i + ticks, ticks) {
                Some(end) => {
                    let span: String = chars[i + ticks..end].iter().collect();
                    let span = span.trim();
                    if span.chars().count() <= 40 && span.chars().any(char::is_alphabetic) {
                        out.push(span.to_string());
                    }
                    i = end + ticks;
                }
                None => i += ticks,
            }
        }
    }
    out
}

/// The opening fence of a code block: its character, its length and its info string.
pub fn fence_open(t: &str) -> Option<(char, usize, &str)> {
    let ch = t.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = t.chars().take_while(|&c| c == ch).count();
    let info = &t[len..];
    (len >= 3 && !(ch == '`' && info.contains('`'))).then_some((ch, len, info.trim()))
}

pub fn is_fence_close(t: &str, ch: char, len: usize) -> bool {
    let n = t.chars().take_while(|&c| c == ch).count();
    n >= len && t[n..].trim().is_empty()
}

/// An ATX heading: one to six `#` and then a space or the end of the line.
fn is_heading(t: &str) -> bool {
    let n = t.chars().take_while(|&c| c == '#').count();
    (1..=6).contains(&n) && t[n..].chars().next().is_none_or(char::is_whitespace)
}

/// `[label]: destination "title"`, the definition behind a reference link.
fn is_reference_definition(t: &str) -> bool {
    let Some(rest) = t.strip_prefix('[') else {
        return false;
    };
    let Some(close) = rest.find("]:") else {
        return false;
    };
    let label = &rest[..close];
    !label.is_empty() && !label.starts_with('^') && !rest[close + 2..].trim().is_empty()
}

/// One source line of text: block markers (headings, quotes, list bullets and numbers, table
/// pipes) and inline markup removed. A `<br>` or block tag inside splits it (`\n`).
fn clean_line(t: &str) -> String {
    let t = t.trim_start_matches(['#', '>']).trim_start();
    let t = t
        .strip_prefix("- ")
        .or_else(|| t.strip_prefix("* "))
        .or_else(|| t.strip_prefix("+ "))
        .unwrap_or(t);
    let t = strip_ordinal(t);
    let t = t
        .strip_prefix("[ ] ")
        .or_else(|| t.strip_prefix("[x] "))
        .unwrap_or(t);
    if is_table_rule(t) {
        return String::new();
    }
    let s = strip_inline(t);
    let s = if s.starts_with('|') || s.trim_end().ends_with('|') {
        s.trim()
            .trim_matches('|')
            .replace(" | ", "; ")
            .replace('|', "; ")
    } else {
        s
    };
    decode_entities(&s)
}

/// A list item's first line (`- `, `* `, `+ `, `1. `, `1) `).
fn is_list_item(t: &str) -> bool {
    t.starts_with("- ") || t.starts_with("* ") || t.starts_with("+ ") || strip_ordinal(t) != t
}

/// Whether `next` continues the line `prev` (a paragraph wrapped in the source): `prev` stops
/// without a sentence end or colon, and `next` opens in lowercase or `prev` is long enough to
/// have been wrapped. A short line without a period ("Refund Policy") stands alone, as in text
/// whose lines are units.
fn soft_wrapped(prev: &str, next: &str) -> bool {
    let ended = prev.ends_with(['.', '!', '?', ':', ';', '…']);
    let lower = next.chars().next().is_some_and(|c| c.is_lowercase());
    !ended && (lower || prev.chars().count() >= 60)
}

/// `1. ` or `1) ` at the start of a list item.
fn strip_ordinal(t: &str) -> &str {
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if (1..=9).contains(&digits) {
        let rest = &t[digits..];
        if let Some(r) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return r;
        }
    }
    t
}

/// `|---|:---:|` and the like.
fn is_table_rule(t: &str) -> bool {
    t.contains('-') && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// Inline markup removed: links and images by their text (inline, reference or collapsed), code
/// spans by their content, emphasis marks, autolinks by their address, HTML tags.
fn strip_inline(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '`' => {
                let ticks = chars[i..].iter().take_while(|&&x| x == '`').count();
                if let Some(end) = find_ticks(&chars, i + ticks, ticks) {
                    let code: String = chars[i + ticks..end].iter().collect();
                    out.push_str(code.trim());
                    i = end + ticks;
                } else {
                    i += ticks;
                }
            }
            '!' if chars.get(i + 1) == Some(&'[') => i += 1,
            '[' => i += 1,
            ']' => i = skip_link_target(&chars, i + 1),
            '<' => match tag_end(&chars, i) {
                Some(Tag::Autolink(url, end)) => {
                    out.push_str(&url);
                    i = end;
                }
                Some(Tag::Html { end, breaks }) => {
                    if breaks {
                        out.push('\n');
                    }
                    i = end;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            },
            '*' => i += 1,
            '~' if chars.get(i + 1) == Some(&'~') => i += 2,
            '_' if is_emphasis(&chars, i) => i += 1,
            '\\' if chars.get(i + 1).is_some_and(|n| n.is_ascii_punctuation()) => {
                out.push(chars[i + 1]);
                i += 2;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// The index of the closing run of exactly `n` backticks at or after `from`.
pub(super) fn find_ticks(chars: &[char], from: usize, n: usize) -> Option<usize> {
    let mut j = from;
    while j < chars.len() {
        if chars[j] == '`' {
            let run = chars[j..].iter().take_while(|&&x| x == '`').count();
            if run == n {
                return Some(j);
            }
            j += run;
        } else {
            j += 1;
        }
    }
    None
}

/// After a link text's `]` at `i`: the index past its target, `(dest "title")` (an
/// `<angle destination>` may hold parentheses; a bare one may nest balanced pairs) or a
/// `[reference]`; `i` itself when neither follows.
fn skip_link_target(chars: &[char], i: usize) -> usize {
    match chars.get(i) {
        Some('(') => {
            let mut j = i + 1;
            if chars.get(j) == Some(&'<') {
                while j < chars.len() && chars[j] != '>' {
                    j += 1;
                }
            }
            let mut depth = 1;
            while j < chars.len() {
                match chars[j] {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            i
        }
        Some('[') => chars[i..]
            .iter()
            .position(|&x| x == ']')
            .map_or(i, |p| i + p + 1),
        _ => i,
    }
}

fn is_emphasis(chars: &[char], i: usize) -> bool {
    let before = i
        .checked_sub(1)
        .and_then(|j| chars.get(j))
        .is_none_or(|c| !c.is_alphanumeric());
    let after = chars.get(i + 1).is_none_or(|c| !c.is_alphanumeric());
    before || after
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(md: &str) -> String {
        plain_text(md)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn links_read_once() {
        assert_eq!(text("See [the docs](http://x) now."), "See the docs now.");
        assert_eq!(
            text(
                "[ruff-lsp][ruff-lsp] is the server.\n\n[ruff-lsp]: https://github.com/x/ruff-lsp"
            ),
            "ruff-lsp is the server."
        );
        assert_eq!(text("Use [x][] or [y]."), "Use x or y.");
        assert_eq!(
            text("A [link](<https://e.org/a (b)>) and the rest of the sentence."),
            "A link and the rest of the sentence."
        );
        assert_eq!(
            text("Read [Foo](https://en.wikipedia.org/wiki/Foo_(bar)) first."),
            "Read Foo first."
        );
        assert_eq!(
            text("![logo](a.png) Mail <mailto:a@b.c> or <https://x.y>."),
            "logo Mail a@b.c or https://x.y."
        );
    }

    #[test]
    fn raw_html_goes_but_its_text_stays() {
        assert_eq!(
            text(r#"Press <i class="fas fa-play"></i> <b>Run</b> to start.<br>Then wait."#),
            "Press Run to start. Then wait."
        );
        assert_eq!(
            text("A Vec<T> is not a tag, nor is a < b."),
            "A Vec<T> is not a tag, nor is a < b."
        );
        assert_eq!(
            text("<script>alert(1)</script>Visible &amp; fine&nbsp;here."),
            "Visible & fine here."
        );
        assert_eq!(
            without_html_tags(
                "Click <kbd>Ctrl</kbd>+<kbd>C</kbd>.\n```html\n<b>kept</b>\n```\n`<i>` too\n"
            ),
            "Click Ctrl+C.\n```html\n<b>kept</b>\n```\n`<i>` too\n"
        );
        // Lines keep their numbers: a tag-only line and a script's lines stay as empty lines.
        assert_eq!(
            without_html_tags("a<br>b\n<div>\n<script>\nx\n</script>\nc"),
            "a b\n\n\n\n\nc"
        );
    }

    #[test]
    fn code_blocks_are_kept_apart() {
        let b = blocks("# Install\n\nWith Homebrew:\n\n```sh\nbrew install ruff\n```\n\nDone.\n");
        assert_eq!(
            b,
            vec![
                Block::Heading("Install".into()),
                Block::Text("With Homebrew:".into()),
                Block::Code {
                    lang: "sh".into(),
                    code: "brew install ruff".into()
                },
                Block::Text("Done.".into()),
            ]
        );
        assert!(!plain_text("a\n```\nfn x() {}\n```\nb").contains("fn x"));
        // An unclosed fence runs to the end.
        assert!(matches!(
            blocks("```\ncode").last(),
            Some(Block::Code { .. })
        ));
    }

    #[test]
    fn code_spans_are_found_outside_blocks() {
        assert_eq!(
            code_spans(
                "Run `quill check` or ``a `b` c``.\n```\n`not this`\n```\nSet `E501` and `42`."
            ),
            ["quill check", "a `b` c", "E501"]
        );
    }

    #[test]
    fn block_markers_go() {
        assert_eq!(
            text("## Title\n> quoted\n1. first\n- [x] done\n| a | b |\n|---|---|\n| 1 | 2 |"),
            "Title quoted first done a; b 1; 2"
        );
        assert_eq!(
            text("**bold** and _it_ and snake_case and ~~old~~"),
            "bold and it and snake_case and old"
        );
    }
}
