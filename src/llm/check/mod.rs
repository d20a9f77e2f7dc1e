//! Checks a model's answer against what the model was shown before it becomes a label, summary,
//! card or tag set: words drawn from the members, no invented commands, numbers or names, no
//! echo of the prompt, and a routing length. Each check repairs what it can and says what.

use std::collections::HashSet;

mod label;
mod summary;

pub use label::label;
pub use summary::{summary, unsupported};

use crate::text::is_stopword;

/// An answer that was usable, and what had to be repaired to use it (empty: used as written).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed<T> {
    pub value: T,
    pub repairs: Vec<String>,
}

impl<T> Parsed<T> {
    pub fn clean(value: T) -> Parsed<T> {
        Parsed {
            value,
            repairs: Vec::new(),
        }
    }
}

/// What the model was shown: the text a claim may come from.
pub struct Source {
    /// Lowercased, whitespace-collapsed.
    text: String,
    /// The same as word tokens, space-separated and space-padded (` a b c `).
    tokens: String,
    stems: HashSet<String>,
    prefixes: HashSet<String>,
}

/// The first 6 characters of a word of at least 6.
fn prefix6(w: &str) -> Option<&str> {
    w.char_indices()
        .nth(6)
        .map(|(i, _)| &w[..i])
        .or((w.chars().count() == 6).then_some(w))
}

impl Source {
    pub fn new<'a>(texts: impl IntoIterator<Item = &'a str>) -> Source {
        let mut text = String::new();
        for t in texts {
            text.push_str(&t.to_lowercase());
            text.push('\n');
        }
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let words: Vec<String> = word_tokens(&text).collect();
        let stems = words.iter().map(|w| stem(w)).collect();
        let prefixes = words
            .iter()
            .filter_map(|w| prefix6(w))
            .map(str::to_string)
            .collect();
        let tokens = format!(" {} ", words.join(" "));
        Source {
            text,
            tokens,
            stems,
            prefixes,
        }
    }

    /// Whether a word (any case, any simple inflection, or sharing its first 6 letters with a
    /// word of 6 or more: "installation" and "install") occurs.
    pub fn has_word(&self, w: &str) -> bool {
        let w = w.to_lowercase();
        self.stems.contains(&stem(&w)) || prefix6(&w).is_some_and(|p| self.prefixes.contains(p))
    }

    /// Whether a phrase occurs as written, or word for word (case, spacing and punctuation aside).
    pub fn has_phrase(&self, p: &str) -> bool {
        let lower = p.to_lowercase();
        let raw = lower.split_whitespace().collect::<Vec<_>>().join(" ");
        if raw.is_empty() {
            return false;
        }
        if self.text.contains(&raw) {
            return true;
        }
        let words: Vec<String> = word_tokens(&lower).collect();
        !words.is_empty() && self.tokens.contains(&format!(" {} ", words.join(" ")))
    }

    /// The longest run of consecutive words of `s` that the source holds word for word.
    pub(crate) fn longest_copied_run(&self, s: &str) -> usize {
        let words: Vec<String> = word_tokens(&s.to_lowercase()).collect();
        let holds = |run: &[String]| self.tokens.contains(&format!(" {} ", run.join(" ")));
        let mut best = 0;
        for i in 0..words.len() {
            while i + best < words.len() && holds(&words[i..=i + best]) {
                best += 1;
            }
        }
        best
    }
}

pub(crate) fn word_tokens(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
}

pub use crate::text::stem;

/// Entities that occur in the members as written; the others are dropped.
pub fn entities(list: Vec<String>, members: &Source) -> Parsed<Vec<String>> {
    let mut repairs = Vec::new();
    let kept = list
        .into_iter()
        .filter(|e| {
            let ok = members.has_phrase(e);
            if !ok {
                repairs.push(format!("dropped the entity `{e}`: no member contains it"));
            }
            ok
        })
        .collect();
    Parsed {
        value: kept,
        repairs,
    }
}

/// Card phrases with at least one content word from the document; the others are dropped.
pub fn phrases(list: Vec<String>, doc: &Source) -> Parsed<Vec<String>> {
    let mut repairs = Vec::new();
    let kept = list
        .into_iter()
        .filter(|p| {
            let ok = label::label_words(p)
                .iter()
                .any(|w| !is_stopword(w) && doc.has_word(w));
            if !ok {
                repairs.push(format!(
                    "dropped the phrase `{p}`: the document does not hold it"
                ));
            }
            ok
        })
        .collect();
    Parsed {
        value: kept,
        repairs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_match_inflections() {
        assert_eq!(stem("domains"), stem("domain"));
        assert_eq!(stem("configuring"), stem("configure"));
        assert_eq!(stem("policies"), stem("policy"));
        assert_ne!(stem("class"), stem("cla"));
    }
}
