//! reStructuredText (Sphinx and docutils pages) read as the site shows it, written as the
//! CommonMark Markdown the rest of c2s reads: section titles as headings, literal blocks and
//! code directives as fences, admonitions as titled quotes, tables as pipe tables, roles and
//! references as code, links and text; comments (`..`) become HTML comments, which a reader
//! does not see either. Also MyST, Sphinx's Markdown (`myst`), and the toctrees, which are a
//! Sphinx site's navigation.

mod directive;
mod inline;
mod lines;
pub mod myst;
mod tables;
pub mod toctree;

pub use directive::PYTHON_OBJECTS;
use inline::Refs;
use lines::{
    adornment, blank, body_end, dedent, expand_tabs, fence, field, indent, list_marker, quoted,
    under_marker,
};

/// What a reST page gives.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Page {
    /// The page as Markdown.
    pub markdown: String,
    /// Its title: the first section title.
    pub title: Option<String>,
    /// Its file-wide metadata fields (`:orphan:`, `:description: …`) before any content.
    pub fields: Vec<Field>,
}

/// A file-wide metadata field: its name, its value and its line (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub value: String,
    pub line: usize,
}

/// State shared by a page's blocks: heading styles in order of appearance, the references it
/// defines, and the language literal blocks are highlighted in.
struct Ctx {
    styles: Vec<(char, bool)>,
    refs: Refs,
    anon: usize,
    highlight: String,
    title: Option<String>,
    fields: Vec<Field>,
    /// Whether any content was written yet (metadata fields come first).
    started: bool,
    /// Whether directive content is MyST Markdown (else reST).
    myst: bool,
}

impl Ctx {
    fn new(refs: Refs, myst: bool) -> Ctx {
        Ctx {
            styles: Vec::new(),
            refs,
            anon: 0,
            highlight: String::new(),
            title: None,
            fields: Vec::new(),
            started: false,
            myst,
        }
    }
}

/// Converts a reST page to Markdown.
pub fn to_markdown(text: &str) -> Page {
    let lines: Vec<String> = text
        .replace("\r\n", "\n")
        .split('\n')
        .map(expand_tabs)
        .collect();
    let mut ctx = Ctx::new(scan_refs(&lines), false);
    let out = blocks(&lines, &mut ctx, true);
    let markdown = out.join("\n").trim_end().to_string();
    Page {
        markdown,
        title: ctx.title,
        fields: ctx.fields,
    }
}

/// Named and anonymous targets and substitutions, wherever the page defines them.
fn scan_refs(lines: &[String]) -> Refs {
    let mut refs = Refs::default();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let next = lines.get(i + 1).map(|n| n.trim()).unwrap_or("");
        if let Some(rest) = t.strip_prefix(".. __:").or_else(|| t.strip_prefix("__ ")) {
            refs.anonymous.push(rest.trim().to_string());
        } else if let Some(rest) = t.strip_prefix(".. _")
            && let Some((name, url)) = split_target(rest)
        {
            let url = if url.is_empty() { next } else { url };
            if looks_like_uri(url) {
                refs.targets
                    .insert(inline::normalize_name(&name), url.to_string());
            }
        } else if let Some(rest) = t.strip_prefix(".. |")
            && let Some((name, def)) = rest.split_once('|')
            && let Some(text) = def.trim().strip_prefix("replace::")
        {
            refs.substitutions
                .insert(name.to_string(), text.trim().to_string());
        }
    }
    refs
}

/// `name: uri` of a target (`` `a name`: uri `` too).
fn split_target(rest: &str) -> Option<(String, &str)> {
    if let Some(r) = rest.strip_prefix('`') {
        let (name, after) = r.split_once("`:")?;
        return Some((name.to_string(), after.trim()));
    }
    let at = rest
        .find(": ")
        .or_else(|| rest.ends_with(':').then(|| rest.len() - 1))?;
    Some((rest[..at].to_string(), rest[at + 1..].trim()))
}

fn looks_like_uri(s: &str) -> bool {
    s.contains("://") || s.starts_with("mailto:") || s.ends_with(".html") || s.starts_with('/')
}

/// A directive's content as Markdown: reST converted, MyST's Markdown read in its dialect.
fn content(lines: &[String], ctx: &mut Ctx) -> Vec<String> {
    if ctx.myst {
        myst::lines(lines, ctx)
    } else {
        blocks(lines, ctx, false)
    }
}

/// Converts a run of lines (already dedented to column 0) to Markdown lines.
fn blocks(lines: &[String], ctx: &mut Ctx, top: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = &lines[i];
        if blank(l) {
            out.push(String::new());
            i += 1;
            continue;
        }
        let before = out.len();
        let from = i;
        i = block(lines, i, ctx, top, &mut out);
        if out.len() > before && out[before..].iter().any(|l| !l.is_empty()) {
            ctx.started = true;
        }
        // A page's own blocks keep their first line's number where they can: blank lines
        // stand for lines that wrote less (targets, comments' ends, metadata).
        if top {
            let short = (i - from).saturating_sub(out.len() - before);
            out.extend(std::iter::repeat_n(String::new(), short));
        }
    }
    out
}

/// Converts the block starting at line `i`; returns the line after it.
fn block(lines: &[String], i: usize, ctx: &mut Ctx, top: bool, out: &mut Vec<String>) -> usize {
    let l = &lines[i];
    let t = l.trim_start();
    let next = lines.get(i + 1).map(String::as_str).unwrap_or("");
    if indent(l) > 0 {
        // An indented block without a literal marker before it: a block quote.
        let end = body_end(lines, i, 1);
        let body = blocks(&dedent(&lines[i..end]), ctx, false);
        quoted(body, out);
        return end;
    }
    if t == ".." || t.starts_with(".. ") {
        return directive::explicit(lines, i, ctx, out);
    }
    // An overlined section title.
    if let Some(c) = adornment(l)
        && !blank(next)
        && lines.get(i + 2).is_some_and(|u| adornment(u) == Some(c))
        && adornment(next).is_none()
    {
        heading(next.trim(), (c, true), ctx, out);
        out.push(String::new());
        return i + 3;
    }
    if let Some(c) = adornment(next)
        && adornment(l).is_none()
        && next.len() >= l.trim().chars().count().min(3)
    {
        heading(l.trim(), (c, false), ctx, out);
        out.push(String::new());
        return i + 2;
    }
    if adornment(l).is_some() && l.len() >= 4 && blank(next) {
        out.push(String::new()); // a transition
        return i + 1;
    }
    if t.starts_with("+-") || t.starts_with("+=") {
        let end = i + lines[i..]
            .iter()
            .take_while(|l| l.starts_with('+') || l.starts_with('|'))
            .count();
        tables::grid(&lines[i..end], ctx, out);
        return end;
    }
    if tables::is_simple_border(l) {
        let end = tables::simple_end(lines, i);
        tables::simple(&lines[i..end], ctx, out);
        return end;
    }
    if t.starts_with(">>>") {
        let end = i + lines[i..].iter().take_while(|l| !blank(l)).count();
        fence("pycon", &lines[i..end], out);
        return end;
    }
    if let Some(marker) = list_marker(l) {
        let col = marker.len();
        let end = body_end(lines, i + 1, col);
        let mut item = vec![l[col..].to_string()];
        item.extend(lines[i + 1..end].iter().map(|x| {
            if blank(x) {
                String::new()
            } else {
                x[col.min(indent(x))..].to_string()
            }
        }));
        let body = blocks(&item, ctx, false);
        let shown = if marker.trim_start().starts_with(['-', '*', '+', '•']) {
            "- ".to_string()
        } else {
            let n = marker.trim().trim_matches(['.', ')', '(']);
            let n = if n.chars().all(|c| c.is_ascii_digit()) {
                n
            } else {
                "1"
            };
            format!("{n}. ")
        };
        under_marker(&shown, body, out);
        return end;
    }
    if let Some((name, rest)) = field(t) {
        let end = body_end(lines, i + 1, 1);
        let mut value = vec![rest.to_string()];
        value.extend(dedent(&lines[i + 1..end]));
        if top && !ctx.started {
            // File-wide metadata: not shown on the page.
            ctx.fields.push(Field {
                name: name.to_string(),
                value: value.join(" ").trim().to_string(),
                line: i + 1,
            });
            return end;
        }
        let body = blocks(&value, ctx, false);
        under_marker(&format!("- **{name}**: "), body, out);
        return end;
    }
    if t.starts_with("| ") || t == "|" {
        let end = i + lines[i..].iter().take_while(|l| l.starts_with('|')).count();
        for x in &lines[i..end] {
            let s = x.trim_start_matches('|').trim();
            out.push(
                format!("{}  ", paragraph_line(s, ctx))
                    .trim_end()
                    .to_string(),
            );
        }
        return end;
    }
    // A definition list item: a term line, its definition indented right below it.
    if !blank(next) && indent(next) > 0 && !t.ends_with("::") {
        let end = body_end(lines, i + 1, 1);
        let body = blocks(&dedent(&lines[i + 1..end]), ctx, false);
        let term = t.split(" : ").next().unwrap_or(t);
        let term = inline::convert(term, &ctx.refs, &mut ctx.anon);
        under_marker(&format!("- **{}**: ", term.trim()), body, out);
        return end;
    }
    paragraph(lines, i, ctx, out)
}

/// A paragraph from line `i` (and the literal block its `::` opens); returns the line after.
fn paragraph(lines: &[String], i: usize, ctx: &mut Ctx, out: &mut Vec<String>) -> usize {
    let mut end = i;
    while end < lines.len() && !blank(&lines[end]) && indent(&lines[end]) == 0 {
        end += 1;
        if lines.get(end).is_some_and(|n| adornment(n).is_some()) {
            // A title starts on the next line but one.
            if end > i + 1 {
                end -= 1;
            }
            break;
        }
    }
    let end = end.max(i + 1);
    let mut text = lines[i..end].join("\n");
    let literal = text.ends_with("::");
    if literal {
        text.truncate(text.len() - 2);
        if text.ends_with(char::is_whitespace) || text.is_empty() {
            text = text.trim_end().to_string();
        } else {
            text.push(':');
        }
    }
    if !text.is_empty() {
        let converted = inline::convert(&text, &ctx.refs, &mut ctx.anon);
        out.extend(converted.split('\n').map(escape_line_start));
    }
    if !literal {
        return end;
    }
    // The literal block: the indented lines after blank ones.
    let mut j = end;
    while j < lines.len() && blank(&lines[j]) {
        j += 1;
    }
    if j >= lines.len() || indent(&lines[j]) == 0 {
        return end;
    }
    let stop = body_end(lines, j, 1);
    let code = dedent(&lines[j..stop]);
    let lang = if ctx.highlight.is_empty() && code[0].starts_with(">>>") {
        "pycon".to_string()
    } else {
        ctx.highlight.clone()
    };
    // The fence takes the place of the last blank line before the block (a fence may follow a
    // paragraph line) and of the first after it, so that later lines keep their numbers.
    out.extend(std::iter::repeat_n(String::new(), j - end - 1));
    fence(&lang, &code, out);
    if lines.get(stop).is_some_and(|l| blank(l)) {
        return stop + 1;
    }
    stop
}

fn paragraph_line(s: &str, ctx: &mut Ctx) -> String {
    escape_line_start(&inline::convert(s, &ctx.refs, &mut ctx.anon))
}

/// A paragraph line that Markdown would read as a heading, quote or list marker, escaped.
fn escape_line_start(l: &str) -> String {
    let t = l.trim_start();
    let risky = t.starts_with('#')
        || t.starts_with('>')
        || t.starts_with("- ")
        || t.starts_with("+ ")
        || t.starts_with("* ")
        || t.starts_with('=')
        || t.chars().take_while(char::is_ascii_digit).count() > 0
            && t.trim_start_matches(|c: char| c.is_ascii_digit())
                .starts_with(['.', ')']);
    if risky {
        format!("\\{}", t)
    } else {
        t.to_string()
    }
}

/// A section title: a heading at its style's level (first style seen is level 1).
fn heading(title: &str, style: (char, bool), ctx: &mut Ctx, out: &mut Vec<String>) {
    let level = match ctx.styles.iter().position(|s| *s == style) {
        Some(p) => p + 1,
        None => {
            ctx.styles.push(style);
            ctx.styles.len()
        }
    };
    let text = inline::convert(title, &ctx.refs, &mut ctx.anon);
    if ctx.title.is_none() {
        ctx.title = Some(plain_title(&text));
    }
    out.push(format!("{} {}", "#".repeat(level.min(6)), text.trim()));
}

/// A converted title without its Markdown: code spans' ticks, emphasis, links' destinations.
fn plain_title(md: &str) -> String {
    let mut s = String::with_capacity(md.len());
    let mut rest = md;
    while let Some(open) = rest.find("](") {
        let close = rest[open..].find(')').map_or(rest.len(), |c| open + c + 1);
        s.push_str(&rest[..open]);
        rest = &rest[close..];
    }
    s.push_str(rest);
    s.replace(['`', '[', '\\'], "")
        .replace("**", "")
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests;
