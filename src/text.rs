//! Text utilities shared by the offline backends: Markdown stripping, sentences, words and the background word-frequency table.

use std::collections::HashMap;
use std::sync::OnceLock;

static BACKGROUND_TSV: &str = include_str!("llm/background_en.tsv");

/// Zipf frequency (log10 per billion words) of an English word; 0 for words not in the table.
pub fn zipf(word: &str) -> f32 {
    static TABLE: OnceLock<HashMap<&'static str, u16>> = OnceLock::new();
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
    if word.chars().all(|c| c.is_ascii_digit()) {
        return 0.3;
    }
    if word.chars().count() < 2 {
        return 0.0;
    }
    let z = zipf(word);
    let z = if z == 0.0 { 1.5 } else { z };
    (6.5 - z).clamp(0.0, 5.0)
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

fn function_words() -> &'static std::collections::HashSet<&'static str> {
    static SET: OnceLock<std::collections::HashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| FUNCTION_WORDS.iter().copied().collect())
}

/// Function words and the most common words, which never start or end a phrase.
pub fn is_stopword(word: &str) -> bool {
    word.chars().count() < 2
        || word.chars().all(|c| c.is_ascii_digit())
        || function_words().contains(word)
        || zipf(word) >= 6.0
}

/// Lowercase word tokens (letters and digits; `'` inside words is dropped).
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\'').replace('\'', ""))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
}

/// Removes the most common Markdown markup: headings, emphasis, code fences, links and images.
pub fn plain_text(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut in_fence = false;
    for line in md.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let t = t.trim_start_matches(['#', '>']).trim_start();
        let t = t
            .strip_prefix("- ")
            .or_else(|| t.strip_prefix("* "))
            .or_else(|| t.strip_prefix("+ "))
            .unwrap_or(t);
        out.push_str(&strip_inline(t));
        out.push('\n');
    }
    out
}

/// `[text](url)` → `text`, `![alt](src)` → `alt`, and drops `*`, `_`, backticks around words.
fn strip_inline(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let link_end = (c == ']' && chars.get(i + 1) == Some(&'('))
            .then(|| chars[i + 2..].iter().position(|&x| x == ')'))
            .flatten();
        if let Some(close) = link_end {
            i += close + 3;
            continue;
        }
        if c == '!' && chars.get(i + 1) == Some(&'[') {
            i += 1;
            continue;
        }
        if matches!(c, '[' | ']' | '`') || (c == '*') || (c == '_' && is_emphasis(&chars, i)) {
            i += 1;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

fn is_emphasis(chars: &[char], i: usize) -> bool {
    let before = i
        .checked_sub(1)
        .and_then(|j| chars.get(j))
        .is_none_or(|c| !c.is_alphanumeric());
    let after = chars.get(i + 1).is_none_or(|c| !c.is_alphanumeric());
    before || after
}

/// The text up to and including its first `. ` (a summary's first sentence), or all of it.
pub fn first_sentence(s: &str) -> &str {
    match s.find(". ") {
        Some(i) => &s[..=i],
        None => s,
    }
}

/// Splits plain text into sentences: at `.`/`!`/`?` before a space or a capital, and at blank lines.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for para in text.split('\n') {
        let chars: Vec<char> = para.chars().collect();
        let mut start = 0;
        for i in 0..chars.len() {
            let c = chars[i];
            if !matches!(c, '.' | '!' | '?') {
                continue;
            }
            let next = chars.get(i + 1).copied();
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let boundary = match next {
                None => true,
                Some(n) if n.is_whitespace() => true,
                Some(n) => n.is_uppercase() && prev.is_some_and(|p| p.is_lowercase()),
            };
            if boundary {
                push_sentence(&mut out, &chars[start..=i]);
                start = i + 1;
            }
        }
        push_sentence(&mut out, &chars[start..]);
    }
    out
}

fn push_sentence(out: &mut Vec<String>, chars: &[char]) {
    let s: String = chars.iter().collect();
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().any(char::is_alphanumeric) {
        out.push(s);
    }
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
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// One line: whitespace collapsed.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clipped_line_ends_at_a_boundary_or_says_it_goes_on() {
        assert_eq!(clip_line("Short and whole.", 6), "Short and whole.");
        assert_eq!(clip_line("a b c d. e f g h", 6), "a b c d.");
        assert_eq!(clip_line("a b c d, e f g h i", 6), "a b c d…");
        assert_eq!(clip_line("a b c d — e f g h", 6), "a b c d…");
        assert_eq!(clip_line("a b c d e f g h", 6), "a b c d e f…");
        // Whole words only, and a boundary in the first half is not used (too short).
        assert_eq!(clip_line("a, b c d e f g h", 6), "a, b c d e f…");
        assert_eq!(
            clip_line("page’s settings can change", 3),
            "page’s settings can…"
        );
    }

    #[test]
    fn background_table_loads() {
        assert!(zipf("the") > 7.0);
        assert!(zipf("remote") > 3.0 && zipf("remote") < 5.0);
        assert_eq!(zipf("qwzxv"), 0.0);
        assert!(distinctiveness("hdmi") > distinctiveness("the"));
        assert!(is_stopword("the") && !is_stopword("payments"));
    }

    #[test]
    fn sentence_split_handles_glued_text() {
        let s = sentences(
            "Learn more about the policy.Learn more about:\nSecond line here. Third one!",
        );
        assert_eq!(
            s,
            vec![
                "Learn more about the policy.",
                "Learn more about:",
                "Second line here.",
                "Third one!"
            ]
        );
    }

    #[test]
    fn markdown_is_stripped() {
        let p = plain_text(
            "# Title\n\nSee [the docs](http://x) and **bold** `code`.\n```\nfn x() {}\n```\n",
        );
        assert_eq!(p, "Title\n\nSee the docs and bold code.\n");
    }
}
