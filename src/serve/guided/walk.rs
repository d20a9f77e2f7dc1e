//! One guided walk: the menus from the top-level skills down, the picks (a choice outside the
//! menu is refused and asked again once; a menu of groups where the navigator's best documents
//! all lie under one group is not asked), the documents shown (the picks and the navigator's
//! best document not shown yet) and the answer (a citation of a document not shown is refused
//! and asked again once), backing up on "not here" to the next pick, then to the navigator's
//! best option that was not picked, until an answer, an empty stack, the cap of back-ups or
//! the cap of model calls; then, if documents were shown, a last call answers from the best of
//! them (one call is kept for it).

use std::collections::HashSet;

use serde_json::{Value, json};

use super::Guided;
use super::menu::{Item, Menu, PICK_DOCS};
use super::reply;
use crate::llm::wire;
use crate::serve::agent::{AgentAnswer, AgentError, TraceEntry};
use crate::serve::agent::{compose, ground};
use crate::serve::navigator::Route;

pub(super) struct Walk<'g, 'a> {
    g: &'g Guided<'a>,
    question: &'g str,
    route: Route,
    out: AgentAnswer,
    seen: HashSet<Item>,
    /// Groups still to visit; the last is next.
    stack: Vec<usize>,
    /// Answers that did not stand ("not here", or not held by the documents cited).
    backups: usize,
    /// The walk's calls are spent (one kept for the last answer once documents were shown).
    exhausted: bool,
}

/// Answers that may not stand before the walk stops looking and answers from the best documents
/// shown. With Qwen2.5-Coder 0.5B on 12 wixqa questions, the walks that backed up more than once
/// (8 and 10 calls, up to 8,242 input tokens against rag's 2,360) found nothing the first two
/// tries had not shown; with the 1.5B, which calls a partial answer "not here", every walk ran
/// out of calls without an answer.
const MAX_BACKUPS: usize = 2;

/// Documents the last answer is shown.
const LAST_DOCS: usize = 3;

impl<'g, 'a> Walk<'g, 'a> {
    pub(super) fn new(g: &'g Guided<'a>, question: &'g str, route: Route) -> Walk<'g, 'a> {
        Walk {
            g,
            question,
            route,
            out: AgentAnswer {
                protocol: "guided".into(),
                ..AgentAnswer::default()
            },
            seen: HashSet::new(),
            stack: Vec::new(),
            backups: 0,
            exhausted: false,
        }
    }

    pub(super) fn finish(mut self) -> Result<AgentAnswer, AgentError> {
        let roots = self.g.a.tree.roots.clone();
        let mut done = self.visit(&roots, &[], "Top-level skills of the library:")?;
        while !done && !self.exhausted && self.backups < MAX_BACKUPS {
            let Some(n) = self.stack.pop() else { break };
            if !self.seen.insert(Item::Node(n)) {
                continue;
            }
            let node = &self.g.a.tree.nodes[n];
            let mut docs = node.docs.clone();
            docs.extend(&node.see_also);
            let place = format!("Inside \"{}\":", node.label);
            let children = node.children.clone();
            self.note_backtrack(n);
            done = self.visit(&children, &docs, &place)?;
        }
        if !done && !self.out.fetched.is_empty() {
            done = self.last_answer()?;
        }
        if !done {
            self.out.stopped = if self.out.turns >= self.g.max_steps {
                "budget"
            } else if !self.out.unverified.is_empty() {
                "ungrounded"
            } else {
                "no_answer"
            }
            .into();
        }
        self.out.cost = self
            .g
            .chat
            .cost(self.out.input_tokens, self.out.output_tokens);
        Ok(self.out)
    }

    /// A trace line when the walk resumes at a group after documents did not answer.
    fn note_backtrack(&mut self, n: usize) {
        if self
            .out
            .trace
            .last()
            .is_some_and(|t| t.kind == "not_here" || t.kind == "support")
        {
            let mut e = self.entry("backtrack");
            e.text = Some(self.g.a.tree.nodes[n].path.clone());
            self.out.trace.push(e);
        }
    }

    /// Shows the menu of `groups` and `docs`, takes the model's picks (a menu of one is taken
    /// without asking), answers from picked documents, and stacks picked groups (the first on
    /// top) above the best group left unpicked. `true`: the question is answered (or refused).
    fn visit(&mut self, groups: &[usize], docs: &[usize], place: &str) -> Result<bool, AgentError> {
        let seen = &self.seen;
        let Some(menu) = Menu::of(self.g.a, &self.route, groups, docs, &|i| seen.contains(&i))
        else {
            return Ok(false);
        };
        let picked = if menu.items.len() == 1 {
            menu.items.clone()
        } else if let Some(i) = self.decisive(&menu) {
            let mut e = self.entry("decisive");
            e.text = Some(format!(
                "{place} the navigator's best documents all lie here"
            ));
            e.args = Some(json!([menu.keys[i]]));
            self.out.trace.push(e);
            vec![menu.items[i]]
        } else {
            match self.pick(&menu, place)? {
                Some(p) => p,
                None => return Ok(false),
            }
        };
        // The navigator's best group that the model passed over is the last resort here.
        if let Some(Item::Node(n)) = menu.items.iter().find(|i| !picked.contains(i)) {
            self.stack.push(*n);
        }
        for item in picked.iter().rev() {
            if let Item::Node(n) = item {
                self.stack.push(*n);
            }
        }
        let chosen: Vec<usize> = picked
            .iter()
            .filter_map(|i| match i {
                Item::Doc(d) => Some(*d),
                Item::Node(_) => None,
            })
            .collect();
        if chosen.is_empty() {
            return Ok(false);
        }
        let mut shown = chosen;
        if let Some(d) = self.suggestion(&shown) {
            let mut e = self.entry("suggest");
            e.text = Some(self.g.a.docs[d].source.clone());
            e.args = Some(json!({"id": self.g.a.docs[d].id}));
            self.out.trace.push(e);
            shown.push(d);
        }
        self.answer(&shown, false)
    }

    /// The group of a menu of groups that holds all of the navigator's best unseen documents in
    /// the library (as many as an answer is shown: the picks and the suggestion), taken without
    /// asking the model: where the flat evidence all points one way, a menu costs a call and its
    /// tokens and can only lose the answer's branch. A menu with documents is always asked.
    fn decisive(&self, menu: &Menu) -> Option<usize> {
        if menu.items.iter().any(|i| matches!(i, Item::Doc(_))) {
            return None;
        }
        let mut best = self.best_unseen(&[]);
        best.truncate(PICK_DOCS + 1);
        if best.is_empty() {
            return None;
        }
        menu.items.iter().position(|i| match i {
            Item::Node(n) => {
                let under = self.g.nav.below(*n);
                best.iter().all(|d| under.contains(d))
            }
            Item::Doc(_) => false,
        })
    }

    /// The library's documents not shown yet and not in `chosen`, the navigator's best first.
    fn best_unseen(&self, chosen: &[usize]) -> Vec<usize> {
        let rest: Vec<usize> = (0..self.g.a.docs.len())
            .filter(|&d| !chosen.contains(&d) && !self.seen.contains(&Item::Doc(d)))
            .collect();
        self.route.rank_docs(&rest)
    }

    /// The navigator's best document in the library that was neither shown yet nor `chosen`:
    /// shown beside the model's picks at each answer, so that an answer from a branch the model
    /// picked wrongly still has the evidence a flat search has (with Qwen2.5-Coder 1.5B, the
    /// walks that missed the answer had left its branch at a menu).
    fn suggestion(&self, chosen: &[usize]) -> Option<usize> {
        self.best_unseen(chosen).first().copied()
    }

    /// The walk's last call: the best documents shown so far (by the navigator's ranking),
    /// answered from as far as they go, with no "not here" to choose.
    fn last_answer(&mut self) -> Result<bool, AgentError> {
        let shown: Vec<usize> = (0..self.g.a.docs.len())
            .filter(|&d| self.seen.contains(&Item::Doc(d)))
            .collect();
        let mut best = self.route.rank_docs(&shown);
        best.truncate(LAST_DOCS);
        let mut e = self.entry("last");
        e.text = Some("answering from the best documents shown".into());
        self.out.trace.push(e);
        self.answer(&best, true)
    }

    /// The model's picks from a menu, checked against it; a reply outside the menu is asked
    /// again once, then the navigator's first option stands in. `None`: the step cap is reached.
    fn pick(&mut self, menu: &Menu, place: &str) -> Result<Option<Vec<Item>>, AgentError> {
        let schema = reply::pick_schema(&menu.keys, menu.max_pick);
        let rows = menu.render();
        let base = reply::pick_prompt(self.question, place, &rows, menu.max_pick);
        let mut user = base.clone();
        for attempt in 0..2 {
            let Some(text) = self.call(&user, "pick", &schema, &[("menus", rows.len())], false)?
            else {
                return Ok(None);
            };
            if let Some(last) = self.out.trace.last_mut() {
                last.kind = "menu".into();
                last.text = Some(format!("{place}\n{rows}"));
            }
            let parsed = reply::read_pick(&text).unwrap_or_default();
            let mut items: Vec<Item> = Vec::new();
            let mut wrong: Vec<String> = Vec::new();
            for k in &parsed.keys {
                match menu.find(k) {
                    Some(i) if !items.contains(&i) => items.push(i),
                    Some(_) => {}
                    None => wrong.push(k.clone()),
                }
            }
            items.truncate(menu.max_pick);
            if wrong.is_empty() && !items.is_empty() {
                let mut e = self.entry("choice");
                e.text = Some(parsed.reason);
                e.args = Some(json!(parsed.keys));
                self.out.trace.push(e);
                return Ok(Some(items));
            }
            let note = if parsed.keys.is_empty() {
                "Your reply had no pick.".to_string()
            } else {
                format!("{} is not a key of the menu.", wrong.join(", "))
            };
            let mut e = self.entry(if attempt == 0 { "retry" } else { "fallback" });
            e.text = Some(note.clone());
            self.out.trace.push(e);
            user = format!(
                "{base}\n\n{note} Pick only from these keys: {}.",
                menu.keys.join(", ")
            );
        }
        Ok(Some(vec![menu.items[0]]))
    }

    /// Shows the chosen documents (each within its share, the passages nearest the question
    /// first) and reads the answer (`last`: the walk's last, which must answer). `true`: answered
    /// or refused; `false`: not here, so the walk goes on.
    fn answer(&mut self, chosen: &[usize], last: bool) -> Result<bool, AgentError> {
        let a = self.g.a;
        let ids: Vec<String> = chosen.iter().map(|&d| a.docs[d].id.clone()).collect();
        let keys: Vec<String> = (0..chosen.len()).map(compose::key).collect();
        let mut shown = Vec::new();
        for (k, &d) in keys.iter().zip(chosen) {
            self.seen.insert(Item::Doc(d));
            let text = super::passages::nearest(&a.docs[d].text, self.question, self.g.doc_chars);
            self.out.bytes_read += text.len();
            shown.push((k.clone(), a.cards[d].title.clone(), text));
        }
        for id in &ids {
            if !self.out.fetched.contains(id) {
                self.out.fetched.push(id.clone());
            }
        }
        let mut e = self.entry("open");
        e.tool = Some("get_document".into());
        e.args = Some(json!({"ids": ids}));
        e.result_bytes = Some(shown.iter().map(|s| s.2.len()).sum());
        self.out.trace.push(e);
        let (schema, base) = if last {
            (
                reply::last_schema(&keys),
                reply::last_prompt(self.question, &shown),
            )
        } else {
            (
                reply::answer_schema(&keys),
                reply::answer_prompt(self.question, &shown),
            )
        };
        let doc_chars: usize = shown.iter().map(|s| s.2.len()).sum();
        let mut user = base.clone();
        for attempt in 0..2 {
            let parts = [("documents", doc_chars)];
            let Some(text) = self.call(&user, "answer", &schema, &parts, last)? else {
                return Ok(false);
            };
            // The call's entry is the documents shown; the verdict gets its own entry.
            if let Some(last) = self.out.trace.last_mut() {
                last.kind = "documents".into();
            }
            let r = reply::read_answer(&text).unwrap_or_default();
            let wrong: Vec<&str> = r
                .cite
                .iter()
                .map(String::as_str)
                .filter(|c| !keys.iter().any(|k| k == c))
                .collect();
            let note = if !wrong.is_empty() {
                Some((
                    "citation",
                    format!(
                        "You cited {}, which you were not shown. Cite only these keys: {}.",
                        wrong.join(", "),
                        keys.join(", ")
                    ),
                ))
            } else if r.found && reply::own_words(&r.answer) < 3 {
                // A small model may put only the citation where the answer goes.
                Some(("wordless", "Your answer said nothing but its citation: write the answer itself in answer, from what the documents say, and their keys in cite.".to_string()))
            } else if r.found && reply::restates(&r.answer, self.question) {
                Some(("restated", "Your answer repeated the question: answer it from what the documents say, starting with a direct sentence.".to_string()))
            } else {
                None
            };
            if let Some((kind, note)) = note.filter(|_| attempt == 0) {
                let mut e = self.entry(kind);
                e.text = Some(note.clone());
                self.out.trace.push(e);
                user = format!("{base}\n\n{note}");
                continue;
            }
            return Ok(self.judge(r, &ids));
        }
        Ok(false)
    }

    /// Whether the walk ends on an answer: it stands (found, citing shown documents or held by
    /// one of them, and taken from what its documents say), or it passes on a planted
    /// instruction and is refused.
    fn judge(&mut self, r: reply::Answer, ids: &[String]) -> bool {
        let mut e = self.entry(if r.found { "answer" } else { "not_here" });
        e.text = Some(r.reason.clone());
        self.out.trace.push(e);
        if !r.found {
            self.backups += 1;
            return false;
        }
        let given: Vec<&str> = ids.iter().map(String::as_str).collect();
        let (answer, mut cited) = compose::resolve(&r.answer, &r.cite, &given);
        let tools = &self.g.tools;
        if cited.is_empty() {
            cited = ground::supporting(&answer, ids, tools);
            self.out.attributed = !cited.is_empty();
        }
        if let Some(why) = ground::planted(&answer, ids, tools) {
            self.out.unverified = answer;
            self.out.refused = Some(why);
            self.out.stopped = "refused".into();
            return true;
        }
        let unsupported = ground::unsupported(&answer, &cited, tools);
        if cited.is_empty() || unsupported.is_some() {
            let mut e = self.entry("support");
            e.text = Some(match unsupported {
                Some(share) => ground::unsupported_note(share, &cited),
                None => "the answer cites no document shown and none holds what it says".into(),
            });
            self.out.trace.push(e);
            self.out.attributed = false;
            self.out.unverified = answer;
            self.backups += 1;
            return false;
        }
        self.out.answer = answer;
        self.out.cited = cited;
        self.out.unverified.clear();
        self.out.stopped = "answered".into();
        true
    }

    /// One model call: the request, its reply's text and usage in the answer and trace, and the
    /// estimated tokens of each part of the prompt. `None`: the cap of model calls is reached
    /// (less the one kept for the `last` answer once documents were shown).
    fn call(
        &mut self,
        user: &str,
        name: &str,
        schema: &Value,
        parts: &[(&str, usize)],
        last: bool,
    ) -> Result<Option<String>, AgentError> {
        let kept = usize::from(!last && !self.out.fetched.is_empty());
        if self.out.turns + kept >= self.g.max_steps {
            if !self.exhausted {
                let e = self.entry("budget");
                self.out.trace.push(e);
            }
            self.exhausted = true;
            return Ok(None);
        }
        let body = self.g.body(user, name, schema);
        let sent = self.g.chat.send(&body)?;
        let kind = self.g.chat.kind;
        let r = wire::reply(kind, &sent.body).map_err(|message| AgentError::Reply {
            url: self.g.chat.url.clone(),
            message,
        })?;
        self.out.turns += 1;
        self.out.seconds += sent.seconds;
        self.out.input_tokens += r.input_tokens;
        self.out.output_tokens += r.output_tokens;
        let mut counted = 0;
        let mut add = |part: &str, chars: usize| {
            counted += chars;
            *self.out.prompt_parts.entry(part.into()).or_default() += chars.div_ceil(4) as u64;
        };
        add("system", reply::SYSTEM.len());
        add("question", self.question.len());
        for (part, chars) in parts {
            add(part, *chars);
        }
        let rest = (reply::SYSTEM.len() + user.len()).saturating_sub(counted);
        *self.out.prompt_parts.entry("format".into()).or_default() += rest.div_ceil(4) as u64;
        let mut e = self.entry(name);
        e.input_tokens = r.input_tokens;
        e.output_tokens = r.output_tokens;
        self.out.trace.push(e);
        Ok(Some(r.text))
    }

    fn entry(&self, kind: &str) -> TraceEntry {
        TraceEntry {
            turn: self.out.turns,
            kind: kind.into(),
            ..TraceEntry::default()
        }
    }
}
