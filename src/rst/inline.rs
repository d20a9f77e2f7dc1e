//! reStructuredText inline markup as Markdown: literals, interpreted text and Sphinx roles,
//! hyperlink references (embedded URIs, named and anonymous targets), substitutions and
//! footnote references.

use std::collections::HashMap;

/// What the whole document defines that its inline markup refers to.
#[derive(Debug, Default, Clone)]
pub struct Refs {
    /// Named hyperlink targets with a URI (`.. _name: https://…`), by normalized name.
    pub targets: HashMap<String, String>,
    /// Anonymous targets (`__ https://…`, `.. __: https://…`), in order.
    pub anonymous: Vec<String>,
    /// Substitutions defined by `replace::` (`.. |name| replace:: text`), by name.
    pub substitutions: HashMap<String, String>,
}

/// A reference name as docutils compares them: whitespace collapsed, case folded.
pub fn normalize_name(name: &str) -> String {
    name.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Roles whose text is code: Python and other domains' objects, options, files, keys.
const CODE_ROLES: &[&str] = &[
    "attr",
    "class",
    "code",
    "command",
    "const",
    "data",
    "envvar",
    "exc",
    "file",
    "func",
    "function",
    "kbd",
    "literal",
    "makevar",
    "meth",
    "method",
    "mod",
    "module",
    "obj",
    "option",
    "program",
    "samp",
    "type",
    "member",
    "macro",
    "struct",
    "var",
    "enum",
    "confval",
    "setting",
    "setting",
    "event",
    "directive",
    "role",
    "regexp",
    "token",
    "math",
    "tool",
];

/// Converts one paragraph's inline markup (`anon` counts the anonymous references used so far).
pub fn convert(text: &str, refs: &Refs, anon: &mut usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start_ok = i == 0 || starts_markup(chars[i - 1]);
        match c {
            '\\' if i + 1 < chars.len() => {
                // A backslash escapes the next character; before whitespace it only separates.
                let n = chars[i + 1];
                if !n.is_whitespace() {
                    if "*_`[]<>#|\\".contains(n) {
                        out.push('\\');
                    }
                    out.push(n);
                } else if n == '\n' {
                    out.push('\n');
                }
                i += 2;
                continue;
            }
            '`' if start_ok && chars.get(i + 1) == Some(&'`') => {
                if let Some(end) = find_seq(&chars, i + 2, "``") {
                    let inner: String = chars[i + 2..end].iter().collect();
                    out.push_str(&code_span(&inner.replace('\n', " ")));
                    i = end + 2;
                    continue;
                }
            }
            '`' if start_ok => {
                if let Some(end) = find_close_tick(&chars, i + 1) {
                    let inner: String = chars[i + 1..end].iter().collect();
                    let mut j = end + 1;
                    let underscores = chars[j..].iter().take_while(|&&c| c == '_').count();
                    j += underscores.min(2);
                    let (role, after) = role_after(&chars, j);
                    out.push_str(&interpreted(
                        &inner,
                        underscores.min(2),
                        role.as_deref(),
                        refs,
                        anon,
                    ));
                    i = after;
                    continue;
                }
            }
            ':' if start_ok => {
                if let Some((role, tick)) = role_before(&chars, i)
                    && let Some(end) = find_close_tick(&chars, tick + 1)
                {
                    let inner: String = chars[tick + 1..end].iter().collect();
                    out.push_str(&role_text(&role, &inner));
                    i = end + 1;
                    continue;
                }
            }
            '|' if start_ok => {
                if let Some(end) = chars[i + 1..].iter().position(|&c| c == '|' || c == '\n')
                    && chars[i + 1 + end] == '|'
                    && end > 0
                    && !chars[i + 1].is_whitespace()
                {
                    let name: String = chars[i + 1..i + 1 + end].iter().collect();
                    let mut j = i + 2 + end;
                    j += chars[j..].iter().take_while(|&&c| c == '_').count().min(2);
                    // One the page does not define (Sphinx's `|version|`, set by `conf.py`)
                    // stays as written.
                    match refs.substitutions.get(&name) {
                        Some(text) => out.push_str(text),
                        None => out.push_str(&format!("|{name}|")),
                    }
                    i = j;
                    continue;
                }
            }
            '[' if start_ok => {
                // Footnote and citation references: `[1]_`, `[#]_`, `[#note]_`, `[CIT2002]_`.
                if let Some(end) = chars[i + 1..].iter().position(|&c| c == ']')
                    && chars.get(i + 2 + end) == Some(&'_')
                    && end > 0
                    && chars[i + 1..i + 1 + end]
                        .iter()
                        .all(|c| c.is_alphanumeric() || "#-_.".contains(*c))
                {
                    let label: String = chars[i + 1..i + 1 + end].iter().collect();
                    let label = label.trim_start_matches('#');
                    if !label.is_empty() {
                        out.push_str(&format!("\\[{label}\\]"));
                    }
                    i += end + 3;
                    continue;
                }
            }
            _ => {}
        }
        // A simple reference name: `word_` naming a target with a URI.
        if (c.is_alphanumeric()) && start_ok {
            let end = i + chars[i..]
                .iter()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '.' | '+'))
                .count();
            if chars.get(end) == Some(&'_') && chars.get(end + 1).is_none_or(|c| ends_markup(*c)) {
                let word: String = chars[i..end].iter().collect();
                if let Some(url) = refs.targets.get(&normalize_name(&word)) {
                    out.push_str(&format!("[{word}]({url})"));
                    i = end + 1;
                    continue;
                }
            }
            out.extend(&chars[i..end]);
            i = end;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Whether inline markup may start after this character.
fn starts_markup(c: char) -> bool {
    c.is_whitespace() || "-:/'\"<([{".contains(c)
}

/// Whether inline markup may end before this character.
fn ends_markup(c: char) -> bool {
    c.is_whitespace() || "-.,:;!?\\/'\")]}>".contains(c)
}

fn find_seq(chars: &[char], from: usize, seq: &str) -> Option<usize> {
    let s: Vec<char> = seq.chars().collect();
    (from..chars.len().saturating_sub(s.len() - 1)).find(|&j| {
        chars[j..j + s.len()] == s[..]
            && chars
                .get(j + s.len())
                .is_none_or(|c| ends_markup(*c) || *c == '_' || *c == ':')
            && j > from
    })
}

/// The closing backtick of interpreted text that opened before `from`.
fn find_close_tick(chars: &[char], from: usize) -> Option<usize> {
    if chars
        .get(from)
        .is_none_or(|c| c.is_whitespace() || *c == '`')
    {
        return None;
    }
    (from + 1..chars.len()).find(|&j| {
        chars[j] == '`'
            && chars[j - 1] != '\\'
            && chars
                .get(j + 1)
                .is_none_or(|c| ends_markup(*c) || *c == '_' || *c == ':')
    })
}

/// `:role:` ending at `at` (`:py:func:` too), when a backtick follows it: the role and the
/// backtick's index.
fn role_before(chars: &[char], at: usize) -> Option<(String, usize)> {
    let mut j = at + 1;
    while j < chars.len() && (chars[j].is_alphanumeric() || "-_:+.".contains(chars[j])) {
        j += 1;
    }
    if j < chars.len() && chars[j] == '`' && j >= at + 3 && chars[j - 1] == ':' {
        let role: String = chars[at + 1..j - 1].iter().collect();
        return Some((role, j));
    }
    None
}

/// A role written after interpreted text (`` `x`:role: ``), and where the text goes on.
fn role_after(chars: &[char], at: usize) -> (Option<String>, usize) {
    if chars.get(at) != Some(&':') {
        return (None, at);
    }
    let mut j = at + 1;
    while j < chars.len() && (chars[j].is_alphanumeric() || "-_+.".contains(chars[j])) {
        j += 1;
    }
    if j > at + 1 && chars.get(j) == Some(&':') {
        return (Some(chars[at + 1..j].iter().collect()), j + 1);
    }
    (None, at)
}

/// Interpreted text: a hyperlink reference when followed by `_`/`__`, else its role's text
/// (the default role shows as code).
fn interpreted(
    inner: &str,
    underscores: usize,
    role: Option<&str>,
    refs: &Refs,
    anon: &mut usize,
) -> String {
    if let Some(role) = role {
        return role_text(role, inner);
    }
    if underscores == 0 {
        return code_span(&inner.replace('\n', " "));
    }
    let (text, target) = split_title(inner);
    let url = match target {
        // `name_` inside the brackets is a reference to another target.
        Some(t) if t.ends_with('_') && !t.contains('/') => refs
            .targets
            .get(&normalize_name(t.trim_end_matches('_')))
            .cloned(),
        Some(t) => Some(t.split_whitespace().collect::<String>()),
        None if underscores == 2 => {
            *anon += 1;
            refs.anonymous.get(*anon - 1).cloned()
        }
        None => refs.targets.get(&normalize_name(&text)).cloned(),
    };
    let text = text.replace('\n', " ");
    match url {
        Some(u) if !u.is_empty() => format!("[{text}]({})", link_dest(&u)),
        _ => text,
    }
}

/// `title <target>` → the title and the target; a bare text → itself and no target.
pub fn split_title(inner: &str) -> (String, Option<&str>) {
    let t = inner.trim_end();
    if t.ends_with('>')
        && let Some(open) = t.rfind('<')
        && (open == 0 || t[..open].ends_with(char::is_whitespace))
    {
        let title = t[..open].trim();
        let target = &t[open + 1..t.len() - 1];
        let title = if title.is_empty() { target } else { title };
        return (unescape(title), Some(target));
    }
    (unescape(t), None)
}

fn unescape(s: &str) -> String {
    s.replace("\\", "")
}

/// A link destination, in angle brackets when it holds spaces or parentheses.
fn link_dest(url: &str) -> String {
    if url.contains([' ', '(', ')']) {
        format!("<{url}>")
    } else {
        url.to_string()
    }
}

/// What a role shows: code for code roles, a link for `:doc:`/`:download:`, the text or title
/// for `:ref:`, `:term:` and the rest.
pub fn role_text(role: &str, inner: &str) -> String {
    let name = role.rsplit(':').next().unwrap_or(role);
    let inner = inner.replace('\n', " ");
    let (title, target) = split_title(&inner);
    match name {
        // A page is named without its extension (`.rst` or MyST's `.md`): links resolve so.
        // Without a title the link has no text, and shows the page's title (as MyST's
        // `[](page)` does) once the output resolves it.
        // Another project's page (`setuptools:index`, through intersphinx) is text.
        "doc" if target.unwrap_or(&title).contains(':') => title,
        "doc" | "download" => {
            let path = target.unwrap_or(&title).trim();
            // `./` marks a page's path, which a label never is.
            let path = if path.contains('/') {
                path.to_string()
            } else {
                format!("./{path}")
            };
            let text = if target.is_some() || name == "download" {
                title.as_str()
            } else {
                ""
            };
            format!("[{text}]({})", link_dest(&path))
        }
        // A label: a link the output resolves to the page that defines it (its title shown
        // when the role gives none); another project's (`python:x`) is text.
        "ref" | "any" => match target {
            Some(t) if !t.contains(':') => format!("[{title}]({})", link_dest(t)),
            None if !title.contains(':') => format!("[]({})", link_dest(&title)),
            Some(_) => title,
            None => readable_label(title.rsplit(':').next().unwrap_or(&title)),
        },
        "numref" | "term" | "keyword" | "need" => {
            if target.is_some() {
                title
            } else {
                readable_label(&title)
            }
        }
        "pep" | "PEP" => format!("PEP {}", title.split('#').next().unwrap_or("")),
        "rfc" | "RFC" => format!("RFC {}", title.split('#').next().unwrap_or("")),
        "emphasis" | "dfn" | "title-reference" | "t" => format!("*{title}*"),
        "strong" => format!("**{title}**"),
        "menuselection" => title.replace("-->", "→"),
        "guilabel" => title.replace('&', ""),
        n if CODE_ROLES.contains(&n) || role.contains(':') => {
            let shown = if target.is_some() {
                title
            } else {
                // `~a.b.c` shows `c`; `!x` is shown as written, without the mark.
                let t = title.trim_start_matches('!');
                match t.strip_prefix('~') {
                    Some(t) => t.rsplit('.').next().unwrap_or(t).to_string(),
                    None => t.to_string(),
                }
            };
            code_span(&shown)
        }
        _ => title,
    }
}

/// A label as a reader would name it: `install-guide` → `install guide`.
fn readable_label(label: &str) -> String {
    label.replace(['-', '_'], " ")
}

/// `code` as a Markdown code span (more backticks when it holds some).
pub fn code_span(code: &str) -> String {
    if code.is_empty() {
        return String::new();
    }
    let longest = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat(longest + 1);
    let pad = if code.starts_with('`') || code.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{code}{pad}{ticks}")
}
