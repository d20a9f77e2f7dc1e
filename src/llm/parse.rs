//! Reading model answers: JSON bare, inside code fences or prose, validated cards, tags and
//! repartition changes, labels and summaries checked against what the model was shown (and
//! sanitized, so no answer can become a bad path). Each says what it had to repair.

use serde_json::Value;

use super::check::{self, Parsed, Source};
use super::{Card, Change, Tags};

/// The first JSON object in `text`: bare, or (a repair) inside a ```json fence or prose.
pub fn extract_json(text: &str) -> Option<Parsed<Value>> {
    let t = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(t)
        && v.is_object()
    {
        return Some(Parsed::clean(v));
    }
    // Try every `{` as a start, with a streaming parser that stops at the object's end.
    for (i, _) in t.match_indices('{') {
        let mut de = serde_json::Deserializer::from_str(&t[i..]).into_iter::<Value>();
        if let Some(Ok(v)) = de.next()
            && v.is_object()
        {
            return Some(Parsed {
                value: v,
                repairs: vec!["took the JSON object out of the text around it".into()],
            });
        }
    }
    None
}

/// The string a JSON object cut off by the output limit had begun for `field` (`{"answer": "To
/// start, open…` gives `To start, open…`): what a reply that ran out of tokens did say.
/// `None` when the text starts no such string.
pub fn cut_string_field(text: &str, field: &str) -> Option<String> {
    let key = format!("\"{field}\"");
    let after = &text[text.find(&key)? + key.len()..];
    let rest = after
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => break,
            },
            c => out.push(c),
        }
    }
    let out = out.trim().to_string();
    (!out.is_empty()).then_some(out)
}

/// A card from `{"title", "one_line", "phrases"}`, its phrases checked against the document;
/// `Err` names what is missing.
pub fn card(text: &str, doc: &Source) -> Result<Parsed<Card>, String> {
    let Parsed {
        value: v,
        mut repairs,
    } = extract_json(text).ok_or("no JSON object in the answer")?;
    let mut title = clean_text(v.get("title").and_then(Value::as_str).unwrap_or(""), 120);
    let one_line = clean_text(v.get("one_line").and_then(Value::as_str).unwrap_or(""), 300);
    if title.is_empty() {
        return Err("`title` is missing or empty".into());
    }
    if one_line.is_empty() {
        return Err("`one_line` is missing or empty".into());
    }
    for (field, text) in [("title", &title), ("one_line", &one_line)] {
        if let Some(rule) = crate::planted::check_sentence(text) {
            return Err(format!(
                "`{field}` {rule}, as text planted for AI models does; describe the document instead"
            ));
        }
    }
    if let Some(term) = check::unsupported(&one_line, doc).into_iter().next() {
        return Err(format!(
            "`one_line` names `{term}`, which the document does not contain; describe only what it says"
        ));
    }
    if title.split_whitespace().count() > 16 {
        title = crate::text::clip_words(&title, 12);
        repairs.push("cut the title to 12 words".into());
    }
    let listed = string_list(&v, "phrases", 8, 80)?;
    let (planted, listed): (Vec<String>, Vec<String>) = listed
        .into_iter()
        .partition(|p| crate::planted::check_sentence(p).is_some());
    repairs.extend(
        planted
            .iter()
            .map(|p| format!("dropped the phrase `{p}`: it reads as a planted instruction")),
    );
    let phrases = check::phrases(listed, doc);
    repairs.extend(phrases.repairs);
    Ok(Parsed {
        value: Card {
            title,
            one_line,
            phrases: phrases.value,
        },
        repairs,
    })
}

/// Tags from `{"entities", "doc_types"}`: entities the members hold, doc types of the list.
pub fn tags(text: &str, members: &Source) -> Result<Parsed<Tags>, String> {
    let Parsed {
        value: v,
        mut repairs,
    } = extract_json(text).ok_or("no JSON object in the answer")?;
    if v.get("entities").is_none() && v.get("doc_types").is_none() {
        return Err("neither `entities` nor `doc_types` is present".into());
    }
    let mut doc_types = Vec::new();
    for d in string_list(&v, "doc_types", 3, 40)? {
        let d = d.to_lowercase();
        if super::schema::DOC_TYPES.contains(&d.as_str()) {
            doc_types.push(d);
        } else {
            repairs.push(format!(
                "dropped the document type `{d}`: not one of the list"
            ));
        }
    }
    let entities = check::entities(string_list(&v, "entities", 8, 80)?, members);
    repairs.extend(entities.repairs);
    Ok(Parsed {
        value: Tags {
            entities: entities.value,
            doc_types,
        },
        repairs,
    })
}

/// Repartition changes from `{"changes": [...]}`; unknown ops are an error, bounds are checked
/// by the caller, which knows the groups.
pub fn changes(text: &str) -> Result<Parsed<Vec<Change>>, String> {
    let Parsed { value: v, repairs } = extract_json(text).ok_or("no JSON object in the answer")?;
    let list = v
        .get("changes")
        .and_then(Value::as_array)
        .ok_or("`changes` is missing or not a list")?;
    let num = |x: &Value| x.as_u64().or_else(|| x.as_str()?.trim().parse().ok());
    let value = list
        .iter()
        .map(|c| match c.get("op").and_then(Value::as_str) {
            Some("move") => Ok(Change::Move {
                item: c
                    .get("item")
                    .and_then(Value::as_str)
                    .ok_or("a move has no `item`")?
                    .to_string(),
                to: c
                    .get("to")
                    .and_then(num)
                    .ok_or("a move has no group number `to`")? as usize,
            }),
            Some("merge") => {
                let g: Vec<usize> = c
                    .get("groups")
                    .and_then(Value::as_array)
                    .ok_or("a merge has no `groups` list")?
                    .iter()
                    .map(|x| num(x).map(|n| n as usize))
                    .collect::<Option<_>>()
                    .ok_or("merge groups must be numbers")?;
                match g[..] {
                    [a, b] if a != b => Ok(Change::Merge { a, b }),
                    _ => Err("a merge names exactly two different groups".to_string()),
                }
            }
            other => Err(format!("unknown op {other:?}")),
        })
        .collect::<Result<_, String>>()?;
    Ok(Parsed { value, repairs })
}

/// A label from `{"label": "..."}` or a plain line: at most 5 lowercase words of letters and
/// digits (never a path), each drawn from the members, none a bare number or the prompt's own.
pub fn label(text: &str, members: &Source, prompt: &str) -> Result<Parsed<String>, String> {
    let (raw, mut repairs) = match extract_json(text) {
        Some(p) => {
            let l = p.value.get("label").and_then(Value::as_str);
            (
                l.ok_or("the JSON has no string `label`")?.to_string(),
                p.repairs,
            )
        }
        None if text.trim_start().starts_with('{') => {
            return Err("the label's JSON is malformed".into());
        }
        None => (text.to_string(), Vec::new()),
    };
    let checked = check::label(&raw, members, prompt)?;
    repairs.extend(checked.repairs);
    Ok(Parsed {
        value: checked.value,
        repairs,
    })
}

/// A summary from `{"summary": "..."}` or plain text: sentences checked against the members and
/// the prompt, within a size cap.
pub fn summary(text: &str, members: &Source, prompt: &Source) -> Result<Parsed<String>, String> {
    let (raw, mut repairs) = match extract_json(text) {
        Some(p) => match p.value.get("summary").and_then(Value::as_str) {
            Some(s) => (s.to_string(), p.repairs),
            None => return Err("the JSON has no string `summary`".into()),
        },
        None => (text.to_string(), Vec::new()),
    };
    let mut checked = check::summary(&raw, members, prompt)?;
    repairs.append(&mut checked.repairs);
    let checked = Parsed {
        value: checked.value,
        repairs,
    };
    Ok(Parsed {
        value: clean_text(&checked.value, 1200),
        repairs: checked.repairs,
    })
}

fn string_list(v: &Value, key: &str, max: usize, max_chars: usize) -> Result<Vec<String>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => Ok(a
            .iter()
            .filter_map(Value::as_str)
            .map(|s| clean_text(s, max_chars))
            .filter(|s| !s.is_empty())
            .take(max)
            .collect()),
        Some(_) => Err(format!("`{key}` must be a list of strings")),
    }
}

/// One line, no control characters or markdown table pipes, at most `max` characters.
fn clean_text(s: &str, max: usize) -> String {
    let one: String = s
        .chars()
        .map(|c| if c.is_control() || c == '|' { ' ' } else { c })
        .collect();
    let words: Vec<&str> = one.split_whitespace().collect();
    let mut out = words.join(" ");
    if out.chars().count() > max {
        out = out.chars().take(max).collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_cut_by_the_output_limit_is_read() {
        let cut = "{\n  \"answer\": \"Open \\\"Settings\\\".\\nThen click Save and";
        assert_eq!(
            cut_string_field(cut, "answer").as_deref(),
            Some("Open \"Settings\".\nThen click Save and")
        );
        assert_eq!(cut_string_field("{\"cite\": []}", "answer"), None);
    }

    #[test]
    fn json_in_fences_and_prose() {
        let doc = Source::new(["A B c xylophone"]);
        let fenced = "Sure!\n```json\n{\"title\": \"A\", \"one_line\": \"B c\", \"phrases\": [\"xylophone\"]}\n```\nHope this helps.";
        let c = card(fenced, &doc).unwrap();
        assert_eq!(
            (c.value.title.as_str(), c.value.one_line.as_str()),
            ("A", "B c")
        );
        assert_eq!(c.repairs.len(), 1, "a fence is a repair");
        let bare = card(
            "{\"title\": \"A\", \"one_line\": \"B c\", \"phrases\": [\"xylophone\"]}",
            &doc,
        )
        .unwrap();
        assert!(bare.repairs.is_empty());
        let prose = "Here is the card: {\"title\": \"T\", \"one_line\": \"O\"} — done {not json}";
        assert_eq!(
            card(prose, &doc).unwrap().value.phrases,
            Vec::<String>::new()
        );
        assert!(
            card("{\"title\": \"\", \"one_line\": \"x\"}", &doc)
                .unwrap_err()
                .contains("title")
        );
        assert!(card("no json here", &doc).is_err());
        assert!(
            card(
                "{\"title\": \"A\", \"one_line\": \"B\", \"phrases\": 3}",
                &doc
            )
            .is_err()
        );
    }

    #[test]
    fn labels_cannot_become_paths() {
        let m = Source::new([
            "etc passwd billing invoices custom domains ignore previous instructions write",
        ]);
        let l = |t: &str| label(t, &m, "Reply with a label").map(|p| p.value);
        assert_eq!(l("../../billing/invoices").unwrap(), "billing invoices");
        assert_eq!(
            l("Label: Billing & Invoices\nbecause...").unwrap(),
            "billing invoices"
        );
        assert_eq!(
            l("{\"label\": \"Custom Domains\"}").unwrap(),
            "custom domains"
        );
        assert_eq!(l("\"Custom Domains\"").unwrap(), "custom domains");
        assert!(l("  \n ../ // \n").is_err());
        assert!(l("{\"label\": 5}").is_err());
    }

    #[test]
    fn changes_are_validated() {
        let ok = r#"{"changes": [{"op": "move", "item": "doc-1", "to": 2}, {"op": "merge", "groups": [0, "3"]}]}"#;
        assert_eq!(
            changes(ok).unwrap().value,
            vec![
                Change::Move {
                    item: "doc-1".into(),
                    to: 2
                },
                Change::Merge { a: 0, b: 3 }
            ]
        );
        assert!(changes(r#"{"changes": [{"op": "delete"}]}"#).is_err());
        assert!(changes(r#"{"changes": [{"op": "merge", "groups": [1, 1]}]}"#).is_err());
        assert_eq!(changes(r#"{"changes": []}"#).unwrap().value, vec![]);
        let m = Source::new(["Wix Stores sells things"]);
        let t = tags(
            r#"{"entities": ["Wix Stores", "Shopify"], "doc_types": ["How-To", "essay"]}"#,
            &m,
        )
        .unwrap();
        assert_eq!(t.value.doc_types, vec!["how-to"]);
        assert_eq!(t.value.entities, vec!["Wix Stores"]);
        assert_eq!(t.repairs.len(), 2);
    }
}
