//! Markdown read by a CommonMark parser (pulldown-cmark, the parser of rustdoc and mdBook) into
//! blocks of clean text: headings, text and code, with markup, reference definitions, comments
//! and raw HTML tags gone and the text of links, images (their alt text) and tags kept.

use pulldown_cmark::{
    BrokenLink, CodeBlockKind, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd,
};

use super::Block;
use super::html::{Tag as Html, decode_entities, tag_end, without_hidden_html};

/// The parser's extensions c2s reads: the ones GitHub, mdBook and MkDocs sites write.
pub(super) fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_DEFINITION_LIST
}

/// The blocks of `md`: headings, text (one line per list item, table row or unwrapped
/// paragraph; markup removed) and code blocks.
pub fn blocks(md: &str) -> Vec<Block> {
    let md = without_hidden_html(md);
    // A reference to no definition (`[y]`, `[x][]`) reads as its text, brackets gone.
    let mut any = |_: BrokenLink<'_>| Some((CowStr::Borrowed(""), CowStr::Borrowed("")));
    let mut r = Reader::default();
    for event in Parser::new_with_broken_link_callback(&md, options(), Some(&mut any)) {
        r.event(event);
    }
    r.flush();
    if let Some((lang, code)) = r.code.take() {
        r.out.push(code_block(lang, code));
    }
    r.out
}

/// The inline code spans of `md` outside code blocks (`` `quill check` ``, `` `DATABASE_URL` ``),
/// trimmed, in order; a span of more than 40 characters or with no letter is left out.
pub fn code_spans(md: &str) -> Vec<String> {
    Parser::new_ext(md, options())
        .filter_map(|e| match e {
            Event::Code(c) => Some(c.trim().to_string()),
            _ => None,
        })
        .filter(|s| s.chars().count() <= 40 && s.chars().any(char::is_alphabetic))
        .collect()
}

#[derive(Default)]
struct Reader {
    out: Vec<Block>,
    /// The finished lines of the text block being read.
    lines: Vec<String>,
    /// The line being read.
    line: String,
    /// Whether `line` came after a soft break (and may continue the line before it).
    soft: bool,
    heading: Option<String>,
    code: Option<(String, String)>,
    /// Open lists, quotes, footnotes and definition lists: a paragraph inside one does not end
    /// the text block.
    depth: usize,
    /// Inside an autolink (`<mailto:…>` reads as the address).
    autolink: bool,
    /// Inside an HTML comment that spans HTML events.
    comment: bool,
}

impl Reader {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(c) => self.push(&c),
            Event::Html(h) | Event::InlineHtml(h) => self.html(&h),
            Event::SoftBreak => self.end_line(true),
            Event::HardBreak | Event::Rule => self.end_line(false),
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Heading { .. } => {
                self.flush();
                self.heading = Some(String::new());
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(_)
            | Tag::BlockQuote(_)
            | Tag::FootnoteDefinition(_)
            | Tag::DefinitionList => {
                self.end_line(false);
                self.depth += 1;
            }
            Tag::Table(_) => self.flush(),
            Tag::Link { link_type, .. } => {
                self.autolink = matches!(link_type, LinkType::Autolink | LinkType::Email);
            }
            _ => self.end_line_if_block(&tag),
        }
    }

    /// Items, paragraphs and the like start on a line of their own.
    fn end_line_if_block(&mut self, tag: &Tag<'_>) {
        if matches!(
            tag,
            Tag::Item
                | Tag::Paragraph
                | Tag::HtmlBlock
                | Tag::TableRow
                | Tag::TableHead
                | Tag::DefinitionListTitle
                | Tag::DefinitionListDefinition
        ) {
            self.end_line(false);
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Heading(_) => {
                if let Some(h) = self.heading.take() {
                    let h = h.split_whitespace().collect::<Vec<_>>().join(" ");
                    if !h.is_empty() {
                        self.out.push(Block::Heading(h));
                    }
                }
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.out.push(code_block(lang, code));
                }
            }
            TagEnd::List(_)
            | TagEnd::BlockQuote(_)
            | TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList => {
                self.depth = self.depth.saturating_sub(1);
                self.end_block();
            }
            TagEnd::Paragraph | TagEnd::HtmlBlock | TagEnd::Table => self.end_block(),
            TagEnd::TableCell => self.line.push_str("; "),
            TagEnd::TableRow | TagEnd::TableHead => {
                let row = self.line.trim_end().trim_end_matches(';').to_string();
                self.line = row;
                self.end_line(false);
            }
            TagEnd::Link => self.autolink = false,
            TagEnd::Item | TagEnd::DefinitionListTitle | TagEnd::DefinitionListDefinition => {
                self.end_line(false)
            }
            _ => {}
        }
    }

    /// The end of a block: the text block ends too, unless a list or quote holds it.
    fn end_block(&mut self) {
        if self.depth == 0 {
            self.flush();
        } else {
            self.end_line(false);
        }
    }

    fn text(&mut self, t: &str) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(t);
        } else if self.autolink {
            self.push(t.strip_prefix("mailto:").unwrap_or(t));
        } else {
            self.push(t);
        }
    }

    fn push(&mut self, t: &str) {
        match &mut self.heading {
            Some(h) => h.push_str(t),
            None => self.line.push_str(t),
        }
    }

    /// Raw HTML: known tags go (a block tag's end, `<br>` and `<hr>` end the line), comments go,
    /// and anything else (`Vec<T>`, `a < b`) is text, its character references decoded.
    fn html(&mut self, h: &str) {
        let chars: Vec<char> = h.chars().collect();
        let mut run = String::new();
        let mut i = 0;
        while i < chars.len() {
            if self.comment {
                match find(&chars, i, "-->") {
                    Some(end) => {
                        self.comment = false;
                        i = end + 3;
                    }
                    None => i = chars.len(),
                }
                continue;
            }
            let tag = match chars[i] {
                '<' if chars[i..].starts_with(&['<', '!', '-', '-']) => {
                    self.comment = true;
                    i += 4;
                    continue;
                }
                '<' => tag_end(&chars, i),
                _ => None,
            };
            if tag.is_some() || chars[i] == '\n' {
                self.push(&decode_entities(&std::mem::take(&mut run)));
            }
            match tag {
                Some(Html::Html { end, breaks }) => {
                    if breaks {
                        self.end_line(false);
                    }
                    i = end;
                }
                Some(Html::Autolink(url, end)) => {
                    self.push(&url);
                    i = end;
                }
                None if chars[i] == '\n' => {
                    self.end_line(true);
                    i += 1;
                }
                None => {
                    run.push(chars[i]);
                    i += 1;
                }
            }
        }
        self.push(&decode_entities(&run));
    }

    /// Ends the line being read. A line after a soft break joins the one before it when the
    /// source wrapped a sentence there (see [`soft_wrapped`]); `next_soft` says how the next one
    /// begins.
    fn end_line(&mut self, next_soft: bool) {
        if self.heading.is_some() {
            self.push(" ");
            return;
        }
        let piece = std::mem::take(&mut self.line);
        let piece = piece.trim();
        if !piece.is_empty() {
            match self.lines.last_mut() {
                Some(prev) if self.soft && soft_wrapped(prev, piece) => {
                    prev.push(' ');
                    prev.push_str(piece);
                }
                _ => self.lines.push(piece.to_string()),
            }
            self.soft = next_soft;
        } else {
            self.soft = self.soft || next_soft;
        }
    }

    /// Ends the text block being read.
    fn flush(&mut self) {
        self.end_line(false);
        self.soft = false;
        if !self.lines.is_empty() {
            self.out
                .push(Block::Text(std::mem::take(&mut self.lines).join("\n")));
        }
    }
}

fn code_block(lang: String, code: String) -> Block {
    let code = code.strip_suffix('\n').unwrap_or(&code).to_string();
    Block::Code { lang, code }
}

/// The index of `pat` in `chars` at or after `from`.
fn find(chars: &[char], from: usize, pat: &str) -> Option<usize> {
    let pat: Vec<char> = pat.chars().collect();
    (from..chars.len()).find(|&k| chars[k..].starts_with(&pat))
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
