//! Raw HTML inside Markdown: which tags are markup (removed, their text kept), which elements
//! hide their content (scripts, styles), and character references.

use std::borrow::Cow;

use super::{fence_open, find_ticks, is_fence_close};

/// HTML elements whose tags are removed from text (their content stays). Anything else between
/// `<` and `>` (`Vec<T>`, `a <b> c` written as prose) is left as it is.
const HTML_TAGS: &[&str] = &[
    "a",
    "abbr",
    "b",
    "bdi",
    "big",
    "blockquote",
    "br",
    "button",
    "caption",
    "center",
    "cite",
    "code",
    "col",
    "colgroup",
    "dd",
    "del",
    "details",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "figcaption",
    "figure",
    "font",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "i",
    "iframe",
    "img",
    "input",
    "ins",
    "kbd",
    "label",
    "li",
    "mark",
    "nav",
    "ol",
    "p",
    "picture",
    "pre",
    "q",
    "s",
    "samp",
    "section",
    "small",
    "source",
    "span",
    "strike",
    "strong",
    "sub",
    "summary",
    "sup",
    "svg",
    "table",
    "tbody",
    "template",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
    "video",
    "wbr",
];

/// Elements whose content is not text either (removed with their tags). A `<template>` is not
/// one: in a Markdown page it is a Vue slot (`<template #lead>…</template>`), which is shown.
const HIDDEN: &[&str] = &["script", "style", "noscript"];

/// Elements that end a line when they close (or, for `br` and `hr`, where they stand).
const BREAKS: &[&str] = &[
    "blockquote",
    "br",
    "dd",
    "details",
    "div",
    "dt",
    "figcaption",
    "figure",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "li",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tr",
];

/// A Markdown document for an agent to read: Markdown kept, raw HTML tags removed outside code
/// (their text stays; a block element's end becomes a space), scripts and styles dropped. Every
/// word of the text is kept, and every line stays on its line number.
pub fn without_html_tags(md: &str) -> String {
    // Without a `<` there is no tag, hidden element or anything else to take out.
    if memchr::memchr(b'<', md.as_bytes()).is_none() {
        return md.to_string();
    }
    strip_lines(&without_hidden_html(md))
}

/// [`without_html_tags`] of a text without hidden elements, line by line.
fn strip_lines(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut fence: Option<(char, usize)> = None;
    for line in md.split_inclusive('\n') {
        let t = line.trim_start();
        if let Some((ch, len)) = fence {
            if is_fence_close(t.trim_end(), ch, len) {
                fence = None;
            }
            out.push_str(line);
            continue;
        }
        if let Some((ch, len, _)) = fence_open(t) {
            fence = Some((ch, len));
            out.push_str(line);
            continue;
        }
        out.push_str(&strip_tags_outside_code(line));
    }
    out
}

pub(super) enum Tag {
    /// `<https://…>` or `<mailto:…>`: the address and the index past `>`.
    Autolink(String, usize),
    /// A known HTML tag, and whether it ends a line.
    Html { end: usize, breaks: bool },
}

/// What starts at the `<` at `i`, if it is markup.
pub(super) fn tag_end(chars: &[char], i: usize) -> Option<Tag> {
    let close = i + chars[i..].iter().position(|&x| x == '>')?;
    let inner: String = chars[i + 1..close].iter().collect();
    if (inner.starts_with("http://")
        || inner.starts_with("https://")
        || inner.starts_with("mailto:"))
        && !inner.contains(char::is_whitespace)
    {
        let url = inner.trim_start_matches("mailto:").to_string();
        return Some(Tag::Autolink(url, close + 1));
    }
    let name = tag_name(&inner)?;
    Some(Tag::Html {
        end: close + 1,
        breaks: BREAKS.contains(&name.as_str())
            && (inner.starts_with('/') || matches!(name.as_str(), "br" | "hr")),
    })
}

/// The element name of a tag's inside (`a href=…`, `/a`, `br/`), when it is a known HTML one.
fn tag_name(inner: &str) -> Option<String> {
    let body = inner.strip_prefix('/').unwrap_or(inner);
    let name: String = body
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    let after = body[name.len()..].chars().next();
    let ends_name = after.is_none_or(|c| c.is_whitespace() || c == '/');
    (ends_name && HTML_TAGS.contains(&name.as_str())).then_some(name)
}

/// `line` with known HTML tags removed outside code spans (a closing block tag, `<br>` and
/// `<hr>` become a space).
fn strip_tags_outside_code(line: &str) -> Cow<'_, str> {
    // Without a `<` there is no tag: the line comes out as it went in.
    if memchr::memchr(b'<', line.as_bytes()).is_none() {
        Cow::Borrowed(line)
    } else {
        Cow::Owned(strip_tags(line))
    }
}

/// [`strip_tags_outside_code`] read character by character.
fn strip_tags(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '`' {
            let ticks = chars[i..].iter().take_while(|&&x| x == '`').count();
            let end = find_ticks(&chars, i + ticks, ticks).map_or(i + ticks, |e| e + ticks);
            out.extend(&chars[i..end]);
            i = end;
            continue;
        }
        if chars[i] == '<'
            && let Some(Tag::Html { end, breaks }) = tag_end(&chars, i)
        {
            if breaks && !out.ends_with(' ') && !out.trim().is_empty() {
                out.push(' ');
            }
            i = end;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    if line.ends_with('\n') && !out.ends_with('\n') {
        out.push('\n');
    }
    // A line that held only tags is left empty (not removed: line numbers stay the source's).
    if out.trim().is_empty() && !line.trim().is_empty() {
        return if line.ends_with('\n') {
            "\n".into()
        } else {
            String::new()
        };
    }
    out
}

/// `<script>…</script>` and the like removed, with what they hold, and `<!-- comments -->`
/// kept (a comment is text the author wrote; `planted` keeps it out of navigation text).
pub(super) fn without_hidden_html(md: &str) -> Cow<'_, str> {
    // No element opens without a `<` (most texts have none).
    if memchr::memchr(b'<', md.as_bytes()).is_none() {
        return Cow::Borrowed(md);
    }
    let lower = md.to_ascii_lowercase();
    if !HIDDEN.iter().any(|h| lower.contains(&format!("<{h}"))) {
        return Cow::Borrowed(md);
    }
    let mut out = String::with_capacity(md.len());
    let mut pos = 0;
    while pos < md.len() {
        let next = HIDDEN
            .iter()
            .filter_map(|h| {
                let open = format!("<{h}");
                lower[pos..].find(&open).and_then(|k| {
                    let at = pos + k;
                    let after = lower[at + open.len()..].chars().next();
                    after
                        .is_none_or(|c| c == '>' || c.is_whitespace())
                        .then_some((at, *h))
                })
            })
            .min();
        let Some((at, h)) = next else {
            out.push_str(&md[pos..]);
            break;
        };
        out.push_str(&md[pos..at]);
        let close = format!("</{h}>");
        pos = lower[at..]
            .find(&close)
            .map_or(md.len(), |k| at + k + close.len());
        // The lines it held stay as empty lines, so line numbers still point into the source.
        out.extend(std::iter::repeat_n('\n', md[at..pos].matches('\n').count()));
    }
    Cow::Owned(out)
}

/// The common named and numeric character references.
pub(super) fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(a) = rest.find('&') {
        out.push_str(&rest[..a]);
        let tail = &rest[a..];
        let semi = tail.find(';').filter(|&k| k <= 10);
        let decoded = semi.and_then(|k| entity(&tail[1..k]).map(|c| (c, k)));
        match decoded {
            Some((c, k)) => {
                out.push(c);
                rest = &tail[k + 1..];
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "mdash" => '—',
        "ndash" => '–',
        "hellip" => '…',
        "rsquo" => '’',
        "lsquo" => '‘',
        "rdquo" => '”',
        "ldquo" => '“',
        "copy" => '©',
        _ => {
            let n = name.strip_prefix('#')?;
            let code = match n.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => n.parse().ok()?,
            };
            char::from_u32(code)?
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // Fixed seed, no failure file: the tests stay deterministic and write nothing to src/.
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x7a65),
            ..ProptestConfig::default()
        })]

        /// The shortcut for a line without `<` (it comes out as it went in) is what the
        /// character-by-character reading gives: code spans, entities, markup and blank lines
        /// included.
        #[test]
        fn a_line_without_a_tag_opening_comes_out_unchanged(
            line in "[a-z `>/&;*_#\\[\\]()|\t é—]{0,40}\n?"
        ) {
            prop_assert_eq!(strip_tags(&line), line.clone());
            prop_assert_eq!(strip_tags_outside_code(&line), line.as_str());
        }

        /// The same for a whole text, fenced code included.
        #[test]
        fn a_text_without_a_tag_opening_comes_out_unchanged(
            text in "([a-z `>/&;*_#\\[\\]()|\t é—]{0,30}\n){0,8}(```\n)?[a-z ]{0,10}"
        ) {
            prop_assert_eq!(strip_lines(&text), text.clone());
            prop_assert_eq!(without_html_tags(&text), text.clone());
            prop_assert_eq!(without_hidden_html(&text), text.as_str());
        }
    }

    #[test]
    fn lines_with_tags_still_lose_them() {
        assert_eq!(
            strip_tags_outside_code("a <b>bold</b> `<i>`\n"),
            "a bold `<i>`\n"
        );
        assert_eq!(strip_tags_outside_code("<div>\n"), "\n");
    }
}
