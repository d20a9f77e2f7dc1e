//! The reStructuredText reader: a Sphinx or docutils page as a record, its text the Markdown
//! `crate::rst` writes, its title the first section title, its `:description:` and `:tags:`
//! metadata fields used as front matter is.

use super::RawRecord;
use crate::diag::Diagnostics;

/// Reads a reST page. What a reader does not see (comments, hidden HTML in `raw` blocks) holds
/// no planted sentence that reaches navigation: it is warned about and left out, as in Markdown.
pub fn parse_rst(text: &str, file: &str, diags: &mut Diagnostics) -> RawRecord {
    let page = crate::rst::to_markdown(text);
    let mut hidden = Vec::new();
    let body = super::hidden::without_hidden_plants(&page.markdown, (file, 1), diags, &mut hidden);
    let mut rec = RawRecord {
        text: crate::markdown::without_html_tags(&body),
        title: page.title.filter(|t| !t.is_empty()),
        body_line: 1,
        ..RawRecord::default()
    };
    for f in &page.fields {
        let used = matches!(f.name.as_str(), "description" | "tags" | "keywords");
        if !used || f.value.is_empty() {
            continue;
        }
        if let Some(rule) = crate::planted::check_sentence(&f.value) {
            diags.warn(
                file,
                Some(f.line),
                format!(
                    "a sentence {rule} in the metadata field `{}` (\"{}\"); it is never used for navigation text",
                    f.name,
                    crate::text::clip_words(&f.value, 12)
                ),
            );
            hidden.push(crate::planted::Flag {
                line: f.line,
                text: f.value.clone(),
                rule,
                place: Some(crate::planted::places::FRONT_MATTER),
                quoted: false,
            });
            continue;
        }
        match f.name.as_str() {
            "description" => rec.description = Some(f.value.clone()),
            _ => rec.tags.extend(
                f.value
                    .split(',')
                    .map(|t| t.trim().to_string())
                    .filter(|t| !t.is_empty()),
            ),
        }
    }
    rec.hidden = hidden;
    rec
}
