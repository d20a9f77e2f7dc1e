//! The offline `extractive` LLM stand-in: cards from titles and first sentences, summaries in
//! sentences, labels from the phrases titles share, and entity tags that are names.

use std::collections::HashSet;

use super::names;
use super::phrases::{self, Member};
use super::terms::{doc_phrases, doc_types, plain_phrases};
use super::{Card, CardInput, ClusterInput, Llm, LlmError, Tags};
use crate::markdown::{plain_text, plain_with_line};
use crate::text::{clip_chars, clip_line, clip_words, one_line, sentence_cows};

/// Version of the extractive algorithms; part of the manifest and memo keys.
pub const EXTRACTIVE_VERSION: &str = "extractive-5";

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
        // The title as a sentence of its own, then the text: parsed once when the title cannot
        // change how the text reads.
        let titled = format!("{title}.");
        let phrases = match plain_with_line(&titled, head, &plain) {
            Some(p) => plain_phrases(&p, 4),
            None => doc_phrases(&format!("{titled}\n{head}"), 4),
        };
        Ok(Card {
            title,
            one_line: one_line_text,
            phrases,
        })
    }

    fn reads_marks(&self) -> bool {
        true
    }

    fn summarize(&self, input: &ClusterInput) -> Result<String, LlmError> {
        Ok(if input.leaf {
            leaf_summary(input)
        } else {
            group_summary(input)
        })
    }

    fn label(&self, input: &ClusterInput, _summary: &str) -> Result<String, LlmError> {
        let avoid: HashSet<String> = input.avoid.iter().cloned().collect();
        Ok(label_of(&members_of(input), &avoid))
    }

    fn tags(&self, input: &ClusterInput) -> Result<Tags, LlmError> {
        let names: Vec<&[String]> = input.items.iter().map(|i| &i.marks.names[..]).collect();
        Ok(Tags {
            entities: names::entities(&names, 32),
            doc_types: doc_types(&item_pairs(input)),
        })
    }
}

/// (title, text) pairs of the items.
fn item_pairs(input: &ClusterInput) -> Vec<(String, String)> {
    input
        .items
        .iter()
        .map(|i| (i.title.clone(), i.text.clone()))
        .collect()
}

/// What the labeller reads of each item: a document's title and headings, or a child group's
/// label and the titles its summary quotes.
pub fn members_of(input: &ClusterInput) -> Vec<(String, Vec<String>)> {
    input
        .items
        .iter()
        .map(|i| {
            let headings = if input.leaf {
                i.marks.headings.clone()
            } else {
                quoted(&i.text)
            };
            (i.title.clone(), headings)
        })
        .collect()
}

/// The label of members given as (title, headings): the phrase they share, else words of the
/// first (most central) one's title, avoiding the words in `avoid`.
pub fn label_of(members: &[(String, Vec<String>)], avoid: &HashSet<String>) -> String {
    let m: Vec<Member> = members
        .iter()
        .map(|(t, h)| Member {
            title: t,
            headings: h,
        })
        .collect();
    // No shared phrase: the first member's title that has words of its own (most central
    // first); when every word is one the level shares ("Quill"), it still beats "misc".
    phrases::label(&m, avoid)
        .or_else(|| (0..m.len()).find_map(|i| phrases::title_label(&m[i..], avoid)))
        .or_else(|| phrases::title_label(&m, &HashSet::new()))
        .unwrap_or_else(|| "misc".into())
}

/// Titles quoted in a summary (“…”), as this backend's summaries quote their examples.
fn quoted(summary: &str) -> Vec<String> {
    summary
        .split('“')
        .skip(1)
        .filter_map(|s| s.split_once('”').map(|(q, _)| q.trim().to_string()))
        .filter(|q| !q.is_empty())
        .collect()
}

/// Up to two topics the members share (non-overlapping phrases held by two members or more).
fn topics(members: &[(String, Vec<String>)]) -> Vec<String> {
    if members.len() < 2 {
        return Vec::new();
    }
    let m: Vec<Member> = members
        .iter()
        .map(|(t, h)| Member {
            title: t,
            headings: h,
        })
        .collect();
    let mut picked: Vec<Vec<String>> = Vec::new();
    for p in phrases::shared(&m, &HashSet::new()) {
        if picked.len() == 2 {
            break;
        }
        if !picked.iter().any(|q| q.iter().any(|w| p.words.contains(w))) {
            picked.push(p.words);
        }
    }
    picked.into_iter().map(|w| w.join(" ")).collect()
}

/// “Title”, at most 8 words (a longer one ends with "…").
fn quote(title: &str) -> String {
    format!(
        "“{}”",
        clip_line(&one_line(title), 8).trim_end_matches(['.', ':'])
    )
}

/// A leaf's summary in sentences: what its documents are about (the topics their titles share)
/// with two of them by title, the central document's first prose sentence, and the questions
/// its titles ask.
fn leaf_summary(input: &ClusterInput) -> String {
    let members = members_of(input);
    let titles: Vec<String> = input
        .items
        .iter()
        .take(2)
        .map(|i| quote(&i.title))
        .collect();
    let mut out = match (topics(&members).as_slice(), titles.as_slice()) {
        (_, []) => String::new(),
        (_, [one]) if input.items.len() == 1 => format!("One document, {one}."),
        ([], t) => format!("Documents such as {}.", join_and(t)),
        (tp, t) => format!("Documents about {}, such as {}.", join_and(tp), join_and(t)),
    };
    if let Some(first) = input.items.first() {
        let s = clip_line(&card_sentence(&first.text, &first.title), 20);
        if s.split_whitespace().count() >= 6 && !out.contains(&s) {
            out.push(' ');
            out.push_str(&s);
            if !s.ends_with(['.', '!', '?', '…']) {
                out.push('.');
            }
        }
    }
    push_questions(&mut out, input.items.iter().map(|i| i.title.as_str()));
    out.trim().to_string()
}

/// A higher node's summary in sentences, from its children: the two largest groups by label
/// with documents their summaries quote, the other groups, and the questions they answer.
fn group_summary(input: &ClusterInput) -> String {
    let mut labels: Vec<String> = Vec::new();
    for i in &input.items {
        if !labels.contains(&i.title) {
            labels.push(i.title.clone());
        }
    }
    let examples: Vec<String> = input
        .items
        .iter()
        .filter_map(|i| quoted(&i.text).into_iter().next())
        .take(2)
        .map(|t| quote(&t))
        .collect();
    let head = &labels[..labels.len().min(2)];
    let mut out = format!("Groups about {}", join_and(head));
    if !examples.is_empty() {
        out.push_str(&format!(", with documents such as {}", join_and(&examples)));
    }
    out.push('.');
    if labels.len() > 2 {
        let rest = &labels[2..labels.len().min(8)];
        let more = labels.len() - 2 - rest.len();
        let tail = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        out.push_str(&format!(
            " Its other groups cover {}{tail}.",
            join_and(rest)
        ));
    }
    let questions: Vec<String> = input.items.iter().flat_map(|i| quoted(&i.text)).collect();
    push_questions(&mut out, questions.iter().map(String::as_str));
    out
}

/// " It answers questions such as “Q1” and “Q2”." from the titles that read as questions.
fn push_questions<'a>(out: &mut String, titles: impl Iterator<Item = &'a str>) {
    let mut qs: Vec<String> = Vec::new();
    for q in titles.filter_map(question_form) {
        let q = format!("“{}”", q.trim_end_matches(['”']));
        if qs.len() < 2 && !qs.contains(&q) {
            qs.push(q);
        }
    }
    if !qs.is_empty() {
        out.push_str(&format!(" It answers questions such as {}.", join_and(&qs)));
    }
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
    let not_title = |s: &str| {
        s.split_whitespace().count() >= 4 && s.to_lowercase().trim_end_matches('.') != title_norm
    };
    // Split as far as needed: most documents' first sentences hold one that reads as prose.
    sentence_cows(plain)
        .take(40)
        .find(|s| not_title(s) && is_prose(s))
        .or_else(|| sentence_cows(plain).find(|s| not_title(s)))
        .or_else(|| sentence_cows(plain).next())
        .map(|s| clip_line(&s, 25))
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
            avoid: Vec::new(),
            leaf: true,
            items: vec![
                ClusterItem {
                    title: "Refund policy for ads".into(),
                    text: "Ad credits are non-refundable. Refund policy details.".into(),
                    marks: Default::default(),
                },
                ClusterItem {
                    title: "How to request a refund".into(),
                    text: "Request a refund from billing. Refund policy applies.".into(),
                    marks: Default::default(),
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
