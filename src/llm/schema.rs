//! The JSON schemas of the stages' answers, sent as `response_format` to servers that constrain
//! decoding by a schema (OpenAI structured outputs, llama.cpp, vLLM), so a small model's answer
//! parses as it comes.

use serde_json::{Value, json};

/// The schema a stage's answer must follow, by prompt name.
pub fn of(prompt: &str) -> Option<Value> {
    let s = |max: usize| json!({"type": "string", "maxLength": max});
    let list = |max_items: usize, max_len: usize| json!({"type": "array", "items": {"type": "string", "maxLength": max_len}, "maxItems": max_items});
    let object = |props: Value| {
        let required: Vec<&String> = props
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
    };
    Some(match prompt {
        "card" => object(json!({"title": s(120), "one_line": s(300), "phrases": list(6, 80)})),
        "label" => {
            object(json!({"label": {"type": "string", "maxLength": 60, "pattern": LABEL_PATTERN}}))
        }
        "summary_leaf" | "summary_higher" => object(json!({"summary": s(600)})),
        "tags" => object(json!({
            "entities": list(8, 80),
            "doc_types": {"type": "array", "maxItems": 3, "items": {"type": "string", "enum": DOC_TYPES}},
        })),
        "repartition" => object(json!({"changes": {"type": "array", "items": {"anyOf": [
            object(json!({"op": {"type": "string", "enum": ["move"]}, "item": {"type": "string"}, "to": {"type": "integer"}})),
            object(json!({"op": {"type": "string", "enum": ["merge"]}, "groups": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}})),
        ]}}})),
        _ => return None,
    })
}

/// 2 to 5 lowercase words.
pub const LABEL_PATTERN: &str = "^[a-z0-9]+( [a-z0-9]+){1,4}$";

/// The document types the tags prompt offers.
pub const DOC_TYPES: [&str; 8] = [
    "how-to",
    "troubleshooting",
    "reference",
    "policy",
    "concept",
    "faq",
    "release-notes",
    "tutorial",
];

/// `response_format` for an OpenAI-compatible request.
pub fn response_format(name: &str, schema: &Value) -> Value {
    json!({"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": true}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_stages_have_strict_object_schemas() {
        for stage in [
            "card",
            "label",
            "tags",
            "repartition",
            "summary_leaf",
            "summary_higher",
        ] {
            let s = of(stage).unwrap();
            assert_eq!(s["type"], "object");
            assert_eq!(s["additionalProperties"], false);
            let props: Vec<&String> = s["properties"].as_object().unwrap().keys().collect();
            let required: Vec<&str> = s["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(
                props, required,
                "{stage}: strict mode needs every field required"
            );
        }
        assert!(of("agent").is_none());
    }
}
