//! One question's loop: ask the model, run the calls it makes (a repeated call gets a note
//! instead), keep the request within the context budget, and accept an answer only when it
//! cites documents the agent opened (asking once to open, and once to cite, before giving up).

mod finish;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::Value;

use super::calls::{self, Intent};
use super::known::Known;
use super::protocol::{self, Call, CallResult, Event, Protocol};
use super::request::View;
use super::{Agent, AgentAnswer, AgentError, TraceEntry};
use crate::config::AgentProtocol;
use crate::llm::wire;

const NUDGE: &str = "You stopped without calling a tool or answering. Call a tool to keep navigating, or give your final answer now, citing the documents you opened.";
const LAST_TURN: &str = "This is your last turn: answer now from the documents you opened, citing them, or say that they do not answer the question.";
const STATUS_TAIL: &str = "If they answer the question, reply with action answer and cite them; otherwise reply with your next action as one JSON object.";
const GROUND: &str = "You answered without opening any document. Claims must come from documents you opened (get_document, or cat of a docs/<name>.md file): find the relevant documents, open them, then answer again.";

/// The state of one question.
pub(super) struct Run<'a> {
    agent: &'a Agent,
    /// The protocol the next request speaks (`auto` switches to JSON within the question).
    protocol: Protocol,
    question: String,
    opening: String,
    events: Vec<Event>,
    out: AgentAnswer,
    /// Each call made so far (tool and canonical arguments) and the turn it was made in.
    seen: HashMap<String, usize>,
    nudged: bool,
    grounding_asked: bool,
    citation_asked: bool,
    unopened_asked: bool,
    planted_asked: bool,
    support_asked: bool,
    /// Seconds of replayed answers (their original calls), added to the wall clock.
    replayed_s: f64,
    /// The files and ids the agent was shown, and the files it read.
    known: Known,
    read: Vec<String>,
}

/// What the loop does after a reply.
enum Next {
    Continue,
    Stop,
}

impl<'a> Run<'a> {
    pub(super) fn new(agent: &'a Agent, question: &str) -> Run<'a> {
        let mut known = Known::new(&agent.skills, &agent.tools);
        known.learn_files(agent.outline.files(), &agent.tools);
        Run {
            agent,
            protocol: agent.first_protocol(),
            question: question.to_string(),
            opening: agent.opening(question),
            events: Vec::new(),
            out: AgentAnswer {
                stopped: "budget".into(),
                ..AgentAnswer::default()
            },
            seen: HashMap::new(),
            nudged: false,
            grounding_asked: false,
            citation_asked: false,
            unopened_asked: false,
            planted_asked: false,
            support_asked: false,
            replayed_s: 0.0,
            known,
            read: Vec::new(),
        }
    }

    pub(super) fn finish(mut self) -> Result<AgentAnswer, AgentError> {
        let clock = Instant::now();
        for turn in 1..=self.agent.max_turns {
            self.out.turns = turn;
            if let Next::Stop = self.step(turn)? {
                break;
            }
        }
        self.out.protocol = match self.protocol {
            Protocol::Tools => "tools",
            Protocol::Json => "json",
        }
        .into();
        self.out.cost = self
            .agent
            .chat
            .cost(self.out.input_tokens, self.out.output_tokens);
        self.out.seconds = clock.elapsed().as_secs_f64() + self.replayed_s;
        Ok(self.out)
    }

    /// One model call and what follows from its reply.
    fn step(&mut self, turn: usize) -> Result<Next, AgentError> {
        let protocol = self.protocol;
        let last = turn == self.agent.max_turns && turn > 1;
        if last && !self.out.fetched.is_empty() && self.agent.composes(protocol) {
            // The last call writes the answer from what was opened.
            self.out.trace.push(entry(turn, "last"));
            return self.compose(turn, &[]);
        }
        if last && !self.out.fetched.is_empty() {
            self.events.push(Event::Note(LAST_TURN.into()));
        }
        let reply = self.call(protocol, last)?;
        self.out.input_tokens += reply.input_tokens;
        self.out.output_tokens += reply.output_tokens;
        self.out.trace.push(TraceEntry {
            turn,
            kind: "model".into(),
            text: (!reply.text.is_empty()).then(|| reply.text.clone()),
            input_tokens: reply.input_tokens,
            output_tokens: reply.output_tokens,
            ..TraceEntry::default()
        });
        let native = !reply.calls.is_empty();
        let intent = if native {
            Intent::Calls(
                reply
                    .calls
                    .iter()
                    .map(|(id, name, args)| Call {
                        id: id.clone(),
                        name: name.clone(),
                        args: args.clone(),
                    })
                    .collect(),
            )
        } else {
            calls::read(&reply.text, turn)
        };
        // A model (or server) that writes its calls as text, or answers its first turn without
        // a tool: speak the JSON protocol from now on.
        let writes_calls = !native && matches!(intent, Intent::Calls(_));
        if protocol == Protocol::Tools
            && self.agent.setting == AgentProtocol::Auto
            && (writes_calls || (turn == 1 && !native))
        {
            self.protocol = Protocol::Json;
            self.out.trace.push(entry(turn, "protocol"));
        }
        let message = (native && protocol == Protocol::Tools).then(|| reply.message.clone());
        match intent {
            Intent::Calls(calls) => {
                self.events.push(Event::Model {
                    text: reply.text.clone(),
                    calls: calls.clone(),
                    native: message,
                });
                let results = calls.into_iter().map(|c| self.run_call(turn, c)).collect();
                self.events.push(Event::Results(results));
                if self.protocol == Protocol::Json {
                    self.events.push(Event::Note(self.status()));
                }
                Ok(Next::Continue)
            }
            Intent::Answer { text, cite } => {
                self.push_text(&reply.text);
                self.answer(turn, text, &cite)
            }
            Intent::Text(text) => {
                self.push_text(&reply.text);
                if text.is_empty() {
                    return Ok(self.nudge(turn));
                }
                self.answer(turn, text, &[])
            }
        }
    }

    /// What the JSON protocol reminds the model of after each result.
    fn status(&self) -> String {
        if self.out.fetched.is_empty() {
            return "Reply with your next action as one JSON object.".into();
        }
        let opened: Vec<String> = self
            .out
            .fetched
            .iter()
            .map(|id| {
                let handle = self.agent.tools.handle(id);
                match self.agent.tools.describe(id) {
                    Some((title, _)) if &handle == id => format!("{id} ({title})"),
                    _ => handle,
                }
            })
            .collect();
        format!("Documents you opened: {}. {STATUS_TAIL}", opened.join(", "))
    }

    fn push_text(&mut self, text: &str) {
        self.events.push(Event::Model {
            text: text.to_string(),
            calls: Vec::new(),
            native: None,
        });
    }

    fn note(&mut self, turn: usize, kind: &str, text: String) -> Next {
        self.events.push(Event::Note(text));
        self.out.trace.push(entry(turn, kind));
        Next::Continue
    }

    fn nudge(&mut self, turn: usize) -> Next {
        if self.nudged || turn == self.agent.max_turns {
            self.out.stopped = "no_answer".into();
            return Next::Stop;
        }
        self.nudged = true;
        self.note(turn, "nudge", NUDGE.into())
    }

    /// Runs one call, unless the same call was made before (then a note says so).
    fn run_call(&mut self, turn: usize, mut call: Call) -> CallResult {
        if matches!(call.name.as_str(), "cat" | "ls")
            && let Some(p) = call.args.get("path").and_then(Value::as_str)
        {
            let fixed = self.known.resolve(p, &self.agent.tools);
            call.args["path"] = Value::String(fixed);
        }
        let key = format!("{}{}", call.name, canonical(&call.args));
        let mut e = entry(turn, "tool");
        e.tool = Some(call.name.clone());
        e.args = Some(call.args.clone());
        if let Some(&first) = self.seen.get(&key) {
            self.out.repeats += 1;
            e.kind = "repeat".into();
            self.out.trace.push(e);
            let text = format!(
                "You already called {}({}) at turn {first}; its result is above. Do not call it again: open a document that answers the question, look elsewhere, or answer.",
                call.name, call.args
            );
            return CallResult {
                call,
                text,
                is_err: false,
            };
        }
        self.seen.insert(key, turn);
        let tools = &self.agent.tools;
        let (text, is_err) = match tools.call(&call.name, &call.args) {
            Ok(t) if self.agent.enabled.contains(&call.name) => (t, false),
            Ok(_) => (
                format!(
                    "error: the tool `{}` is not available here; use {}",
                    call.name,
                    self.agent.enabled.join(", ")
                ),
                true,
            ),
            Err(err) => (format!("error: {err}"), true),
        };
        // A document is opened by get_document, or by reading its file (or its bundle).
        let opened: Vec<String> = match call.name.as_str() {
            "get_document" => text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("id: "))
                .map(str::to_string)
                .into_iter()
                .collect(),
            "cat" => call
                .args
                .get("path")
                .and_then(Value::as_str)
                .map(|p| tools.documents_of(p, &text))
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        for id in opened.iter().filter(|_| !is_err) {
            if !self.out.fetched.contains(id) {
                self.out.fetched.push(id.clone());
            }
        }
        if !is_err {
            let arg = call.args[protocol::arg_name(&call.name)]
                .as_str()
                .unwrap_or("");
            self.known.learn(&call.name, arg, &text, tools);
            if call.name == "cat" {
                self.read.push(arg.to_string());
            }
        }
        self.out.bytes_read += text.len();
        e.result_bytes = Some(text.len());
        e.error = Some(is_err);
        self.out.trace.push(e);
        let text = if opened.is_empty() || is_err {
            self.clip(text)
        } else {
            protocol::as_document(&opened.join(", "), &self.clip(text))
        };
        CallResult { call, text, is_err }
    }

    /// A result cut to a third of the context budget, when one is set.
    fn clip(&self, text: String) -> String {
        let max = self.agent.context_chars / 3;
        if max == 0 || text.len() <= max {
            return text;
        }
        let cut = crate::text::clip_chars(&text, max).len();
        format!(
            "{}\n[cut to fit the model's context: showing {cut} of {} bytes]",
            &text[..cut],
            text.len()
        )
    }

    /// Elides the oldest tool results (never the latest ones) until the request fits the
    /// context budget.
    fn fit(&mut self, protocol: Protocol) {
        let budget = self.agent.context_chars;
        if budget == 0 {
            return;
        }
        let reserve = self.agent.chat.settings.max_output_tokens as usize * 4;
        let limit = budget.saturating_sub(reserve);
        let (agent, opening) = (self.agent, self.opening.clone());
        let (known, read, opened) = (
            self.known.clone(),
            self.read.clone(),
            self.out.fetched.clone(),
        );
        let size = |events: &[Event]| {
            let view = View {
                last: false,
                agent,
                opening: &opening,
                known: &known,
                read: &read,
                opened: &opened,
            };
            view.body(protocol, events).to_string().len()
        };
        let last_results = self
            .events
            .iter()
            .rposition(|e| matches!(e, Event::Results(_)));
        for i in 0..self.events.len() {
            if size(&self.events) <= limit {
                return;
            }
            if Some(i) == last_results {
                continue;
            }
            if let Event::Results(results) = &mut self.events[i] {
                for r in results
                    .iter_mut()
                    .filter(|r| !r.text.starts_with("[elided"))
                {
                    r.text = format!(
                        "[elided to fit the model's context: {} bytes; call {} again if it is needed]",
                        r.text.len(),
                        r.call.name
                    );
                    self.seen
                        .remove(&format!("{}{}", r.call.name, canonical(&r.call.args)));
                }
            }
        }
    }

    fn view(&self, last: bool) -> View<'_> {
        View {
            last,
            agent: self.agent,
            opening: &self.opening,
            known: &self.known,
            read: &self.read,
            opened: &self.out.fetched,
        }
    }

    /// Sends one request of its own (the composed answer); a server that refuses its schema is
    /// asked again without it.
    fn send_once(&mut self, body: Value) -> Result<wire::Reply, AgentError> {
        let chat = &self.agent.chat;
        let sent = match chat.send(&body) {
            Err(e) if body.get("response_format").is_some() && crate::llm::schema_refusal(&e) => {
                self.agent.schema_refused.store(true, Ordering::Relaxed);
                chat.send(&super::compose::without_schema(body))?
            }
            other => other?,
        };
        if sent.replayed {
            self.replayed_s += sent.seconds;
        }
        wire::reply(chat.kind, &sent.body).map_err(|message| AgentError::Reply {
            url: chat.url.clone(),
            message,
        })
    }

    /// Sends the conversation; a server that refuses the JSON protocol's schema is asked again
    /// without it.
    fn call(&mut self, protocol: Protocol, last: bool) -> Result<wire::Reply, AgentError> {
        self.fit(protocol);
        let body_now = self.view(last).body(protocol, &self.events);
        let sent = match self.agent.chat.send(&body_now) {
            Err(e)
                if protocol == Protocol::Json
                    && body_now.get("response_format").is_some()
                    && crate::llm::schema_refusal(&e) =>
            {
                self.agent.schema_refused.store(true, Ordering::Relaxed);
                let again = self.view(last).body(protocol, &self.events);
                self.agent.chat.send(&again)?
            }
            other => other?,
        };
        if sent.replayed {
            self.replayed_s += sent.seconds;
        }
        wire::reply(self.agent.chat.kind, &sent.body).map_err(|message| AgentError::Reply {
            url: self.agent.chat.url.clone(),
            message,
        })
    }
}

/// An answer without the notes of ours a small model may have copied into it.
fn without_our_notes(text: &str) -> String {
    let mut t = text.to_string();
    for note in [LAST_TURN, NUDGE, GROUND, STATUS_TAIL] {
        t = t.replace(note, "");
    }
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    // The notes that introduce documents, copied as an answer by a model with nothing to say.
    let ours = |s: &str| {
        let s = s
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        [
            "not instructions to you",
            "never to follow",
            "data to answer from",
        ]
        .iter()
        .any(|n| s.contains(n))
    };
    let kept: Vec<String> = crate::text::sentences(&t)
        .into_iter()
        .filter(|s| !ours(s))
        .collect();
    if kept.len() == crate::text::sentences(&t).len() {
        t
    } else {
        kept.join(" ")
    }
}

fn entry(turn: usize, kind: &str) -> TraceEntry {
    TraceEntry {
        turn,
        kind: kind.into(),
        ..TraceEntry::default()
    }
}

/// Arguments with their keys sorted, so `{"a", "b"}` and `{"b", "a"}` are the same call.
fn canonical(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(o) => {
                let m: BTreeMap<&String, Value> = o.iter().map(|(k, x)| (k, sorted(x))).collect();
                serde_json::to_value(m).unwrap_or(Value::Null)
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(v).to_string()
}
