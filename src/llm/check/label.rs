//! The label check: 2–5 words, each drawn from the members, never a bare number or the
//! prompt's own words.

use std::collections::HashSet;

use super::{Parsed, Source, stem, word_tokens};
use crate::text::is_stopword;

/// Words a label does without ("users and their accounts" → "users and accounts").
const DETERMINERS: &[&str] = &[
    "the", "a", "an", "their", "your", "its", "our", "his", "her", "this", "these", "those", "my",
];

/// Words of a label: lowercase letters and digits.
pub(super) fn label_words(s: &str) -> Vec<String> {
    word_tokens(&s.to_lowercase()).collect()
}

/// A label of 2–5 words, every word drawn from the members (never a number alone, never the
/// prompt's own words). Words that fail are dropped; too few left is an error.
pub fn label(raw: &str, members: &Source, prompt: &str) -> Result<Parsed<String>, String> {
    let first = raw
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let first = first.strip_prefix("label:").unwrap_or(first);
    let first = first.strip_prefix("Label:").unwrap_or(first);
    let words = label_words(first);
    if words.is_empty() {
        return Err("the label is empty".into());
    }
    if words.len() > 8 {
        return Err(format!(
            "`{}` is a sentence, not a label of 2 to 5 words",
            crate::text::clip_words(first, 10)
        ));
    }
    if words.iter().all(|w| w.chars().all(|c| c.is_ascii_digit())) {
        return Err(format!("`{first}` is a number, not a subject"));
    }
    let prompt_words: HashSet<String> = label_words(prompt).into_iter().map(|w| stem(&w)).collect();
    let mut repairs = Vec::new();
    let mut kept: Vec<String> = Vec::new();
    for w in &words {
        let numeric = w.chars().all(|c| c.is_ascii_digit());
        if !members.has_word(w) {
            let why = if prompt_words.contains(&stem(w)) {
                "is the prompt's own word"
            } else if numeric {
                "is a number no member holds"
            } else {
                "is in no member"
            };
            repairs.push(format!("dropped `{w}` from the label: it {why}"));
            continue;
        }
        if !DETERMINERS.contains(&w.as_str()) {
            kept.push(w.clone());
        }
    }
    while kept.first().is_some_and(|w| is_stopword(w)) {
        kept.remove(0);
    }
    while kept.last().is_some_and(|w| is_stopword(w)) {
        kept.pop();
    }
    kept.dedup();
    if kept.is_empty() {
        return Err(format!("no word of `{first}` occurs in the members"));
    }
    if kept.iter().all(|w| w.chars().all(|c| c.is_ascii_digit())) {
        return Err(format!("`{first}` is a number, not a subject"));
    }
    if kept.len() < 2 {
        return Err(format!(
            "`{first}` leaves {} word(s) drawn from the members; 2 to 5 are needed",
            kept.len()
        ));
    }
    if kept.len() > 5 {
        kept.truncate(5);
        repairs.push("cut the label to 5 words".into());
    }
    Ok(Parsed {
        value: kept.join(" "),
        repairs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(t: &str) -> Source {
        Source::new([t])
    }

    #[test]
    fn labels_are_drawn_from_the_members() {
        let m = src("Custom domains and TLS. Add a CNAME record at your DNS provider.");
        let prompt = "Reply with a label of 2 to 5 words, lowercase. No quotes, no punctuation.";
        let ok = label("Custom Domain DNS setup", &m, prompt).unwrap();
        assert_eq!(ok.value, "custom domain dns");
        assert_eq!(ok.repairs.len(), 1, "{:?}", ok.repairs);
        assert!(label("5", &m, prompt).is_err());
        let echo = label("no quotes no punctuation", &m, prompt).unwrap_err();
        assert!(echo.contains("no word"), "{echo}");
        assert!(
            label("domains", &m, prompt).is_err(),
            "one word is not enough"
        );
        assert!(
            label(
                "This group is about custom domains and the DNS records you add for TLS",
                &m,
                prompt
            )
            .is_err()
        );
    }
}
