//! What to do with one HTTP attempt: done, retry (after how long), or fail with the server's word.

use std::time::Duration;

use reqwest::header::HeaderMap;

/// The verdict on one attempt.
#[derive(Debug)]
pub enum Outcome {
    Done(serde_json::Value),
    /// A 2xx body taken as bytes (a file download), not parsed.
    Raw(Vec<u8>),
    Retry {
        reason: String,
        after: Option<Duration>,
    },
    Fatal {
        status: u16,
        message: String,
    },
}

/// Classifies a complete response. 429, 529, 408 and 5xx retry; so does a 2xx whose body is
/// not JSON (a truncated or garbled reply). Other 4xx fail at once.
/// With `json` false a 2xx body is taken as it is ([`Outcome::Raw`]).
pub fn classify_as(status: u16, after: Option<Duration>, body: &[u8], json: bool) -> Outcome {
    if (200..300).contains(&status) && !json {
        return Outcome::Raw(body.to_vec());
    }
    if (200..300).contains(&status) {
        return match serde_json::from_slice(body) {
            Ok(v) => Outcome::Done(v),
            Err(e) => Outcome::Retry {
                reason: format!(
                    "HTTP {status} with a body that is not JSON ({e}; {} bytes)",
                    body.len()
                ),
                after: None,
            },
        };
    }
    let message = server_message(body);
    if status == 429 || status == 529 || status == 408 || status >= 500 {
        return Outcome::Retry {
            reason: format!("HTTP {status}: {message}"),
            after,
        };
    }
    Outcome::Fatal { status, message }
}

/// A dropped connection, a reset, a timeout or a body cut short: all worth another try.
pub fn transport_failure(e: &reqwest::Error) -> Outcome {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_body() || e.is_decode() {
        "the response body was cut short"
    } else {
        "the connection failed"
    };
    Outcome::Retry {
        reason: format!("{kind}: {}", error_chain(e)),
        after: None,
    }
}

/// `retry-after-ms` (milliseconds) or `Retry-After` (seconds); HTTP dates are ignored.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok();
    if let Some(ms) = get("retry-after-ms").filter(|v| v.is_finite() && *v >= 0.0) {
        return Some(Duration::from_secs_f64(ms.min(600_000.0) / 1000.0));
    }
    get("retry-after")
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|s| Duration::from_secs_f64(s.min(600.0)))
}

/// What to fix for a status that is not retried.
pub fn help_for(status: u16) -> &'static str {
    match status {
        400 => {
            "the request was malformed for this server: check the model name and llm.params / embed.openai.params (servers reject fields they do not know)"
        }
        401 => "the API key was refused: check the variable named by api_key_env",
        403 => "the key lacks access to this model or endpoint: check the account's permissions",
        404 => {
            "no such endpoint or model: check base_url (it should end in /v1 for OpenAI-compatible servers) and the model name"
        }
        413 => {
            "the request is too large: lower tree.max_doc_chars, or embed.openai.batch_size / max_batch_chars"
        }
        _ => "fix the request settings named above and build again",
    }
}

/// The `error.message` of an OpenAI or Anthropic error body, else the body's start.
fn server_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) {
        let m = v
            .pointer("/error/message")
            .or_else(|| v.pointer("/message"))
            .or_else(|| v.get("error"))
            .and_then(|m| m.as_str());
        if let Some(m) = m {
            return m.chars().take(500).collect();
        }
    }
    let t: String = text.trim().chars().take(300).collect();
    if t.is_empty() {
        "(empty body)".into()
    } else {
        t
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(status: u16, after: Option<Duration>, body: &[u8]) -> Outcome {
        classify_as(status, after, body, true)
    }

    #[test]
    fn statuses_are_classified() {
        assert!(matches!(
            classify(200, None, b"{\"a\":1}"),
            Outcome::Done(_)
        ));
        assert!(matches!(
            classify(200, None, b"{\"a\":"),
            Outcome::Retry { .. }
        ));
        for s in [429, 529, 500, 502, 503, 408] {
            assert!(
                matches!(classify(s, None, b""), Outcome::Retry { .. }),
                "{s}"
            );
        }
        for s in [400, 401, 403, 404, 413, 422] {
            assert!(
                matches!(classify(s, None, b""), Outcome::Fatal { .. }),
                "{s}"
            );
        }
        match classify(401, None, br#"{"error":{"message":"bad key"}}"#) {
            Outcome::Fatal { message, .. } => assert_eq!(message, "bad key"),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn retry_after_headers() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut d = HeaderMap::new();
        d.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&d), None);
    }
}
