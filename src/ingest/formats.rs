//! Format readers: Markdown (YAML frontmatter), reStructuredText, plain text, JSON, JSON Lines
//! and HTML into raw records.

use serde_json::Value;

use crate::diag::Diagnostics;

/// One record read from a source file, before ids are assigned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawRecord {
    pub id: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub tags: Vec<String>,
    pub text: String,
    /// 1-based line (JSONL) or record number (JSON arrays) inside the file.
    pub line: Option<usize>,
    /// The file line `text` starts on (after a Markdown file's frontmatter); 0 when lines of the
    /// text do not map to lines of the file (HTML).
    pub body_line: usize,
    /// Its place among its folder's pages, as its frontmatter gives it: Docusaurus'
    /// `sidebar_position`, Hugo's `weight`, Jekyll's `nav_order`.
    pub position: Option<f64>,
    /// Planted sentences found where a reader does not look and left out of `text` (front
    /// matter fields, HTML elements a browser does not show), already warned about; `line` is
    /// the file's.
    pub hidden: Vec<crate::planted::Flag>,
    /// Where in its file the record starts, as a URL fragment names it (`page=12` in a PDF):
    /// its source is then `file#page=12`.
    pub anchor: Option<String>,
}

/// The formats c2s reads, chosen by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Markdown,
    /// reStructuredText (Sphinx), read as Markdown (`crate::rst`).
    Rst,
    Text,
    Json,
    JsonLines,
    Html,
    /// Read from bytes, not text (`ingest::extract`).
    Pdf,
    Docx,
}

impl Format {
    pub fn from_extension(ext: &str) -> Option<Format> {
        match ext.to_ascii_lowercase().as_str() {
            // MDX: Docusaurus pages, read with their imports and components removed.
            "md" | "markdown" | "mdx" => Some(Format::Markdown),
            "rst" | "rest" => Some(Format::Rst),
            "txt" => Some(Format::Text),
            "json" => Some(Format::Json),
            "jsonl" | "ndjson" => Some(Format::JsonLines),
            "html" | "htm" => Some(Format::Html),
            "pdf" => Some(Format::Pdf),
            "docx" => Some(Format::Docx),
            _ => None,
        }
    }
}

/// Parses decoded file text into records, warning about what it skips.
pub fn parse(format: Format, text: &str, file: &str, diags: &mut Diagnostics) -> Vec<RawRecord> {
    match format {
        Format::Markdown => {
            let (rec, unpublished) = parse_markdown(text, file, diags);
            match unpublished {
                Some(why) => {
                    diags.warn(
                        file,
                        Some(1),
                        format!("{why}: not a page of the site; left out (remove the mark to compile it)"),
                    );
                    Vec::new()
                }
                None => vec![rec],
            }
        }
        Format::Rst => vec![super::restructured::parse_rst(text, file, diags)],
        Format::Text => vec![RawRecord {
            text: text.to_string(),
            body_line: 1,
            ..RawRecord::default()
        }],
        Format::Html => parse_html(text, file, diags).into_iter().collect(),
        Format::Json => parse_json(text, file, diags),
        Format::JsonLines => parse_jsonl(text, file, diags),
        // Read from their bytes by `ingest::extract` (`parse_records`), never as text.
        Format::Pdf | Format::Docx => Vec::new(),
    }
}

/// Splits `---` YAML frontmatter from a Markdown body and reads title, description, tags, id;
/// the body's dialect (attribute lists, admonitions, tabs, containers) is read as its site shows
/// it. Also says why the page is not published, when its frontmatter marks it so.
pub fn parse_markdown(
    text: &str,
    file: &str,
    diags: &mut Diagnostics,
) -> (RawRecord, Option<&'static str>) {
    let (front, body) = split_frontmatter(text);
    let toml = text.starts_with("+++");
    let body_line = text[..text.len() - body.len()].matches('\n').count() + 1;
    let mut hidden = Vec::new();
    let body = super::hidden::without_hidden_plants(body, (file, body_line), diags, &mut hidden);
    // MyST (Sphinx's Markdown): its roles and directives as the site shows them.
    let body = match crate::rst::myst::is_myst(&body) {
        true => std::borrow::Cow::Owned(crate::rst::myst::to_commonmark(&body)),
        false => body,
    };
    let mut rec = RawRecord {
        // Raw HTML tags are layout, not text (an icon's `<i class="fa …">`): their text stays.
        text: crate::markdown::without_html_tags(&crate::markdown::dialect::to_commonmark(&body)),
        body_line,
        ..RawRecord::default()
    };
    if let Some(front) = front {
        super::hidden::frontmatter_plants(front, file, diags, &mut hidden);
    }
    rec.hidden = hidden;
    let Some(front) = front else {
        return (rec, None);
    };
    let mut unpublished = None;
    match front_matter(front, toml) {
        Ok(serde_yaml_ng::Value::Mapping(map)) => {
            let get = |k: &str| map.get(serde_yaml_ng::Value::String(k.into()));
            unpublished = unpublished_mark(&get);
            rec.title = get("title").and_then(yaml_scalar);
            rec.description = get("description").and_then(yaml_scalar);
            rec.id = get("id").and_then(yaml_scalar);
            // A Mintlify endpoint page: the includer renders the operation from its spec.
            if let Some(op) = get("openapi").and_then(yaml_scalar) {
                let marker = crate::markdown::mdx::marker(&format!("openapi {}", op.trim()));
                rec.text = format!("{}\n\n{marker}\n", rec.text.trim_end());
            }
            rec.position = ["sidebar_position", "weight", "nav_order"]
                .iter()
                .find_map(|k| get(k).and_then(yaml_number))
                // Starlight's `sidebar: {order: 2}`.
                .or_else(|| {
                    get("sidebar")
                        .and_then(|s| s.get("order"))
                        .and_then(yaml_number)
                });
            rec.tags = match get("tags") {
                Some(serde_yaml_ng::Value::Sequence(s)) => {
                    s.iter().filter_map(yaml_scalar).collect()
                }
                Some(v) => yaml_scalar(v).map(|s| split_tags(&s)).unwrap_or_default(),
                None => Vec::new(),
            };
            // A tag is a name in the entity index: a planted one is not used.
            rec.tags
                .retain(|t| crate::planted::check_sentence(t).is_none());
        }
        Ok(serde_yaml_ng::Value::Null) => {}
        Ok(_) => diags.warn(
            file,
            Some(2),
            "frontmatter is not a mapping; it was ignored",
        ),
        Err((line, e)) => diags.warn(
            file,
            line,
            format!("invalid frontmatter ({e}); it was ignored, the body was kept"),
        ),
    }
    (rec, unpublished)
}

/// Why frontmatter marks a page as not published: `draft: true` (Hugo, Docusaurus, Jekyll),
/// `search: {exclude: true}` (MkDocs Material).
fn unpublished_mark<'a>(
    get: &impl Fn(&str) -> Option<&'a serde_yaml_ng::Value>,
) -> Option<&'static str> {
    use serde_yaml_ng::Value;
    if get("draft").and_then(Value::as_bool) == Some(true) {
        return Some("a draft (frontmatter `draft: true`)");
    }
    let excluded = get("search")
        .and_then(|s| s.get("exclude"))
        .and_then(Value::as_bool);
    (excluded == Some(true))
        .then_some("left out of the site's search (frontmatter `search: exclude: true`)")
}

/// A number, or a string that holds one (`sidebar_position: "3"`).
fn yaml_number(v: &serde_yaml_ng::Value) -> Option<f64> {
    match v {
        serde_yaml_ng::Value::Number(n) => n.as_f64(),
        serde_yaml_ng::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|p: &f64| p.is_finite())
}

fn split_tags(s: &str) -> Vec<String> {
    s.split(',')
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

fn yaml_scalar(v: &serde_yaml_ng::Value) -> Option<String> {
    let s = match v {
        serde_yaml_ng::Value::String(s) => s.clone(),
        serde_yaml_ng::Value::Number(n) => n.to_string(),
        serde_yaml_ng::Value::Bool(b) => b.to_string(),
        _ => return None,
    };
    let s = s.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// Frontmatter as a YAML value: YAML, or TOML (Hugo's `+++` frontmatter). An error gives the
/// file line it is on, when known.
fn front_matter(front: &str, toml: bool) -> Result<serde_yaml_ng::Value, (Option<usize>, String)> {
    if !toml {
        return serde_yaml_ng::from_str(front)
            .map_err(|e| (e.location().map(|l| l.line() + 1), format!("YAML: {e}")));
    }
    let table = toml::from_str::<toml::Table>(front).map_err(|e| {
        let line = e.span().map(|s| front[..s.start].matches('\n').count() + 2);
        (line, format!("TOML: {}", e.message()))
    })?;
    serde_yaml_ng::to_value(table).map_err(|e| (None, e.to_string()))
}

/// The text without its frontmatter, if it has one.
pub(crate) fn without_frontmatter(text: &str) -> &str {
    split_frontmatter(text).1
}

/// Returns (frontmatter, body). Frontmatter must open on the first line with `---` (YAML) or
/// `+++` (TOML), and close with the same line.
fn split_frontmatter(text: &str) -> (Option<&str>, &str) {
    let fence = if text.starts_with("+++") {
        "+++"
    } else {
        "---"
    };
    let Some(rest) = text
        .strip_prefix(fence)
        .and_then(|r| r.strip_prefix('\n').or_else(|| r.strip_prefix("\r\n")))
    else {
        return (None, text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let trimmed = line.trim_end();
        if trimmed == fence || (fence == "---" && trimmed == "...") {
            return (Some(&rest[..offset]), &rest[offset + line.len()..]);
        }
        offset += line.len();
    }
    (None, text)
}

/// Extracts readable text (and the `<title>`) from HTML.
fn parse_html(text: &str, file: &str, diags: &mut Diagnostics) -> Option<RawRecord> {
    let title = html_title(text);
    let mut hidden = Vec::new();
    let text = super::hidden::without_hidden_plants(text, (file, 1), diags, &mut hidden);
    match html2text::from_read(text.as_bytes(), 10_000) {
        Ok(body) => Some(RawRecord {
            title,
            text: body,
            hidden,
            ..RawRecord::default()
        }),
        Err(e) => {
            diags.warn(
                file,
                None,
                format!("cannot extract text from HTML ({e}); skipped"),
            );
            None
        }
    }
}

fn html_title(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title")?;
    let raw = text.get(open_end..close)?;
    let t = html2text::from_read(raw.as_bytes(), 10_000).unwrap_or_default();
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    (!t.is_empty()).then_some(t)
}

fn parse_json(text: &str, file: &str, diags: &mut Diagnostics) -> Vec<RawRecord> {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            diags.warn(
                file,
                Some(e.line()),
                format!("malformed JSON ({e}); file skipped"),
            );
            return Vec::new();
        }
    };
    match value {
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .filter_map(|(i, v)| record_from_value(v, file, i + 1, "record", diags))
            .collect(),
        obj @ Value::Object(_) => record_from_value(obj, file, 1, "record", diags)
            .map(|mut r| {
                r.line = None;
                r
            })
            .into_iter()
            .collect(),
        _ => {
            diags.warn(
                file,
                None,
                "JSON is neither an object nor an array of records; skipped",
            );
            Vec::new()
        }
    }
}

fn parse_jsonl(text: &str, file: &str, diags: &mut Diagnostics) -> Vec<RawRecord> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) => out.extend(record_from_value(v, file, lineno, "line", diags)),
            Err(e) => diags.warn(
                file,
                Some(lineno),
                format!("malformed JSON record ({e}); line skipped"),
            ),
        }
    }
    out
}

/// Reads `id`, `title`, `contents`|`text`|`content`, `description`, `tags` from a JSON object.
fn record_from_value(
    v: Value,
    file: &str,
    n: usize,
    unit: &str,
    diags: &mut Diagnostics,
) -> Option<RawRecord> {
    let Value::Object(map) = v else {
        diags.warn(
            file,
            Some(n),
            format!("{unit} is not a JSON object; skipped"),
        );
        return None;
    };
    let text = ["contents", "text", "content"]
        .iter()
        .find_map(|k| map.get(*k).and_then(Value::as_str));
    let Some(text) = text else {
        diags.warn(
            file,
            Some(n),
            format!("{unit} has no text field (expected a string `contents`, `text` or `content`); skipped"),
        );
        return None;
    };
    let scalar = |k: &str| -> Option<String> {
        match map.get(k)? {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    };
    let tags = match map.get("tags") {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect(),
        Some(Value::String(s)) => split_tags(s),
        _ => Vec::new(),
    };
    Some(RawRecord {
        id: scalar("id"),
        title: scalar("title"),
        description: scalar("description"),
        tags,
        text: text.to_string(),
        line: Some(n),
        body_line: 1,
        position: None,
        hidden: Vec::new(),
        anchor: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_fields() {
        let mut d = Diagnostics::default();
        let r = parse_markdown(
            "---\ntitle: Hello\ndescription: World\ntags: [a, b]\n---\n# Body\ntext\n",
            "x.md",
            &mut d,
        )
        .0;
        assert_eq!(r.title.as_deref(), Some("Hello"));
        assert_eq!(r.description.as_deref(), Some("World"));
        assert_eq!(r.tags, vec!["a", "b"]);
        assert_eq!(r.text, "# Body\ntext\n");
        assert!(d.warnings.is_empty());
    }

    #[test]
    fn hugo_toml_frontmatter_and_positions() {
        // An AWS workshop page (Hugo): TOML frontmatter with a weight.
        let mut d = Diagnostics::default();
        let page = "+++\ntitle = \"Container Orchestration\"\nchapter = false\nweight = 1\n+++\n\n## Introduction\n";
        let (r, _) = parse_markdown(page, "x.md", &mut d);
        assert_eq!(r.title.as_deref(), Some("Container Orchestration"));
        assert_eq!(r.position, Some(1.0));
        assert_eq!(r.text, "\n## Introduction\n");
        assert_eq!(r.body_line, 6);
        let (r, _) = parse_markdown("---\nsidebar_position: \"2.5\"\n---\nx\n", "y.md", &mut d);
        assert_eq!(r.position, Some(2.5));
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        // A TOML error names its line.
        let (r, _) = parse_markdown(
            "+++\ntitle = \"A\"\nweight = = 1\n+++\nbody\n",
            "z.md",
            &mut d,
        );
        assert_eq!(r.text, "body\n");
        assert_eq!(d.warnings[0].line, Some(3), "{:?}", d.warnings);
        assert!(d.warnings[0].message.contains("TOML"), "{:?}", d.warnings);
        assert_eq!(Format::from_extension("mdx"), Some(Format::Markdown));
    }

    #[test]
    fn bad_frontmatter_warns_and_keeps_body() {
        let mut d = Diagnostics::default();
        let r = parse_markdown("---\ntitle: [unclosed\n---\nbody\n", "x.md", &mut d).0;
        assert_eq!(r.text, "body\n");
        assert_eq!(d.warnings.len(), 1);
    }

    #[test]
    fn drafts_and_pages_left_out_of_search_are_not_pages() {
        let mut d = Diagnostics::default();
        let draft = parse(
            Format::Markdown,
            "---\ndraft: true\n---\n# Soon\n",
            "a.md",
            &mut d,
        );
        let hidden = "---\nsearch:\n  exclude: true\n---\n# Test\n";
        let hidden = parse(Format::Markdown, hidden, "b.md", &mut d);
        assert!(draft.is_empty() && hidden.is_empty());
        assert_eq!(d.warnings.len(), 2);
        assert!(d.warnings[0].message.contains("draft"), "{:?}", d.warnings);
        let kept = parse(
            Format::Markdown,
            "---\ndraft: false\n---\n# Out\n",
            "c.md",
            &mut d,
        );
        assert_eq!(kept.len(), 1);
    }

    #[test]
    fn jsonl_lines_are_named() {
        let mut d = Diagnostics::default();
        let recs = parse(
            Format::JsonLines,
            "{\"id\":1,\"text\":\"a\"}\n{bad\n\n{\"title\":\"x\"}\n",
            "c.jsonl",
            &mut d,
        );
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].id.as_deref(), Some("1"));
        let lines: Vec<_> = d.warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, vec![Some(2), Some(4)]);
    }

    #[test]
    fn html_text_and_title() {
        let mut d = Diagnostics::default();
        let recs = parse(
            Format::Html,
            "<html><head><title>My Page</title></head><body><p>Hello <b>there</b></p></body></html>",
            "p.html",
            &mut d,
        );
        assert_eq!(recs[0].title.as_deref(), Some("My Page"));
        assert!(recs[0].text.contains("Hello"));
    }
}
