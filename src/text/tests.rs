//! Unit tests of the text helpers, with the character-wise readings that the byte-wise ones are
//! checked against.

#[test]
fn plural_counts_one_as_one() {
    assert_eq!(plural(1, "document"), "1 document");
    assert_eq!(plural(0, "file"), "0 files");
    assert_eq!(plural(2, "more document"), "2 more documents");
}

use super::*;

#[test]
fn one_line_joins_the_words_with_single_spaces() {
    for s in [
        "",
        "   ",
        "one",
        " lead and trail ",
        "tabs\tand\nnew\r\nlines",
        "non\u{a0}breaking\u{2003}em\u{3000}ideographic",
    ] {
        let want = s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(one_line(s), want, "{s:?}");
    }
}

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
fn possessives_and_contractions_stay_whole() {
    let w: Vec<String> =
        words("Ruff's page’s settings don't change; the users' rock’n’roll").collect();
    assert_eq!(
        w,
        [
            "ruff",
            "page",
            "settings",
            "dont",
            "change",
            "the",
            "users",
            "rocknroll"
        ]
    );
    assert_eq!(word_key("“Page’s”").as_deref(), Some("page"));
}

/// `word_key` read character by character for every word (the reference of the byte-wise
/// reading of ASCII words).
fn word_key_by_chars(raw: &str) -> Option<String> {
    let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
    let base = ["'s", "’s", "'S", "’S"]
        .iter()
        .find_map(|p| w.strip_suffix(p))
        .unwrap_or(w);
    let token: String = base
        .chars()
        .filter(|&c| !is_apostrophe(c))
        .flat_map(char::to_lowercase)
        .collect();
    (!token.is_empty()).then_some(token)
}

proptest::proptest! {
    // Deterministic: the same cases on every run, and no file written on a failure.
    #![proptest_config(proptest::prelude::ProptestConfig {
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0xc11b),
        ..proptest::prelude::ProptestConfig::default()
    })]
    #[test]
    fn a_word_is_weighed_as_is_stopword_and_distinctiveness_say(
        key in "([a-z0-9é]{1,9}|the|of|remote|hdmi|and|qwzxv|2fa|x)"
    ) {
        let stop = is_stopword(&key);
        let weight = if stop { 0.0 } else { distinctiveness(&key) };
        proptest::prop_assert_eq!(stop_and_weight(&key), (stop, weight));
    }

    /// The byte-wise reading of an ASCII word gives the token the character-wise one does:
    /// edges trimmed, possessives dropped, apostrophes removed, lowercased.
    #[test]
    fn an_ascii_word_is_keyed_as_by_characters(
        raw in "[a-zA-Z0-9'’\\-.,“”()é]{0,12}"
    ) {
        let mut fast = String::new();
        let kept = word_key_into(&raw, &mut fast);
        let want = word_key_by_chars(&raw);
        proptest::prop_assert_eq!(kept.then_some(fast), want);
    }

    #[test]
    fn a_text_is_clipped_after_its_first_characters(
        s in "[a-z .é日\u{1F600}]{0,40}", max in 0usize..45
    ) {
        let want = match s.char_indices().nth(max) {
            Some((i, _)) => &s[..i],
            None => s.as_str(),
        };
        proptest::prop_assert_eq!(clip_chars(&s, max), want);
    }
}

#[test]
fn background_table_loads() {
    assert!(zipf("the") > 7.0);
    assert!(zipf("remote") > 3.0 && zipf("remote") < 5.0);
    assert_eq!(zipf("qwzxv"), 0.0);
    assert!(distinctiveness("hdmi") > distinctiveness("the"));
    assert!(is_stopword("the") && !is_stopword("payments"));
}
