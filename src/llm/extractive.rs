//! The offline `extractive` LLM stand-in: titles, first sentences, distinctive phrases and entity tags.

use super::terms::{cluster_terms, doc_phrases, doc_types, entities};
use super::{Card, CardInput, ClusterInput, Llm, LlmError, Tags};
use crate::text::{clip_chars, clip_line, clip_words, one_line, plain_text, sentences};

/// Version of the extractive algorithms; part of the manifest and memo keys.
pub const EXTRACTIVE_VERSION: &str = "extractive-3";

/// Deterministic, offline, and local to each input (no corpus-wide statistics).
#[derive(Debug, Default, Clone, Copy)]
pub struct Extractive;

impl Llm for Extractive {
    fn model_id(&self) -> String {
        EXTRACTIVE_VERSION.to_string()
    }

    fn prompt_version(&self, stage: &str) -> String {
        format!("{EXTRACTIVE_VERSION}/{stage}")
    }

    fn card(&self, input: &CardInput) -> Result<Card, LlmError> {
        let head = clip_chars(input.text, 6000);
        let plain = plain_text(head);
        let title = input
            .title
            .map(|t| clip_words(&one_line(t), 16))
            .or_else(|| first_heading(head))
            .or_else(|| {
                plain
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .map(|l| clip_words(l, 12))
            })
            .unwrap_or_else(|| "Untitled".to_string());
        let one_line_text = match input.description {
            Some(d) => clip_line(&one_line(d), 25),
            None => card_sentence(&plain, &title),
        };
        let phrases = doc_phrases(&format!("{title}.\n{head}"), 4);
        Ok(Card {
            title,
            one_line: one_line_text,
            phrases,
        })
    }

    fn summarize(&self, input: &ClusterInput) -> Result<String, LlmError> {
        let items = item_pairs(input);
        let terms = cluster_terms(&items, 6);
        let mut out = String::new();
        if !terms.is_empty() {
            out.push_str(&format!("Covers {}.", join_and(&terms)));
        }
        let titles: Vec<String> = input
            .items
            .iter()
            .take(3)
            .map(|i| clip_words(&i.title, 10))
            .collect();
        if !titles.is_empty() {
            let what = if input.leaf {
                "Documents such as"
            } else {
                "Topics such as"
            };
            out.push_str(&format!(" {what} {}.", titles.join("; ")));
        }
        let questions: Vec<String> = input
            .items
            .iter()
            .filter_map(|i| question_form(&i.title))
            .take(2)
            .collect();
        if !questions.is_empty() {
            out.push_str(&format!(" Typical questions: {}", questions.join(" ")));
        }
        Ok(out.trim().to_string())
    }

    fn label(&self, input: &ClusterInput, _summary: &str) -> Result<String, LlmError> {
        let items = item_pairs(input);
        let terms = cluster_terms(&items, 3);
        let mut words: Vec<String> = Vec::new();
        for t in terms {
            let tw: Vec<String> = t.split_whitespace().map(str::to_lowercase).collect();
            if words.len() + tw.len() > 4 {
                continue;
            }
            words.extend(tw);
            if words.len() >= 3 {
                break;
            }
        }
        if words.is_empty() {
            words.push("misc".into());
        }
        Ok(words.join(" "))
    }

    fn tags(&self, input: &ClusterInput) -> Result<Tags, LlmError> {
        let texts: Vec<String> = input
            .items
            .iter()
            .map(|i| format!("{}.\n{}", i.title, i.text))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        Ok(Tags {
            entities: entities(&refs, 8),
            doc_types: doc_types(&item_pairs(input)),
        })
    }
}

/// (title, text) pairs; for clusters of clusters, the summary scaffolding this backend writes is
/// removed first so it does not read as topic words.
fn item_pairs(input: &ClusterInput) -> Vec<(String, String)> {
    input
        .items
        .iter()
        .map(|i| {
            let text = if input.leaf {
                i.text.clone()
            } else {
                strip_scaffolding(&i.text)
            };
            (i.title.clone(), text)
        })
        .collect()
}

const SCAFFOLDING: &[&str] = &[
    "Covers ",
    "Documents such as ",
    "Topics such as ",
    "Typical questions: ",
    "Answers questions about ",
];

fn strip_scaffolding(s: &str) -> String {
    let mut t = s.to_string();
    for p in SCAFFOLDING {
        t = t.replace(p, ". ");
    }
    t
}

fn join_and(terms: &[String]) -> String {
    match terms {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {}", rest.join(", "), last),
    }
}

/// A title that reads as a question or a task, phrased as a question.
fn question_form(title: &str) -> Option<String> {
    let t = one_line(title);
    let lower = t.to_lowercase();
    if t.ends_with('?') {
        return Some(t);
    }
    for lead in ["how to ", "how do i ", "why ", "what ", "can i ", "when "] {
        if lower.starts_with(lead) {
            return Some(format!("{}?", t.trim_end_matches('.')));
        }
    }
    None
}

fn first_heading(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with('#'))
        .map(|l| clip_words(l.trim_start_matches('#').trim(), 16))
        .filter(|l| !l.is_empty())
}

/// The document's first sentence that reads as prose: not the title, not a link, an author list
/// or a line of metadata (`DOI:…`, `License:…`), so that a paper's card says what it is about.
fn card_sentence(plain: &str, title: &str) -> String {
    let title_norm = title.to_lowercase();
    let all = sentences(plain);
    let not_title = |s: &String| {
        s.split_whitespace().count() >= 4 && s.to_lowercase().trim_end_matches('.') != title_norm
    };
    all.iter()
        .take(40)
        .find(|s| not_title(s) && is_prose(s))
        .or_else(|| all.iter().find(|s| not_title(s)))
        .or_else(|| all.first())
        .map(|s| clip_line(s, 25))
        .unwrap_or_default()
}

/// Prose, as opposed to metadata: six or more words, no link, at most one semicolon, no
/// `Key:value` opening, and mostly lowercase words (names and titles are capitalized).
fn is_prose(s: &str) -> bool {
    let words: Vec<&str> = s.split_whitespace().collect();
    if words.len() < 6 || s.contains("http") || s.matches(';').count() > 1 {
        return false;
    }
    let first = words[0];
    if first.ends_with(':') || first.contains(':') {
        return false;
    }
    let lower = words
        .iter()
        .filter(|w| w.chars().next().is_some_and(char::is_lowercase))
        .count();
    lower * 2 >= words.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ClusterItem;

    #[test]
    fn card_prefers_frontmatter_then_heading() {
        let c = Extractive
            .card(&CardInput {
                title: None,
                description: None,
                text: "# Pairing the remote\n\nHold Back and Play for three seconds to pair the Samsung Smart Remote.",
            })
            .unwrap();
        assert_eq!(c.title, "Pairing the remote");
        assert!(c.one_line.starts_with("Hold Back and Play"));
        let c2 = Extractive
            .card(&CardInput {
                title: Some("T"),
                description: Some("D"),
                text: "body words here",
            })
            .unwrap();
        assert_eq!((c2.title.as_str(), c2.one_line.as_str()), ("T", "D"));
    }

    #[test]
    fn summary_and_label_depend_only_on_input() {
        let input = ClusterInput {
            leaf: true,
            items: vec![
                ClusterItem {
                    title: "Refund policy for ads".into(),
                    text: "Ad credits are non-refundable. Refund policy details.".into(),
                },
                ClusterItem {
                    title: "How to request a refund".into(),
                    text: "Request a refund from billing. Refund policy applies.".into(),
                },
            ],
        };
        let s = Extractive.summarize(&input).unwrap();
        assert!(s.to_lowercase().contains("refund"), "{s}");
        assert_eq!(s, Extractive.summarize(&input).unwrap());
        let l = Extractive.label(&input, &s).unwrap();
        assert!(l.contains("refund"), "{l}");
        assert!((1..=5).contains(&l.split_whitespace().count()));
    }
}
