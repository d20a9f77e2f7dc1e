//! The networked LLM backends (`openai`, `anthropic`): the method's prompts over the shared HTTP
//! client, with per-stage models, a stricter second ask for unusable answers, and token accounting.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::batch::Batcher;
use super::prompts::{Prompt, fill, prompt, stage_prompt_id};
use super::wire::{self, ChatRequest};
use super::{
    Card, CardInput, Change, ClusterInput, Llm, LlmError, RepartitionInput, SetupError, Tags, parse,
};
use crate::config::{LlmBackendKind, LlmConfig};
use crate::http::Client;
use crate::text::clip_chars;

/// Characters of a document shown to the card prompt.
pub const CARD_CHARS: usize = 8000;

/// Tokens and cost of one stage.
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
        })
    }

    /// Answers from (and requests queued for) batches, for stages whose answers it has or whose
    /// mode is `batch`.
    pub fn with_batcher(mut self, batcher: Arc<Batcher>) -> Remote {
        self.batch = Some(batcher);
        self
    }

    /// One chat call; records its tokens under `stage`.
    fn chat(&self, stage: &str, p: &Prompt, user: &str) -> Result<String, LlmError> {
        let s = self.cfg.stage(stage);
        let req = ChatRequest {
            model: &s.model,
            system: p.system,
            user,
            max_tokens: s.max_output_tokens,
            params: &s.params,
        };
        let body = wire::body(self.kind, &req);
        if let Some(b) = &self.batch
            && let Some(a) = b.lookup(stage, &body)?
        {
            return Ok(a.text);
        }
        let headers = wire::headers(self.kind, self.client.key());
        let est = ((p.system.len() + user.len()) / 4) as u64 + s.max_output_tokens as u64;
        let answer = self
            .client
            .post_json(&self.url, &headers, &body, est)
            .map_err(|e| LlmError::Backend(e.to_string()))?;
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

    /// Asks, parses, and on an unusable answer asks once more with a stricter instruction.
    fn ask<T>(
        &self,
        stage: &str,
        p: &Prompt,
        user: &str,
        strict: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<T, LlmError> {
        let first = self.chat(stage, p, user)?;
        let why = match parse(&first) {
            Ok(v) => return Ok(v),
            Err(why) => why,
        };
        let retry = format!("{user}\n\nYour previous answer could not be used ({why}). {strict}");
        let second = self.chat(stage, p, &retry)?;
        parse(&second).map_err(|why2| {
            LlmError::Unusable(format!("two answers were unusable: {why}; then {why2}"))
        })
    }
}

/// `- title: text` lines.
fn item_lines(input: &ClusterInput) -> String {
    input
        .items
        .iter()
        .map(|i| format!("- {}: {}", i.title, i.text))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Llm for Remote {
    fn model_id(&self) -> String {
        let kind = self.kind.name();
        format!("{kind}:{}", self.cfg.model.as_deref().unwrap_or_default())
    }

    fn stage_model(&self, stage: &str) -> String {
        let s = self.cfg.stage(stage);
        let params = serde_json::to_string(&s.params).unwrap_or_default();
        let kind = self.kind.name();
        format!("{kind}:{}:max{}:{params}", s.model, s.max_output_tokens)
    }

    fn prompt_version(&self, stage: &str) -> String {
        stage_prompt_id(stage)
    }

    fn card(&self, input: &CardInput) -> Result<Card, LlmError> {
        let p = prompt("card");
        let user = fill(p.user, &[("document", clip_chars(input.text, CARD_CHARS))]);
        let strict = "Reply with only a JSON object with a non-empty string `title`, a non-empty string `one_line` and a list of strings `phrases`.";
        self.ask("card", &p, &user, strict, parse::card)
    }

    fn summarize(&self, input: &ClusterInput) -> Result<String, LlmError> {
        let p = prompt(if input.leaf {
            "summary_leaf"
        } else {
            "summary_higher"
        });
        let user = fill(p.user, &[("items", &item_lines(input))]);
        let strict = "Reply with only the summary: 2 to 4 plain sentences.";
        self.ask("summary", &p, &user, strict, |t| {
            parse::summary(t).ok_or_else(|| "the summary is empty".to_string())
        })
    }

    fn label(&self, input: &ClusterInput, summary: &str) -> Result<String, LlmError> {
        let p = prompt("label");
        let titles: Vec<String> = input
            .items
            .iter()
            .map(|i| format!("- {}", i.title))
            .collect();
        let user = fill(
            p.user,
            &[("summary", summary), ("titles", &titles.join("\n"))],
        );
        let strict = "Reply with only 2 to 5 lowercase words.";
        self.ask("label", &p, &user, strict, |t| {
            parse::label(t).ok_or_else(|| "the label is empty".to_string())
        })
    }

    fn tags(&self, input: &ClusterInput) -> Result<Tags, LlmError> {
        let p = prompt("tags");
        let user = fill(p.user, &[("items", &item_lines(input))]);
        let strict =
            "Reply with only a JSON object with lists of strings `entities` and `doc_types`.";
        self.ask("tags", &p, &user, strict, parse::tags)
    }

    fn repartition(&self, input: &RepartitionInput) -> Result<Option<Vec<Change>>, LlmError> {
        let p = prompt("repartition");
        let user = fill(p.user, &[("groups", &input.render())]);
        let strict = "Reply with only a JSON object {\"changes\": [...]} using ops move and merge.";
        self.ask("repartition", &p, &user, strict, |t| {
            let changes = parse::changes(t)?;
            input.validate(&changes)?;
            Ok(changes)
        })
        .map(Some)
    }

    fn reviews_partitions(&self) -> bool {
        true
    }

    fn concurrency(&self) -> usize {
        self.client.concurrency()
    }

    fn usage(&self) -> BTreeMap<String, Usage> {
        let mut all = self.usage.lock().map(|u| u.clone()).unwrap_or_default();
        for (stage, b) in self.batch.iter().flat_map(|b| b.usage()) {
            let u = all.entry(stage).or_default();
            u.calls += b.calls;
            u.batch_calls += b.batch_calls;
            u.input_tokens += b.input_tokens;
            u.output_tokens += b.output_tokens;
            if let Some(c) = b.cost {
                u.cost = Some(u.cost.unwrap_or(0.0) + c);
            }
        }
        all
    }
}
