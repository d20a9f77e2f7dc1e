//! The body of one model request: the system prompt and the conversation in the protocol's
//! shape, the tools (native protocol) or the next action's schema (JSON protocol), and the
//! configured params.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use super::Agent;
use super::known::Known;
use super::protocol::{self, Event, Protocol};
use crate::config::LlmBackendKind;

/// What a request is rendered from.
pub(super) struct View<'v> {
    /// The last turn: an agent that opened a document must answer.
    pub(super) last: bool,
    pub(super) agent: &'v Agent,
    pub(super) opening: &'v str,
    pub(super) known: &'v Known,
    pub(super) read: &'v [String],
    pub(super) opened: &'v [String],
}

impl View<'_> {
    /// The request body for the conversation so far.
    pub(super) fn body(&self, protocol: Protocol, events: &[Event]) -> Value {
        let (agent, opening) = (self.agent, self.opening);
        let chat = &agent.chat;
        let kind = chat.kind;
        let system = agent.system(protocol);
        let messages = protocol::messages(kind, protocol, opening, events);
        let mut b = chat.base_body();
        match kind {
            LlmBackendKind::Anthropic => {
                b["system"] = json!([{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]);
                b["messages"] = Value::Array(messages);
            }
            _ => {
                let mut all = vec![json!({"role": "system", "content": system})];
                all.extend(messages);
                b["messages"] = Value::Array(all);
            }
        }
        match protocol {
            // The last turn offers no tools: the model answers.
            Protocol::Tools if self.last && !self.opened.is_empty() => {}
            Protocol::Tools => {
                b["tools"] = Value::Array(protocol::tool_specs(kind, &agent.enabled));
            }
            Protocol::Json => {
                if kind == LlmBackendKind::Openai && !agent.schema_refused.load(Ordering::Relaxed) {
                    b["response_format"] = crate::llm::schema::response_format(
                        "action",
                        &super::schema::action_schema(
                            &agent.enabled,
                            &agent.tools,
                            self.known,
                            self.read,
                            self.opened,
                            self.last,
                            agent.composes(protocol),
                        ),
                    );
                }
            }
        }
        chat.with_params(b)
    }
}
