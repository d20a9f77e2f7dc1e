//! The `[llm]` and `[agent]` sections: which backend and model runs each LLM stage, batch mode,
//! and the serve-phase agent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::ConfigError;
use super::endpoint::{Limits, check_limits, need};

/// The LLM used for cards, summaries, labels, repartition and tags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmConfig {
    pub backend: LlmBackendKind,
    /// API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`.
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// Name of the environment variable that holds the API key (never the key itself).
    pub api_key_env: Option<String>,
    /// Upper bound on output tokens per call.
    pub max_output_tokens: u32,
    /// Extra request fields sent verbatim (e.g. `temperature`); only what is set is sent.
    pub params: BTreeMap<String, toml::Value>,
    /// Prices in currency units per million tokens; when set, cost is reported and estimated.
    pub price_input_per_mtok: Option<f64>,
    pub price_output_per_mtok: Option<f64>,
    pub limits: Limits,
    /// `interactive` (one HTTP call per request) or `batch` (the provider's batch API, at its
    /// discount, one batch per dependent step); `c2s build --batch` overrides it once.
    #[serde(skip_serializing_if = "is_default")]
    pub mode: LlmMode,
    /// How batches are sized, polled and priced.
    #[serde(skip_serializing_if = "is_default")]
    pub batch: BatchConfig,
    /// Per-stage overrides: `card`, `summary`, `label`, `repartition`, `tags`.
    pub stages: BTreeMap<String, StageOverride>,
    /// Whether JSON stages send their schema as `response_format` (OpenAI-compatible servers).
    #[serde(skip_serializing_if = "is_default")]
    pub structured_output: StructuredOutput,
}

/// `[llm] structured_output`: constrain JSON answers by their schema.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StructuredOutput {
    /// Send the schema to OpenAI-compatible servers; if a server refuses it, go on without
    /// (once per build, with a warning).
    #[default]
    Auto,
    /// Always send it; a refusal is an error.
    JsonSchema,
    /// Never send it: the prompt alone asks for JSON.
    Off,
}

/// Settings left at their default are not serialized, so adding one keeps the config hash of
/// every config that does not set it.
fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// How LLM requests are sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LlmMode {
    /// One HTTP call per request, answered at once.
    #[default]
    Interactive,
    /// Requests gathered into provider batches (OpenAI Batch API, Anthropic Message Batches).
    Batch,
}

/// `[llm.batch]`: batch sizes, polling and price.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BatchConfig {
    /// Seconds between status polls while a build waits for a batch.
    pub poll_s: f64,
    /// Requests per batch; 0 = the provider's limit (OpenAI 50,000, Anthropic 100,000).
    pub max_requests: usize,
    /// Bytes per batch input; 0 = the provider's limit (OpenAI 200 MB, Anthropic 256 MB).
    pub max_bytes: u64,
    /// The batch price discount (0.5 = half the interactive price).
    pub discount: f64,
    /// Batches one request may fail in before the build stops and asks for
    /// `--finish-interactive`.
    pub max_attempts: u32,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            poll_s: 30.0,
            max_requests: 0,
            max_bytes: 0,
            discount: 0.5,
            max_attempts: 3,
        }
    }
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            backend: LlmBackendKind::Extractive,
            base_url: None,
            model: None,
            api_key_env: None,
            max_output_tokens: 512,
            params: BTreeMap::new(),
            price_input_per_mtok: None,
            price_output_per_mtok: None,
            limits: Limits::default(),
            mode: LlmMode::Interactive,
            batch: BatchConfig::default(),
            stages: BTreeMap::new(),
            structured_output: StructuredOutput::Auto,
        }
    }
}

/// The settings one stage runs with: `[llm]` overlaid with `[llm.stages.<stage>]`.
#[derive(Debug, Clone, PartialEq)]
pub struct StageSettings {
    pub model: String,
    pub max_output_tokens: u32,
    pub params: BTreeMap<String, toml::Value>,
    pub price_input_per_mtok: Option<f64>,
    pub price_output_per_mtok: Option<f64>,
    /// Interactive calls or batches.
    pub mode: LlmMode,
}

impl StageSettings {
    /// The cost of a call's tokens, when a price is set.
    pub fn cost(&self, input_tokens: u64, output_tokens: u64) -> Option<f64> {
        let (pi, po) = (self.price_input_per_mtok, self.price_output_per_mtok);
        (pi.is_some() || po.is_some()).then(|| {
            input_tokens as f64 * pi.unwrap_or(0.0) / 1e6
                + output_tokens as f64 * po.unwrap_or(0.0) / 1e6
        })
    }
}

impl LlmConfig {
    /// The settings of one stage (`card`, …, `agent`).
    pub fn stage(&self, stage: &str) -> StageSettings {
        let o = self.stages.get(stage).cloned().unwrap_or_default();
        let mut params = self.params.clone();
        params.extend(o.params);
        StageSettings {
            model: o.model.or_else(|| self.model.clone()).unwrap_or_default(),
            max_output_tokens: o.max_output_tokens.unwrap_or(self.max_output_tokens),
            params,
            price_input_per_mtok: o.price_input_per_mtok.or(self.price_input_per_mtok),
            price_output_per_mtok: o.price_output_per_mtok.or(self.price_output_per_mtok),
            mode: o.mode.unwrap_or(self.mode),
        }
    }

    /// Whether any build stage runs in batch mode.
    pub fn any_batch(&self) -> bool {
        LLM_STAGES
            .iter()
            .any(|s| self.stage(s).mode == LlmMode::Batch)
    }
}

/// What one stage changes from `[llm]`: a cheaper model for cards, say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StageOverride {
    pub model: Option<String>,
    pub max_output_tokens: Option<u32>,
    pub params: BTreeMap<String, toml::Value>,
    pub price_input_per_mtok: Option<f64>,
    pub price_output_per_mtok: Option<f64>,
    /// This stage's mode; unset, `[llm] mode` (or `--batch`) applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<LlmMode>,
}

/// The LLM stages of a build (each takes overrides; so does `agent`, the serve phase).
pub const LLM_STAGES: [&str; 5] = ["card", "summary", "label", "repartition", "tags"];

/// `[agent]`: the serve-phase agent of `c2s ask` and `c2s eval --methods agent`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentConfig {
    /// Model calls per question before the agent must stop.
    pub max_turns: usize,
    /// How the model acts: native tool calls, the JSON action protocol, `guided` (c2s walks
    /// the tree and the model chooses from menus), or `auto` (guided for a small model on a
    /// local OpenAI-compatible server; else tool calls first, then the JSON protocol from the
    /// first reply that makes none).
    #[serde(skip_serializing_if = "is_default")]
    pub protocol: AgentProtocol,
    /// The tools the agent may use (all five by default).
    #[serde(skip_serializing_if = "all_tools")]
    pub tools: Vec<String>,
    /// The model's context in tokens: when set, tool results are cut and the oldest ones
    /// elided so a request stays within it (estimated at 4 characters per token). 0: no limit.
    #[serde(skip_serializing_if = "is_default")]
    pub context_tokens: usize,
    /// How the final answer is written: in the browsing conversation (`inline`), or from the
    /// documents the agent chose, in a prompt of their own (`compose`); `auto`: compose for
    /// the JSON action protocol, inline for native tool calls.
    #[serde(skip_serializing_if = "is_default")]
    pub answer: AgentAnswerMode,
    /// Tokens of the outline of the tree that the agent starts from (the skills, then whole
    /// levels of groups and documents while they fit); unset: half of `context_tokens`,
    /// or 4,000 without a context limit. 0 shows the skills alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outline_tokens: Option<usize>,
    /// The agent's own endpoint, when it differs from `[llm]` (e.g. build with the offline
    /// backend, serve with a model). Unset fields come from `[llm]`.
    pub backend: Option<LlmBackendKind>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_turns: 20,
            protocol: AgentProtocol::Auto,
            tools: AGENT_TOOLS.iter().map(|t| t.to_string()).collect(),
            context_tokens: 0,
            answer: AgentAnswerMode::Auto,
            outline_tokens: None,
            backend: None,
            base_url: None,
            model: None,
            api_key_env: None,
        }
    }
}

fn all_tools(tools: &[String]) -> bool {
    tools.iter().map(String::as_str).eq(AGENT_TOOLS)
}

/// Every tool the agent knows.
pub const AGENT_TOOLS: [&str; 5] = ["ls", "cat", "grep", "search", "get_document"];

/// `[agent] protocol`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentProtocol {
    #[default]
    Auto,
    Tools,
    Json,
    Guided,
}

/// `[agent] answer`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentAnswerMode {
    #[default]
    Auto,
    Inline,
    Compose,
}

impl AgentConfig {
    /// Whether questions are answered by the guided walk: `protocol = "guided"`, or `auto` with
    /// a small model ([`small_model`]) on a local OpenAI-compatible server.
    pub fn guided(&self, llm: &LlmConfig) -> bool {
        match self.protocol {
            AgentProtocol::Guided => true,
            AgentProtocol::Auto => {
                llm.backend == LlmBackendKind::Openai
                    && llm.base_url.as_deref().is_some_and(local_url)
                    && llm.model.as_deref().is_some_and(small_model)
            }
            _ => false,
        }
    }

    /// Characters of the outline the agent starts from.
    pub fn outline_chars(&self) -> usize {
        let tokens = self.outline_tokens.unwrap_or(match self.context_tokens {
            0 => 4000,
            t => t / 2,
        });
        tokens * 4
    }

    /// The `[llm]` settings the agent runs with: `[llm]` overlaid with this section.
    pub fn llm(&self, llm: &LlmConfig) -> LlmConfig {
        overlay(
            llm,
            self.backend,
            &self.base_url,
            &self.model,
            &self.api_key_env,
        )
    }
}

/// `[judge]`: the LLM judge of `c2s eval --judge`; unset fields come from `[agent]`, then `[llm]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JudgeConfig {
    pub backend: Option<LlmBackendKind>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
}

impl JudgeConfig {
    /// The settings the judge runs with: `[llm]` overlaid with `[agent]`, then this section.
    pub fn llm(&self, agent: &AgentConfig, llm: &LlmConfig) -> LlmConfig {
        let base = agent.llm(llm);
        overlay(
            &base,
            self.backend,
            &self.base_url,
            &self.model,
            &self.api_key_env,
        )
    }
}

/// `llm` with an endpoint's set fields over it.
fn overlay(
    llm: &LlmConfig,
    backend: Option<LlmBackendKind>,
    base_url: &Option<String>,
    model: &Option<String>,
    api_key_env: &Option<String>,
) -> LlmConfig {
    let mut c = llm.clone();
    if let Some(b) = backend {
        c.backend = b;
    }
    for (dst, src) in [
        (&mut c.base_url, base_url),
        (&mut c.model, model),
        (&mut c.api_key_env, api_key_env),
    ] {
        if src.is_some() {
            dst.clone_from(src);
        }
    }
    c
}

/// Checks the `[agent]` section.
pub(super) fn validate_agent(a: &AgentConfig) -> Result<(), ConfigError> {
    if a.max_turns == 0 {
        return Err(ConfigError::invalid(
            "agent.max_turns",
            "must be at least 1",
        ));
    }
    if a.tools.is_empty() {
        return Err(ConfigError::invalid(
            "agent.tools",
            &format!("must name at least one of {}", AGENT_TOOLS.join(", ")),
        ));
    }
    if let Some(bad) = a.tools.iter().find(|t| !AGENT_TOOLS.contains(&t.as_str())) {
        return Err(ConfigError::invalid(
            "agent.tools",
            &format!("`{bad}` is not a tool; use {}", AGENT_TOOLS.join(", ")),
        ));
    }
    if a.context_tokens > 0 && a.context_tokens < 2048 {
        return Err(ConfigError::invalid(
            "agent.context_tokens",
            "must be 0 (no limit) or at least 2048",
        ));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LlmBackendKind {
    /// Offline and deterministic: extractive cards, summaries, labels and tags.
    Extractive,
    /// Any OpenAI-compatible `/v1/chat/completions` server.
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
}

impl LlmBackendKind {
    /// The name used in the config and in model ids.
    pub fn name(self) -> &'static str {
        match self {
            LlmBackendKind::Extractive => "extractive",
            LlmBackendKind::Openai => "openai",
            LlmBackendKind::Anthropic => "anthropic",
        }
    }
}

/// Checks the `[llm]` section.
pub(super) fn validate_llm(llm: &LlmConfig) -> Result<(), ConfigError> {
    let bad = |f: &str, m: &str| Err(ConfigError::invalid(f, m));
    check_limits("llm.limits", &llm.limits)?;
    for name in llm.stages.keys() {
        if !LLM_STAGES.contains(&name.as_str()) && name != "agent" {
            return bad(
                &format!("llm.stages.{name}"),
                &format!(
                    "is not a stage; use one of {}, agent",
                    LLM_STAGES.join(", ")
                ),
            );
        }
    }
    let b = &llm.batch;
    if !(b.poll_s.is_finite() && b.poll_s > 0.0) {
        return bad("llm.batch.poll_s", "must be a positive number of seconds");
    }
    if !(0.0..1.0).contains(&b.discount) {
        return bad(
            "llm.batch.discount",
            "must be at least 0 and below 1 (0.5 = half price)",
        );
    }
    if b.max_attempts < 1 {
        return bad("llm.batch.max_attempts", "must be at least 1");
    }
    if llm.backend == LlmBackendKind::Extractive && llm.any_batch() {
        return bad(
            "llm.mode",
            "\"batch\" needs a networked backend: set llm.backend = \"openai\" or \"anthropic\"",
        );
    }
    if llm.max_output_tokens < 16 {
        return bad("llm.max_output_tokens", "must be at least 16");
    }
    match llm.backend {
        LlmBackendKind::Extractive => {}
        LlmBackendKind::Openai => {
            need(&llm.base_url, "llm.base_url", "https://api.openai.com/v1")?;
            need(&llm.model, "llm.model", "gpt-4o-mini")?;
        }
        LlmBackendKind::Anthropic => {
            need(&llm.model, "llm.model", "claude-haiku-4-5")?;
            // Anthropic's own API needs a key; a proxy or test server at base_url may not.
            if llm.base_url.is_none() {
                need(&llm.api_key_env, "llm.api_key_env", "ANTHROPIC_API_KEY")?;
            }
        }
    }
    Ok(())
}

/// Whether a URL names this machine (`localhost`, `127.x`, `[::1]`).
fn local_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |x| x.1);
    let host = rest.split(['/', '?']).next().unwrap_or("");
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    host == "localhost" || host == "::1" || host.starts_with("127.")
}

/// Whether a model's name gives a size of 4 billion parameters or fewer (`…-0.5b-…`, `1.5B`,
/// `phi3:3.8b`), the size at which free-form tool use fails and menus help.
pub fn small_model(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let b = lower.as_bytes();
    (0..b.len()).any(|i| {
        if b[i] != b'b' || i == 0 || !b[i - 1].is_ascii_digit() {
            return false;
        }
        // The number before the `b`, and what precedes it: a separator or the start.
        let start = (0..i)
            .rev()
            .find(|&j| !(b[j].is_ascii_digit() || b[j] == b'.'))
            .map_or(0, |j| j + 1);
        let sep = start == 0 || matches!(b[start - 1], b'-' | b'_' | b':' | b' ' | b'/');
        let after = b.get(i + 1).is_none_or(|c| !c.is_ascii_alphabetic());
        sep && after
            && lower[start..i]
                .parse::<f64>()
                .is_ok_and(|n| n > 0.0 && n <= 4.0)
    })
}

#[cfg(test)]
mod guided_tests {
    use super::*;

    #[test]
    fn small_local_models_are_guided() {
        for small in [
            "qwen2.5-coder-0.5b-instruct-q4_k_m",
            "Qwen2.5-1.5B-Instruct",
            "phi3:3.8b",
            "llama3.2:1b",
        ] {
            assert!(small_model(small), "{small}");
        }
        for large in [
            "qwen2.5-coder-7b-instruct",
            "gpt-4o-mini",
            "llama3.1:70b",
            "qwen2.5",
        ] {
            assert!(!small_model(large), "{large}");
        }
        assert!(local_url("http://127.0.0.1:8080/v1"));
        assert!(local_url("http://localhost/v1") && local_url("http://[::1]:8080/v1"));
        assert!(!local_url("https://api.openai.com/v1"));
        let mut llm = LlmConfig {
            backend: LlmBackendKind::Openai,
            base_url: Some("http://127.0.0.1:8080/v1".into()),
            model: Some("qwen2.5-coder-0.5b-instruct-q4_k_m".into()),
            ..LlmConfig::default()
        };
        let mut agent = AgentConfig::default();
        assert!(agent.guided(&llm));
        agent.protocol = AgentProtocol::Json;
        assert!(!agent.guided(&llm), "a protocol set by hand wins");
        agent.protocol = AgentProtocol::Auto;
        llm.base_url = Some("https://api.example.com/v1".into());
        assert!(
            !agent.guided(&llm),
            "a remote server is not guided by default"
        );
    }
}
