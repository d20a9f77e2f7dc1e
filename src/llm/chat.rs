//! One chat endpoint for the serve and eval phases (the agent, the `rag` baseline, the judge):
//! requests built by the caller, sent through the shared HTTP client, and, when a memo is
//! given, every answer stored under the hash of its request with the seconds it took, so a
//! stopped evaluation replays what it had and continues where it stopped.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use super::SetupError;
use super::wire;
use crate::config::{LlmBackendKind, LlmConfig, StageSettings};
use crate::db::cache::{KeyParts, Memo};
use crate::http::{Client, HttpError};

/// Version of the stored answers' layout.
const REPLAY_VERSION: u32 = 1;

/// A chat endpoint and the settings of one stage (`agent`, `rag`, `judge`).
pub struct Chat {
    pub kind: LlmBackendKind,
    client: Client,
    pub url: String,
    /// Model, output budget, params and prices.
    pub settings: StageSettings,
    memo: Option<Arc<Memo>>,
}

/// One answer: the API's response body, and the seconds the call took when it was made (for a
/// replayed answer, the seconds of the original call).
pub struct Sent {
    pub body: Value,
    pub seconds: f64,
    pub replayed: bool,
}

impl Chat {
    /// The endpoint of `cfg` with the settings of `stage`.
    pub fn new(cfg: &LlmConfig, stage: &str) -> Result<Chat, SetupError> {
        let base = wire::base_url(cfg.backend, cfg.base_url.as_deref())?;
        Ok(Chat {
            kind: cfg.backend,
            client: Client::new(&cfg.limits, cfg.api_key_env.as_deref())?,
            url: wire::endpoint(cfg.backend, &base),
            settings: cfg.stage(stage),
            memo: None,
        })
    }

    /// Answers are kept in (and replayed from) `memo`.
    pub fn with_memo(mut self, memo: Arc<Memo>) -> Chat {
        self.memo = Some(memo);
        self
    }

    /// The request fields every call shares: model, output budget, then the configured params.
    pub fn base_body(&self) -> Value {
        json!({"model": self.settings.model, "max_tokens": self.settings.max_output_tokens})
    }

    /// A one-turn request: the system prompt and one user message, in the API's shape (the
    /// configured params not yet added).
    pub fn one_turn(&self, system: &str, user: &str) -> Value {
        let mut body = self.base_body();
        match self.kind {
            LlmBackendKind::Anthropic => {
                body["system"] = json!(system);
                body["messages"] = json!([{"role": "user", "content": user}]);
            }
            _ => {
                body["messages"] = json!([{"role": "system", "content": system}, {"role": "user", "content": user}]);
            }
        }
        body
    }

    /// Adds the configured params (sent verbatim, last, so they win).
    pub fn with_params(&self, mut body: Value) -> Value {
        for (k, v) in &self.settings.params {
            body[k] = serde_json::to_value(v).unwrap_or(Value::Null);
        }
        body
    }

    /// Sends a request body (or replays the stored answer to the same body).
    pub fn send(&self, body: &Value) -> Result<Sent, HttpError> {
        let key = self.memo.as_ref().map(|_| self.key(body));
        if let (Some(memo), Some(key)) = (&self.memo, key)
            && let Ok(found) = memo.get_many(&[key])
            && let Some(stored) = found.get(&key)
            && let Ok(v) = serde_json::from_slice::<Value>(stored)
            && v["body"].is_object()
        {
            return Ok(Sent {
                body: v["body"].clone(),
                seconds: v["seconds"].as_f64().unwrap_or(0.0),
                replayed: true,
            });
        }
        let headers = wire::headers(self.kind, self.client.key());
        let est = (body.to_string().len() / 4) as u64 + self.settings.max_output_tokens as u64;
        let clock = Instant::now();
        let a = self.client.post_json(&self.url, &headers, body, est)?;
        let seconds = clock.elapsed().as_secs_f64();
        if let (Some(memo), Some(key)) = (&self.memo, key) {
            let stored = json!({"body": a.body, "seconds": seconds});
            // A failed write loses only the replay, never the answer.
            let _ = memo.put_many("replay", &[(key, stored.to_string().into_bytes())]);
        }
        Ok(Sent {
            body: a.body,
            seconds,
            replayed: false,
        })
    }

    /// The memo key of a request: the endpoint and the whole body (model, messages, params).
    fn key(&self, body: &Value) -> crate::db::cache::Key {
        KeyParts {
            stage: "replay".into(),
            stage_version: REPLAY_VERSION,
            prompt: String::new(),
            model: format!("{}:{}", self.kind.name(), self.url),
            inputs: vec![crate::hash::content_hash(body.to_string().as_bytes())],
        }
        .key()
    }

    /// The cost of a call's tokens, when prices are set.
    pub fn cost(&self, input_tokens: u64, output_tokens: u64) -> Option<f64> {
        self.settings.cost(input_tokens, output_tokens)
    }
}
