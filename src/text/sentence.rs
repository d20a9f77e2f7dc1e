//! Sentence splitting of plain text: the sentences every offline card, summary, tag and check
//! reads (on every document of a build, so most text takes a byte-level path).

use std::borrow::Cow;

/// Splits plain text into sentences: at `.`/`!`/`?` before a space or a capital, and at blank lines.
pub fn sentences(text: &str) -> Vec<String> {
    sentence_cows(text).map(Cow::into_owned).collect()
}

/// [`sentences`] one at a time, for a caller that may stop at an early one; a sentence that
/// needs no tidying is borrowed from `text` (most are).
pub fn sentence_cows(text: &str) -> impl Iterator<Item = Cow<'_, str>> + '_ {
    text.split('\n').flat_map(Pieces::of).filter_map(tidy)
}

/// The stretches of one line that end at a sentence's mark (the last one runs to the line's end),
/// as written.
struct Pieces<'a> {
    line: &'a str,
    /// Where the next piece starts.
    start: usize,
    /// Where the search for the next mark goes on.
    at: usize,
    done: bool,
}

impl<'a> Pieces<'a> {
    fn of(line: &'a str) -> Pieces<'a> {
        Pieces {
            line,
            start: 0,
            at: 0,
            done: false,
        }
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.done {
            return None;
        }
        // The marks are ASCII, and no byte of a multi-byte character is one.
        let bytes = self.line.as_bytes();
        while let Some(off) = memchr::memchr3(b'.', b'!', b'?', &bytes[self.at..]) {
            let i = self.at + off;
            self.at = i + 1;
            if ends_sentence(self.line, i) {
                let piece = &self.line[self.start..=i];
                self.start = i + 1;
                return Some(piece);
            }
        }
        self.done = true;
        Some(&self.line[self.start..])
    }
}

/// Whether the mark at byte `i` of `line` ends a sentence: at the line's end, before whitespace,
/// or glued to a capital after a lowercase letter ("policy.Learn"), never inside `1.2.3`.
fn ends_sentence(line: &str, i: usize) -> bool {
    match line[i + 1..].chars().next() {
        None => true,
        Some(n) if n.is_whitespace() => true,
        Some(n) => {
            n.is_uppercase()
                && line[..i]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_lowercase)
        }
    }
}

/// `char::is_whitespace` over ASCII: space, tab, line feed, vertical tab, form feed, return.
fn ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

/// The piece `raw` with its whitespace runs made one space and its ends trimmed, if it holds a
/// letter or digit.
fn tidy(raw: &str) -> Option<Cow<'_, str>> {
    if raw.is_ascii() {
        return tidy_ascii(raw);
    }
    let mut s = String::with_capacity(raw.len());
    let (mut gap, mut word) = (false, false);
    for c in raw.chars() {
        if c.is_whitespace() {
            gap = !s.is_empty();
            continue;
        }
        if std::mem::take(&mut gap) {
            s.push(' ');
        }
        word |= c.is_alphanumeric();
        s.push(c);
    }
    word.then_some(Cow::Owned(s))
}

/// [`tidy`] of ASCII text: borrowed whole when its only whitespace is single spaces inside it.
fn tidy_ascii(raw: &str) -> Option<Cow<'_, str>> {
    let bytes = raw.as_bytes();
    let first = bytes.iter().position(|&b| !ascii_space(b))?;
    let last = bytes.iter().rposition(|&b| !ascii_space(b))?;
    let s = &raw[first..=last];
    let (mut word, mut plain, mut gap) = (false, true, false);
    for &b in s.as_bytes() {
        word |= b.is_ascii_alphanumeric();
        let space = ascii_space(b);
        plain &= !space || (b == b' ' && !gap);
        gap = space;
    }
    if !word {
        return None;
    }
    if plain {
        return Some(Cow::Borrowed(s));
    }
    let mut out = String::with_capacity(s.len());
    let mut gap = false;
    for &b in s.as_bytes() {
        if ascii_space(b) {
            gap = true;
            continue;
        }
        if std::mem::take(&mut gap) {
            out.push(' ');
        }
        out.push(b as char);
    }
    Some(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The splitting as first written, character by character: what the byte-level path must
    /// give.
    fn by_chars(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let push = |out: &mut Vec<String>, raw: &str| {
            let mut s = String::new();
            let (mut gap, mut word) = (false, false);
            for c in raw.chars() {
                if c.is_whitespace() {
                    gap = !s.is_empty();
                    continue;
                }
                if std::mem::take(&mut gap) {
                    s.push(' ');
                }
                word |= c.is_alphanumeric();
                s.push(c);
            }
            if word {
                out.push(s);
            }
        };
        for para in text.split('\n') {
            let mut start = 0;
            let mut prev: Option<char> = None;
            let mut chars = para.char_indices().peekable();
            while let Some((i, c)) = chars.next() {
                if matches!(c, '.' | '!' | '?') {
                    let boundary = match chars.peek() {
                        None => true,
                        Some(&(_, n)) if n.is_whitespace() => true,
                        Some(&(_, n)) => n.is_uppercase() && prev.is_some_and(|p| p.is_lowercase()),
                    };
                    if boundary {
                        let end = i + c.len_utf8();
                        push(&mut out, &para[start..end]);
                        start = end;
                    }
                }
                prev = Some(c);
            }
            push(&mut out, &para[start..]);
        }
        out
    }

    #[test]
    fn ascii_space_is_char_whitespace() {
        for b in 0u8..128 {
            assert_eq!(ascii_space(b), (b as char).is_whitespace(), "byte {b}");
        }
    }

    proptest! {
        // Deterministic: the same cases on every run, and no file written on a failure.
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x5e17),
            ..ProptestConfig::default()
        })]
        #[test]
        fn the_byte_level_split_is_the_character_one(
            text in "[a-zA-Z0-9 .!?:;,\t\n\r\u{0B}\u{0C}\u{A0}\u{2009}\u{3000}ÉéÇçÜü日本]{0,120}"
        ) {
            prop_assert_eq!(sentences(&text), by_chars(&text));
            // Lazily, the same sentences.
            prop_assert_eq!(sentence_cows(&text).collect::<Vec<_>>(), by_chars(&text));
        }
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
    fn sentence_split_keeps_decimals_and_versions_whole_and_reads_any_script() {
        // A `.` before a digit or a lowercase letter is no end; one between a lowercase letter
        // and a capital is (glued text); whitespace runs become one space; a run with no letter
        // or digit is no sentence; multi-byte letters on either side of the mark count as such.
        let s =
            sentences("Version 1.2.3 ships.  It   works!\n...\nÉté fini.Über alles? café.Ça va\t.");
        assert_eq!(
            s,
            vec![
                "Version 1.2.3 ships.",
                "It works!",
                "Été fini.",
                "Über alles?",
                "café.",
                "Ça va .",
            ]
        );
    }
}
