//! Label phrases: the 1–3-word phrases that members' titles (and headings) share, scored by how
//! many members hold them and how specific they are, and the label made of the best ones.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use rustc_hash::FxHashMap;

use crate::text::{distinctiveness, is_stopword, word_key, word_key_into};

/// Words allowed inside a phrase but never at its ends ("terms of service", "import and export").
const INNER: &[&str] = &["of", "and", "for", "in", "on", "to", "with", "by", "from"];

/// Words of document titles that name the kind of page, not its subject.
const GENERIC: &[&str] = &[
    "faq",
    "faqs",
    "frequently",
    "asked",
    "question",
    "questions",
    "overview",
    "introduction",
    "intro",
    "learn",
    "article",
    "guide",
    "untitled",
    "misc",
];

/// The longest phrase considered, in words.
const MAX_WORDS: usize = 3;
/// The most words of a label.
pub const LABEL_WORDS: usize = 4;

/// What a member shows a labeller: its title, and the headings of its text (a group's member
/// may be a child group, whose "title" is its label).
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    pub title: &'a str,
    pub headings: &'a [String],
}

/// A phrase shared by members.
#[derive(Debug, Clone, PartialEq)]
pub struct Phrase {
    /// Its words as tokens (lowercase, possessives dropped).
    pub words: Vec<String>,
    /// Members whose title holds it (a heading counts half).
    pub coverage: f32,
    /// Members whose title or a heading holds it.
    pub holders: usize,
    pub score: f32,
}

/// Word runs of a line, split at punctuation (a phrase never spans `:` or `,`).
fn runs(line: &str) -> Vec<Vec<String>> {
    line.split(|c: char| crate::text::breaks_phrase(c) || matches!(c, '.' | '“' | '”'))
        .map(|seg| {
            seg.split_whitespace()
                .filter_map(word_key)
                .collect::<Vec<_>>()
        })
        .filter(|r| !r.is_empty())
        .collect()
}

fn usable(w: &str) -> bool {
    !is_stopword(w) && !GENERIC.contains(&w) && w.chars().any(char::is_alphabetic)
}

/// The words of one [`shared`] call, each held once under an id, with what a phrase may do
/// with it (asked once per word, not once per window).
#[derive(Default)]
struct Words {
    ids: FxHashMap<String, u32>,
    text: Vec<String>,
    /// Whether the word may open or end a phrase ([`usable`]).
    ends: Vec<bool>,
    /// Whether it may stand inside one (usable, or an [`INNER`] word).
    inside: Vec<bool>,
}

impl Words {
    fn id(&mut self, word: &str) -> u32 {
        if let Some(&id) = self.ids.get(word) {
            return id;
        }
        let id = self.text.len() as u32;
        let end = usable(word);
        self.ends.push(end);
        self.inside.push(end || INNER.contains(&word));
        self.text.push(word.to_string());
        self.ids.insert(word.to_string(), id);
        id
    }

    /// The runs of `line` (as [`runs`] cuts them) as word ids, into `out` (cleared first).
    fn runs_of(&mut self, line: &str, token: &mut String, out: &mut Vec<Vec<u32>>) {
        out.clear();
        for seg in
            line.split(|c: char| crate::text::breaks_phrase(c) || matches!(c, '.' | '“' | '”'))
        {
            let mut run = Vec::new();
            for raw in seg.split_whitespace() {
                if word_key_into(raw, token) {
                    run.push(self.id(token));
                }
            }
            if !run.is_empty() {
                out.push(run);
            }
        }
    }
}

/// A phrase as the ids of its 1–[`MAX_WORDS`] words, padded with `u32::MAX`.
type Key = [u32; MAX_WORDS];

/// Phrases of one line: 1–3-word windows of a run that start and end on a usable word and hold
/// no other function word than [`INNER`] ones. A phrase that opens a run with an -ing word is
/// marked: that is the verb of a task title ("Adding Product Options"), not its subject.
fn line_phrases(
    line: &str,
    words: &mut Words,
    scratch: &mut Scratch,
    out: &mut FxHashMap<Key, bool>,
) {
    words.runs_of(line, &mut scratch.token, &mut scratch.runs);
    for run in &scratch.runs {
        for start in 0..run.len() {
            if !words.ends[run[start] as usize] {
                continue;
            }
            let verb = start == 0 && run.len() > 1 && words.text[run[0] as usize].ends_with("ing");
            for end in start..run.len().min(start + MAX_WORDS) {
                let inner_ok = run[start..end]
                    .iter()
                    .skip(1)
                    .all(|&w| words.inside[w as usize]);
                if !inner_ok {
                    break;
                }
                if words.ends[run[end] as usize] {
                    let mut key = [u32::MAX; MAX_WORDS];
                    key[..=end - start].copy_from_slice(&run[start..=end]);
                    let v = out.entry(key).or_insert(verb);
                    *v &= verb;
                }
            }
        }
    }
}

/// Buffers [`line_phrases`] reuses from line to line.
#[derive(Default)]
struct Scratch {
    token: String,
    runs: Vec<Vec<u32>>,
}

/// Every phrase the members share (or, for a group of one, its title's), best first: the more
/// members hold it the better, then the more specific its words, then the longer. Phrases with
/// a word in `avoid` are left out.
pub fn shared(members: &[Member], avoid: &HashSet<String>) -> Vec<Phrase> {
    let (mut words, mut scratch) = (Words::default(), Scratch::default());
    // Per phrase: coverage, holders, and whether it only ever opens a task title.
    let mut seen: FxHashMap<Key, (f32, usize, bool)> = FxHashMap::default();
    let (mut in_title, mut in_headings) = (FxHashMap::default(), FxHashMap::default());
    for m in members {
        in_title.clear();
        in_headings.clear();
        line_phrases(m.title, &mut words, &mut scratch, &mut in_title);
        for h in m.headings {
            line_phrases(h, &mut words, &mut scratch, &mut in_headings);
        }
        for (p, &verb) in &in_title {
            let e = seen.entry(*p).or_insert((0.0, 0, true));
            e.0 += 1.0;
            e.1 += 1;
            e.2 &= verb;
        }
        for (p, &verb) in in_headings
            .iter()
            .filter(|(p, _)| !in_title.contains_key(*p))
        {
            let e = seen.entry(*p).or_insert((0.0, 0, true));
            e.0 += 0.5;
            e.1 += 1;
            e.2 &= verb;
        }
    }
    let need = members.len().min(2);
    let avoided: Vec<bool> = words.text.iter().map(|w| avoid.contains(w)).collect();
    let ids = |key: &Key| {
        key.iter()
            .take_while(|&&w| w != u32::MAX)
            .map(|&w| w as usize)
            .collect::<Vec<_>>()
    };
    let mut out: Vec<Phrase> = seen
        .into_iter()
        .filter(|(key, (_, holders, _))| *holders >= need && !ids(key).iter().any(|&w| avoided[w]))
        .map(|(key, (coverage, holders, verb))| {
            let ids = ids(&key);
            let content = ids.iter().filter(|&&w| words.ends[w]);
            let content = content.map(|&w| words.text[w].as_str());
            Phrase {
                score: score(content, coverage, verb),
                words: ids.iter().map(|&w| words.text[w].clone()).collect(),
                coverage,
                holders,
            }
        })
        .collect();
    // Scores tie often; the words break every tie (no two phrases have the same words).
    out.sort_unstable_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.words.cmp(&b.words))
    });
    out
}

/// The score of a phrase from its `content` words (those that may open or end one), its
/// coverage, and whether it only ever opens a task title (`verb`): the more members hold it the
/// better, then the more specific its words, then the longer.
fn score<'a>(content: impl Iterator<Item = &'a str>, coverage: f32, verb: bool) -> f32 {
    let content: Vec<f32> = content.map(distinctiveness).collect();
    let specific = content.iter().sum::<f32>() / content.len().max(1) as f32;
    let length = 1.0 + 0.3 * (content.len() as f32 - 1.0).max(0.0);
    let verb = if verb { 0.4 } else { 1.0 };
    coverage * (1.0 + specific / 5.0) * length * verb
}

/// A label of 2–[`LABEL_WORDS`] words from the phrases the members share. The best phrase, and
/// when it is one word: the best longer phrase that holds it, else the best longer phrase held
/// by most as many members, else the word with the best other phrase that most of its holders
/// share. `None` when the members share nothing (every word would come from one title).
pub fn label(members: &[Member], avoid: &HashSet<String>) -> Option<String> {
    let phrases = shared(members, avoid);
    let best = phrases.first()?;
    if best.words.len() > 1 {
        return Some(best.words.join(" "));
    }
    let longer = |p: &&Phrase| p.words.len() > 1 && p.words.len() <= LABEL_WORDS;
    let word = &best.words[0];
    let holding = phrases
        .iter()
        .filter(longer)
        .find(|p| p.words.contains(word) && p.holders * 2 >= best.holders);
    let alike = || {
        phrases
            .iter()
            .filter(longer)
            .find(|p| p.holders as f32 >= 0.6 * best.holders as f32)
    };
    if let Some(p) = holding.or_else(alike) {
        return Some(p.words.join(" "));
    }
    let partner = phrases.iter().skip(1).find(|p| {
        p.words.len() < LABEL_WORDS && !p.words.contains(word) && p.holders * 2 >= best.holders
    });
    let mut words = best.words.clone();
    if let Some(p) = partner {
        words.extend(p.words.iter().cloned());
    }
    Some(words.join(" "))
}

/// The label of a group whose members share no phrase: the best phrase of its first (most
/// central) member's title.
pub fn title_label(members: &[Member], avoid: &HashSet<String>) -> Option<String> {
    label(members.get(..1)?, avoid)
}

/// The words of a group that at least a quarter of its members' titles (or headings) hold,
/// sorted: what [`common_of`] counts per group.
pub fn held_words(group: &[Member]) -> Vec<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for m in group {
        let words: BTreeSet<String> = std::iter::once(m.title)
            .chain(m.headings.iter().map(String::as_str))
            .flat_map(runs)
            .flatten()
            .filter(|w| usable(w))
            .collect();
        for w in words {
            *counts.entry(w).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .filter(|(_, c)| c * 4 >= group.len())
        .map(|(w, _)| w)
        .collect()
}

/// Words that most groups of a level hold, given each group's [`held_words`]: in at least a
/// quarter of a group's members' titles (or headings), in at least three fifths of the groups
/// (and two). A brand or product name that every document carries ("Wix", "Acme") tells no
/// group from another. (Per group, so that a group's held words can be recorded.)
pub fn common_of<G: AsRef<[String]>>(groups: &[G]) -> Vec<String> {
    let n = groups.len();
    if n < 2 {
        return Vec::new();
    }
    let mut held: BTreeMap<&str, usize> = BTreeMap::new();
    for g in groups {
        for w in g.as_ref() {
            *held.entry(w).or_default() += 1;
        }
    }
    let need = (n * 3).div_ceil(5).max(2);
    held.into_iter()
        .filter(|(_, h)| *h >= need)
        .map(|(w, _)| w.to_string())
        .collect()
}

/// Words in more than half of `texts` (at least four): a brand or product name that most
/// documents carry ("Acme", "Wix") names no group apart from the others.
pub fn brand_words<S: AsRef<str>>(texts: impl Iterator<Item = S>) -> Vec<String> {
    let mut n = 0;
    let mut df: BTreeMap<String, usize> = BTreeMap::new();
    for t in texts {
        n += 1;
        let words: BTreeSet<String> = t
            .as_ref()
            .lines()
            .flat_map(runs)
            .flatten()
            .filter(|w| usable(w))
            .collect();
        for w in words {
            *df.entry(w).or_default() += 1;
        }
    }
    if n < 4 {
        return Vec::new();
    }
    df.into_iter()
        .filter(|(_, c)| c * 2 > n)
        .map(|(w, _)| w)
        .collect()
}

#[cfg(test)]
mod tests;
