//! MyST, the Markdown of Sphinx projects, as CommonMark: roles (`` {func}`attrs.define` ``)
//! as reST's are shown, directives in backtick or colon fences (`` ```{note} ``, `:::{tip}`)
//! as reST's directives (their content read as MyST again, `{eval-rst}` content as reST),
//! targets (`(label)=`) and block breaks (`+++`) left out, and `%` comments as HTML comments.

use std::sync::OnceLock;

use regex::Regex;

use super::Ctx;
use super::directive;
use super::inline::{Refs, role_text};
use super::lines::blank;

fn target() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"^\s*\(([^()\s]+)\)=\s*$").expect("valid"))
}

/// Whether a Markdown page is written in MyST: it has a directive fence, a target, or a role
/// outside code.
pub fn is_myst(md: &str) -> bool {
    (md.contains("```{") || md.contains(":::{") || md.contains("}`") || md.contains(")="))
        && md.lines().any(|l| {
            let t = l.trim_start();
            directive_open(t).is_some() || target().is_match(l) || !roles_in(l).is_empty()
        })
}

/// The roles of a line, outside code spans: each one's byte range, name and text. A role
/// starts a word (`{func}` after a space or an opening bracket, not `uv:{major}`).
fn roles_in(line: &str) -> Vec<(std::ops::Range<usize>, &str, &str)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'`' {
            // A code span: skip to the closing run of as many backticks.
            let n = b[i..].iter().take_while(|&&c| c == b'`').count();
            let ticks = &line[i..i + n];
            i = match line[i + n..].find(ticks) {
                Some(k) => i + n + k + n,
                None => b.len(),
            };
            continue;
        }
        let starts_word = i == 0 || b" \t([\"'*_/".contains(&b[i - 1]);
        if b[i] == b'{'
            && starts_word
            && let Some(close) = line[i + 1..].find('}')
            && let name = &line[i + 1..i + 1 + close]
            && !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_:.+".contains(c))
            && b.get(i + close + 2) == Some(&b'`')
            && let Some(end) = line[i + close + 3..].find('`')
        {
            let text_at = i + close + 3;
            out.push((i..text_at + end + 1, name, &line[text_at..text_at + end]));
            i = text_at + end + 1;
            continue;
        }
        i += 1;
    }
    out
}

/// A MyST page as CommonMark.
pub fn to_commonmark(md: &str) -> String {
    let lines: Vec<String> = md.split('\n').map(str::to_string).collect();
    let mut ctx = Ctx::new(Refs::default(), true);
    lines_of(&lines, &mut ctx, true).join("\n")
}

/// MyST lines (directive content) as CommonMark lines.
pub(super) fn lines(lines: &[String], ctx: &mut Ctx) -> Vec<String> {
    lines_of(lines, ctx, false)
}

/// A fence that opens a directive: its character, its length, the directive's name and its
/// argument.
fn directive_open(t: &str) -> Option<(char, usize, &str, &str)> {
    let c = t.chars().next().filter(|c| matches!(c, '`' | '~' | ':'))?;
    let n = t.chars().take_while(|&x| x == c).count();
    let rest = t[n..].trim_start().strip_prefix('{')?;
    let (name, args) = rest.split_once('}')?;
    let ok = n >= 3
        && !name.is_empty()
        && name
            .chars()
            .all(|x| x.is_alphanumeric() || "-_:.+".contains(x));
    ok.then(|| (c, n, name, args.trim()))
}

fn lines_of(lines: &[String], ctx: &mut Ctx, top: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut i = 0;
    while i < lines.len() {
        let l = &lines[i];
        let t = l.trim_start();
        i += 1;
        if let Some((c, n)) = fence {
            if t.chars().take_while(|&x| x == c).count() >= n
                && t.trim_start_matches(c).trim().is_empty()
            {
                fence = None;
            }
            out.push(l.clone());
            continue;
        }
        if let Some((c, n, name, args)) = directive_open(t) {
            let close = (i..lines.len()).find(|&j| {
                let b = lines[j].trim();
                b.chars().take_while(|&x| x == c).count() >= n && b.trim_start_matches(c).is_empty()
            });
            let end = close.unwrap_or(lines.len());
            let body = options_as_fields(&lines[i..end]);
            let d = directive::parse(name, args, &body, true);
            let written = if d.name == "eval-rst" {
                super::to_markdown(&d.content.join("\n"))
                    .markdown
                    .split('\n')
                    .map(str::to_string)
                    .collect()
            } else {
                let mut w = Vec::new();
                directive::write(&d, ctx, &mut w);
                w
            };
            let used = end + 1 - (i - 1);
            let short = used.saturating_sub(written.len());
            out.extend(written);
            if top {
                out.extend(std::iter::repeat_n(String::new(), short));
            }
            i = (end + 1).min(lines.len().max(end + 1));
            continue;
        }
        if let Some((c, n, _)) = plain_fence_open(t) {
            fence = Some((c, n));
            out.push(l.clone());
            continue;
        }
        if target().is_match(l) || t.trim_end() == "+++" || t.starts_with("+++ ") {
            out.push(String::new());
            continue;
        }
        if let Some(comment) = t.strip_prefix('%') {
            out.push(format!(
                "<!-- {} -->",
                comment.trim().replace("-->", "- ->")
            ));
            continue;
        }
        out.push(roles(l));
    }
    out
}

/// A plain code fence (not a directive).
fn plain_fence_open(t: &str) -> Option<(char, usize, &str)> {
    let c = t.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let n = t.chars().take_while(|&x| x == c).count();
    (n >= 3).then(|| (c, n, t[n..].trim()))
}

/// A directive's body with its YAML options block (`---` … `---`) written as `:key: value`
/// lines, as reST writes options.
fn options_as_fields(body: &[String]) -> Vec<String> {
    let first = body.iter().position(|l| !blank(l));
    if let Some(f) = first
        && body[f].trim() == "---"
        && let Some(close) = body[f + 1..].iter().position(|l| l.trim() == "---")
    {
        let mut out: Vec<String> = body[f + 1..f + 1 + close]
            .iter()
            .map(|l| format!(":{}", l.trim()))
            .collect();
        out.push(String::new());
        out.extend(body[f + 2 + close..].iter().cloned());
        return out;
    }
    body.to_vec()
}

/// A line's roles as reST's are shown; code spans other than a role's are left alone.
fn roles(line: &str) -> String {
    if !line.contains("}`") {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len());
    let mut at = 0;
    for (range, name, text) in roles_in(line) {
        out.push_str(&line[at..range.start]);
        out.push_str(&role_text(name, text));
        at = range.end;
    }
    out.push_str(&line[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_directives_targets_and_comments() {
        let page = "# Types\n\n(how-frozen)=\n\nUse {func}`attrs.define` or {class}`~attrs.Attribute`, see {pep}`526` and {doc}`the API <api>`.\nRelease **{sub-ref}`release`**, `x`/{func}`attr.ib`.\n\n:::{note}\nFrozen classes are **slower**.\n:::\n\n```{doctest}\n>>> 1 + 1\n2\n```\n\n```{code-block} python\n:caption: x.py\n\nx = 1\n```\n\n% a comment\n\n````{eval-rst}\n.. autofunction:: attrs.define\n````\n\n```python\n{func}`not a role in code`\n```\n";
        assert!(is_myst(page));
        assert!(!is_myst("# Plain\n\nJust `code` and {braces}.\n"));
        // Braces in code, or inside a word, are not roles.
        let uv = "- `ghcr.io/astral-sh/uv:{major}.{minor}`, e.g., `ghcr.io/astral-sh/uv:0.12`\n- a `\\0{id}` id ends as `/@id/__x00__{id}`\n";
        assert!(!is_myst(uv));
        assert_eq!(
            roles(uv.lines().next().unwrap()),
            uv.lines().next().unwrap()
        );
        let md = to_commonmark(page);
        assert!(
            md.contains("Use `attrs.define` or `Attribute`, see PEP 526 and [the API](./api)."),
            "{md}"
        );
        assert!(
            md.contains("> **Note**\n>\n> Frozen classes are **slower**."),
            "{md}"
        );
        assert!(md.contains(">>> 1 + 1\n2\n```"), "{md}");
        assert!(md.contains("**x.py**\n\n```python\nx = 1\n```"), "{md}");
        assert!(md.contains("<!-- a comment -->"), "{md}");
        assert!(md.contains("Release **release**, `x`/`attr.ib`."), "{md}");
        assert!(md.contains("**`attrs.define`**"), "{md}");
        assert!(md.contains("{func}`not a role in code`"), "{md}");
        assert!(!md.contains("(how-frozen)=") && !md.contains(":::"), "{md}");
    }
}
