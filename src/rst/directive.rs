//! reST explicit markup: directives (code, includes, admonitions, tables, images, Sphinx's API
//! and autodoc entries, sphinx-design and tabs containers), hyperlink targets, substitution
//! definitions, footnotes and comments.

use super::lines::{blank, body_end, dedent, fence, field, quoted};
use super::{Ctx, blocks, content, tables};

/// One directive: `.. name:: args`, its `:option: value` lines and its content.
pub(super) struct Directive {
    pub name: String,
    pub args: String,
    pub options: Vec<(String, String)>,
    pub content: Vec<String>,
}

impl Directive {
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Admonitions and their default titles.
const ADMONITIONS: &[(&str, &str)] = &[
    ("note", "Note"),
    ("warning", "Warning"),
    ("tip", "Tip"),
    ("hint", "Hint"),
    ("important", "Important"),
    ("caution", "Caution"),
    ("danger", "Danger"),
    ("error", "Error"),
    ("attention", "Attention"),
    ("seealso", "See also"),
];

/// Directives whose argument is a title over their content.
const TITLED: &[&str] = &[
    "admonition",
    "topic",
    "sidebar",
    "dropdown",
    "card",
    "tab-item",
    "tab",
    "group-tab",
    "grid-item-card",
    "details",
];

/// Directives that describe a Python object: their argument is its signature, and its name
/// is a target links may name (`render::labels`).
pub const PYTHON_OBJECTS: &[&str] = &[
    "function",
    "class",
    "method",
    "attribute",
    "data",
    "exception",
    "decorator",
    "property",
    "staticmethod",
    "classmethod",
];

/// Directives that describe another API object (an option, a C function, a setting).
const OTHER_OBJECTS: &[&str] = &[
    "describe",
    "object",
    "envvar",
    "option",
    "confval",
    "type",
    "member",
    "macro",
    "struct",
    "var",
    "enum",
    "directive",
    "role",
    "setting",
    "event",
];

/// Directives that write nothing a reader sees as text.
const SILENT: &[&str] = &[
    "toctree",
    "index",
    "meta",
    "contents",
    "sectnum",
    "tabularcolumns",
    "currentmodule",
    "module",
    "default-role",
    "role",
    "title",
    "raw",
    "todo",
    "spelling",
    "include-toc",
    "default-domain",
    "program",
    "codeauthor",
    "sectionauthor",
    "moduleauthor",
    "header",
    "footer",
    "target-notes",
    "highlight",
    "rst-class",
    "cssclass",
    "autoclasstoc",
];

/// The explicit markup block at line `i`; returns the line after it.
pub(super) fn explicit(lines: &[String], i: usize, ctx: &mut Ctx, out: &mut Vec<String>) -> usize {
    let end = body_end(lines, i + 1, 1);
    let first = lines[i].trim_start()[2..].trim().to_string();
    let body = dedent(&lines[i + 1..end]);
    if first.starts_with('_') || first.starts_with("|") && first.contains("replace::") {
        return end; // a target or a text substitution: used where referred to
    }
    if first.starts_with('|') {
        return end; // an image substitution
    }
    if let Some(rest) = first.strip_prefix('[')
        && let Some((label, text)) = rest.split_once(']')
    {
        let label = label.trim_start_matches('#');
        let mut note = vec![text.trim().to_string()];
        note.extend(body);
        let converted = blocks(&note, ctx, false);
        super::lines::under_marker(&format!("\\[{label}\\] "), converted, out);
        return end;
    }
    let Some((name, args)) = directive_head(&first) else {
        comment(&first, &body, out);
        return end;
    };
    let d = parse(name, args, &body, false);
    write(&d, ctx, out);
    end
}

/// `name:: args` of a directive's first line.
fn directive_head(first: &str) -> Option<(&str, &str)> {
    let at = first.find("::")?;
    let name = &first[..at];
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "-_:.+".contains(c));
    ok.then(|| (name, first[at + 2..].trim()))
}

/// A comment: not shown by the site, so an HTML comment (which the rest of c2s treats as what
/// a reader does not see).
fn comment(first: &str, body: &[String], out: &mut Vec<String>) {
    let mut text: Vec<String> = std::iter::once(first.to_string())
        .chain(body.iter().cloned())
        .map(|l| l.replace("-->", "- ->"))
        .collect();
    while text.last().is_some_and(|l| blank(l)) {
        text.pop();
    }
    if text.iter().all(|l| blank(l)) {
        return;
    }
    let n = text.len();
    for (k, l) in text.into_iter().enumerate() {
        let open = if k == 0 { "<!-- " } else { "" };
        let close = if k + 1 == n { " -->" } else { "" };
        out.push(format!("{open}{l}{close}"));
    }
}

pub(super) fn parse(name: &str, args: &str, body: &[String], myst: bool) -> Directive {
    let bare = name.rsplit(':').next().unwrap_or(name).to_string();
    let admonition = ADMONITIONS.iter().any(|(n, _)| *n == bare);
    let continued = !admonition && !myst && !args.is_empty();
    let mut args = args.to_string();
    let mut k = 0;
    // An argument (a long signature) goes on over the lines up to an option or a blank line;
    // without one on the first line, or in MyST, those lines are content (an admonition's too).
    while continued && k < body.len() && !blank(&body[k]) && field(&body[k]).is_none() {
        args.push(' ');
        args.push_str(body[k].trim());
        k += 1;
    }
    let mut options = Vec::new();
    while k < body.len() && !blank(&body[k]) {
        // Options end at the first line that is not one: content follows.
        let Some((o, v)) = field(&body[k]) else {
            break;
        };
        options.push((o.to_string(), v.to_string()));
        k += 1;
    }
    let mut content: Vec<String> = body[k..].to_vec();
    while content.first().is_some_and(|l| blank(l)) {
        content.remove(0);
    }
    if admonition && !args.is_empty() {
        content.insert(0, std::mem::take(&mut args));
    }
    Directive {
        name: bare,
        args,
        options,
        content,
    }
}

/// Writes a directive as the site shows it.
pub(super) fn write(d: &Directive, ctx: &mut Ctx, out: &mut Vec<String>) {
    let name = d.name.as_str();
    if name == "highlight" {
        ctx.highlight = lang_of(&d.args);
    }
    match name {
        "code-block" | "code" | "sourcecode" => {
            caption(d, ctx, out);
            let lang = if d.args.is_empty() {
                ctx.highlight.clone()
            } else {
                lang_of(&d.args)
            };
            fence(&lang, &d.content, out);
        }
        "literalinclude" => {
            caption(d, ctx, out);
            let lang = d
                .option("language")
                .map(lang_of)
                .unwrap_or_else(|| ext_lang(&d.args));
            fence(&lang, &[include_line(&d.args, d.option("lines"))], out);
        }
        "include" => match (d.option("literal"), d.option("code")) {
            (None, None) => out.push(include_line(&d.args, None)),
            (_, code) => {
                let lang = code.map(lang_of).unwrap_or_default();
                fence(&lang, &[include_line(&d.args, None)], out);
            }
        },
        "doctest" | "testcode" | "testoutput" | "testsetup" => {
            let lang = if name == "doctest" {
                "pycon"
            } else if name == "testoutput" {
                ""
            } else {
                "python"
            };
            fence(lang, &d.content, out);
        }
        "parsed-literal" | "productionlist" | "math" | "code-cell" => {
            let mut code = d.content.clone();
            if !d.args.is_empty() && name != "code-cell" {
                code.insert(0, d.args.clone());
            }
            fence(if name == "math" { "math" } else { "" }, &code, out);
        }
        "image" | "figure" => {
            let alt = d.option("alt").unwrap_or("");
            if !alt.is_empty() || name == "figure" {
                out.push(format!(
                    "![{alt}]({})",
                    d.args.split_whitespace().collect::<String>()
                ));
            }
            if !d.content.is_empty() {
                out.push(String::new());
                out.extend(content(&d.content, ctx));
            }
        }
        "list-table" => {
            caption_arg(d, ctx, out);
            tables::list_table(&d.content, ctx, out);
        }
        "csv-table" => {
            caption_arg(d, ctx, out);
            tables::csv_table(d.option("header"), &d.content, ctx, out);
        }
        "rubric" | "centered" => out.push(format!("**{}**", convert(&d.args, ctx))),
        "epigraph" | "highlights" | "pull-quote" => quoted(content(&d.content, ctx), out),
        "versionadded" | "versionchanged" | "deprecated" | "versionremoved" => {
            let (version, rest) = d.args.split_once(' ').unwrap_or((&d.args, ""));
            let what = match name {
                "versionadded" => "Added in version",
                "versionchanged" => "Changed in version",
                "deprecated" => "Deprecated since version",
                _ => "Removed in version",
            };
            let mut body = Vec::new();
            if !rest.trim().is_empty() {
                body.push(rest.trim().to_string());
            }
            body.extend(d.content.iter().cloned());
            titled(&format!("{what} {version}"), &body, ctx, out);
        }
        "autosummary" => {
            for entry in d.content.iter().filter(|l| !blank(l)) {
                out.push(format!(
                    "- {}",
                    super::inline::code_span(entry.trim().trim_start_matches('~'))
                ));
            }
        }
        n if n.starts_with("auto") => {
            // autodoc: the docstrings are the code's, not the page's; the object's name stays.
            out.push(format!("**{}**", super::inline::code_span(d.args.trim())));
            if !d.content.is_empty() {
                out.push(String::new());
                out.extend(content(&d.content, ctx));
            }
        }
        n if SILENT.contains(&n) => {}
        n if PYTHON_OBJECTS.contains(&n) || OTHER_OBJECTS.contains(&n) => {
            out.push(format!("**{}**", super::inline::code_span(d.args.trim())));
            if !d.content.is_empty() {
                out.push(String::new());
                out.extend(content(&d.content, ctx));
            }
        }
        n => {
            if let Some((_, title)) = ADMONITIONS.iter().find(|(a, _)| *a == n) {
                titled(title, &d.content, ctx, out);
            } else if TITLED.contains(&n) && !d.args.is_empty() {
                titled(&convert(&d.args, ctx), &d.content, ctx, out);
            } else if n == "table" && !d.args.is_empty() {
                out.push(format!("**{}**", convert(&d.args, ctx)));
                out.push(String::new());
                out.extend(content(&d.content, ctx));
            } else {
                // A container (`only`, `container`, `tab-set`, `grid`, an unknown directive):
                // its content as written.
                out.extend(content(&d.content, ctx));
            }
        }
    }
}

fn convert(text: &str, ctx: &mut Ctx) -> String {
    super::inline::convert(text, &ctx.refs, &mut ctx.anon)
}

/// A titled quote: `> **Title**`, then the content.
fn titled(title: &str, content: &[String], ctx: &mut Ctx, out: &mut Vec<String>) {
    let mut body = vec![format!("**{title}**")];
    let inner = super::content(content, ctx);
    if !inner.is_empty() {
        body.push(String::new());
        body.extend(inner);
    }
    while body.last().is_some_and(|l| l.is_empty()) {
        body.pop();
    }
    quoted(body, out);
}

/// A code block's `:caption:` as a bold line.
fn caption(d: &Directive, ctx: &mut Ctx, out: &mut Vec<String>) {
    if let Some(c) = d.option("caption").filter(|c| !c.is_empty()) {
        out.push(format!("**{}**", convert(c, ctx)));
        out.push(String::new());
    }
}

/// A table directive's title argument as a bold line.
fn caption_arg(d: &Directive, ctx: &mut Ctx, out: &mut Vec<String>) {
    if !d.args.is_empty() {
        out.push(format!("**{}**", convert(&d.args, ctx)));
        out.push(String::new());
    }
}

/// The language a highlight or code argument names (its first word).
fn lang_of(args: &str) -> String {
    let l = args.split_whitespace().next().unwrap_or("");
    match l {
        "default" | "none" | "text" => String::new(),
        "python3" | "py3" => "python".into(),
        l => l.to_string(),
    }
}

/// A language for an included file, from its extension.
fn ext_lang(path: &str) -> String {
    let ext = path.rsplit('.').next().unwrap_or("");
    match ext {
        "py" => "python",
        "rs" => "rust",
        "js" | "mjs" => "javascript",
        "ts" => "typescript",
        "sh" | "bash" => "bash",
        "toml" | "yaml" | "yml" | "json" | "ini" | "cfg" | "html" | "css" | "c" | "h" | "cpp"
        | "go" | "java" | "rb" | "sql" | "xml" => ext,
        _ => "",
    }
    .to_string()
}

/// An include as mdBook writes one, which c2s resolves relative to the page (as Sphinx does):
/// `{{#include path}}`, with a `:lines:` range when it is one (`a-b`, `a-`, `-b`, `a`).
fn include_line(path: &str, lines: Option<&str>) -> String {
    let path = path.trim();
    let range = lines.and_then(|r| {
        let r = r.trim();
        if r.contains(',') {
            return None;
        }
        let (a, b) = r.split_once('-').unwrap_or((r, r));
        let num = |s: &str| s.trim().parse::<usize>().ok();
        match (num(a), num(b)) {
            (Some(a), Some(b)) => Some(format!(":{a}:{b}")),
            (Some(a), None) if b.trim().is_empty() => Some(format!(":{a}:")),
            (None, Some(b)) if a.trim().is_empty() => Some(format!("::{b}")),
            _ => None,
        }
    });
    format!("{{{{#include {path}{}}}}}", range.unwrap_or_default())
}
