//! Text utilities shared by the offline backends: sentences, words, clipping and the background word-frequency table.

use std::sync::OnceLock;

use rustc_hash::{FxHashMap, FxHashSet};

mod sentence;
pub use sentence::{sentence_cows, sentences};

static BACKGROUND_TSV: &str = include_str!("../llm/background_en.tsv");

/// Zipf frequency (log10 per billion words) of an English word; 0 for words not in the table.
pub fn zipf(word: &str) -> f32 {
    // Looked up for every word of every card and summary: a fast hash, not SipHash (the keys are
    // the built-in table's, not an attacker's).
    static TABLE: OnceLock<FxHashMap<&'static str, u16>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        BACKGROUND_TSV
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let (w, z) = l.split_once('\t')?;
                Some((w, z.parse().ok()?))
            })
            .collect()
    });
    table.get(word).map_or(0.0, |&z| z as f32 / 100.0)
}

/// How much a lowercase word says about a topic: high for rare words, ~0 for function words.
pub fn distinctiveness(word: &str) -> f32 {
    // Byte-wise: a character of more than one byte is never an ASCII digit.
    if word.bytes().all(|b| b.is_ascii_digit()) {
        return 0.3;
    }
    // Fewer than two characters.
    if word.chars().nth(1).is_none() {
        return 0.0;
    }
    weight_of_zipf(zipf(word))
}

/// The distinctiveness of a word of two or more characters, not all digits, from its Zipf
/// frequency (an unknown word, 0, counts as rare).
fn weight_of_zipf(z: f32) -> f32 {
    let z = if z == 0.0 { 1.5 } else { z };
    (6.5 - z).clamp(0.0, 5.0)
}

/// Whether `c` is punctuation that ends a run of words a phrase may come from (asked of every
/// character of every card's text: a `match`, not a search of a list).
pub fn breaks_phrase(c: char) -> bool {
    matches!(
        c,
        ',' | ';'
            | ':'
            | '('
            | ')'
            | '['
            | ']'
            | '{'
            | '}'
            | '"'
            | '|'
            | '/'
            | '!'
            | '?'
            | '–'
            | '—'
            | '…'
            | '<'
            | '>'
            | '='
            | '+'
            | '*'
            | '#'
    )
}

/// English function words (closed classes: articles, pronouns, prepositions, auxiliaries, conjunctions).
const FUNCTION_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "either",
    "else",
    "etc",
    "ever",
    "every",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "however",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "let",
    "may",
    "me",
    "might",
    "more",
    "most",
    "must",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "per",
    "same",
    "shall",
    "she",
    "should",
    "since",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "thus",
    "to",
    "too",
    "under",
    "until",
    "up",
    "upon",
    "us",
    "very",
    "via",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "without",
    "would",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "get",
    "got",
    "make",
    "many",
    "much",
    "new",
    "use",
    "used",
    "using",
    "way",
    "well",
    "want",
    "need",
    "like",
    "see",
    "two",
    "first",
];

fn function_words() -> &'static FxHashSet<&'static str> {
    static SET: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| FUNCTION_WORDS.iter().copied().collect())
}

/// Function words and the most common words, which never start or end a phrase.
pub fn is_stopword(word: &str) -> bool {
    stop_by_form(word) || zipf(word) >= STOP_ZIPF
}

/// How common (Zipf) a word is that never starts or ends a phrase.
const STOP_ZIPF: f32 = 6.0;

/// A stopword without the background table: one character, all digits, or a function word.
fn stop_by_form(word: &str) -> bool {
    word.chars().nth(1).is_none()
        || word.bytes().all(|b| b.is_ascii_digit())
        || function_words().contains(word)
}

/// Whether a word is a stopword, and its distinctiveness (0 for a stopword): [`is_stopword`]
/// and [`distinctiveness`] with the background table read once (every new word of every card).
pub fn stop_and_weight(word: &str) -> (bool, f32) {
    if stop_by_form(word) {
        return (true, 0.0);
    }
    let z = zipf(word);
    if z >= STOP_ZIPF {
        return (true, 0.0);
    }
    (false, weight_of_zipf(z))
}

/// An apostrophe inside a word: the typewriter one or the typographic one (U+2019).
pub fn is_apostrophe(c: char) -> bool {
    c == '\'' || c == '’'
}

/// Lowercase word tokens (letters and digits). A word keeps its apostrophes whole: a possessive
/// is its noun ("Ruff's" and "page’s" are `ruff` and `page`), and any other apostrophe is dropped
/// ("don't" is `dont`), so "page’s" never becomes the words `page` and `s`.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    word_pieces(text).filter_map(word_key)
}

/// The pieces of `text` that [`words`] makes its tokens of (with [`word_key`]; some give none):
/// for a caller that makes each key in a buffer of its own ([`word_key_into`]).
pub fn word_pieces(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || is_apostrophe(c)))
}

/// The token of one word as written: lowercase, a possessive `'s` dropped, other apostrophes
/// removed; `None` when nothing is left.
pub fn word_key(raw: &str) -> Option<String> {
    let mut token = String::new();
    word_key_into(raw, &mut token).then_some(token)
}

/// [`word_key`] written into `token` (cleared first; a buffer reused across words): whether
/// anything is left.
pub fn word_key_into(raw: &str, token: &mut String) -> bool {
    token.clear();
    if let Some(kept) = ascii_word_key(raw, token) {
        return kept;
    }
    // Other letters: trimmed and cut by character, lowercased as Unicode says.
    let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
    let base = ["'s", "’s", "'S", "’S"]
        .iter()
        .find_map(|p| w.strip_suffix(p))
        .unwrap_or(w);
    if base.is_ascii() && !base.contains('\'') {
        token.push_str(base);
        token.make_ascii_lowercase();
    } else {
        for c in base.chars().filter(|&c| !is_apostrophe(c)) {
            token.extend(c.to_lowercase());
        }
    }
    !token.is_empty()
}

/// [`word_key_into`] of an ASCII word (most words are), byte by byte: its edges trimmed to
/// letters and digits, a possessive dropped, apostrophes removed, lowercased. `None` for a word
/// with other characters.
fn ascii_word_key(raw: &str, token: &mut String) -> Option<bool> {
    let bytes = raw.as_bytes();
    if !bytes.is_ascii() {
        return None;
    }
    let Some(start) = bytes.iter().position(u8::is_ascii_alphanumeric) else {
        return Some(false);
    };
    let end = bytes
        .iter()
        .rposition(u8::is_ascii_alphanumeric)
        .map_or(start, |e| e + 1);
    let base = match &bytes[start..end] {
        [rest @ .., b'\'', b's' | b'S'] => rest,
        w => w,
    };
    if base.contains(&b'\'') {
        let kept = base.iter().filter(|&&b| b != b'\'');
        token.extend(kept.map(|b| b.to_ascii_lowercase() as char));
    } else {
        // An ASCII slice starts and ends on character boundaries.
        token.push_str(&raw[start..start + base.len()]);
        token.make_ascii_lowercase();
    }
    Some(!token.is_empty())
}

/// The text up to and including its first `. ` (a summary's first sentence), or all of it.
pub fn first_sentence(s: &str) -> &str {
    match s.find(". ") {
        Some(i) => &s[..=i],
        None => s,
    }
}

/// A crude English stem, so "domains" matches "domain" and "configuring" matches "configure".
pub fn stem(w: &str) -> String {
    let w = w.to_lowercase();
    let n = w.chars().count();
    for (suffix, min, with) in [
        ("ies", 5, "y"),
        ("sses", 5, "ss"),
        ("ing", 6, ""),
        ("ed", 5, ""),
        ("es", 5, ""),
        ("s", 4, ""),
    ] {
        if n >= min && w.ends_with(suffix) && !(suffix == "s" && w.ends_with("ss")) {
            let base = &w[..w.len() - suffix.len()];
            return format!("{}{with}", base.trim_end_matches('e'));
        }
    }
    w.trim_end_matches('e').to_string()
}

/// The first `max` words of `s`.
pub fn clip_words(s: &str, max: usize) -> String {
    let words: Vec<&str> = s.split_whitespace().collect();
    if words.len() <= max {
        return words
            .join(" ")
            .trim_end_matches([',', ';', ':', '-', ' ', '–', '—'])
            .to_string();
    }
    let mut t = words[..max].join(" ");
    while t.ends_with([',', ';', ':', '-', ' ', '–', '—']) {
        t.pop();
    }
    t
}

/// At most `max` words of `s`, for text shown as a line (a row's one-line, a card's): whole when
/// it fits; otherwise cut after the last sentence end in its second half, else after the last
/// clause boundary (`,` `;` `:` or before a dash) there, else at the word limit, and then ended
/// with "…", so that a cut line never reads as a whole sentence.
pub fn clip_line(s: &str, max: usize) -> String {
    let words: Vec<&str> = s.split_whitespace().collect();
    if words.len() <= max || max == 0 {
        return clip_words(s, max);
    }
    let head = &words[..max];
    let second_half = (max / 2).max(1)..max;
    if let Some(i) = second_half
        .clone()
        .rev()
        .find(|&i| head[i].ends_with(['.', '!', '?']))
    {
        return head[..=i].join(" ");
    }
    let dash = |w: &str| matches!(w, "—" | "–" | "-");
    let cut = second_half
        .rev()
        .find(|&i| head[i].ends_with([',', ';', ':']) || head.get(i + 1).is_some_and(|w| dash(w)))
        .map_or(max, |i| i + 1);
    let mut t = head[..cut].join(" ");
    while t.ends_with([',', ';', ':', '-', ' ', '–', '—']) {
        t.pop();
    }
    t.push('…');
    t
}

/// The first `max` characters of `s`, cut at a char boundary.
pub fn clip_chars(s: &str, max: usize) -> &str {
    // A text of at most `max` bytes has at most `max` characters; when its first `max` bytes are
    // ASCII, they are its first `max` characters (no count needed: every head is clipped here).
    if s.len() <= max {
        return s;
    }
    if s.as_bytes()[..max].is_ascii() {
        return &s[..max];
    }
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// One line: whitespace collapsed.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, w) in s.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// `s` with its first letter upper-cased.
pub fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// `1 document`, `2 documents`: a count and its noun, plural when it is not one.
pub fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

#[cfg(test)]
mod tests;
