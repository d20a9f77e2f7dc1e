//! MDX components that carry content of their own, read as the site shows it: an imported
//! Markdown snippet (`import Setup from '/snippets/setup.mdx'`, then `<Setup />`; Mintlify's
//! `<Snippet file="setup.mdx" />`) becomes an include marker that the includer replaces with
//! the snippet; an API field (`<ParamField query="limit" type="integer" required>`,
//! `<ResponseField name="id">`) is titled by its name and type; a changelog entry (`<Update
//! label="2024-10-12">`) by its label; a card with a link (`<Card title="Quickstart"
//! href="/quickstart">`, Starlight's `<LinkCard>`) by a link to it and its description.

use std::collections::HashMap;

/// The character that opens and closes an include marker: a private-use character, which no
/// page's own text uses.
pub const MARK: char = '\u{E000}';

/// The marker line that asks the includer for `what` (`include PATH`, `openapi SPEC`).
pub fn marker(what: &str) -> String {
    format!("{MARK}{what}{MARK}")
}

/// The request of a marker line, if `line` is one.
pub fn marked(line: &str) -> Option<&str> {
    line.trim()
        .strip_prefix(MARK)
        .and_then(|l| l.strip_suffix(MARK))
}

/// The Markdown files a page imports, by the name it gives each.
#[derive(Debug, Default)]
pub struct Imports(HashMap<String, String>);

impl Imports {
    /// Notes `import Name from "path.mdx"` (a default import of a `.md` or `.mdx` file).
    pub fn note(&mut self, t: &str) {
        let Some(rest) = t.strip_prefix("import ") else {
            return;
        };
        let Some((name, from)) = rest.split_once(" from ") else {
            return;
        };
        let name = name.trim();
        let path = from.trim().trim_end_matches(';').trim();
        let path = path
            .strip_prefix('"')
            .and_then(|p| p.strip_suffix('"'))
            .or_else(|| path.strip_prefix('\'').and_then(|p| p.strip_suffix('\'')));
        let is_name = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
        if let Some(path) = path.filter(|p| p.ends_with(".md") || p.ends_with(".mdx"))
            && is_name
        {
            self.0.insert(name.to_string(), path.to_string());
        }
    }

    /// The include marker a line stands for, when it is one self-closing tag of an imported
    /// snippet (`<Setup />`, `<Setup tool="uv" />`) or Mintlify's `<Snippet file="x.mdx" />`.
    pub fn include(&self, t: &str) -> Option<String> {
        let inner = t.trim().strip_prefix('<')?.strip_suffix("/>")?;
        if inner.contains(['<', '>']) {
            return None;
        }
        let name = inner.split(|c: char| c.is_whitespace()).next()?;
        if let Some(path) = self.0.get(name) {
            return Some(marker(&format!("include {path}")));
        }
        let file = (name == "Snippet")
            .then(|| attribute(inner, "file"))
            .flatten()?;
        Some(marker(&format!(
            "include /snippets/{}",
            file.trim_start_matches('/')
        )))
    }
}

/// The title an opening tag's attributes give it (`inner` is the tag without `<` and `>`), for
/// the components whose name or link is their content; None for the others.
pub fn title(name: &str, inner: &str) -> Option<String> {
    let attr = |k: &str| attribute(inner, k);
    match name {
        "ParamField" | "ResponseField" => {
            let field = ["name", "path", "query", "body", "header", "cookie"]
                .iter()
                .find_map(|k| attr(k))?;
            let mut notes: Vec<String> = attr("type").map(|t| unescape(&t)).into_iter().collect();
            if has_flag(inner, "required") {
                notes.push("required".into());
            }
            if let Some(d) = attr("default") {
                notes.push(format!("default `{d}`"));
            }
            Some(match notes.is_empty() {
                true => format!("`{field}`"),
                false => format!("`{field}` ({})", notes.join(", ")),
            })
        }
        "Update" => {
            let label = attr("label")?;
            Some(match attr("description") {
                Some(d) => format!("{label}: {d}"),
                None => label,
            })
        }
        _ => {
            let title = attr("title")?;
            let link = match attr("href") {
                Some(href) if !href.contains(['(', ')', ' ']) => format!("[{title}]({href})"),
                _ => return None,
            };
            // Starlight's `<LinkCard title href description>`.
            Some(match attr("description") {
                Some(d) => format!("{link}: {d}"),
                None => link,
            })
        }
    }
}

/// Whether a tag's attributes hold `flag` as a boolean attribute (`required`, `required={true}`).
fn has_flag(inner: &str, flag: &str) -> bool {
    inner.split_whitespace().skip(1).any(|w| {
        let w = w.trim_end_matches('/');
        w == flag || w == format!("{flag}={{true}}")
    })
}

/// `&quot;a&quot; | &#x22;b&#x22;` as `"a" | "b"`.
fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#x22;", "\"")
        .replace("&#34;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The value of `name="…"` (or `'…'`) among a tag's attributes.
pub(super) fn attribute(attrs: &str, name: &str) -> Option<String> {
    let mut rest = attrs;
    while let Some(at) = rest.find(name) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + name.len()..].trim_start();
        if before.is_some_and(char::is_whitespace)
            && let Some(v) = after.strip_prefix('=')
        {
            let v = v.trim_start();
            let q = v.chars().next().filter(|c| matches!(c, '"' | '\''))?;
            let end = v[1..].find(q)?;
            let value = v[1..1 + end].trim();
            return (!value.is_empty()).then(|| value.to_string());
        }
        rest = &rest[at + name.len()..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imported_snippets_and_snippet_tags_become_include_markers() {
        let mut imports = Imports::default();
        imports.note("import Setup from '/snippets/setup.mdx';");
        imports.note("import Tabs from '@theme/Tabs';");
        imports.note("import { A } from \"./a.mdx\"");
        let m = |p: &str| marker(&format!("include {p}"));
        assert_eq!(imports.include("<Setup />"), Some(m("/snippets/setup.mdx")));
        assert_eq!(
            imports.include("<Setup tool=\"uv\"/>"),
            Some(m("/snippets/setup.mdx"))
        );
        assert_eq!(imports.include("<Tabs />"), None, "not a Markdown import");
        assert_eq!(
            imports.include("<A />"),
            None,
            "a named import is not a snippet"
        );
        assert_eq!(
            imports.include("<Snippet file=\"a/b.mdx\" />"),
            Some(m("/snippets/a/b.mdx"))
        );
        assert_eq!(marked(&m("/x.md")), Some("include /x.md"));
        assert_eq!(marked("include /x.md"), None);
    }

    #[test]
    fn fields_updates_and_linked_cards_are_titled_by_what_they_name() {
        let t = |name: &str, inner: &str| title(name, inner);
        assert_eq!(
            t(
                "ParamField",
                "ParamField query=\"limit\" type=\"integer\" default=\"10\" required"
            ),
            Some("`limit` (integer, required, default `10`)".into())
        );
        assert_eq!(
            t(
                "ResponseField",
                "ResponseField name=\"display\" type=\"&quot;a&quot; | &#x22;b&#x22;\""
            ),
            Some("`display` (\"a\" | \"b\")".into())
        );
        assert_eq!(t("ParamField", "ParamField type=\"string\""), None);
        assert_eq!(
            t("Update", "Update label=\"2024-10-12\" description=\"v0.1\""),
            Some("2024-10-12: v0.1".into())
        );
        assert_eq!(
            t(
                "Card",
                "Card title=\"Quickstart\" icon=\"rocket\" href=\"/quickstart\""
            ),
            Some("[Quickstart](/quickstart)".into())
        );
        assert_eq!(
            t("Card", "Card title=\"Quickstart\""),
            None,
            "the usual title rule"
        );
        assert_eq!(
            t(
                "LinkCard",
                "LinkCard title=\"Sidebar\" href=\"/guides/sidebar/\" description=\"Order it.\""
            ),
            Some("[Sidebar](/guides/sidebar/): Order it.".into())
        );
    }
}
