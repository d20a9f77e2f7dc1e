//! Term statistics for the extractive backend: phrase candidates, distinctive phrases of a
//! document, and doc types.
//! Everything is scored against the built-in background table, never corpus-wide statistics.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use crate::markdown::plain_text;
use crate::text::{breaks_phrase, stop_and_weight, word_key_into};

/// A candidate term (1–[`MAX_TERM`] words): where it first occurs (its first word's index in
/// [`Runs::words`]; the surface forms are joined only for a term that is picked), its count and
/// weight.
#[derive(Debug, Clone)]
struct Candidate {
    at: usize,
    words: usize,
    count: usize,
    first_pos: usize,
    /// [`weight_of`] its words.
    weight: f32,
}

/// One word of a run: its surface form, its key's number in the document's [`Vocab`], whether
/// it is a stopword or a word allowed inside a phrase, and its distinctiveness (0 for a stopword,
/// which adds none to a term's weight).
struct Word<'s> {
    surface: &'s str,
    id: u32,
    stop: bool,
    inner: bool,
    weight: f32,
}

/// The distinct word keys of one document, numbered from 0 in order of first use; each one's
/// stopword test and distinctiveness made once.
#[derive(Default)]
struct Vocab {
    ids: FxHashMap<String, u32>,
    /// By number.
    known: Vec<Known>,
    /// A key being made (a buffer reused for every word).
    key: String,
}

/// A distinct word key: whether it is a stopword, whether a phrase may hold it inside, its weight.
struct Known {
    key: String,
    stop: bool,
    inner: bool,
    weight: f32,
}

impl Vocab {
    /// The word `raw` as [`Word`], `None` when it has no key.
    fn word<'s>(&mut self, raw: &'s str) -> Option<Word<'s>> {
        if !word_key_into(raw, &mut self.key) {
            return None;
        }
        let id = match self.ids.get(self.key.as_str()) {
            Some(&id) => id,
            None => {
                let id = self.known.len() as u32;
                let key = self.key.clone();
                let (stop, weight) = stop_and_weight(&key);
                self.ids.insert(key.clone(), id);
                self.known.push(Known {
                    stop,
                    inner: INNER_WORDS.contains(&key.as_str()),
                    weight,
                    key,
                });
                id
            }
        };
        let k = &self.known[id as usize];
        Some(Word {
            surface: raw,
            id,
            stop: k.stop,
            inner: k.inner,
            weight: k.weight,
        })
    }
}

/// The words of a text in runs between punctuation: one list of words, and each run's range in it.
#[derive(Default)]
struct Runs<'s> {
    words: Vec<Word<'s>>,
    runs: Vec<std::ops::Range<usize>>,
}

impl<'s> Runs<'s> {
    /// Adds the runs of `line`, each word's key numbered in `vocab`: a run ends at a
    /// [`breaks_phrase`] mark or a `.`, its words are split at whitespace and trimmed of what is
    /// not a letter or digit (read in one pass, an ASCII character as its byte: every word of
    /// every document passes here).
    fn add(&mut self, line: &'s str, vocab: &mut Vocab) {
        let bytes = line.as_bytes();
        let (mut run, mut word) = (self.words.len(), None::<usize>);
        let mut i = 0;
        loop {
            let (c, len) = match bytes.get(i) {
                None => ('.', 0),
                Some(&b) if b.is_ascii() => (b as char, 1),
                Some(_) => {
                    let c = line[i..].chars().next().expect("a character starts here");
                    (c, c.len_utf8())
                }
            };
            let breaks = len == 0 || c == '.' || breaks_phrase(c);
            if breaks || c.is_whitespace() {
                if let Some(from) = word.take() {
                    self.push(&line[from..i], vocab);
                }
            } else if word.is_none() {
                word = Some(i);
            }
            if breaks {
                if self.words.len() > run {
                    self.runs.push(run..self.words.len());
                }
                run = self.words.len();
            }
            if len == 0 {
                return;
            }
            i += len;
        }
    }

    /// Adds the word `raw` (as written between whitespace), if it is one.
    fn push(&mut self, raw: &'s str, vocab: &mut Vocab) {
        let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
        if !w.is_empty()
            && w.len() <= 40
            && let Some(word) = vocab.word(w)
        {
            self.words.push(word);
        }
    }
}

/// Function words allowed inside a phrase ("terms of service"); any other one ends it.
const INNER_WORDS: &[&str] = &["of", "and", "for", "in", "on"];

/// The longest term [`candidates`] makes, in words.
const MAX_TERM: usize = 4;

/// A term by its words' numbers plus one (unused places 0): two terms with the same words are one
/// term.
type TermKey = [u32; MAX_TERM];

/// All terms of 2..=[`MAX_TERM`] words of the runs of `text` that neither start nor end with a
/// stopword (a one-word term takes a position, as it always has, but is no phrase); each word's
/// key and stopword test made once, each term's weight once: this runs over every document's
/// text.
fn candidates(text: &Runs) -> FxHashMap<TermKey, Candidate> {
    // About two terms of two or more words start at each word: sized once, never grown.
    let mut out: FxHashMap<TermKey, Candidate> =
        FxHashMap::with_capacity_and_hasher(text.words.len() * 2, Default::default());
    let mut pos = 0;
    for run in &text.runs {
        let seg = &text.words[run.clone()];
        for start in 0..seg.len() {
            if seg[start].stop {
                continue;
            }
            // The key of the words from `start`, one word longer each turn.
            let mut key: TermKey = [0; MAX_TERM];
            for n in 1..=MAX_TERM.min(seg.len() - start) {
                let end = start + n - 1;
                if n > 2 && !seg[end - 1].inner && seg[end - 1].stop {
                    break;
                }
                key[n - 1] = seg[end].id + 1;
                if seg[end].stop {
                    continue;
                }
                pos += 1;
                // A one-word term is counted in the positions, but never picked.
                if n == 1 {
                    continue;
                }
                out.entry(key)
                    .and_modify(|e| e.count += 1)
                    .or_insert_with(|| Candidate {
                        at: run.start + start,
                        words: n,
                        count: 1,
                        first_pos: pos,
                        weight: weight_of(seg[start..=end].iter().map(|w| (w.weight, w.stop))),
                    });
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

/// The bytes of a term's key as written out: its words' keys joined by single spaces (terms with
/// the same score are taken in this order).
fn key_bytes<'w>(words: &'w [Word], vocab: &'w Vocab) -> impl Iterator<Item = u8> + 'w {
    words.iter().enumerate().flat_map(move |(i, w)| {
        let gap: &[u8] = if i > 0 { b" " } else { b"" };
        gap.iter()
            .chain(vocab.known[w.id as usize].key.as_bytes())
            .copied()
    })
}

/// Picks up to `limit` high-scoring terms (score, their words), the first by score and then by
/// key, skipping ones that share a content word with an already picked term; a picked term is
/// shown as first written.
fn pick_non_overlapping(
    mut scored: Vec<(f32, &[Word])>,
    vocab: &Vocab,
    limit: usize,
) -> Vec<String> {
    // No two terms compare equal (their keys differ, and a key holds no space), so an unstable
    // sort gives the one order.
    scored.sort_unstable_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| key_bytes(a.1, vocab).cmp(key_bytes(b.1, vocab)))
    });
    let mut picked: Vec<String> = Vec::new();
    let mut held: Vec<u32> = Vec::new();
    for (score, words) in scored {
        if picked.len() >= limit || score <= 0.0 {
            break;
        }
        let overlaps = words.iter().any(|w| !w.stop && held.contains(&w.id));
        if !overlaps {
            held.extend(words.iter().map(|w| w.id));
            picked.push(join(words.iter().map(|w| w.surface)));
        }
    }
    picked
}

/// The 2–4 most distinctive multi-word phrases of one document.
pub fn doc_phrases(text: &str, limit: usize) -> Vec<String> {
    plain_phrases(&plain_text(text), limit)
}

/// [`doc_phrases`] of a document's plain text.
pub fn plain_phrases(plain: &str, limit: usize) -> Vec<String> {
    // Sized once for about a word in six bytes.
    let words = plain.len() / 6 + 1;
    let mut vocab = Vocab {
        ids: FxHashMap::with_capacity_and_hasher(words, Default::default()),
        ..Vocab::default()
    };
    let mut text = Runs {
        words: Vec::with_capacity(words),
        runs: Vec::new(),
    };
    // Line by line, not sentence by sentence: a run ends at every `.`, `!` and `?` (a sentence
    // ends at some of them) and at a line's end (as a sentence does), and a run's words are split
    // at any whitespace, so sentences would give the same runs at the cost of copying the text.
    for line in plain.split('\n') {
        text.add(line, &mut vocab);
    }
    let cands = candidates(&text);
    // A term scoring 0 is never picked: it is left out before the sort.
    let scored = cands
        .into_values()
        .filter(|c| c.weight > 0.0)
        .map(|c| {
            let early = 1.0 + 0.5 / (1.0 + c.first_pos as f32 / 200.0);
            let s = c.weight * (1.0 + (c.count as f32).ln()) * early;
            (s, &text.words[c.at..c.at + c.words])
        })
        .collect();
    pick_non_overlapping(scored, &vocab, limit)
}

/// The document types and the cue words that show each.
const TYPE_CUES: &[(&str, &[&str])] = &[
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

/// Every cue of [`TYPE_CUES`] in one automaton, and the type each pattern shows.
fn type_cues() -> &'static (aho_corasick::AhoCorasick, Vec<usize>) {
    static CUES: OnceLock<(aho_corasick::AhoCorasick, Vec<usize>)> = OnceLock::new();
    CUES.get_or_init(|| {
        let (types, cues): (Vec<usize>, Vec<&str>) = TYPE_CUES
            .iter()
            .enumerate()
            .flat_map(|(t, (_, cues))| cues.iter().map(move |c| (t, *c)))
            .unzip();
        let ac = aho_corasick::AhoCorasick::new(cues).expect("the type cues compile");
        (ac, types)
    })
}

/// Document-type tags from cue words, kept when at least a third of the items show them.
pub fn doc_types(items: &[(String, String)]) -> Vec<String> {
    let (cues, type_of) = type_cues();
    let n = items.len().max(1);
    let mut hits = [0usize; TYPE_CUES.len()];
    for (title, text) in items {
        // Each item lowercased once, and every cue found in one pass (overlapping, so that no
        // cue hides inside another's match).
        let lowered = format!("{title} {text}").to_lowercase();
        let mut shown = [false; TYPE_CUES.len()];
        for m in cues.find_overlapping_iter(&lowered) {
            shown[type_of[m.pattern().as_usize()]] = true;
            if shown.iter().all(|&s| s) {
                break;
            }
        }
        for (h, s) in hits.iter_mut().zip(shown) {
            *h += s as usize;
        }
    }
    TYPE_CUES
        .iter()
        .zip(hits)
        .filter(|(_, h)| h * 3 >= n)
        .map(|((name, _), _)| name.to_string())
        .collect()
}

#[cfg(test)]
mod tests;
