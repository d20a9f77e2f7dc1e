//! Tool calls and answers that a model writes as text instead of the API's tool calls: bare
//! JSON, JSON in a code fence, or between `<tool_call>` tags, in the shape of a function call
//! (`{"name", "arguments"}`) or of a JSON action (`{"action", "arg", "answer", "cite"}`).

use serde_json::{Map, Value};

use super::protocol::{Call, arg_name};

/// What a reply's text asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Intent {
    /// Tool calls, in order.
    Calls(Vec<Call>),
    /// A final answer with the ids it cites (`cite`, when the action gives them).
    Answer { text: String, cite: Vec<String> },
    /// Neither: plain text (an answer in prose, or nothing usable).
    Text(String),
}

/// Reads a reply's text. `turn` numbers the ids given to calls found in text.
pub fn read(text: &str, turn: usize) -> Intent {
    let objects = json_objects(text);
    let mut calls = Vec::new();
    for o in &objects {
        match intent_of(o) {
            Some(Intent::Answer { text, cite }) if calls.is_empty() => {
                return Intent::Answer { text, cite };
            }
            Some(Intent::Calls(mut c)) => calls.append(&mut c),
            _ => {}
        }
    }
    if calls.is_empty() {
        return Intent::Text(text.trim().to_string());
    }
    for (i, c) in calls.iter_mut().enumerate() {
        c.id = format!("text-{turn}-{i}");
    }
    Intent::Calls(calls)
}

/// The JSON objects a reply holds: in `<tool_call>` tags, else in code fences, else the whole
/// reply when it is JSON (an object, or an array of objects).
fn json_objects(text: &str) -> Vec<Map<String, Value>> {
    let tagged = between(text, "<tool_call>", "</tool_call>");
    let parts = if !tagged.is_empty() {
        tagged
    } else {
        let fenced = fences(text);
        if fenced.is_empty() {
            vec![text.trim()]
        } else {
            fenced
        }
    };
    let mut out = Vec::new();
    for p in parts {
        let p = p.trim();
        if !(p.starts_with('{') || p.starts_with('[')) {
            continue;
        }
        if let Some(o) = closed(p) {
            out.push(o);
            continue;
        }
        let mut de = serde_json::Deserializer::from_str(p).into_iter::<Value>();
        while let Some(Ok(v)) = de.next() {
            match v {
                Value::Object(o) => out.push(o),
                Value::Array(a) => out.extend(a.into_iter().filter_map(|x| match x {
                    Value::Object(o) => Some(o),
                    _ => None,
                })),
                _ => {}
            }
        }
    }
    out
}

/// A reply cut at the output limit inside its JSON (`{"action": "answer", "cite": [...],
/// "answer": "…`), closed so that what it holds is read; `None` for JSON that parses as it is or
/// cannot be closed.
fn closed(p: &str) -> Option<Map<String, Value>> {
    if serde_json::from_str::<Value>(p).is_ok() || !p.starts_with('{') {
        return None;
    }
    ["\"}", "\"]}", "]}", "}", "\"}]}", "}]}"]
        .iter()
        .find_map(
            |end| match serde_json::from_str::<Value>(&format!("{p}{end}")) {
                Ok(Value::Object(o)) => Some(o),
                _ => None,
            },
        )
}

/// Every text between `open` and `close` (an unclosed last one runs to the end).
fn between<'t>(text: &'t str, open: &str, close: &str) -> Vec<&'t str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(a) = rest.find(open) {
        let after = &rest[a + open.len()..];
        match after.find(close) {
            Some(b) => {
                out.push(&after[..b]);
                rest = &after[b + close.len()..];
            }
            None => {
                out.push(after);
                break;
            }
        }
    }
    out
}

/// The bodies of ``` fences (any language tag).
fn fences(text: &str) -> Vec<&str> {
    between(text, "```", "```")
        .into_iter()
        .map(|b| {
            // Drop the language tag on the fence's first line.
            match b.split_once('\n') {
                Some((tag, body)) if !tag.trim_start().starts_with(['{', '[']) => body,
                _ => b,
            }
        })
        .collect()
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// A call or an answer from one object, whichever shape it has.
fn intent_of(o: &Map<String, Value>) -> Option<Intent> {
    let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::trim);
    if let Some(action) = s("action") {
        if action == "answer" {
            // Without a text: the documents to compose the answer from (`answer = "compose"`).
            let text = s("answer")
                .filter(|t| !t.is_empty())
                .or(s("text"))
                .or(s("arg"))
                .unwrap_or("");
            return Some(Intent::Answer {
                text: text.to_string(),
                cite: string_list(o.get("cite").or(o.get("sources"))),
            });
        }
        let key = arg_name(action);
        // A list of arguments is one call for each (`get_document` of several documents).
        let list = string_list(o.get("arg").filter(|a| a.is_array()));
        let args: Vec<String> = if list.is_empty() {
            vec![s("arg").or(s(key)).or(s("input")).unwrap_or("").to_string()]
        } else {
            list
        };
        let mut calls = Vec::new();
        for arg in args {
            if calls.iter().any(|c: &Call| c.args[key] == arg.as_str()) {
                continue;
            }
            let mut args = Map::new();
            args.insert(key.to_string(), Value::String(arg));
            if action == "grep" {
                args.insert("ignore_case".into(), Value::Bool(true));
            }
            calls.push(call(action, Value::Object(args)));
        }
        return Some(Intent::Calls(calls));
    }
    let (name, args) = match o.get("function") {
        Some(Value::Object(f)) => (f.get("name")?.as_str()?, f.get("arguments")),
        _ => (
            s("name").or(s("tool"))?,
            ["arguments", "parameters", "args", "input"]
                .iter()
                .find_map(|k| o.get(*k)),
        ),
    };
    let args = match args {
        Some(Value::String(raw)) => serde_json::from_str(raw).unwrap_or(Value::Object(Map::new())),
        Some(v @ Value::Object(_)) => v.clone(),
        _ => Value::Object(Map::new()),
    };
    Some(Intent::Calls(vec![call(name, args)]))
}

fn call(name: &str, args: Value) -> Call {
    Call {
        id: String::new(),
        name: name.to_string(),
        args,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one_call(i: Intent) -> (String, Value) {
        match i {
            Intent::Calls(c) if c.len() == 1 => (c[0].name.clone(), c[0].args.clone()),
            other => panic!("not one call: {other:?}"),
        }
    }

    #[test]
    fn bare_fenced_and_tagged_calls() {
        let bare = r#"{"name": "cat", "arguments": {"path": "skills/a/SKILL.md"}}"#;
        assert_eq!(
            one_call(read(bare, 1)),
            ("cat".into(), json!({"path": "skills/a/SKILL.md"}))
        );
        let fenced = "I will read it.\n```json\n{\"name\": \"get_document\", \"arguments\": \"{\\\"id\\\": \\\"d1\\\"}\"}\n```";
        assert_eq!(
            one_call(read(fenced, 1)),
            ("get_document".into(), json!({"id": "d1"}))
        );
        let tagged = "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"2fa\"}}\n</tool_call>";
        assert_eq!(
            one_call(read(tagged, 1)),
            ("search".into(), json!({"query": "2fa"}))
        );
        let action = r#"{"action": "grep", "arg": "saml", "answer": "", "cite": []}"#;
        assert_eq!(
            one_call(read(action, 1)),
            (
                "grep".into(),
                json!({"pattern": "saml", "ignore_case": true})
            )
        );
    }

    #[test]
    fn an_action_with_a_list_of_arguments_is_a_call_for_each() {
        let open = r#"{"action": "get_document", "arg": ["Alpha", "Beta", "Alpha"]}"#;
        match read(open, 4) {
            Intent::Calls(c) => {
                let ids: Vec<&Value> = c.iter().map(|c| &c.args["id"]).collect();
                assert_eq!(ids, [&json!("Alpha"), &json!("Beta")], "each once");
                assert_eq!(c[1].id, "text-4-1");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn answers_and_prose() {
        let a =
            r#"{"action": "answer", "arg": "", "answer": "Open Settings [d1].", "cite": ["d1"]}"#;
        assert_eq!(
            read(a, 2),
            Intent::Answer {
                text: "Open Settings [d1].".into(),
                cite: vec!["d1".into()]
            }
        );
        let cut = r#"{"action":"answer","cite":["d1"],"answer":"Deployments are immutable builds. Deployments are"#;
        assert_eq!(
            read(cut, 3),
            Intent::Answer {
                text: "Deployments are immutable builds. Deployments are".into(),
                cite: vec!["d1".into()]
            }
        );
        let chosen = r#"{"action": "answer", "cite": ["d1", "d2"]}"#;
        assert_eq!(
            read(chosen, 3),
            Intent::Answer {
                text: String::new(),
                cite: vec!["d1".into(), "d2".into()]
            }
        );
        let prose = "Two-factor authentication is under Settings {see below}.";
        assert_eq!(read(prose, 2), Intent::Text(prose.into()));
        let two = "<tool_call>{\"name\": \"cat\", \"arguments\": {\"path\": \"a\"}}</tool_call><tool_call>{\"name\": \"cat\", \"arguments\": {\"path\": \"b\"}}</tool_call>";
        match read(two, 3) {
            Intent::Calls(c) => assert_eq!((c.len(), c[1].id.as_str()), (2, "text-3-1")),
            other => panic!("{other:?}"),
        }
    }
}
