//! The LLM agent of the serve phase: starts from the top-level skills' names and descriptions,
//! browses the tree with the read-only tools (native tool calls, calls written as text, or the
//! JSON action protocol), and gives an answer only when it cites documents it opened.

mod calls;
pub mod compose;
pub(crate) mod ground;
mod known;
mod outline;
pub(crate) mod protocol;
mod request;
mod schema;
mod turn;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde::Serialize;
use serde_json::Value;

use super::tools::{ToolError, Tools};
use crate::config::{AgentAnswerMode, AgentConfig, AgentProtocol, LlmBackendKind, LlmConfig};
use crate::db::cache::Memo;
use crate::http::HttpError;
use crate::llm::SetupError;
use crate::llm::chat::Chat;
pub use protocol::Protocol;

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

/// The system prompt of an agent with every tool, speaking native tool calls (what an MCP
/// client's model reads as the server's instructions).
pub fn instructions() -> String {
    let all: Vec<String> = crate::config::AGENT_TOOLS
        .iter()
        .map(|t| t.to_string())
        .collect();
    protocol::system_prompt(&all, Protocol::Tools, false)
}

/// One step of the trace.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TraceEntry {
    pub turn: usize,
    /// `model` (a reply), `tool` (a call and its result size), `repeat` (a repeated call, not
    /// run again), `nudge`, `grounding` (asked to open a document first), `citation` (asked to
    /// cite opened documents), `attributed` (an answer that cited nothing was credited to the
    /// opened documents that hold it), `support` (told its answer is not what its cited documents
    /// say), `planted` (told its answer repeated a planted instruction),
    /// `protocol` (switched to the JSON action protocol).
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
    /// The grounded answer; empty unless `stopped` is `answered`.
    pub answer: String,
    /// Opened documents the answer cites (or, when `attributed`, that hold what it says).
    pub cited: Vec<String>,
    /// The answer cited no document, and `cited` lists the opened documents that hold most of
    /// its words (70% of them or more) instead.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub attributed: bool,
    /// Every document opened, in order.
    pub fetched: Vec<String>,
    /// The model's last answer when it was not grounded (never shown as an answer).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub unverified: String,
    pub turns: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Model seconds (as first measured, for replayed answers) plus tool time.
    pub seconds: f64,
    /// `answered` (cites opened documents), `ungrounded` (answered without citing an opened
    /// document, or with words mostly not in the documents it cites, even when asked), `refused` (the answer repeated an instruction planted in a
    /// document), `budget` (`agent.max_turns` ran out) or `no_answer`.
    pub stopped: String,
    /// Why a `refused` answer was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// Calls repeated with the same arguments (answered with a note, not run again).
    pub repeats: usize,
    /// The protocol the last turn spoke (`tools` or `json`).
    pub protocol: String,
    /// Bytes of navigation files and documents the tools returned.
    pub bytes_read: usize,
    /// Estimated input tokens by part of the prompts (the guided walk: `system`, `question`,
    /// `menus`, `documents`, `format`, `notes`), so that what a small model reads can be cut
    /// where it does not help.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub prompt_parts: std::collections::BTreeMap<String, u64>,
    pub trace: Vec<TraceEntry>,
}

impl AgentAnswer {
    /// What `c2s ask` prints: the answer, or a plain statement that none was found.
    pub fn shown(&self) -> String {
        match self.stopped.as_str() {
            "answered" => self.answer.clone(),
            "budget" => format!(
                "No answer: the agent used its {} model calls (agent.max_turns) without an answer grounded in the documents.",
                self.turns
            ),
            "ungrounded" => "No grounded answer: the agent's answer did not cite a document it opened that says what it says, so it is not shown (see --json for it).".into(),
            "refused" => format!(
                "No answer: the agent's answer followed an instruction planted in a document ({}), so it is not shown.",
                self.refused.as_deref().unwrap_or("unsafe")
            ),
            _ => "No answer: the agent stopped without finding one in the documents.".into(),
        }
    }
}

/// An agent over one compiled output.
pub struct Agent {
    chat: Chat,
    tools: Tools,
    enabled: Vec<String>,
    max_turns: usize,
    /// Characters of context the requests may use (0: no limit).
    context_chars: usize,
    skills: Vec<(String, String)>,
    /// The tree as far down as fits the outline's budget.
    outline: outline::Outline,
    /// How the final answer is written.
    answer_mode: AgentAnswerMode,
    /// The protocol setting (each question starts from it; `auto` switches within a question).
    setting: AgentProtocol,
    /// The server refused the JSON protocol's `response_format`.
    schema_refused: AtomicBool,
}

impl Agent {
    /// Opens the output and the model (`llm`: `[llm]` with `[agent]` over it; `[llm.stages.agent]`
    /// overrides apply).
    pub fn new(llm: &LlmConfig, agent: &AgentConfig, out: &Path) -> Result<Agent, AgentError> {
        if llm.backend == LlmBackendKind::Extractive {
            return Err(AgentError::NoLlm);
        }
        let chat = Chat::new(llm, "agent")?;
        let tools = Tools::open(out)?;
        let skills = top_skills(&tools);
        let budget = if protocol::browses(&agent.tools) {
            agent.outline_chars()
        } else {
            0
        };
        Ok(Agent {
            outline: outline::Outline::build(&skills, &tools, budget),
            skills,
            answer_mode: agent.answer,
            chat,
            tools,
            enabled: agent.tools.clone(),
            max_turns: agent.max_turns.max(1),
            context_chars: agent.context_tokens * 4,
            setting: agent.protocol,
            schema_refused: AtomicBool::new(false),
        })
    }

    /// Every model answer is kept in (and replayed from) `memo`.
    pub fn with_memo(mut self, memo: Arc<Memo>) -> Agent {
        self.chat = self.chat.with_memo(memo);
        self
    }

    /// The protocol a question starts with.
    fn first_protocol(&self) -> Protocol {
        match self.setting {
            // A guided setting reaches the free-form agent only in `c2s eval`, as the small model's agent.
            AgentProtocol::Json | AgentProtocol::Guided => Protocol::Json,
            AgentProtocol::Tools | AgentProtocol::Auto => Protocol::Tools,
        }
    }

    /// The first user message: the question.
    pub fn opening(&self, question: &str) -> String {
        format!("Question: {question}\n")
    }

    /// The system prompt for a protocol: the instructions, and, when the agent browses the
    /// tree, its outline (kept in the system prompt, the same for every question, so that a
    /// server's prompt cache holds it).
    fn system(&self, protocol: Protocol) -> String {
        let mut s = protocol::system_prompt(&self.enabled, protocol, self.composes(protocol));
        if protocol::browses(&self.enabled) {
            s.push_str(&protocol::outline_section(&self.outline));
        }
        s
    }

    /// The system prompt of the protocol an answer ended in (`tools` or `json`), for a trace.
    pub fn system_prompt(&self, protocol: &str) -> String {
        self.system(if protocol == "json" {
            Protocol::Json
        } else {
            Protocol::Tools
        })
    }

    /// Whether the final answer is composed from the chosen documents in a prompt of its own.
    fn composes(&self, protocol: Protocol) -> bool {
        match self.answer_mode {
            AgentAnswerMode::Compose => true,
            AgentAnswerMode::Inline => false,
            AgentAnswerMode::Auto => protocol == Protocol::Json,
        }
    }

    /// A document's title and source file, by id (for printing sources).
    pub fn describe(&self, id: &str) -> Option<(String, String)> {
        self.tools.describe(id)
    }

    /// Runs the loop for one question.
    pub fn ask(&self, question: &str) -> Result<AgentAnswer, AgentError> {
        turn::Run::new(self, question).finish()
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
