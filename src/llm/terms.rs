//! Term statistics for the extractive backend: phrase candidates, distinctive phrases of a
//! document, and doc types.
//! Everything is scored against the built-in background table, never corpus-wide statistics.

use rustc_hash::FxHashMap;

use crate::markdown::plain_text;
use crate::text::{PHRASE_BREAKS, distinctiveness, is_stopword, sentences, word_key};

/// A candidate term (1–`max_n` words): where it first occurs (its segment and first word, whose
/// surface forms are joined only for a term that is picked), its count and weight.
#[derive(Debug, Clone)]
struct Candidate {
    at: (usize, usize),
    words: usize,
    count: usize,
    first_pos: usize,
    /// [`weight_of`] its words.
    weight: f32,
}

/// One word of a run: its surface form, its key, whether it is a stopword, and its
/// distinctiveness (0 for a stopword, which adds none to a term's weight).
struct Word<'s> {
    surface: &'s str,
    key: String,
    stop: bool,
    weight: f32,
}

/// Word runs between punctuation.
fn segments(sentence: &str) -> Vec<Vec<Word<'_>>> {
    let mut out = Vec::new();
    for seg in sentence.split(|c: char| PHRASE_BREAKS.contains(&c) || c == '.') {
        let ws: Vec<Word> = seg
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
            .filter(|w| !w.is_empty() && w.len() <= 40)
            .filter_map(|w| {
                let key = word_key(w)?;
                let stop = is_stopword(&key);
                Some(Word {
                    surface: w,
                    weight: if stop { 0.0 } else { distinctiveness(&key) },
                    stop,
                    key,
                })
            })
            .collect();
        if !ws.is_empty() {
            out.push(ws);
        }
    }
    out
}

/// Function words allowed inside a phrase ("terms of service"); any other one ends it.
const INNER_WORDS: &[&str] = &["of", "and", "for", "in", "on"];

/// All terms of 1..=max_n words of the segments `segs` that neither start nor end with a
/// stopword (each word's key and stopword test made once, each term's weight once: this runs
/// over every document's text).
fn candidates(segs: &[Vec<Word>], max_n: usize) -> FxHashMap<String, Candidate> {
    let mut out: FxHashMap<String, Candidate> = FxHashMap::default();
    let mut pos = 0;
    // A term's key is joined here; it is copied only for a term seen for the first time.
    let mut key = String::new();
    for (at, seg) in segs.iter().enumerate() {
        for start in 0..seg.len() {
            if seg[start].stop {
                continue;
            }
            // The key of the words from `start`, one word longer each turn.
            key.clear();
            for n in 1..=max_n.min(seg.len() - start) {
                let end = start + n - 1;
                if n > 2 && !INNER_WORDS.contains(&seg[end - 1].key.as_str()) && seg[end - 1].stop {
                    break;
                }
                if n > 1 {
                    key.push(' ');
                }
                key.push_str(&seg[end].key);
                if seg[end].stop {
                    continue;
                }
                let words = &seg[start..=end];
                pos += 1;
                if let Some(e) = out.get_mut(key.as_str()) {
                    e.count += 1;
                    continue;
                }
                out.insert(
                    key.clone(),
                    Candidate {
                        at: (at, start),
                        words: n,
                        count: 1,
                        first_pos: pos,
                        weight: weight_of(words.iter().map(|w| (w.weight, w.stop))),
                    },
                );
            }
        }
    }
    out
}

/// Words joined by single spaces.
fn join<'w>(words: impl Iterator<Item = &'w str>) -> String {
    let mut s = String::new();
    for w in words {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(w);
    }
    s
}

/// Distinctiveness of a term, from its words (each word's own, with whether it is a stopword):
/// the mean over its content words, with a bonus for multi-word terms.
fn weight_of(words: impl Iterator<Item = (f32, bool)>) -> f32 {
    let (mut n, mut content, mut sum) = (0, 0, 0.0f32);
    for (weight, stop) in words {
        n += 1;
        if !stop {
            content += 1;
            sum += weight;
        }
    }
    if content == 0 {
        return 0.0;
    }
    let mean = sum / content as f32;
    mean * (1.0 + 0.25 * (n.min(3) as f32 - 1.0))
}

/// Picks up to `limit` high-scoring terms (key, score, where), skipping ones that overlap an
/// already picked term; a picked term is shown as `surface` makes it.
fn pick_non_overlapping<T>(
    mut scored: Vec<(String, f32, T)>,
    limit: usize,
    surface: impl Fn(T) -> String,
) -> Vec<String> {
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut picked: Vec<String> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    for (key, score, at) in scored {
        if picked.len() >= limit || score <= 0.0 {
            break;
        }
        let overlaps = keys.iter().any(|k| {
            let kw: Vec<&str> = k.split(' ').collect();
            key.split(' ').any(|w| !is_stopword(w) && kw.contains(&w))
        });
        if !overlaps {
            keys.push(key);
            picked.push(surface(at));
        }
    }
    picked
}

/// The 2–4 most distinctive multi-word phrases of one document.
pub fn doc_phrases(text: &str, limit: usize) -> Vec<String> {
    let said = sentences(&plain_text(text));
    let segs: Vec<Vec<Word>> = said.iter().flat_map(|s| segments(s)).collect();
    let cands = candidates(&segs, 4);
    // A term scoring 0 is never picked: it is left out before the sort.
    let scored = cands
        .into_iter()
        .filter(|(_, c)| c.words >= 2 && c.weight > 0.0)
        .map(|(k, c)| {
            let early = 1.0 + 0.5 / (1.0 + c.first_pos as f32 / 200.0);
            let s = c.weight * (1.0 + (c.count as f32).ln()) * early;
            (k, s, (c.at, c.words))
        })
        .collect();
    pick_non_overlapping(scored, limit, |((seg, start), n)| {
        join(segs[seg][start..start + n].iter().map(|w| w.surface))
    })
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

    #[test]
    fn a_phrase_is_shown_as_first_written_and_overlapping_ones_are_left_out() {
        // The surface form is the first occurrence's (joined only for picked terms), whatever
        // its case or trimmed punctuation later; terms sharing a content word with a picked one
        // are not picked.
        let text = "Rotate the \"Webhook Signing Secret\" monthly.\n\n\
                    The webhook signing secret lives in the vault. Quarterly audits check the \
                    webhook signing secret. Kubernetes operators rotate Kubernetes operators.";
        let p = doc_phrases(text, 4);
        assert_eq!(
            p.first().map(String::as_str),
            Some("Webhook Signing"),
            "{p:?}"
        );
        assert!(
            !p.iter().skip(1).any(|x| {
                let l = x.to_lowercase();
                l.contains("webhook") || l.contains("signing")
            }),
            "{p:?}"
        );
        assert!(p.iter().any(|x| x == "Kubernetes operators"), "{p:?}");
    }
}
