//! The JSON schema that binds each reply of the JSON protocol: the actions the agent may take
//! next, with paths and documents limited to those it was shown, and the answer's citations.

use serde_json::{Value, json};

use super::known::Known;
use crate::serve::tools::specs;

/// The specs of the `tools` enabled, in the tools' order.
pub(super) fn enabled_specs(tools: &[String]) -> Vec<(&'static str, &'static str, Value)> {
    specs()
        .into_iter()
        .filter(|(n, _, _)| tools.iter().any(|t| t == n))
        .collect()
}

/// The tools the JSON protocol offers: `ls` lists nothing that the navigation files do not
/// link, and a small model spends turns listing folders, so it is left out when `cat` is there.
pub(super) fn json_tools(tools: &[String]) -> Vec<String> {
    let cat = tools.iter().any(|t| t == "cat");
    tools
        .iter()
        .filter(|t| !(cat && *t == "ls"))
        .cloned()
        .collect()
}

/// The JSON schema of the next action: one object per tool (paths and ids limited to those
/// the agent was shown and has not read yet), and `answer` only once a document is open,
/// citing opened ones only.
pub fn action_schema(
    tools: &[String],
    docs: &crate::serve::tools::Tools,
    known: &Known,
    read: &[String],
    opened: &[String],
    last: bool,
    composes: bool,
) -> Value {
    let (files, ids) = known.choices(read, opened);
    // Documents by title where it is theirs alone: a small model copies a title it matched far
    // better than a 64-character hash.
    let ids: Vec<String> = ids.iter().map(|id| docs.handle(id)).collect();
    let opened: Vec<String> = opened.iter().map(|id| docs.handle(id)).collect();
    let branch = |action: &str, arg: Value| {
        json!({
            "type": "object",
            "properties": {"action": {"type": "string", "enum": [action]}, "arg": arg},
            "required": ["action", "arg"],
            "additionalProperties": false,
        })
    };
    let free = json!({"type": "string", "minLength": 1, "maxLength": 200});
    let mut branches = Vec::new();
    // On the last turn, an agent that opened a document must answer.
    let tools: Vec<String> = if last && !opened.is_empty() {
        Vec::new()
    } else {
        json_tools(tools)
    };
    for (name, _, _) in enabled_specs(&tools) {
        let arg = match name {
            "cat" if files.is_empty() => continue,
            "cat" => json!({"type": "string", "enum": files}),
            "get_document" if ids.is_empty() => continue,
            // Several at once: a small model that may pick a near miss first gets the others too.
            "get_document" => json!({
                "type": "array",
                "items": {"type": "string", "enum": ids},
                "minItems": 1,
                "maxItems": ids.len().min(OPEN_AT_ONCE),
            }),
            _ => free.clone(),
        };
        branches.push(branch(name, arg));
    }
    let cite = json!({"type": "array", "items": {"type": "string", "enum": opened}, "minItems": 1, "maxItems": opened.len().min(MAX_CITES)});
    if !opened.is_empty() && composes {
        branches.push(json!({
            "type": "object",
            "properties": {"action": {"type": "string", "enum": ["answer"]}, "cite": cite},
            "required": ["action", "cite"],
            "additionalProperties": false,
        }));
    } else if !opened.is_empty() {
        // `cite` before `answer`: a reply cut at the output limit still names its sources.
        branches.push(json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["answer"]},
                "cite": cite,
                "answer": {"type": "string", "minLength": 1, "maxLength": ANSWER_CHARS},
            },
            "required": ["action", "cite", "answer"],
            "additionalProperties": false,
        }));
    }
    json!({"anyOf": branches})
}

/// Documents an answer cites at most (a small model otherwise repeats ids until its output
/// limit, and the answer never comes).
pub const MAX_CITES: usize = 4;

/// Characters of an answer at most (about 150 words, as the prompt asks).
pub const ANSWER_CHARS: usize = 1200;

/// Documents one `get_document` action of the JSON protocol may open.
pub const OPEN_AT_ONCE: usize = 3;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::agent::protocol::tests::all;

    /// Tools over two documents, `d1` "Alpha" and `d2` "Beta", and a third titled "Alpha" too.
    fn tools(dir: &std::path::Path) -> crate::serve::tools::Tools {
        let docs = json!({
            "d1": {"title": "Alpha guide", "text": "a"},
            "d2": {"title": "Beta", "text": "b"},
            "d3": {"title": "Gamma", "text": "c"},
            "d4": {"title": "Gamma", "text": "d"},
        });
        std::fs::write(dir.join("documents.json"), docs.to_string()).unwrap();
        crate::serve::tools::Tools::open(dir).unwrap()
    }

    fn actions(s: &Value) -> Vec<Value> {
        s["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["properties"]["action"]["enum"][0].clone())
            .collect()
    }

    #[test]
    fn the_action_schema_offers_what_was_shown_by_title() {
        let dir = tempfile::tempdir().unwrap();
        let docs = tools(dir.path());
        let search = ["search", "get_document"].map(String::from).to_vec();
        let mut known = Known::default();
        let none = action_schema(&search, &docs, &known, &[], &[], false, false);
        assert_eq!(
            actions(&none),
            vec![json!("search")],
            "no id seen, nothing opened"
        );
        for id in ["d1", "d2", "d3"] {
            known.ids.push(id.into());
        }
        let opened = ["d1".to_string()];
        let some = action_schema(&search, &docs, &known, &[], &opened, false, false);
        assert_eq!(
            actions(&some),
            vec![json!("search"), json!("get_document"), json!("answer")]
        );
        // A unique title stands for its document; a shared one leaves the id.
        assert_eq!(
            some["anyOf"][1]["properties"]["arg"]["items"]["enum"],
            json!(["d3", "Beta"])
        );
        assert_eq!(some["anyOf"][1]["properties"]["arg"]["maxItems"], 2);
        assert_eq!(
            some["anyOf"][2]["properties"]["cite"]["items"]["enum"],
            json!(["Alpha guide"])
        );
        assert!(some["anyOf"][2]["properties"].get("answer").is_some());
        let composed = action_schema(&search, &docs, &known, &[], &opened, false, true);
        let answer = &composed["anyOf"][2];
        assert_eq!(answer["required"], json!(["action", "cite"]));
        assert!(answer["properties"].get("answer").is_none());
        // ls is not offered beside cat.
        let browse = action_schema(&all(), &docs, &known, &[], &[], false, true);
        assert!(!actions(&browse).contains(&json!("ls")));
    }
}
