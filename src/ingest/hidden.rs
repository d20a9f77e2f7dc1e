//! What a reader of the page does not see and a plant hides in: HTML elements a browser does
//! not show, and front matter fields. A planted sentence there is warned about with its line
//! and place, and never reaches the text navigation is made from.

use crate::diag::Diagnostics;
use crate::planted::Flag;

/// HTML elements that a browser does not show (`display: none`, `hidden`, …) and that hold a
/// planted sentence: each sentence is warned about (with the line of `text`, whose first line
/// is line `first` of `file`, and why it is hidden), and the element is left out, its line
/// breaks kept. Hidden elements without a plant (an inactive tab, a menu) stay.
pub(super) fn without_hidden_plants<'t>(
    text: &'t str,
    (file, first): (&str, usize),
    diags: &mut Diagnostics,
    found: &mut Vec<Flag>,
) -> std::borrow::Cow<'t, str> {
    let mut planted = Vec::new();
    for h in crate::planted::places::hidden_elements(text) {
        let flags = crate::planted::flags(&h.text);
        for f in flags.iter().filter(|f| !f.quoted) {
            diags.warn(
                file,
                Some(first + h.lines.0),
                format!(
                    "a sentence {} {} ({}) (\"{}\"); the element is left out of the document",
                    f.rule,
                    crate::planted::places::HIDDEN_ELEMENT,
                    h.why,
                    crate::text::clip_words(&f.text, 12)
                ),
            );
        }
        if flags.iter().any(|f| !f.quoted) {
            planted.push(h.span);
        }
        found.extend(flags.into_iter().filter(|f| !f.quoted).map(|f| Flag {
            line: first + h.lines.0,
            place: Some(crate::planted::places::HIDDEN_ELEMENT),
            ..f
        }));
    }
    if planted.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(crate::planted::places::without_spans(text, &planted))
}

/// Warns about every front matter line (`front`, whose first line is line 2 of `file`) whose
/// value reads as a planted instruction, naming its field. `title` and `description` are left
/// to the record's check, which also drops them.
pub(super) fn frontmatter_plants(
    front: &str,
    file: &str,
    diags: &mut Diagnostics,
    found: &mut Vec<Flag>,
) {
    if !crate::planted::may_hold_plant(front) {
        return;
    }
    let mut key = String::new();
    for (i, line) in front.lines().enumerate() {
        let t = line.trim();
        let value = match field(t) {
            Some((k, v)) => {
                key = k.to_string();
                v
            }
            None => t.trim_start_matches("- "),
        };
        if key == "title" || key == "description" {
            continue;
        }
        let value = value.trim().trim_matches(['"', '\'', '|', '>']).trim();
        if value.is_empty() {
            continue;
        }
        if let Some(rule) = crate::planted::check_sentence(value) {
            diags.warn(
                file,
                Some(i + 2),
                format!(
                    "a sentence {rule} in the front matter field `{key}` (\"{}\"); it is never used for navigation text",
                    crate::text::clip_words(value, 12)
                ),
            );
            found.push(Flag {
                line: i + 2,
                text: value.to_string(),
                rule,
                place: Some(crate::planted::places::FRONT_MATTER),
                quoted: false,
            });
        }
    }
}

/// `key: value` (YAML) or `key = value` (TOML) at the start of a line.
fn field(line: &str) -> Option<(&str, &str)> {
    let end = line
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .filter(|&e| e > 0)?;
    let rest = line[end..].trim_start();
    let value = rest.strip_prefix(':').or_else(|| rest.strip_prefix('='))?;
    Some((&line[..end], value))
}
