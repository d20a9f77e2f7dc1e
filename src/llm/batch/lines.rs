//! The batch file formats: OpenAI batch input lines (also vLLM's `run-batch`), Anthropic
//! Message Batches requests, and the result lines of both, read with the interactive parsers.

use serde_json::{Value, json};

use crate::config::LlmBackendKind;
use crate::llm::wire::{self, ChatAnswer};

/// The `url` of every OpenAI batch input line (and the batch's `endpoint`).
pub const OPENAI_ENDPOINT: &str = "/v1/chat/completions";

/// One request of a batch: its memo key (hex, the `custom_id`), its stage and its body.
#[derive(Debug, Clone, PartialEq)]
pub struct Queued {
    pub custom_id: String,
    pub stage: String,
    pub body: Value,
}

/// The input line (OpenAI) or request object (Anthropic) of one request.
pub fn request_line(kind: LlmBackendKind, q: &Queued) -> Value {
    match kind {
        LlmBackendKind::Anthropic => json!({"custom_id": q.custom_id, "params": q.body}),
        _ => json!({
            "custom_id": q.custom_id,
            "method": "POST",
            "url": OPENAI_ENDPOINT,
            "body": q.body,
        }),
    }
}

/// Splits requests into batches of at most `max_requests` requests and `max_bytes` bytes of
/// serialized lines (a single larger request gets a batch of its own).
pub fn split(
    lines: Vec<(Queued, Vec<u8>)>,
    max_requests: usize,
    max_bytes: u64,
) -> Vec<Vec<(Queued, Vec<u8>)>> {
    let mut out: Vec<Vec<(Queued, Vec<u8>)>> = Vec::new();
    let mut bytes = 0u64;
    for (q, line) in lines {
        let len = line.len() as u64 + 1;
        let full = out.last().is_none_or(|b| {
            b.len() >= max_requests.max(1) || (!b.is_empty() && bytes + len > max_bytes)
        });
        if full {
            out.push(Vec::new());
            bytes = 0;
        }
        bytes += len;
        out.last_mut().expect("just pushed").push((q, line));
    }
    out
}

/// What one result line says about its request.
#[derive(Debug, Clone, PartialEq)]
pub enum LineResult {
    Answer(ChatAnswer),
    /// The request failed (an error line, a non-200 status, expired or cancelled): why.
    Failed(String),
}

/// Reads one result line of either format: `(custom_id, result)`, or why the line is unusable.
pub fn parse_result(line: &[u8]) -> Result<(String, LineResult), String> {
    let v: Value = serde_json::from_slice(line).map_err(|e| format!("not JSON ({e})"))?;
    let id = v["custom_id"]
        .as_str()
        .filter(|s| !s.is_empty())
        .ok_or("no `custom_id`")?
        .to_string();
    let result = if v.get("result").is_some() {
        anthropic_result(&v["result"])?
    } else {
        openai_result(&v)?
    };
    Ok((id, result))
}

fn openai_result(v: &Value) -> Result<LineResult, String> {
    if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
        return Ok(LineResult::Failed(error_message(e)));
    }
    let response = v
        .get("response")
        .filter(|r| r.is_object())
        .ok_or("no `response`")?;
    let status = response["status_code"].as_u64().unwrap_or(200);
    let body = &response["body"];
    if status != 200 {
        return Ok(LineResult::Failed(format!(
            "HTTP {status}: {}",
            error_message(&body["error"])
        )));
    }
    wire::answer(LlmBackendKind::Openai, body).map(LineResult::Answer)
}

fn anthropic_result(r: &Value) -> Result<LineResult, String> {
    match r["type"].as_str() {
        Some("succeeded") => {
            wire::answer(LlmBackendKind::Anthropic, &r["message"]).map(LineResult::Answer)
        }
        Some("errored") => Ok(LineResult::Failed(error_message(&r["error"]["error"]))),
        Some(t @ ("canceled" | "expired")) => {
            Ok(LineResult::Failed(format!("the request was {t}")))
        }
        _ => Err("`result.type` is not succeeded, errored, canceled or expired".into()),
    }
}

/// `message` (or `code`) of an error object, else the object.
fn error_message(e: &Value) -> String {
    e["message"]
        .as_str()
        .or_else(|| e["code"].as_str())
        .map(str::to_string)
        .unwrap_or_else(|| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(i: usize) -> Queued {
        Queued {
            custom_id: format!("{i:064x}"),
            stage: "card".into(),
            body: json!({"model": "m"}),
        }
    }

    #[test]
    fn split_respects_request_and_byte_limits() {
        let lines: Vec<(Queued, Vec<u8>)> = (0..7).map(|i| (q(i), vec![b'x'; 9])).collect();
        let sizes = |b: &Vec<Vec<(Queued, Vec<u8>)>>| b.iter().map(Vec::len).collect::<Vec<_>>();
        assert_eq!(sizes(&split(lines.clone(), 3, u64::MAX)), [3, 3, 1]);
        // 10 bytes per line with its newline: 25 bytes hold two.
        assert_eq!(sizes(&split(lines.clone(), 100, 25)), [2, 2, 2, 1]);
        // A line over the byte limit still goes, alone.
        assert_eq!(sizes(&split(lines, 100, 5)), [1; 7]);
    }

    #[test]
    fn result_lines_of_both_providers() {
        let ok = br#"{"id":"r1","custom_id":"a","response":{"status_code":200,"body":{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}},"error":null}"#;
        let (id, r) = parse_result(ok).unwrap();
        assert_eq!(id, "a");
        assert!(matches!(r, LineResult::Answer(a) if a.text == "hi" && a.input_tokens == 3));
        let bad = br#"{"custom_id":"b","response":{"status_code":500,"body":{"error":{"message":"boom"}}},"error":null}"#;
        assert_eq!(
            parse_result(bad).unwrap().1,
            LineResult::Failed("HTTP 500: boom".into())
        );
        let expired = br#"{"custom_id":"c","response":null,"error":{"code":"batch_expired","message":"This request could not be executed before the completion window expired."}}"#;
        assert!(
            matches!(parse_result(expired).unwrap().1, LineResult::Failed(m) if m.contains("expired"))
        );
        let a = br#"{"custom_id":"d","result":{"type":"succeeded","message":{"content":[{"type":"text","text":"yo"}],"usage":{"input_tokens":2,"output_tokens":1}}}}"#;
        assert!(matches!(parse_result(a).unwrap().1, LineResult::Answer(x) if x.text == "yo"));
        let e = br#"{"custom_id":"e","result":{"type":"errored","error":{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}}}"#;
        assert_eq!(parse_result(e).unwrap().1, LineResult::Failed("bad".into()));
        assert!(parse_result(b"{\"custom_id\": ").is_err());
        assert!(parse_result(br#"{"response":{}}"#).is_err());
    }
}
