//! MDX (Docusaurus) and Hugo markup inside Markdown, read as their sites show it: MDX `import`
//! and `export` lines and `{/* comments */}` go; JSX component tags (`<Tabs>`, `<TabItem
//! value="a" label="A">`, `<CopyableCode code="x" />`) go and their text stays; Hugo shortcodes
//! go and their text stays, a block shortcode (`{{% notice tip %}}`) becomes a titled quote,
//! `{{< highlight go >}}` a code fence, and `{{< ref "x.md" >}}` the path it names, so that the
//! link around it resolves. Escaped shortcodes (`{{</* x */>}}`) are shown as Hugo shows them.

/// What one source line becomes.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// Read on as Markdown.
    Keep,
    /// Code (inside a `highlight` shortcode): left exactly as it is.
    Verbatim,
    /// Nothing: a line of markup only (an import, a component tag, a closing shortcode).
    Drop,
    /// A block's title, shown as a titled quote.
    Title(String),
    /// A code fence's opening (with its language) or closing line.
    Fence(String),
    /// The line with its markup removed.
    Text(String),
}

/// The reader's state across lines: an ESM statement, a component tag or an MDX comment may
/// span lines, and a `highlight` shortcode holds code.
#[derive(Debug, Default)]
pub struct Components {
    /// Open `{`/`(`/`[` of a multi-line `import`/`export`, or of a component tag's attributes.
    open: usize,
    /// Inside a component's opening tag that spans lines (until its `>`).
    in_tag: bool,
    in_comment: bool,
    in_highlight: bool,
    /// Component elements open at the end of the line read (`<Tabs>` … `</Tabs>`).
    nest: usize,
    /// The opening tag read so far, while it spans lines.
    tag: String,
    imports: super::mdx::Imports,
}

/// Shortcodes whose paired form is a titled block (Hugo themes' admonitions, tabs, details).
const BLOCKS: &[&str] = &[
    "notice",
    "hint",
    "alert",
    "callout",
    "admonition",
    "note",
    "tip",
    "info",
    "warning",
    "danger",
    "details",
    "expand",
    "tab",
    "bs/alert",
];

impl Components {
    /// Whether the line read was inside a component element: its indentation is layout (as
    /// in MDX, which has no indented code blocks), not an indented code block.
    pub fn inside(&self) -> bool {
        self.nest > 0
    }

    /// What the line `t` (trimmed at its start; outside code fences) becomes; `top` says it was
    /// not indented (MDX's `import` and `export` stand there).
    pub fn line(&mut self, t: &str, top: bool) -> Line {
        if self.in_highlight {
            if shortcode_alone(t).is_some_and(|s| s.closing && s.name == "highlight") {
                self.in_highlight = false;
                return Line::Fence(String::new());
            }
            return Line::Verbatim;
        }
        if self.in_comment {
            if let Some(end) = t.find("*/}") {
                self.in_comment = false;
                return text_or_drop(&t[end + 3..]);
            }
            return Line::Drop;
        }
        if self.open > 0 || self.in_tag {
            return match self.continue_statement(t) {
                Some(title) => Line::Title(title),
                None => Line::Drop,
            };
        }
        if top && is_esm(t) {
            self.imports.note(t);
            self.open = depth(t);
            return Line::Drop;
        }
        if let Some(marker) = self.imports.include(t) {
            return Line::Text(marker);
        }
        if let Some(s) = shortcode_alone(t) {
            return self.block_shortcode(s);
        }
        if t.strip_prefix('<').and_then(component_name).is_some() && !t.contains('>') {
            // `<Tabs` with its attributes on the lines below.
            self.in_tag = true;
            self.tag = t.to_string();
            self.open = depth(t);
            return Line::Drop;
        }
        if t.starts_with("{/*") && !t.contains("*/}") {
            self.in_comment = true;
            return Line::Drop;
        }
        if !t.contains('<') && !t.contains("{{") && !t.contains("{/*") {
            return Line::Keep;
        }
        let (text, changed, nest) = inline(t);
        self.nest = self.nest.saturating_add_signed(nest);
        if !changed {
            return Line::Keep;
        }
        if let Some(title) = lone_titled_tag(t) {
            return Line::Title(title);
        }
        if text.trim().is_empty() {
            Line::Drop
        } else {
            Line::Text(text)
        }
    }

    /// Reads on in a multi-line statement or tag; a tag that closes here gives its title.
    fn continue_statement(&mut self, t: &str) -> Option<String> {
        if self.in_tag {
            if let Some(gt) = tag_close(t, self.open) {
                self.in_tag = false;
                self.open = 0;
                if !t[..gt].ends_with('/') {
                    self.nest += 1;
                }
                let tag = format!("{} {}", std::mem::take(&mut self.tag), &t[..=gt]);
                return lone_titled_tag(&tag);
            }
            self.tag.push(' ');
            self.tag.push_str(t);
            self.open = depth_from(t, self.open);
            return None;
        }
        self.open = depth_from(t, self.open);
        None
    }

    fn block_shortcode(&mut self, s: Shortcode) -> Line {
        if s.name == "highlight" && !s.closing {
            self.in_highlight = true;
            return Line::Fence(s.args.first().cloned().unwrap_or_default());
        }
        if s.closing || !BLOCKS.contains(&s.name.as_str()) {
            return match s.text() {
                Some(t) if !s.closing => Line::Text(t),
                _ => Line::Drop,
            };
        }
        let title = s
            .named("title")
            .or_else(|| s.named("name"))
            .or_else(|| s.named("header"))
            .or_else(|| s.args.first().cloned())
            .unwrap_or_else(|| s.name.rsplit('/').next().unwrap_or("").to_string());
        Line::Title(crate::text::capitalize(&title))
    }
}

fn text_or_drop(rest: &str) -> Line {
    if rest.trim().is_empty() {
        Line::Drop
    } else {
        Line::Text(rest.trim().to_string())
    }
}

/// An MDX ESM line: `import X from "y"`, `import {a, b} from 'y'`, `import "y"`, `export const …`.
fn is_esm(t: &str) -> bool {
    if let Some(rest) = t.strip_prefix("import ") {
        let rest = rest.trim();
        let quoted = |s: &str| {
            let s = s.trim().trim_end_matches(';');
            s.len() >= 2
                && (s.starts_with('"') && s.ends_with('"')
                    || s.starts_with('\'') && s.ends_with('\''))
        };
        let from = rest.rsplit_once(" from ").is_some_and(|(_, m)| quoted(m));
        return quoted(rest) || rest == "{" || rest.ends_with(',') && rest.starts_with('{') || from;
    }
    let Some(rest) = t.strip_prefix("export ") else {
        return false;
    };
    [
        "const ",
        "let ",
        "var ",
        "function ",
        "default ",
        "class ",
        "async ",
        "{",
    ]
    .iter()
    .any(|k| rest.starts_with(k))
}

/// How many brackets `t` leaves open.
fn depth(t: &str) -> usize {
    depth_from(t, 0)
}

fn depth_from(t: &str, mut open: usize) -> usize {
    for c in t.chars() {
        match c {
            '{' | '(' | '[' => open += 1,
            '}' | ')' | ']' => open = open.saturating_sub(1),
            _ => {}
        }
    }
    open
}

/// Where the component tag being read ends on line `t` (a `>` outside its attribute
/// expressions, `open` brackets deep when the line begins).
fn tag_close(t: &str, mut open: usize) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in t.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'' | '`') => quote = Some(c),
            (None, '{' | '(' | '[') => open += 1,
            (None, '}' | ')' | ']') => open = open.saturating_sub(1),
            (None, '>') if open == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// A JSX component's name at the start of `s` (after `<` or `</`): an uppercase first letter,
/// then letters, digits, `.` or `_` (`Tabs`, `TabItem`, `Tabs.Item`).
fn component_name(s: &str) -> Option<&str> {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
        .unwrap_or(s.len());
    let name = &s[..end];
    (name.len() >= 2 && name.starts_with(|c: char| c.is_ascii_uppercase())).then_some(name)
}

/// A line that is one opening component tag with a `title` or `label` (`<TabItem value="npm"
/// label="npm">`): the title.
fn lone_titled_tag(t: &str) -> Option<String> {
    let t = t.trim();
    let inner = t.strip_prefix('<')?.strip_suffix('>')?;
    if inner.contains('<') {
        return None;
    }
    let name = component_name(inner)?;
    if let Some(title) = super::mdx::title(name, inner.trim_end_matches('/')) {
        return Some(title);
    }
    if inner.ends_with('/') {
        return None;
    }
    let keys: &[&str] = if name.contains("Tab") {
        // A tab shows its value when it has no label.
        &["title", "label", "value"]
    } else {
        &["title", "label"]
    };
    keys.iter().find_map(|k| super::mdx::attribute(inner, k))
}

/// The line with its inline components and shortcodes removed (their text kept), whether
/// anything was removed, and how many component elements it leaves open (less those it
/// closes). Code spans are left alone.
fn inline(t: &str) -> (String, bool, isize) {
    let mut out = String::with_capacity(t.len());
    let mut changed = false;
    let mut nest = 0;
    let mut i = 0;
    while i < t.len() {
        let rest = &t[i..];
        if rest.starts_with('`') {
            let ticks = rest.chars().take_while(|&c| c == '`').count();
            let end = rest[ticks..]
                .find(&"`".repeat(ticks))
                .map_or(ticks, |e| ticks + e + ticks);
            out.push_str(&rest[..end]);
            i += end;
            continue;
        }
        if let Some((len, text, opens)) = markup_at(rest) {
            out.push_str(&text);
            changed = true;
            nest += opens;
            i += len;
            continue;
        }
        let c = rest.chars().next().expect("not at the end");
        out.push(c);
        i += c.len_utf8();
    }
    (out, changed, nest)
}

/// Markup that starts `rest`: its length, what it shows, and the component elements it opens
/// (1) or closes (-1).
fn markup_at(rest: &str) -> Option<(usize, String, isize)> {
    if let Some(body) = rest
        .strip_prefix("{{</*")
        .or_else(|| rest.strip_prefix("{{%/*"))
    {
        // Hugo's escape: `{{</* x */>}}` shows `{{< x >}}`.
        let end = body.find("*/")?;
        let close = &body[end + 2..];
        let delim = if rest.starts_with("{{<") {
            ('<', ">}}")
        } else {
            ('%', "%}}")
        };
        close.starts_with(delim.1).then(|| {
            let shown = format!("{{{{{} {} {}", delim.0, body[..end].trim(), delim.1);
            (5 + end + 2 + delim.1.len(), shown, 0)
        })
    } else if rest.starts_with("{{<") || rest.starts_with("{{%") {
        let close = if rest.starts_with("{{<") {
            ">}}"
        } else {
            "%}}"
        };
        let end = rest.find(close)?;
        let s = Shortcode::parse(&rest[3..end])?;
        let shown = if matches!(s.name.as_str(), "ref" | "relref") {
            s.args.first().cloned().unwrap_or_default()
        } else {
            s.text().unwrap_or_default()
        };
        Some((end + 3, shown, 0))
    } else if let Some(body) = rest.strip_prefix("{/*") {
        let end = body.find("*/}")?;
        Some((3 + end + 3, String::new(), 0))
    } else if let Some(body) = rest.strip_prefix("</") {
        let name = component_name(body)?;
        body[name.len()..]
            .trim_start()
            .starts_with('>')
            .then(|| (2 + body.find('>').expect("checked") + 1, String::new(), -1))
    } else {
        let body = rest.strip_prefix('<')?;
        let name = component_name(body)?;
        let after = &body[name.len()..];
        let end = tag_close(after, 0)?;
        let attrs = &after[..end];
        // `Vec<String>` in prose is not a tag: a component has attributes, closes itself,
        // stands alone on its line, or is closed later on it (`<Badge>New</Badge>`).
        let after_tag = &rest[1 + name.len() + end + 1..];
        let tag = !attrs.trim().is_empty()
            || attrs.ends_with('/')
            || after_tag.trim().is_empty()
            || after_tag.contains(&format!("</{name}>"));
        let opens = isize::from(!attrs.ends_with('/'));
        tag.then(|| (1 + name.len() + end + 1, String::new(), opens))
    }
}

/// A Hugo shortcode call: `name arg "quoted arg" key="value"`, or its closing `/name`.
#[derive(Debug)]
struct Shortcode {
    name: String,
    closing: bool,
    args: Vec<String>,
    named: Vec<(String, String)>,
}

impl Shortcode {
    fn parse(body: &str) -> Option<Shortcode> {
        let body = body.trim().trim_end_matches('/').trim();
        let (closing, body) = match body.strip_prefix('/') {
            Some(b) => (true, b.trim_start()),
            None => (false, body),
        };
        let mut words = words(body).into_iter();
        let name = words.next()?;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_alphanumeric() || "-_/.".contains(c))
        {
            return None;
        }
        let mut s = Shortcode {
            name,
            closing,
            args: Vec::new(),
            named: Vec::new(),
        };
        for w in words {
            match w.split_once('=') {
                Some((k, v))
                    if !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_') =>
                {
                    s.named
                        .push((k.to_string(), v.trim_matches(['"', '\'', '`']).to_string()))
                }
                _ => s.args.push(w),
            }
        }
        Some(s)
    }

    fn named(&self, key: &str) -> Option<String> {
        self.named
            .iter()
            .find(|(k, v)| k == key && !v.trim().is_empty())
            .map(|(_, v)| v.clone())
    }

    /// The text a reader sees of it: a figure's caption, title or alt text.
    fn text(&self) -> Option<String> {
        ["caption", "title", "alt"]
            .iter()
            .find_map(|k| self.named(k))
    }
}

/// A shortcode that is alone on its line.
fn shortcode_alone(t: &str) -> Option<Shortcode> {
    let t = t.trim();
    let close = if t.starts_with("{{<") && !t.starts_with("{{</*") {
        ">}}"
    } else if t.starts_with("{{%") && !t.starts_with("{{%/*") {
        "%}}"
    } else {
        return None;
    };
    let body = t[3..].strip_suffix(close)?;
    if body.contains("}}") {
        return None;
    }
    Shortcode::parse(body)
}

/// Words of a shortcode's arguments: quoted strings kept whole, quotes removed.
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'' | '`') => quote = Some(c),
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}
