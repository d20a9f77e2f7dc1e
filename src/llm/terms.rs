//! Term statistics for the extractive backend: phrase candidates, distinctive phrases of a
//! document, and doc types.
//! Everything is scored against the built-in background table, never corpus-wide statistics.

use std::collections::HashMap;

use crate::markdown::plain_text;
use crate::text::{distinctiveness, is_stopword, sentences, word_key};

/// A candidate term (1–`max_n` words) with its first surface form and count.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub surface: String,
    pub words: usize,
    pub count: usize,
    pub first_pos: usize,
}

/// Word runs between punctuation: (surface, lowercase) pairs.
fn segments(sentence: &str) -> Vec<Vec<(String, String)>> {
    let mut out = Vec::new();
    for seg in sentence.split(|c: char| ",;:()[]{}\"|/!?–—…<>=+*#".contains(c) || c == '.') {
        let ws: Vec<(String, String)> = seg
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
            .filter(|w| !w.is_empty() && w.len() <= 40)
            .filter_map(|w| Some((w.to_string(), word_key(w)?)))
            .collect();
        if !ws.is_empty() {
            out.push(ws);
        }
    }
    out
}

/// Function words allowed inside a phrase ("terms of service"); any other one ends it.
const INNER_WORDS: &[&str] = &["of", "and", "for", "in", "on"];

/// All terms of 1..=max_n words that neither start nor end with a stopword.
pub fn candidates(text: &str, max_n: usize) -> HashMap<String, Candidate> {
    let mut out: HashMap<String, Candidate> = HashMap::new();
    let mut pos = 0;
    for s in sentences(&plain_text(text)) {
        for seg in segments(&s) {
            for start in 0..seg.len() {
                if is_stopword(&seg[start].1) {
                    continue;
                }
                for n in 1..=max_n.min(seg.len() - start) {
                    let end = start + n - 1;
                    if n > 2
                        && !INNER_WORDS.contains(&seg[end - 1].1.as_str())
                        && is_stopword(&seg[end - 1].1)
                    {
                        break;
                    }
                    if is_stopword(&seg[end].1) {
                        continue;
                    }
                    let key = seg[start..=end]
                        .iter()
                        .map(|w| w.1.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    pos += 1;
                    let e = out.entry(key).or_insert_with(|| Candidate {
                        surface: seg[start..=end]
                            .iter()
                            .map(|w| w.0.as_str())
                            .collect::<Vec<_>>()
                            .join(" "),
                        words: n,
                        count: 0,
                        first_pos: pos,
                    });
                    e.count += 1;
                }
            }
        }
    }
    out
}

/// Distinctiveness of a term: mean over its content words, with a bonus for multi-word terms.
pub fn term_weight(key: &str) -> f32 {
    let ws: Vec<&str> = key.split(' ').collect();
    let content: Vec<f32> = ws
        .iter()
        .filter(|w| !is_stopword(w))
        .map(|w| distinctiveness(w))
        .collect();
    if content.is_empty() {
        return 0.0;
    }
    let mean = content.iter().sum::<f32>() / content.len() as f32;
    mean * (1.0 + 0.25 * (ws.len().min(3) as f32 - 1.0))
}

/// Picks up to `limit` high-scoring terms, skipping ones that overlap an already picked term.
pub fn pick_non_overlapping(mut scored: Vec<(String, f32, String)>, limit: usize) -> Vec<String> {
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut picked: Vec<String> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    for (key, score, surface) in scored {
        if picked.len() >= limit || score <= 0.0 {
            break;
        }
        let overlaps = keys.iter().any(|k| {
            let kw: Vec<&str> = k.split(' ').collect();
            key.split(' ').any(|w| !is_stopword(w) && kw.contains(&w))
        });
        if !overlaps {
            keys.push(key);
            picked.push(surface);
        }
    }
    picked
}

/// The 2–4 most distinctive multi-word phrases of one document.
pub fn doc_phrases(text: &str, limit: usize) -> Vec<String> {
    let cands = candidates(text, 4);
    let scored = cands
        .into_iter()
        .filter(|(_, c)| c.words >= 2)
        .map(|(k, c)| {
            let early = 1.0 + 0.5 / (1.0 + c.first_pos as f32 / 200.0);
            let s = term_weight(&k) * (1.0 + (c.count as f32).ln()) * early;
            (k, s, c.surface)
        })
        .collect();
    pick_non_overlapping(scored, limit)
}

/// Document-type tags from cue words, kept when at least a third of the items show them.
pub fn doc_types(items: &[(String, String)]) -> Vec<String> {
    const CUES: &[(&str, &[&str])] = &[
        (
            "how-to",
            &["how to", "step", "click", "go to", "select", "follow these"],
        ),
        (
            "troubleshooting",
            &[
                "troubleshoot",
                "not working",
                "error",
                "problem",
                "issue",
                "fix",
                "unable",
            ],
        ),
        ("faq", &["faq", "frequently asked", "?"]),
        (
            "policy",
            &[
                "policy",
                "terms",
                "refund",
                "legal",
                "compliance",
                "must not",
            ],
        ),
        (
            "reference",
            &[
                "settings",
                "specification",
                "parameters",
                "options",
                "reference",
                "list of",
            ],
        ),
        (
            "overview",
            &[
                "overview",
                "introduction",
                "about ",
                "learn more",
                "what is",
            ],
        ),
    ];
    let n = items.len().max(1);
    CUES.iter()
        .filter(|(_, cues)| {
            let hits = items
                .iter()
                .filter(|(title, text)| {
                    let t = format!("{} {}", title, text).to_lowercase();
                    cues.iter().any(|c| t.contains(c))
                })
                .count();
            hits * 3 >= n
        })
        .map(|(name, _)| name.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_are_distinctive() {
        let text = "Connecting the Samsung Smart Remote to the TV. Pair the Samsung Smart Remote by holding the \
                    Back and Play buttons. The remote control sensor is at the bottom.";
        let p = doc_phrases(text, 4);
        assert!(p.iter().any(|x| x.contains("Smart Remote")), "{p:?}");
        assert!(p.len() >= 2 && p.len() <= 4, "{p:?}");
    }
}
