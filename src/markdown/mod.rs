//! Markdown, and the HTML inside it, as clean text: each link's text once, no raw tags or
//! reference definitions, entities decoded, and code blocks kept apart as code.

mod blocks;
mod components;
pub mod dialect;
mod html;
pub mod links;
pub mod mdx;

pub use blocks::{blocks, code_spans};
pub use html::without_html_tags;

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

/// `md` as plain text: the text blocks' lines, code left out, markup removed.
pub fn plain_text(md: &str) -> String {
    plain_of(&blocks(md))
}

/// The plain text of `{line}\n{md}`, given `plain`, the plain text of `md`, without parsing `md`
/// again: when `md` opens with an ATX heading (which ends any paragraph `line` starts) and
/// `line` holds nothing that reaches past its own line (an HTML block, a fence, a link
/// reference or footnote, a comment). `None` otherwise: then parse the whole text.
pub fn plain_with_line(line: &str, md: &str, plain: &str) -> Option<String> {
    let opens_heading = {
        let hashes = md.bytes().take_while(|&b| b == b'#').count();
        (1..=6).contains(&hashes)
            && matches!(
                md.as_bytes().get(hashes),
                None | Some(b' ' | b'\t' | b'\n' | b'\r')
            )
    };
    let stays_on_its_line = !line.contains(['<', '[', '`', '~', '\n', '\r']);
    (opens_heading && stays_on_its_line).then(|| plain_text(line) + plain)
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A line of Markdown of the kinds that could reach past a line or change how the lines
    /// after it read: lists, quotes, fences, HTML, tables, link references, footnotes, setext
    /// underlines, indented code, emphasis and code spans.
    fn md_line() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "",
            "# Heading",
            "## Sub *em*",
            "plain words here.",
            "- item",
            "2. item",
            "> quote",
            "```",
            "~~~",
            "    indented code",
            "<div>",
            "<!-- note",
            "-->",
            "| a | b |",
            "|---|---|",
            "[ref]: https://x.example",
            "[^1]: note",
            "see [ref] and [^1]",
            "===",
            "---",
            "*open",
            "`tick",
            "term",
            ": definition",
            "<script>",
            "</script>",
            "text <b>bold</b> end",
            "&amp; &nbsp;",
        ])
        .prop_map(String::from)
    }

    proptest! {
        // Fixed seed, no failure file: deterministic, and nothing written into src/.
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x71e),
            cases: 1024,
            ..ProptestConfig::default()
        })]

        /// Where `plain_with_line` answers, its answer is the plain text of the whole.
        #[test]
        fn a_line_before_a_heading_reads_as_its_own_block(
            line in prop_oneof![
                "[a-zA-Z0-9 #*_>|:.\\-=!&;()'\"]{0,24}",
                "[a-zA-Z0-9 #*_>|:.\\-=!&;()'\"<\\[\\]`~]{0,24}",
                // Lines that do reach past themselves, or read differently with the lines after.
                prop::sample::select(vec![
                    "<div>", "<details> x", "<!-- c", "```", "~~~ rust", "[^1]", "see [ref]",
                    "[ref]: /u", "`code", "- item", "> quote", "    code",
                ])
                .prop_map(String::from),
            ],
            first in "#{0,7}[ \tx]?[a-z ]{0,8}",
            rest in prop::collection::vec(md_line(), 0..6),
        ) {
            let md = std::iter::once(first).chain(rest).collect::<Vec<_>>().join("\n");
            let titled = format!("{line}.");
            if let Some(p) = plain_with_line(&titled, &md, &plain_text(&md)) {
                prop_assert_eq!(p, plain_text(&format!("{titled}\n{md}")));
            }
        }
    }

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
        // A Vue slot in a VitePress page (Vite's team.md) is shown: its text stays.
        assert_eq!(
            text(&without_html_tags(&dialect::to_commonmark(
                "<VPTeamPageTitle>\n  <template #lead>\n    Guided by a team.\n  </template>\n</VPTeamPageTitle>\n"
            ))),
            "Guided by a team."
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
            text("## Title\n> quoted\n\n1. first\n- [x] done\n\n| a | b |\n|---|---|\n| 1 | 2 |"),
            "Title quoted first done a; b 1; 2"
        );
        assert_eq!(
            text("**bold** and _it_ and snake_case and ~~old~~"),
            "bold and it and snake_case and old"
        );
    }

    #[test]
    fn the_parser_reads_what_a_line_splitter_missed() {
        // Setext headings, indented code, nested lists and HTML blocks are CommonMark's.
        assert_eq!(
            blocks("Install\n=======\n\nRun this:\n\n    cargo build\n"),
            vec![
                Block::Heading("Install".into()),
                Block::Text("Run this:".into()),
                Block::Code {
                    lang: String::new(),
                    code: "cargo build".into()
                },
            ]
        );
        assert_eq!(
            blocks("- one\n  - nested\n- two\n  wrapped on\n  the next line"),
            vec![Block::Text(
                "one\nnested\ntwo wrapped on the next line".into()
            )]
        );
        // A code fence inside a list item is code, not text.
        let b = blocks("1. Build:\n\n   ```sh\n   make\n   ```\n2. Ship.");
        assert!(b.contains(&Block::Code {
            lang: "sh".into(),
            code: "make".into()
        }));
        assert!(!plain_of(&b).contains("make"));
        // An HTML block's text stays, its tags and comments go, its entities are decoded.
        assert_eq!(
            text("<div class=\"note\">\n<p>Tom &amp; Jerry</p>\n<!-- hidden\nnote -->\n</div>"),
            "Tom & Jerry"
        );
        assert_eq!(text("Before <!-- a comment --> after."), "Before after.");
        // Image alt text is text; a link's title and destination are not.
        assert_eq!(
            text("![A diagram of the build](d.png \"Figure 1\") and [docs](x.md \"Title\")"),
            "A diagram of the build and docs"
        );
        // Reference links by their text, defined anywhere; definitions are not text.
        assert_eq!(
            text("[Cargo][c] builds.\n\n[c]: https://doc.rust-lang.org/cargo"),
            "Cargo builds."
        );
        // A line that does not continue a sentence stands alone.
        assert_eq!(
            blocks("Refund Policy\nRefunds take five days."),
            vec![Block::Text("Refund Policy\nRefunds take five days.".into())]
        );
    }
}
