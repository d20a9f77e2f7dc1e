//! The guided agent for small models: c2s walks the skill tree and the model only chooses. At
//! each level it picks from a menu of what exists (the top-level skills, a group's groups and
//! documents), a schema-bound JSON reply whose picks are an enum of the menu's keys, ordered
//! and cut by the offline navigator; at the documents it picked it answers, citing only them,
//! or says they do not hold the answer, and the walk backs up to the next choice, within a cap
//! of model calls. The answer passes the free-form agent's grounding checks.

mod menu;
mod passages;
mod reply;
mod walk;

use std::sync::Arc;

use serde_json::Value;

use crate::config::{AgentConfig, LlmBackendKind, LlmConfig};
use crate::db::cache::Memo;
use crate::llm::chat::Chat;
use crate::serve::agent::{AgentAnswer, AgentError};
use crate::serve::compiled::Compiled;
use crate::serve::navigator::{NavParams, Navigator};
use crate::serve::tools::Tools;

/// Documents whose share of the context a shown document gets (as `rag` shares it among its
/// five), so that three opened documents and the menus cost no more than `rag`'s prompt.
const DOC_SHARES: usize = 5;

/// A guided agent over one compiled output.
pub struct Guided<'a> {
    a: &'a Compiled,
    nav: Navigator<'a>,
    tools: Tools,
    chat: Chat,
    /// Model calls per question (`[agent] max_turns`).
    max_steps: usize,
    /// Characters of each document shown.
    doc_chars: usize,
}

impl<'a> Guided<'a> {
    /// The agent over `a` with the model of `llm` (`[llm]` with `[agent]` over it).
    pub fn new(
        llm: &LlmConfig,
        agent: &AgentConfig,
        a: &'a Compiled,
    ) -> Result<Guided<'a>, AgentError> {
        if llm.backend == LlmBackendKind::Extractive {
            return Err(AgentError::NoLlm);
        }
        let chat = Chat::new(llm, "agent")?;
        let doc_chars = crate::serve::agent::compose::doc_chars(
            agent.context_tokens,
            chat.settings.max_output_tokens,
            DOC_SHARES,
        );
        Ok(Guided {
            nav: Navigator::new(a),
            tools: Tools::open(&a.out)?,
            a,
            chat,
            max_steps: agent.max_turns.max(1),
            doc_chars,
        })
    }

    /// Every model answer is kept in (and replayed from) `memo`.
    pub fn with_memo(mut self, memo: Arc<Memo>) -> Guided<'a> {
        self.chat = self.chat.with_memo(memo);
        self
    }

    /// Walks the tree for one question (`query_vec` from the output's embedder).
    pub fn ask(&self, question: &str, query_vec: &[f32]) -> Result<AgentAnswer, AgentError> {
        let route = self.nav.route(question, query_vec, &NavParams::default());
        walk::Walk::new(self, question, route).finish()
    }

    /// A document's title and source file, by id (for printing sources).
    pub fn describe(&self, id: &str) -> Option<(String, String)> {
        self.tools.describe(id)
    }

    /// The system prompt every request starts with (for a trace).
    pub fn system_prompt(&self) -> &'static str {
        reply::SYSTEM
    }

    /// One request: the system prompt, the user message and, for an OpenAI-compatible server,
    /// the reply's schema.
    fn body(&self, user: &str, name: &str, schema: &Value) -> Value {
        let mut body = self.chat.one_turn(reply::SYSTEM, user);
        if self.chat.kind == LlmBackendKind::Openai {
            body["response_format"] = crate::llm::schema::response_format(name, schema);
        }
        self.chat.with_params(body)
    }
}
