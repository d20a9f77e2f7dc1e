//! The LLM agent of the serve phase: starts from the top-level skills' names and descriptions,
//! browses the tree with the read-only tools (OpenAI function calling or Anthropic tool use),
//! and answers with claims grounded in the documents it fetched.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};

use super::tools::{ToolError, Tools, specs};
use crate::config::{LlmBackendKind, LlmConfig, StageSettings};
use crate::http::{Client, HttpError};
use crate::llm::{SetupError, wire};

/// Why the agent could not start or finish a question.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(
        "the agent needs an LLM: set [llm] backend = \"openai\" or \"anthropic\" (or use --offline)"
    )]
    NoLlm,
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error("cannot open the output: {0}")]
    Output(#[from] ToolError),
    #[error(transparent)]
    Http(#[from] HttpError),
    /// The API answered with something that is not a reply of its protocol.
    #[error("{url}: {message}")]
    Reply { url: String, message: String },
}

/// The system prompt: grounding rule, navigation habits, answer format.
pub const SYSTEM_PROMPT: &str = include_str!("agent_prompt.txt");
const NUDGE: &str = "You stopped without calling a tool or answering. Call a tool to keep navigating, or give your final answer now, citing the documents you fetched.";
const GROUND: &str = "You answered without opening any document. Claims must come from documents you opened (get_document, or cat of a docs/<id>.md file): navigate the skills (cat their SKILL.md), open the relevant documents, then answer again.";

/// One step of the trace.
#[derive(Debug, Clone, Serialize)]
pub struct TraceEntry {
    pub turn: usize,
    /// `model` (a reply), `tool` (a call and its result size), `nudge` or `grounding` (the
    /// model answered before fetching and was asked to fetch).
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_bytes: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// What one question cost and produced.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AgentAnswer {
    pub answer: String,
    /// Fetched documents the answer cites (all fetched ones when it cites none by id).
    pub cited: Vec<String>,
    /// Every document fetched, in order.
    pub fetched: Vec<String>,
    pub turns: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    pub seconds: f64,
    /// `answered`, `ungrounded` (answered without fetching, even when asked to), `budget`
    /// (turns ran out) or `no_answer`.
    pub stopped: String,
    /// Bytes of navigation files and documents the tools returned.
    pub bytes_read: usize,
    pub trace: Vec<TraceEntry>,
}

/// An agent over one compiled output.
pub struct Agent {
    kind: LlmBackendKind,
    client: Client,
    url: String,
    /// Model, output budget, params and prices (`[llm]` with `[llm.stages.agent]`).
    settings: StageSettings,
    max_turns: usize,
    tools: Tools,
    skills: Vec<(String, String)>,
}

impl Agent {
    /// Opens the output and the configured model (`[llm]`, with `[llm.stages.agent]` overrides).
    pub fn new(cfg: &LlmConfig, out: &Path, max_turns: usize) -> Result<Agent, AgentError> {
        if cfg.backend == LlmBackendKind::Extractive {
            return Err(AgentError::NoLlm);
        }
        let base = wire::base_url(cfg.backend, cfg.base_url.as_deref())?;
        let tools = Tools::open(out)?;
        Ok(Agent {
            kind: cfg.backend,
            client: Client::new(&cfg.limits, cfg.api_key_env.as_deref())?,
            url: wire::endpoint(cfg.backend, &base),
            settings: cfg.stage("agent"),
            max_turns: max_turns.max(1),
            skills: top_skills(&tools),
            tools,
        })
    }

    /// The first user message: the question and the skills' names and descriptions only.
    pub fn opening(&self, question: &str) -> String {
        let mut s = format!("Question: {question}\n\nTop-level skills (folders under skills/):\n");
        for (name, desc) in &self.skills {
            s.push_str(&format!("- {name}: {desc}\n"));
        }
        s
    }

    /// Runs the loop for one question.
    pub fn ask(&self, question: &str) -> Result<AgentAnswer, AgentError> {
        let clock = Instant::now();
        let mut out = AgentAnswer::default();
        let mut messages = vec![json!({"role": "user", "content": self.opening(question)})];
        let mut nudged = false;
        let mut grounding_asked = false;
        let mut fetched_set = BTreeSet::new();
        out.stopped = "budget".into();
        for turn in 1..=self.max_turns {
            let reply = self.call(&messages)?;
            out.turns = turn;
            out.input_tokens += reply.input_tokens;
            out.output_tokens += reply.output_tokens;
            messages.push(reply.message.clone());
            out.trace.push(TraceEntry {
                turn,
                kind: "model".into(),
                tool: None,
                args: None,
                result_bytes: None,
                error: None,
                text: (!reply.text.is_empty()).then(|| reply.text.clone()),
                input_tokens: reply.input_tokens,
                output_tokens: reply.output_tokens,
            });
            if reply.calls.is_empty() {
                if !reply.text.trim().is_empty() {
                    // An answer before any fetch breaks the grounding rule: ask once to fetch.
                    if out.fetched.is_empty() && !grounding_asked && turn < self.max_turns {
                        grounding_asked = true;
                        messages.push(json!({"role": "user", "content": GROUND}));
                        out.trace.push(entry(turn, "grounding"));
                        continue;
                    }
                    out.answer = reply.text.trim().to_string();
                    out.stopped = if out.fetched.is_empty() {
                        "ungrounded"
                    } else {
                        "answered"
                    }
                    .into();
                    break;
                }
                if nudged {
                    out.stopped = "no_answer".into();
                    break;
                }
                nudged = true;
                messages.push(json!({"role": "user", "content": NUDGE}));
                out.trace.push(entry(turn, "nudge"));
                continue;
            }
            let mut results = Vec::new();
            for (id, name, args) in &reply.calls {
                let result = self.tools.call(name, args);
                let (text, is_err) = match &result {
                    Ok(t) => (t.clone(), false),
                    Err(e) => (format!("error: {e}"), true),
                };
                // A document is opened by get_document, or by reading its file.
                let opened = match name.as_str() {
                    "get_document" => text
                        .lines()
                        .next()
                        .and_then(|l| l.strip_prefix("id: "))
                        .map(str::to_string),
                    "cat" => args
                        .get("path")
                        .and_then(Value::as_str)
                        .and_then(|p| self.tools.document_of(p)),
                    _ => None,
                };
                if let Some(doc_id) = opened.filter(|_| !is_err)
                    && fetched_set.insert(doc_id.clone())
                {
                    out.fetched.push(doc_id);
                }
                out.bytes_read += text.len();
                let mut e = entry(turn, "tool");
                e.tool = Some(name.clone());
                e.args = Some(args.clone());
                e.result_bytes = Some(text.len());
                e.error = Some(is_err);
                out.trace.push(e);
                results.push((id.clone(), text, is_err));
            }
            self.push_results(&mut messages, results);
        }
        if out.answer.is_empty() && out.stopped == "budget" {
            out.answer = messages
                .iter()
                .rev()
                .find_map(|m| m["content"].as_str().filter(|_| m["role"] == "assistant"))
                .unwrap_or_default()
                .to_string();
        }
        out.cited = cited(&out.answer, &out.fetched);
        out.cost = self.settings.cost(out.input_tokens, out.output_tokens);
        out.seconds = clock.elapsed().as_secs_f64();
        Ok(out)
    }

    /// The request body for the conversation so far (public for tests of its shape).
    pub fn body(&self, messages: &[Value]) -> Value {
        let mut b = match self.kind {
            LlmBackendKind::Anthropic => {
                let mut tools: Vec<Value> = specs()
                    .into_iter()
                    .map(|(n, d, p)| json!({"name": n, "description": d, "input_schema": p}))
                    .collect();
                if let Some(last) = tools.last_mut() {
                    last["cache_control"] = json!({"type": "ephemeral"});
                }
                json!({
                    "model": self.settings.model,
                    "max_tokens": self.settings.max_output_tokens,
                    "system": [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}],
                    "tools": tools,
                    "messages": messages,
                })
            }
            _ => {
                let tools: Vec<Value> = specs()
                    .into_iter()
                    .map(|(n, d, p)| json!({"type": "function", "function": {"name": n, "description": d, "parameters": p}}))
                    .collect();
                let mut all = vec![json!({"role": "system", "content": SYSTEM_PROMPT})];
                all.extend(messages.iter().cloned());
                json!({"model": self.settings.model, "max_tokens": self.settings.max_output_tokens, "tools": tools, "messages": all})
            }
        };
        for (k, v) in &self.settings.params {
            b[k] = serde_json::to_value(v).unwrap_or(Value::Null);
        }
        b
    }

    fn call(&self, messages: &[Value]) -> Result<wire::Reply, AgentError> {
        let body = self.body(messages);
        let headers = wire::headers(self.kind, self.client.key());
        let est = (body.to_string().len() / 4) as u64 + self.settings.max_output_tokens as u64;
        let a = self.client.post_json(&self.url, &headers, &body, est)?;
        wire::reply(self.kind, &a.body).map_err(|message| AgentError::Reply {
            url: self.url.clone(),
            message,
        })
    }

    fn push_results(&self, messages: &mut Vec<Value>, results: Vec<(String, String, bool)>) {
        match self.kind {
            LlmBackendKind::Anthropic => {
                let blocks: Vec<Value> = results
                    .into_iter()
                    .map(|(id, text, err)| json!({"type": "tool_result", "tool_use_id": id, "content": text, "is_error": err}))
                    .collect();
                messages.push(json!({"role": "user", "content": blocks}));
            }
            _ => {
                for (id, text, _) in results {
                    messages.push(json!({"role": "tool", "tool_call_id": id, "content": text}));
                }
            }
        }
    }
}

fn entry(turn: usize, kind: &str) -> TraceEntry {
    TraceEntry {
        turn,
        kind: kind.into(),
        tool: None,
        args: None,
        result_bytes: None,
        error: None,
        text: None,
        input_tokens: 0,
        output_tokens: 0,
    }
}

/// Fetched ids the answer cites in `[id]`; all fetched ids when it cites none.
pub fn cited(answer: &str, fetched: &[String]) -> Vec<String> {
    let named: Vec<String> = fetched
        .iter()
        .filter(|id| answer.contains(&format!("[{id}]")) || answer.contains(&format!("`{id}`")))
        .cloned()
        .collect();
    if named.is_empty() {
        fetched.to_vec()
    } else {
        named
    }
}

/// `(name, description)` of each top-level skill, from its SKILL.md frontmatter.
pub fn top_skills(tools: &Tools) -> Vec<(String, String)> {
    let mut skills = Vec::new();
    for (_, d) in tools.skill_folders() {
        let Ok(text) = std::fs::read_to_string(d.join("SKILL.md")) else {
            continue;
        };
        let front = text
            .strip_prefix("---\n")
            .and_then(|t| t.split_once("\n---").map(|x| x.0))
            .unwrap_or("");
        let y: serde_yaml_ng::Value = serde_yaml_ng::from_str(front).unwrap_or_default();
        let name = y["name"].as_str().map(str::to_string).unwrap_or_else(|| {
            d.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        });
        let desc = y["description"].as_str().unwrap_or("").to_string();
        skills.push((name, desc));
    }
    skills
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_prefer_bracketed_fetched_ids() {
        let fetched = vec!["a1".to_string(), "b2".to_string()];
        assert_eq!(cited("Yes [b2].", &fetched), vec!["b2"]);
        assert_eq!(cited("Yes [zz].", &fetched), fetched);
        assert!(
            SYSTEM_PROMPT.contains("Grounding rule")
                && SYSTEM_PROMPT.contains("at least two top-level skills")
        );
    }

    #[test]
    fn openai_tool_calls_with_string_arguments() {
        let v = json!({"choices": [{"message": {"content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "cat", "arguments": "{\"path\": \"skills\"}"}}]}}]});
        let r = wire::reply(LlmBackendKind::Openai, &v).unwrap();
        assert_eq!(r.calls[0].1, "cat");
        assert_eq!(r.calls[0].2["path"], "skills");
        assert!(r.message["tool_calls"].is_array());
    }
}
