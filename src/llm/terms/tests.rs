//! Unit tests of the key phrases and the document types, with the code they replaced, which
//! they are checked against.

use super::*;
use proptest::prelude::*;

/// `doc_types` as it was before one automaton: a search per cue (the reference).
fn doc_types_by_search(items: &[(String, String)]) -> Vec<String> {
    let n = items.len().max(1);
    let lowered: Vec<String> = items
        .iter()
        .map(|(title, text)| format!("{title} {text}").to_lowercase())
        .collect();
    TYPE_CUES
        .iter()
        .filter(|(_, cues)| {
            let hits = lowered
                .iter()
                .filter(|t| cues.iter().any(|c| t.contains(c)))
                .count();
            hits * 3 >= n
        })
        .map(|(name, _)| name.to_string())
        .collect()
}

proptest! {
    // Fixed seed, no failure file: deterministic, and nothing written into src/.
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0xd0c7),
        ..ProptestConfig::default()
    })]

    /// One pass of the automaton finds the types a search per cue finds.
    #[test]
    fn one_automaton_finds_the_types_searches_do(
        items in prop::collection::vec(
            (
                "(How to|FAQ|About|Terms|Overview|Settings|Fix)?[ a-z]{0,6}",
                prop::collection::vec(prop::sample::select(vec![
                    "how", "to", "step", "steps", "click", "error", "issue", "fix", "?",
                    "faq", "frequently", "asked", "policy", "terms", "list", "of",
                    "options", "about", "learn", "more", "what", "is", "Überblick", "İ",
                    "not", "working", "go", "select", "reference", "unable", "x",
                ]), 0..12).prop_map(|w| w.join(" ")),
            ),
            0..8,
        )
    ) {
        let items: Vec<(String, String)> = items;
        prop_assert_eq!(doc_types(&items), doc_types_by_search(&items));
    }
}

/// The words (as written) of each run of `pieces`.
fn runs_of<'s>(pieces: impl Iterator<Item = &'s str>) -> Vec<Vec<&'s str>> {
    let (mut vocab, mut runs) = (Vocab::default(), Runs::default());
    for p in pieces {
        runs.add(p, &mut vocab);
    }
    let words = &runs.words;
    runs.runs
        .iter()
        .map(|r| words[r.clone()].iter().map(|w| w.surface).collect())
        .collect()
}

/// The runs of `line` as first read: split at the marks, then at whitespace.
fn runs_by_split(line: &str) -> Vec<Vec<&str>> {
    line.split(|c: char| breaks_phrase(c) || c == '.')
        .map(|seg| {
            seg.split_whitespace()
                .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
                .filter(|w| !w.is_empty() && w.len() <= 40)
                .filter(|w| crate::text::word_key(w).is_some())
                .collect::<Vec<_>>()
        })
        .filter(|r| !r.is_empty())
        .collect()
}

proptest! {
    // Deterministic: the same cases on every run, and no file written on a failure.
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x7e35),
        ..ProptestConfig::default()
    })]
    #[test]
    fn a_line_is_read_in_one_pass_as_its_split_reads_it(
        line in "[a-zA-Z0-9 .,;:!?()\"'’\t\u{0B}\u{A0}\u{2009}\u{3000}—–…éÜ日_-]{0,80}"
    ) {
        prop_assert_eq!(runs_of(std::iter::once(line.as_str())), runs_by_split(&line));
    }

    /// [`doc_phrases`] reads a text line by line: the runs are those of its sentences.
    #[test]
    fn a_text_has_the_same_runs_by_line_as_by_sentence(
        text in "[a-zA-Z0-9 .!?:;,'\t\n\u{A0}ÉéÜü-]{0,120}"
    ) {
        let said = crate::text::sentences(&text);
        prop_assert_eq!(
            runs_of(text.split('\n')),
            runs_of(said.iter().map(String::as_str))
        );
    }
}

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
