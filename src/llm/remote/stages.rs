//! The method's stages on a remote model: each fills its prompt, asks, and checks the answer
//! against what the prompt showed (the document, or the cluster's members).

use std::collections::BTreeMap;

use super::{CARD_CHARS, Remote, Usage};
use crate::llm::check::Source;
use crate::llm::prompts::{fill, prompt, stage_prompt_id};
use crate::llm::{
    Card, CardInput, Change, ClusterInput, Llm, LlmError, RepartitionInput, Stored, Tags, parse,
};
use crate::text::clip_chars;

/// `- title: text` lines.
fn item_lines(input: &ClusterInput) -> String {
    input
        .items
        .iter()
        .map(|i| format!("- {}: {}", i.title, i.text))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The document as the card's check sees it (the part of it the model is shown).
fn card_source(input: &CardInput) -> Source {
    Source::new([clip_chars(input.text, CARD_CHARS)])
}

/// The summary prompt of a group (a leaf's or a higher one's).
fn summary_prompt_id(input: &ClusterInput) -> &'static str {
    if input.leaf {
        "summary_leaf"
    } else {
        "summary_higher"
    }
}

/// The summary prompt's own words (an answer must not echo them).
fn summary_prompt(input: &ClusterInput) -> Source {
    let p = prompt(summary_prompt_id(input));
    Source::new([p.system, p.user])
}

/// The label prompt's own words.
fn label_prompt() -> String {
    let p = prompt("label");
    format!("{} {}", p.system, p.user)
}

/// A stored result passes when the checks of a fresh answer accept it as it is.
fn unchanged<T: PartialEq>(
    stored: &T,
    checked: Result<crate::llm::check::Parsed<T>, String>,
) -> Result<(), String> {
    match checked {
        Ok(p) if p.value == *stored => Ok(()),
        Ok(p) => Err(format!(
            "a fresh answer's checks change it ({})",
            p.repairs.join("; ")
        )),
        Err(e) => Err(e),
    }
}

/// The members' titles and texts, as the check sees them.
fn members(input: &ClusterInput) -> Source {
    Source::new(
        input
            .items
            .iter()
            .flat_map(|i| [i.title.as_str(), i.text.as_str()]),
    )
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
        let shown = clip_chars(input.text, CARD_CHARS);
        let user = fill(p.user, &[("document", shown)]);
        let doc = card_source(input);
        let strict = "Reply with only a JSON object with a non-empty string `title`, a non-empty string `one_line` and a list of strings `phrases`.";
        self.ask("card", &p, &user, strict, |t| parse::card(t, &doc))
    }

    fn summarize(&self, input: &ClusterInput) -> Result<String, LlmError> {
        let p = prompt(summary_prompt_id(input));
        let user = fill(p.user, &[("items", &item_lines(input))]);
        let shown = members(input);
        let own = summary_prompt(input);
        let strict = "Reply with only {\"summary\": \"...\"}: 2 or 3 plain sentences that use only names, commands and numbers found between <<< and >>>, not a list.";
        self.ask("summary", &p, &user, strict, |t| {
            parse::summary(t, &shown, &own)
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
        let shown = members(input);
        let own = label_prompt();
        let strict = "Reply with only {\"label\": \"...\"}: 2 to 5 lowercase words that occur in the titles, no numbers.";
        self.ask("label", &p, &user, strict, |t| {
            parse::label(t, &shown, &own)
        })
    }

    fn tags(&self, input: &ClusterInput) -> Result<Tags, LlmError> {
        let p = prompt("tags");
        let user = fill(p.user, &[("items", &item_lines(input))]);
        let shown = members(input);
        let strict =
            "Reply with only a JSON object with lists of strings `entities` and `doc_types`.";
        self.ask("tags", &p, &user, strict, |t| parse::tags(t, &shown))
    }

    fn repartition(&self, input: &RepartitionInput) -> Result<Option<Vec<Change>>, LlmError> {
        let p = prompt("repartition");
        let user = fill(p.user, &[("groups", &input.render())]);
        let strict = "Reply with only a JSON object {\"changes\": [...]} using ops move and merge.";
        self.ask("repartition", &p, &user, strict, |t| {
            let changes = parse::changes(t)?;
            input.validate(&changes.value)?;
            Ok(changes)
        })
        .map(Some)
    }

    fn reviews_partitions(&self) -> bool {
        true
    }

    fn check_stored(&self, stored: Stored<'_>) -> Option<Result<(), String>> {
        Some(match stored {
            Stored::Card(input, card) => {
                let answer = serde_json::to_string(card).unwrap_or_default();
                unchanged(card, parse::card(&answer, &card_source(input)))
            }
            Stored::Summary(input, summary) => {
                let answer = serde_json::json!({ "summary": summary }).to_string();
                let checked = parse::summary(&answer, &members(input), &summary_prompt(input));
                unchanged(&summary.to_string(), checked)
            }
            Stored::Label(input, label) => {
                let answer = serde_json::json!({ "label": label }).to_string();
                let checked = parse::label(&answer, &members(input), &label_prompt());
                unchanged(&label.to_string(), checked)
            }
            Stored::Tags(input, tags) => {
                let answer = serde_json::to_string(tags).unwrap_or_default();
                unchanged(tags, parse::tags(&answer, &members(input)))
            }
        })
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

    fn notes(&self) -> Vec<String> {
        self.notes.lock().map(|n| n.clone()).unwrap_or_default()
    }
}
