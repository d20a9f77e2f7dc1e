//! The networked LLM backends (`openai`, `anthropic`): the method's prompts over the shared HTTP
//! client, with per-stage models, JSON schemas where the server takes them, answers checked
//! before use with a stricter second ask, and per-stage token and answer accounting.

mod stages;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::batch::Batcher;
use super::check::Parsed;
use super::prompts::Prompt;
use super::wire::{self, ChatRequest};
use super::{LlmError, SetupError, schema};
use crate::config::{LlmBackendKind, LlmConfig, StructuredOutput};
use crate::http::{Client, HttpError};

/// Characters of a document shown to the card prompt.
pub const CARD_CHARS: usize = 8000;

/// Tokens, cost and answers of one stage.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Usage {
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of `calls`, answered through a batch (priced at the batch discount).
    #[serde(skip_serializing_if = "is_zero")]
    pub batch_calls: u64,
    /// In the configured price unit, when prices are set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// How the items computed by this build got their result.
    pub answers: Answers,
}

/// How each computed item got its result: the first answer as written (`parsed`), the first
/// answer after a repair (`repaired`: JSON taken out of a fence, an unsupported sentence or
/// label word dropped, …), the stricter second ask (`retried`), or, both unusable, the
/// extractive result (`fallback`, with a warning naming the item); and how many answers were
/// rejected on the way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Answers {
    pub parsed: u64,
    pub repaired: u64,
    pub retried: u64,
    pub fallback: u64,
    /// Answers the checks rejected (a retried item had one, a fallback two).
    pub rejected: u64,
}

impl Answers {
    pub fn total(&self) -> u64 {
        self.parsed + self.repaired + self.retried + self.fallback
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// An OpenAI-compatible or Anthropic chat model.
pub struct Remote {
    kind: LlmBackendKind,
    client: Client,
    url: String,
    cfg: LlmConfig,
    usage: Mutex<BTreeMap<String, Usage>>,
    /// In a batched build: answers from batches, and where new requests are queued.
    batch: Option<Arc<Batcher>>,
    /// The server refused `response_format` (with `structured_output = "auto"`).
    schema_refused: AtomicBool,
    /// Notes for the build report (a refused schema, say).
    notes: Mutex<Vec<String>>,
}

/// How one answer ended up, for the counts.
enum Outcome {
    Parsed,
    Repaired,
    Retried,
    Fallback,
}

impl Remote {
    pub fn new(cfg: &LlmConfig) -> Result<Remote, SetupError> {
        let base = wire::base_url(cfg.backend, cfg.base_url.as_deref())?;
        let client = Client::new(&cfg.limits, cfg.api_key_env.as_deref())?;
        Ok(Remote {
            kind: cfg.backend,
            client,
            url: wire::endpoint(cfg.backend, &base),
            cfg: cfg.clone(),
            usage: Mutex::new(BTreeMap::new()),
            batch: None,
            schema_refused: AtomicBool::new(false),
            notes: Mutex::new(Vec::new()),
        })
    }

    /// Answers from (and requests queued for) batches, for stages whose answers it has or whose
    /// mode is `batch`.
    pub fn with_batcher(mut self, batcher: Arc<Batcher>) -> Remote {
        self.batch = Some(batcher);
        self
    }

    /// The schema to send with a prompt's requests, if any.
    fn schema_for(&self, p: &Prompt) -> Option<serde_json::Value> {
        let wanted = match self.cfg.structured_output {
            StructuredOutput::Off => false,
            StructuredOutput::JsonSchema => true,
            StructuredOutput::Auto => !self.schema_refused.load(Ordering::Relaxed),
        };
        (wanted && self.kind == LlmBackendKind::Openai)
            .then(|| schema::of(p.name))
            .flatten()
    }

    /// One chat call; records its tokens under `stage`.
    fn chat(&self, stage: &str, p: &Prompt, user: &str) -> Result<String, LlmError> {
        let s = self.cfg.stage(stage);
        let schema = self.schema_for(p);
        let req = ChatRequest {
            model: &s.model,
            system: p.system,
            user,
            max_tokens: s.max_output_tokens,
            params: &s.params,
            schema: schema.as_ref().map(|v| (p.name, v)),
        };
        let body = wire::body(self.kind, &req);
        if let Some(b) = &self.batch
            && let Some(a) = b.lookup(stage, &body)?
        {
            return Ok(a.text);
        }
        let headers = wire::headers(self.kind, self.client.key());
        let est = ((p.system.len() + user.len()) / 4) as u64 + s.max_output_tokens as u64;
        let answer = match self.client.post_json(&self.url, &headers, &body, est) {
            Ok(a) => a,
            Err(e) if schema.is_some() && self.refuses_schema(&e) => {
                self.schema_refused.store(true, Ordering::Relaxed);
                self.note(format!(
                    "{} refused the JSON schema in `response_format` ({}); the build goes on asking for JSON in the prompt only (set [llm] structured_output = \"off\" to skip the first try)",
                    self.url,
                    first_line(&e.to_string())
                ));
                return self.chat(stage, p, user);
            }
            Err(e) if overflows_context(&e) => {
                return Err(LlmError::Unusable(format!(
                    "the request is longer than the model's context ({}); use a model with a larger context, or start the server with more (scripts/serve-llm.sh --ctx)",
                    first_line(&e.to_string())
                )));
            }
            Err(e) => return Err(LlmError::Backend(e.to_string())),
        };
        let a = wire::answer(self.kind, &answer.body)
            .map_err(|m| LlmError::Backend(format!("{}: {m}", self.url)))?;
        let mut usage = self.usage.lock().unwrap_or_else(|e| e.into_inner());
        let u = usage.entry(stage.to_string()).or_default();
        u.calls += 1;
        u.input_tokens += a.input_tokens;
        u.output_tokens += a.output_tokens;
        if let Some(cost) = s.cost(a.input_tokens, a.output_tokens) {
            u.cost = Some(u.cost.unwrap_or(0.0) + cost);
        }
        Ok(a.text)
    }

    /// Whether an error is a server refusing `response_format` (and `auto` may go on without).
    fn refuses_schema(&self, e: &HttpError) -> bool {
        if self.cfg.structured_output != StructuredOutput::Auto {
            return false;
        }
        schema_refusal(e)
    }

    fn note(&self, text: String) {
        let mut notes = self.notes.lock().unwrap_or_else(|e| e.into_inner());
        if !notes.contains(&text) {
            notes.push(text);
        }
    }

    fn count(&self, stage: &str, outcome: Outcome) {
        let mut usage = self.usage.lock().unwrap_or_else(|e| e.into_inner());
        let a = &mut usage.entry(stage.to_string()).or_default().answers;
        match outcome {
            Outcome::Parsed => a.parsed += 1,
            Outcome::Repaired => a.repaired += 1,
            Outcome::Retried => {
                a.retried += 1;
                a.rejected += 1;
            }
            Outcome::Fallback => {
                a.fallback += 1;
                a.rejected += 2;
            }
        }
    }

    /// Asks, checks, and on an unusable answer asks once more with a stricter instruction.
    fn ask<T>(
        &self,
        stage: &str,
        p: &Prompt,
        user: &str,
        strict: &str,
        parse: impl Fn(&str) -> Result<Parsed<T>, String>,
    ) -> Result<T, LlmError> {
        let first = match self.chat(stage, p, user) {
            Err(LlmError::Unusable(why)) => {
                self.count(stage, Outcome::Fallback);
                return Err(LlmError::Unusable(why));
            }
            other => other?,
        };
        let why = match parse(&first) {
            Ok(v) => {
                let outcome = if v.repairs.is_empty() {
                    Outcome::Parsed
                } else {
                    Outcome::Repaired
                };
                self.count(stage, outcome);
                return Ok(v.value);
            }
            Err(why) => why,
        };
        let retry = format!("{user}\n\nYour previous answer could not be used ({why}). {strict}");
        let second = match self.chat(stage, p, &retry) {
            Err(LlmError::Unusable(why2)) => {
                self.count(stage, Outcome::Fallback);
                return Err(LlmError::Unusable(format!(
                    "two answers were unusable: {why}; then {why2}"
                )));
            }
            other => other?,
        };
        match parse(&second) {
            Ok(v) => {
                self.count(stage, Outcome::Retried);
                Ok(v.value)
            }
            Err(why2) => {
                self.count(stage, Outcome::Fallback);
                Err(LlmError::Unusable(format!(
                    "two answers were unusable: {why}; then {why2}"
                )))
            }
        }
    }
}

/// The lowercased message of a request the server rejected with one of `statuses`.
fn rejection(e: &HttpError, statuses: &[u16]) -> Option<String> {
    match e {
        HttpError::Rejected {
            status, message, ..
        } if statuses.contains(status) => Some(message.to_lowercase()),
        _ => None,
    }
}

/// Whether a server refused a request's `response_format` (its JSON schema or grammar).
pub fn schema_refusal(e: &HttpError) -> bool {
    rejection(e, &[400, 415, 422, 501]).is_some_and(|m| {
        [
            "response_format",
            "json_schema",
            "schema",
            "grammar",
            "structured",
        ]
        .iter()
        .any(|w| m.contains(w))
    })
}

/// Whether a server refused a request for being longer than the model's context (llama.cpp:
/// "exceeds the available context size"; OpenAI: "maximum context length"; vLLM: "longer than
/// the maximum model length").
fn overflows_context(e: &HttpError) -> bool {
    let Some(m) = rejection(e, &[400, 413, 422]) else {
        return false;
    };
    (m.contains("context") || m.contains("model length") || m.contains("too many tokens"))
        && (m.contains("exceed")
            || m.contains("maximum")
            || m.contains("longer")
            || m.contains("too long")
            || m.contains("too many"))
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}
