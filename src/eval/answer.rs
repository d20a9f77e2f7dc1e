//! The answering methods of `c2s eval`, all with the same model: `rag` (the best flat
//! retriever's top 5 documents in one prompt), `agentic-search` (the agent with `search` and
//! `get_document` only), `agent` (the skill tree with every tool) and `guided` (the tree walked
//! by c2s, the model choosing from menus), and what each answer is scored on besides its text.

use std::collections::BTreeMap;

use super::metrics::{citation_precision, citation_recall};
use crate::llm::chat::Chat;
use crate::llm::wire;
use crate::serve::agent::compose::{self, Given};
use crate::serve::agent::{Agent, AgentAnswer, AgentError};
use crate::serve::compiled::Compiled;
use crate::serve::guided::Guided;

/// The LLM methods, in table order.
pub const ANSWERING: &[&str] = &["rag", "agentic-search", "agent", "guided"];
/// Documents `rag` puts in its prompt.
pub const RAG_DOCS: usize = 5;

/// What an answering method did for one question.
#[derive(Debug, Clone, Default)]
pub struct Answered {
    pub answer: String,
    /// Documents the answer cites.
    pub cited: Vec<String>,
    /// Documents the method read: the agent's opened ones, `rag`'s prompt.
    pub opened: Vec<String>,
    pub turns: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub seconds: f64,
    /// `answered`, `ungrounded`, `budget`, `no_answer`, or `error: …`.
    pub stopped: String,
    pub bytes_read: usize,
    /// Tool calls, for the path column of the per-query JSON.
    pub path: Vec<String>,
}

impl Answered {
    /// Ranking for the retrieval metrics: cited documents, then the other opened ones.
    pub fn ids(&self) -> Vec<String> {
        let mut ids = self.cited.clone();
        ids.extend(
            self.opened
                .iter()
                .filter(|o| !self.cited.contains(o))
                .cloned(),
        );
        ids
    }

    /// The per-query figures beyond the answer's text.
    pub fn metrics(&self, gold: &[String]) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        m.insert(
            "answered".into(),
            f64::from(u8::from(self.stopped == "answered")),
        );
        m.insert(
            "citation_precision".into(),
            citation_precision(&self.cited, gold),
        );
        if let Some(r) = citation_recall(&self.cited, gold) {
            m.insert("citation_recall".into(), r);
        }
        if let Some(r) = citation_recall(&self.opened, gold) {
            m.insert("opened_recall".into(), r);
        }
        m.insert("docs_opened".into(), self.opened.len() as f64);
        m.insert("turns".into(), self.turns as f64);
        m.insert("input_tokens".into(), self.input_tokens as f64);
        m.insert("output_tokens".into(), self.output_tokens as f64);
        m.insert("seconds".into(), self.seconds);
        m.insert(
            "error".into(),
            f64::from(u8::from(self.stopped.starts_with("error"))),
        );
        m
    }
}

impl From<AgentAnswer> for Answered {
    fn from(r: AgentAnswer) -> Answered {
        let path = r
            .trace
            .iter()
            .filter_map(|t| Some(format!("{}({})", t.tool.as_ref()?, t.args.as_ref()?)))
            .collect();
        Answered {
            answer: r.answer,
            cited: r.cited,
            opened: r.fetched,
            turns: r.turns,
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            seconds: r.seconds,
            stopped: r.stopped,
            bytes_read: r.bytes_read,
            path,
        }
    }
}

/// One question through an agent; a failed question (a refused request, a context overflow)
/// is recorded, not fatal to the evaluation.
pub fn ask_agent(agent: &Agent, question: &str) -> Answered {
    recorded(agent.ask(question))
}

/// One question through the guided walk, recorded like [`ask_agent`]'s.
pub fn ask_guided(guided: &Guided, question: &str, query_vec: &[f32]) -> Answered {
    recorded(guided.ask(question, query_vec))
}

/// An agent's answer, or its error as the question's outcome.
fn recorded(r: Result<AgentAnswer, AgentError>) -> Answered {
    match r {
        Ok(r) => r.into(),
        Err(e) => Answered {
            stopped: format!("error: {e}"),
            ..Answered::default()
        },
    }
}

/// `rag`: the question and the given documents (each cut to `doc_chars`) in one prompt, as
/// the agent composes its answer from the documents it opened.
pub fn rag(
    chat: &Chat,
    a: &Compiled,
    question: &str,
    docs: &[usize],
    doc_chars: usize,
) -> Answered {
    let given: Vec<Given> = docs
        .iter()
        .map(|&d| Given {
            id: &a.docs[d].id,
            title: a.docs[d].title.as_deref().unwrap_or(""),
            text: &a.docs[d].text,
        })
        .collect();
    let ids: Vec<&str> = given.iter().map(|g| g.id).collect();
    let body = compose::body(chat, question, &given, doc_chars);
    let mut out = Answered {
        opened: ids.iter().map(|s| s.to_string()).collect(),
        turns: 1,
        bytes_read: docs
            .iter()
            .map(|&d| a.docs[d].text.len().min(doc_chars))
            .sum(),
        ..Answered::default()
    };
    let sent = match chat.send(&body) {
        Ok(s) => s,
        Err(e) => {
            out.stopped = format!("error: {e}");
            return out;
        }
    };
    out.seconds = sent.seconds;
    let reply = match wire::reply(chat.kind, &sent.body) {
        Ok(r) => r,
        Err(e) => {
            out.stopped = format!("error: {}: {e}", chat.url);
            return out;
        }
    };
    out.input_tokens = reply.input_tokens;
    out.output_tokens = reply.output_tokens;
    let (text, cited) = compose::read(&reply.text, &ids);
    out.cited = cited;
    out.stopped = if text.is_empty() {
        "no_answer".into()
    } else {
        "answered".into()
    };
    out.answer = text;
    out
}
