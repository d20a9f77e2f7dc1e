//! The two chat protocols: OpenAI-compatible `/chat/completions` and Anthropic's `/v1/messages`.
//! Builds request bodies (sending only the optional fields the user set) and reads replies:
//! the one parser per protocol for stage answers, batch results and the agent's tool calls.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::SetupError;
use crate::config::LlmBackendKind;

/// The Anthropic API version header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// One chat request.
#[derive(Debug, Clone)]
pub struct ChatRequest<'a> {
    pub model: &'a str,
    pub system: &'a str,
    pub user: &'a str,
    pub max_tokens: u32,
    pub params: &'a BTreeMap<String, toml::Value>,
    /// `(name, schema)` of the JSON answer, sent as `response_format` (OpenAI-compatible only).
    pub schema: Option<(&'a str, &'a Value)>,
}

/// Text and token counts of one answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatAnswer {
    pub text: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// The endpoint URL for a base URL.
pub fn endpoint(kind: LlmBackendKind, base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    match kind {
        LlmBackendKind::Anthropic => format!("{base}/v1/messages"),
        _ => format!("{base}/chat/completions"),
    }
}

/// Auth and version headers; the key goes only here.
pub fn headers(kind: LlmBackendKind, key: Option<&str>) -> Vec<(&'static str, String)> {
    let mut h = Vec::new();
    match kind {
        LlmBackendKind::Anthropic => {
            h.push(("anthropic-version", ANTHROPIC_VERSION.to_string()));
            if let Some(k) = key {
                h.push(("x-api-key", k.to_string()));
            }
        }
        _ => {
            if let Some(k) = key {
                h.push(("authorization", format!("Bearer {k}")));
            }
        }
    }
    h
}

/// The JSON body of a request.
pub fn body(kind: LlmBackendKind, r: &ChatRequest) -> Value {
    let mut b = match kind {
        LlmBackendKind::Anthropic => json!({
            "model": r.model,
            "max_tokens": r.max_tokens,
            "system": r.system,
            "messages": [{"role": "user", "content": r.user}],
        }),
        _ => json!({
            "model": r.model,
            "max_tokens": r.max_tokens,
            "messages": [
                {"role": "system", "content": r.system},
                {"role": "user", "content": r.user}
            ],
        }),
    };
    if let (LlmBackendKind::Openai, Some((name, schema))) = (kind, r.schema) {
        b["response_format"] = super::schema::response_format(name, schema);
    }
    for (k, v) in r.params {
        b[k] = serde_json::to_value(v).unwrap_or(Value::Null);
    }
    b
}

/// The API root for a config: `base_url`, or Anthropic's own for the anthropic backend.
pub fn base_url(kind: LlmBackendKind, base_url: Option<&str>) -> Result<String, SetupError> {
    match (kind, base_url) {
        (_, Some(b)) => Ok(b.to_string()),
        (LlmBackendKind::Anthropic, None) => Ok("https://api.anthropic.com".to_string()),
        (_, None) => Err(SetupError::NoBaseUrl),
    }
}

/// `(input, output)` tokens of an answer; Anthropic's cache reads and writes count as input.
pub fn usage(kind: LlmBackendKind, v: &Value) -> (u64, u64) {
    let u = |p: &str| v.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    match kind {
        LlmBackendKind::Anthropic => (
            u("/usage/input_tokens")
                + u("/usage/cache_read_input_tokens")
                + u("/usage/cache_creation_input_tokens"),
            u("/usage/output_tokens"),
        ),
        _ => (u("/usage/prompt_tokens"), u("/usage/completion_tokens")),
    }
}

/// One reply of either API: its text, tool calls `(id, name, arguments)` and usage, and the
/// assistant message to send back in the API's own shape (the agent loop appends it).
#[derive(Debug, Clone)]
pub struct Reply {
    pub text: String,
    pub calls: Vec<(String, String, Value)>,
    pub message: Value,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Text, tool calls and usage of one reply.
pub fn reply(kind: LlmBackendKind, v: &Value) -> Result<Reply, String> {
    let (input_tokens, output_tokens) = usage(kind, v);
    match kind {
        LlmBackendKind::Anthropic => {
            let blocks = v
                .get("content")
                .and_then(Value::as_array)
                .ok_or("the answer has no `content` list")?;
            let mut text = String::new();
            let mut calls = Vec::new();
            for b in blocks {
                match b["type"].as_str() {
                    Some("text") => text.push_str(b["text"].as_str().unwrap_or("")),
                    Some("tool_use") => calls.push((
                        b["id"].as_str().unwrap_or("").to_string(),
                        b["name"].as_str().unwrap_or("").to_string(),
                        b["input"].clone(),
                    )),
                    _ => {}
                }
            }
            Ok(Reply {
                text,
                calls,
                message: json!({"role": "assistant", "content": blocks}),
                input_tokens,
                output_tokens,
            })
        }
        _ => {
            let m = v
                .pointer("/choices/0/message")
                .ok_or("the answer has no choices[0].message")?;
            let text = m["content"].as_str().unwrap_or("").to_string();
            let calls: Vec<(String, String, Value)> = m["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    let raw = c
                        .pointer("/function/arguments")
                        .cloned()
                        .unwrap_or(Value::Null);
                    let args = match raw {
                        Value::String(s) => serde_json::from_str(&s).unwrap_or(json!({})),
                        other => other,
                    };
                    (
                        c["id"].as_str().unwrap_or("").to_string(),
                        c.pointer("/function/name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        args,
                    )
                })
                .collect();
            let mut message = json!({"role": "assistant", "content": text});
            if let Some(tc) = m
                .get("tool_calls")
                .filter(|t| t.as_array().is_some_and(|a| !a.is_empty()))
            {
                message["tool_calls"] = tc.clone();
            }
            Ok(Reply {
                text,
                calls,
                message,
                input_tokens,
                output_tokens,
            })
        }
    }
}

/// Reads the answer text and usage (the reply of a stage call, which has no tool calls); `Err`
/// says what is missing.
pub fn answer(kind: LlmBackendKind, v: &Value) -> Result<ChatAnswer, String> {
    if kind != LlmBackendKind::Anthropic
        && v.pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .is_none()
    {
        return Err("the answer has no choices[0].message.content".into());
    }
    let r = reply(kind, v)?;
    Ok(ChatAnswer {
        text: r.text,
        input_tokens: r.input_tokens,
        output_tokens: r.output_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_set_params_are_sent() {
        let none = BTreeMap::new();
        let r = ChatRequest {
            model: "m",
            system: "s",
            user: "u",
            max_tokens: 100,
            params: &none,
            schema: None,
        };
        let b = body(LlmBackendKind::Openai, &r);
        let keys: Vec<&String> = b.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["model", "max_tokens", "messages"]);
        let mut p = BTreeMap::new();
        p.insert("temperature".to_string(), toml::Value::Float(0.0));
        let b = body(LlmBackendKind::Anthropic, &ChatRequest { params: &p, ..r });
        assert_eq!(b["temperature"], 0.0);
        assert_eq!(b["system"], "s");
    }

    #[test]
    fn answers_and_usage() {
        let o = json!({"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": 5, "completion_tokens": 2}});
        assert_eq!(
            answer(LlmBackendKind::Openai, &o).unwrap(),
            ChatAnswer {
                text: "hi".into(),
                input_tokens: 5,
                output_tokens: 2
            }
        );
        let a = json!({"content": [{"type": "text", "text": "yo"}], "usage": {"input_tokens": 7, "output_tokens": 1}});
        assert_eq!(answer(LlmBackendKind::Anthropic, &a).unwrap().text, "yo");
        assert!(answer(LlmBackendKind::Openai, &json!({})).is_err());
    }
}
