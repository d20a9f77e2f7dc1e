//! The end of a question: an answer checked against the documents the agent opened, written
//! by the browsing model itself (`[agent] answer = "inline"`) or, from the documents it chose,
//! in a prompt of their own (`compose`, as `c2s eval`'s `rag` answers from its retriever's).

use super::{GROUND, Next, Run, entry, without_our_notes};
use crate::serve::agent::compose::{self, Given};
use crate::serve::agent::ground::{self, citations};
use crate::serve::agent::schema::MAX_CITES;
use crate::serve::agent::{AgentError, TraceEntry};

impl Run<'_> {
    /// An answer, or (composing) the choice of the documents to answer from.
    pub(super) fn answer(
        &mut self,
        turn: usize,
        text: String,
        cite: &[String],
    ) -> Result<Next, AgentError> {
        let protocol = self.protocol;
        if self.agent.composes(protocol) {
            return self.chose(turn, &text, cite);
        }
        Ok(self.inline(turn, text, cite))
    }

    /// An answer the browsing model wrote: accepted when it cites opened documents; else one
    /// reminder of each kind.
    fn inline(&mut self, turn: usize, text: String, cite: &[String]) -> Next {
        let text = without_our_notes(&text);
        if text.is_empty() {
            return self.nudge(turn);
        }
        let last = turn == self.agent.max_turns;
        let fetched = self.out.fetched.clone();
        let c = citations(&text, cite, &fetched, &self.agent.tools);
        if fetched.is_empty() && !self.grounding_asked && !last {
            self.grounding_asked = true;
            return self.note(turn, "grounding", GROUND.into());
        }
        if !c.unopened.is_empty() && !self.unopened_asked && !last && !fetched.is_empty() {
            self.unopened_asked = true;
            return self.note(
                turn,
                "citation",
                ground::unopened_note(&c.unopened, &fetched),
            );
        }
        if c.opened.is_empty() && !fetched.is_empty() && !self.citation_asked && !last {
            self.citation_asked = true;
            return self.note(turn, "citation", ground::uncited_note(&fetched));
        }
        if let Some(why) = ground::planted(&text, &fetched, &self.agent.tools) {
            if !self.planted_asked && !last {
                self.planted_asked = true;
                return self.note(turn, "planted", ground::planted_note(&why));
            }
            self.out.unverified = text;
            self.out.stopped = "refused".into();
            self.out.refused = Some(why);
            return Next::Stop;
        }
        let evidence = if c.opened.is_empty() {
            ground::supporting(&text, &fetched, &self.agent.tools)
        } else {
            Vec::new()
        };
        if !c.opened.is_empty()
            && let Some(share) = ground::unsupported(&text, &c.opened, &self.agent.tools)
        {
            if !self.support_asked && !last {
                self.support_asked = true;
                return self.note(turn, "support", ground::unsupported_note(share, &c.opened));
            }
            self.out.unverified = text;
            self.out.stopped = "ungrounded".into();
            return Next::Stop;
        }
        if c.opened.is_empty() && evidence.is_empty() {
            self.out.unverified = text;
            self.out.stopped = "ungrounded".into();
        } else if c.opened.is_empty() {
            // Cited nothing, but an opened document holds what it says: that one is its source.
            self.out.answer = text;
            self.out.cited = evidence;
            self.out.attributed = true;
            self.out.stopped = "answered".into();
            self.out.trace.push(entry(turn, "attributed"));
        } else {
            self.out.answer = text;
            self.out.cited = c.opened;
            self.out.stopped = "answered".into();
        }
        Next::Stop
    }

    /// The model chose to answer (in a JSON action, or in prose): without an opened document,
    /// one reminder to open one; then the answer is composed from the documents it names.
    fn chose(&mut self, turn: usize, text: &str, cite: &[String]) -> Result<Next, AgentError> {
        let fetched = self.out.fetched.clone();
        if fetched.is_empty() {
            if !self.grounding_asked && turn < self.agent.max_turns {
                self.grounding_asked = true;
                return Ok(self.note(turn, "grounding", GROUND.into()));
            }
            self.out.unverified = without_our_notes(text);
            self.out.stopped = "ungrounded".into();
            return Ok(Next::Stop);
        }
        let named = citations(text, cite, &fetched, &self.agent.tools).opened;
        self.compose(turn, &named)
    }

    /// Writes the answer from `named` opened documents (every opened one when it names none, at
    /// most [`MAX_CITES`]) in a prompt of their own, and checks it as an inline answer is
    /// checked, without asking again: a planted instruction is refused, an answer its
    /// documents do not hold is not given.
    pub(super) fn compose(&mut self, turn: usize, named: &[String]) -> Result<Next, AgentError> {
        let tools = &self.agent.tools;
        let mut chosen: Vec<String> = if named.is_empty() {
            self.out.fetched.clone()
        } else {
            named.to_vec()
        };
        chosen.truncate(MAX_CITES);
        let docs: Vec<(String, String, &str)> = chosen
            .iter()
            .filter_map(|id| {
                let (title, _) = tools.describe(id)?;
                Some((id.clone(), title, tools.text(id)?))
            })
            .collect();
        let given: Vec<Given> = docs
            .iter()
            .map(|(id, title, text)| Given { id, title, text })
            .collect();
        let chat = &self.agent.chat;
        let chars = compose::doc_chars(
            self.agent.context_chars / 4,
            chat.settings.max_output_tokens,
            given.len(),
        );
        let body = compose::body(chat, &self.question, &given, chars);
        let reply = self.send_once(body)?;
        self.out.input_tokens += reply.input_tokens;
        self.out.output_tokens += reply.output_tokens;
        let ids: Vec<&str> = given.iter().map(|g| g.id).collect();
        let (text, cited) = compose::read(&reply.text, &ids);
        self.out.trace.push(TraceEntry {
            turn,
            kind: "compose".into(),
            args: Some(serde_json::json!({ "documents": ids })),
            text: Some(reply.text.clone()),
            input_tokens: reply.input_tokens,
            output_tokens: reply.output_tokens,
            ..TraceEntry::default()
        });
        let text = without_our_notes(&text);
        let fetched = self.out.fetched.clone();
        if text.is_empty() {
            self.out.stopped = "no_answer".into();
        } else if let Some(why) = ground::planted(&text, &fetched, tools) {
            self.out.unverified = text;
            self.out.stopped = "refused".into();
            self.out.refused = Some(why);
        } else if !cited.is_empty() && ground::unsupported(&text, &cited, tools).is_some() {
            self.out.unverified = text;
            self.out.stopped = "ungrounded".into();
        } else if !cited.is_empty() {
            self.out.answer = text;
            self.out.cited = cited;
            self.out.stopped = "answered".into();
        } else {
            let evidence = ground::supporting(
                &text,
                &ids.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                tools,
            );
            if evidence.is_empty() {
                self.out.unverified = text;
                self.out.stopped = "ungrounded".into();
            } else {
                self.out.answer = text;
                self.out.cited = evidence;
                self.out.attributed = true;
                self.out.stopped = "answered".into();
                self.out.trace.push(entry(turn, "attributed"));
            }
        }
        Ok(Next::Stop)
    }
}
