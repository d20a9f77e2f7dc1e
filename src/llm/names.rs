//! Entity tags for the extractive backend: the names a reader would grep for (products,
//! features, settings, commands, error codes, acronyms), never capitalized common words.

use crate::text::{is_apostrophe, sentence_cows, sentences, zipf};
use rustc_hash::FxHashMap;

/// How often (Zipf) a word may be and still be a name when it stands alone capitalized.
const COMMON: f32 = 4.5;

/// Capitals that mark a kind of text, not a thing: "FAQ", an admonition's "NOTE".
const NOT_NAMES: &[&str] = &[
    "faq",
    "faqs",
    "ok",
    "etc",
    "todo",
    "note",
    "tip",
    "important",
    "warning",
    "caution",
    "info",
    "tl",
    "dr",
    "eg",
    "ie",
    "vs",
];

/// Units after a number: `30s`, `5GB` and `1080p` are measures, not names.
const UNITS: &[&str] = &[
    "b", "kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib", "k", "m", "g", "t", "s", "ms",
    "us", "ns", "h", "hr", "hrs", "min", "mins", "d", "w", "x", "px", "pt", "em", "rem", "hz",
    "khz", "mhz", "ghz", "kw", "v", "mah", "fps", "p", "i", "st", "nd", "rd", "th", "am", "pm",
    "kg", "cm", "mm", "km", "in", "ft",
];

/// How the words of the members are written: capitalized or lowercase, inside a sentence or at
/// its start. A capitalized common word is a name only when the members capitalize it inside
/// sentences and never write it in lowercase ("the Enterprise plan"), never when it only opens
/// sentences or titles ("Install", "Metrics").
#[derive(Default)]
struct Usage {
    capital_inside: FxHashMap<String, usize>,
    lowercase: FxHashMap<String, usize>,
}

impl Usage {
    /// The usage in the sentences of the text lines, each as its [`tokens`].
    fn of(sentences: &[Vec<&str>]) -> Usage {
        // Sized once: at most a word for each token.
        let tokens: usize = sentences.iter().map(Vec::len).sum();
        let mut u = Usage {
            capital_inside: FxHashMap::default(),
            lowercase: FxHashMap::with_capacity_and_hasher(tokens, Default::default()),
        };
        let mut lower = String::new();
        for toks in sentences {
            for (i, w) in toks.iter().enumerate() {
                // Inside: after a word of the same clause (not first, not after a mark such as
                // `:` or `→`, where menus and lists capitalize anyway).
                let inside = i > 0 && !toks[i - 1].is_empty();
                let counts = if w.chars().next().is_some_and(char::is_lowercase) {
                    &mut u.lowercase
                } else if inside && !w.is_empty() {
                    &mut u.capital_inside
                } else {
                    continue;
                };
                // A word seen before is counted without a new string.
                lowercase_into(&mut lower, w);
                match counts.get_mut(lower.as_str()) {
                    Some(n) => *n += 1,
                    None => {
                        counts.insert(lower.clone(), 1);
                    }
                }
            }
        }
        u
    }

    /// Whether a capitalized word is a name in this document: it is never written in
    /// lowercase, and it is capitalized inside a sentence of the text or is a word the
    /// background table does not know at all (`Okta`, `Datadog`).
    fn names(&self, word: &str) -> bool {
        let lower = word.to_lowercase();
        if self.lowercase.contains_key(&lower) || UNITS.contains(&lower.as_str()) {
            return false;
        }
        // A word in -ing opens a task title ("Configuring Quill"): a verb, not a name.
        if lower.ends_with("ing") {
            return false;
        }
        // A very common word capitalized once inside a sentence is a button or a menu ("click
        // Save") more often than a name; twice or more, it names something ("in the style of
        // Black", "drop-in replacement for Black").
        let z = zipf(&lower);
        let inside = self.capital_inside.get(&lower).copied().unwrap_or(0);
        let needed = if z >= COMMON { 2 } else { 1 };
        // Capitalized inside sentences often enough, or unknown to the background table (its
        // stem and every part of it too).
        inside >= needed
            || (z == 0.0
                && zipf(&crate::text::stem(&lower)) == 0.0
                && !lower.split('-').all(|p| zipf(p) > 0.0))
    }
}

/// `w` lowercased into `out` (its old text dropped), as `str::to_lowercase` writes it.
fn lowercase_into(out: &mut String, w: &str) {
    out.clear();
    if w.is_ascii() {
        out.push_str(w);
        out.make_ascii_lowercase();
    } else {
        out.push_str(&w.to_lowercase());
    }
}

/// Whether `c` splits a sentence's tokens: whitespace, or a mark such as `=`, `/`, `→` or a
/// quote (asked of every character: a `match`, not a search of a list).
fn breaks_token(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '=' | '/' | '|' | '→' | '←' | '>' | '(' | ')' | '[' | ']' | '{' | '}' | '"' | '“' | '”'
        )
}

/// The pieces of a sentence between [`breaks_token`] characters, as `str::split` gives them
/// (empty ones too), an ASCII character read as its byte (every word of every leaf member passes
/// here).
struct Cuts<'a> {
    s: &'a str,
    start: usize,
    done: bool,
}

impl<'a> Cuts<'a> {
    fn of(s: &'a str) -> Cuts<'a> {
        Cuts {
            s,
            start: 0,
            done: false,
        }
    }
}

impl<'a> Iterator for Cuts<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.done {
            return None;
        }
        let bytes = self.s.as_bytes();
        let mut i = self.start;
        while i < bytes.len() {
            let (c, len) = match bytes[i] {
                b if b.is_ascii() => (b as char, 1),
                _ => {
                    let c = self.s[i..].chars().next().expect("a character starts here");
                    (c, c.len_utf8())
                }
            };
            if breaks_token(c) {
                let piece = &self.s[self.start..i];
                self.start = i + len;
                return Some(piece);
            }
            i += len;
        }
        self.done = true;
        Some(&self.s[self.start..])
    }
}

/// Words of a sentence as written, apostrophes kept inside, other punctuation around removed;
/// `,`/`:`/`(` and the like end a run of capitalized words (an empty token marks the break).
fn tokens(sentence: &str) -> Vec<&str> {
    let mut raws = Cuts::of(sentence).peekable();
    // Sized once: a token (or a break) in about every five bytes.
    let mut out = Vec::with_capacity(sentence.len() / 5 + 2);
    while let Some(raw) = raws.next() {
        let breaks = raw.ends_with([',', ';', ':', '.', '!', '?']);
        let w = raw.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        // A possessive before a common noun is its name ("Quill's speed"); before a capitalized
        // word it is part of a name ("Let's Encrypt").
        let w = match w.strip_suffix("'s").or_else(|| w.strip_suffix("’s")) {
            Some(base)
                if breaks
                    || !raws
                        .peek()
                        .and_then(|n| n.chars().next())
                        .is_some_and(char::is_uppercase) =>
            {
                base
            }
            _ => w,
        };
        let odd = w.contains(is_apostrophe) && w.chars().filter(|&c| is_apostrophe(c)).count() > 1;
        if !w.is_empty() && !odd {
            out.push(w);
        }
        // A mark between words ("Project → Settings", " - ") ends a run too.
        if breaks || w.is_empty() {
            out.push("");
        }
    }
    out
}

/// Whether a token is a name by its form alone: an acronym (`DNS`, `REDIS_URL`), inner capitals
/// (`PagerDuty`, `macOS`), or letters with digits (`E501`, `p99`, `2FA`), not a plain number
/// with a unit (`30s`, `5GB`).
fn named_by_form(w: &str) -> bool {
    // Most words: lowercase letters alone.
    if w.bytes().all(|b| b.is_ascii_lowercase()) {
        return false;
    }
    let (mut letters, mut upper, mut digits) = (0, 0, 0);
    for c in w.chars() {
        letters += c.is_alphabetic() as usize;
        upper += c.is_uppercase() as usize;
        digits += c.is_ascii_digit() as usize;
    }
    if letters == 0 {
        return false;
    }
    if digits > 0 {
        let unit = w.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        let is_measure = w.starts_with(|c: char| c.is_ascii_digit())
            && UNITS.contains(&unit.to_ascii_lowercase().as_str());
        return !is_measure;
    }
    let first_upper = w.chars().next().is_some_and(char::is_uppercase);
    if !((upper >= 2 && letters >= 2) || (upper >= 1 && !first_upper)) {
        // Most words (lowercase, or only capitalized): no name by form, and no copy made.
        return false;
    }
    let lower = w.to_ascii_lowercase();
    !UNITS.contains(&lower.as_str()) && !NOT_NAMES.contains(&lower.as_str())
}

/// Names in one sentence: form-named tokens, and runs of capitalized words (a run's opening word
/// at the sentence start counts only when it names something itself).
fn sentence_names(toks: &[&str], usage: &Usage, out: &mut Vec<String>) {
    let mut run: Vec<&str> = Vec::new();
    let flush = |run: &mut Vec<&str>, out: &mut Vec<String>| {
        if !run.is_empty() && run.len() <= 4 {
            out.push(run.join(" "));
        }
        run.clear();
    };
    for (i, w) in toks.iter().enumerate() {
        if w.is_empty() {
            flush(&mut run, out);
            continue;
        }
        let by_form = named_by_form(w);
        let capital = w.chars().next().is_some_and(char::is_uppercase);
        let name = by_form || (capital && w.chars().count() >= 2 && usage.names(w));
        if name && run.is_empty() {
            // "Acme Cloud": a capitalized word before a name belongs to it, unless it only opens
            // the sentence as a common word does ("Install PagerDuty").
            if let Some(prev) = i.checked_sub(1).map(|j| toks[j]) {
                let lower = prev.to_lowercase();
                // The sentence's (or a clause's) first word is capitalized anyway: it joins only
                // when it is no common word ("Install PagerDuty"; "Acme Cloud" does).
                let opens = i == 1 || toks[i - 2].is_empty();
                let plain = lower.ends_with("ing") || (opens && zipf(&lower) >= 3.5);
                let joins = !crate::text::is_stopword(&lower) && !plain;
                if prev.chars().next().is_some_and(char::is_uppercase) && joins {
                    run.push(prev);
                }
            }
        }
        // A capitalized word joins a run that a name started ("Acme Cloud"; not "FAQs The").
        let joins = capital && !run.is_empty() && !crate::text::is_stopword(&w.to_lowercase());
        if name || joins {
            run.push(w);
        } else {
            flush(&mut run, out);
        }
    }
    flush(&mut run, out);
}

/// A code span as a name: a command, setting, file or identifier (`acme deploy`, `DATABASE_URL`,
/// `pyproject.toml`, `# noqa` as `noqa`, `quill check --fix` as `quill check`); long or
/// sentence-like spans are not.
fn code_name(span: &str) -> Option<String> {
    let s = span.trim().trim_start_matches('#').trim();
    // A command is named without its options: `quill check --fix` is `quill check`.
    let s = match s.find(" -") {
        Some(i) if i > 0 => s[..i].trim_end(),
        _ => s,
    };
    let words = s.split_whitespace().count();
    let ok = (1..=3).contains(&words)
        && s.chars().count() >= 2
        && s.chars().any(char::is_alphabetic)
        && !s.contains(['{', '}', '(', ')', '"', '=', '<', '>', '[', ']']);
    ok.then(|| s.to_string())
}

/// The names of one document, most mentioned first (at most `limit`): those in its title,
/// headings and text lines, judged by how the document itself writes each word, and its code
/// spans that name a command, setting or file.
pub fn of_document(
    title: &str,
    headings: &[String],
    lines: &[&str],
    code: &[String],
    limit: usize,
) -> Vec<String> {
    // Each line's sentences are split and tokenized once, for the usage and for the names.
    let said: Vec<std::borrow::Cow<str>> = lines.iter().flat_map(|l| sentence_cows(l)).collect();
    let text: Vec<Vec<&str>> = said.iter().map(|s| tokens(s)).collect();
    let usage = Usage::of(&text);
    let mut found: Vec<String> = Vec::new();
    let titled: Vec<String> = std::iter::once(title)
        .chain(headings.iter().map(String::as_str))
        .flat_map(sentences)
        .collect();
    let heads: Vec<Vec<&str>> = titled.iter().map(|s| tokens(s)).collect();
    for toks in heads.iter().chain(&text) {
        sentence_names(toks, &usage, &mut found);
    }
    found.extend(code.iter().filter_map(|c| code_name(c)));
    rank(found.iter().map(|f| (f.as_str(), 1)), limit)
}

/// Up to `limit` entity names of a group, from its members' own names: the names most members
/// hold first, then the earlier.
pub fn entities(members: &[&[String]], limit: usize) -> Vec<String> {
    let mut held: Vec<(&str, usize)> = Vec::new();
    for m in members {
        let mut mine: Vec<String> = Vec::new();
        for n in m.iter() {
            let key = n.to_lowercase();
            if !mine.contains(&key) {
                mine.push(key);
                held.push((n.as_str(), 1));
            }
        }
    }
    rank(held.into_iter(), limit)
}

/// Names by how often they come (one spelling per name: the most used, then the first), most
/// first, then in order of first appearance.
fn rank<'a>(names: impl Iterator<Item = (&'a str, usize)>, limit: usize) -> Vec<String> {
    // Read in no order of theirs: the order is fixed by the sort (`first` differs per name) and
    // a name's spelling by its count, then its text.
    let mut seen: FxHashMap<String, (usize, usize, FxHashMap<&'a str, usize>)> =
        FxHashMap::default();
    for (order, (name, n)) in names.enumerate() {
        let e = seen
            .entry(name.to_lowercase())
            .or_insert_with(|| (0, order, FxHashMap::default()));
        e.0 += n;
        *e.2.entry(name).or_default() += n;
    }
    let mut v: Vec<(usize, usize, String)> = seen
        .into_values()
        .map(|(count, first, spellings)| {
            let best = spellings
                .into_iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
                .map(|x| x.0.to_string())
                .unwrap_or_default();
            (count, first, best)
        })
        .collect();
    v.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    v.into_iter().take(limit).map(|x| x.2).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // Deterministic: the same cases on every run, and no file written on a failure.
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0xc075),
            ..ProptestConfig::default()
        })]
        #[test]
        fn a_sentence_is_cut_where_str_split_cuts_it(
            s in "[a-zA-Z0-9 =/|>()\\[\\]{}\"'.,:\t\u{A0}\u{3000}→←“”é日-]{0,60}"
        ) {
            prop_assert_eq!(
                Cuts::of(&s).collect::<Vec<_>>(),
                s.split(breaks_token).collect::<Vec<_>>()
            );
        }
    }

    fn ents(text: &str, code: &[String]) -> Vec<String> {
        let lines: Vec<&str> = text.lines().collect();
        of_document("Notes", &[], &lines, code, 20)
    }

    #[test]
    fn a_sentence_initial_capital_is_not_an_entity() {
        let e = ents(
            "Install the CLI first. Setting up PagerDuty takes a minute. Adding a key is easy. \
             The Metrics tab shows metrics for Acme Cloud. Certificates come from Let's Encrypt. \
             It speaks the Language Server Protocol. It formats like Black and replaces Black.",
            &[],
        );
        for common in ["Install", "Setting", "Adding", "The", "Metrics"] {
            assert!(!e.iter().any(|x| x == common), "{common} in {e:?}");
        }
        for name in [
            "CLI",
            "PagerDuty",
            "Acme Cloud",
            "Let's Encrypt",
            "Language Server Protocol",
            "Black",
        ] {
            assert!(e.iter().any(|x| x == name), "{name} missing from {e:?}");
        }
    }

    #[test]
    fn a_group_ranks_names_by_members() {
        let a = vec!["Redis".to_string(), "PgBouncer".to_string()];
        let b = vec!["REDIS".to_string(), "Redis".to_string(), "Okta".to_string()];
        let c = vec!["Okta".to_string(), "Redis".to_string()];
        assert_eq!(entities(&[&a, &b, &c], 2), ["Redis", "Okta"]);
    }

    #[test]
    fn names_by_form_use_and_code() {
        let e = ents(
            "Rule E501 limits lines. Enable 2FA for p99 budgets of 30s and 5GB. On the Enterprise \
             plan, enterprise support answers; on the Premium plan it does not.",
            &[
                "# noqa".to_string(),
                "DATABASE_URL".to_string(),
                "{ x = 1 }".to_string(),
            ],
        );
        for name in ["E501", "2FA", "p99", "Premium", "noqa", "DATABASE_URL"] {
            assert!(e.iter().any(|x| x == name), "{name} missing from {e:?}");
        }
        for not in ["30s", "5GB", "Enterprise", "Rule", "{ x = 1 }"] {
            assert!(!e.iter().any(|x| x == not), "{not} in {e:?}");
        }
    }
}
