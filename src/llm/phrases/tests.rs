//! Unit tests of the label phrases, and the copying `shared` that the one keyed by word ids is
//! checked against.

use super::*;
use proptest::prelude::*;

/// `line_phrases` as it was before word ids: each window's words copied into a
/// `BTreeMap` key (the reference the interned one is checked against).
fn line_phrases_by_copy(line: &str, out: &mut BTreeMap<Vec<String>, bool>) {
    for run in runs(line) {
        let ends: Vec<bool> = run.iter().map(|w| usable(w)).collect();
        let inside: Vec<bool> = run
            .iter()
            .zip(&ends)
            .map(|(w, &end)| end || INNER.contains(&w.as_str()))
            .collect();
        for start in 0..run.len() {
            if !ends[start] {
                continue;
            }
            let verb = start == 0 && run.len() > 1 && run[0].ends_with("ing");
            for end in start..run.len().min(start + MAX_WORDS) {
                if !inside[start..end].iter().skip(1).all(|&ok| ok) {
                    break;
                }
                if ends[end] {
                    let v = out.entry(run[start..=end].to_vec()).or_insert(verb);
                    *v &= verb;
                }
            }
        }
    }
}

/// `shared` as it was before word ids.
fn shared_by_copy(members: &[Member], avoid: &HashSet<String>) -> Vec<Phrase> {
    let mut seen: BTreeMap<Vec<String>, (f32, usize, bool)> = BTreeMap::new();
    for m in members {
        let mut in_title = BTreeMap::new();
        line_phrases_by_copy(m.title, &mut in_title);
        let mut in_headings = BTreeMap::new();
        for h in m.headings {
            line_phrases_by_copy(h, &mut in_headings);
        }
        for (p, &verb) in &in_title {
            let e = seen.entry(p.clone()).or_insert((0.0, 0, true));
            e.0 += 1.0;
            e.1 += 1;
            e.2 &= verb;
        }
        for (p, &verb) in in_headings
            .iter()
            .filter(|(p, _)| !in_title.contains_key(*p))
        {
            let e = seen.entry(p.clone()).or_insert((0.0, 0, true));
            e.0 += 0.5;
            e.1 += 1;
            e.2 &= verb;
        }
    }
    let need = members.len().min(2);
    let mut out: Vec<Phrase> = seen
        .into_iter()
        .filter(|(words, (_, holders, _))| {
            *holders >= need && !words.iter().any(|w| avoid.contains(w))
        })
        .map(|(words, (coverage, holders, verb))| {
            let content = words.iter().filter(|w| usable(w)).map(String::as_str);
            Phrase {
                score: score(content, coverage, verb),
                words,
                coverage,
                holders,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.words.cmp(&b.words))
    });
    out
}

/// A title or heading of words a label meets: stopwords, inner and generic words, -ing
/// verbs, possessives, numbers, and the marks that cut runs.
fn line() -> impl Strategy<Value = String> {
    let word = prop::sample::select(vec![
        "Adding",
        "setting",
        "product",
        "options",
        "of",
        "and",
        "the",
        "for",
        "Guide",
        "FAQ",
        "Ruff's",
        "ruff",
        "formatter",
        "2FA",
        "v2",
        "API",
        "keys",
        "to",
        "in",
        "billing",
        "Billing",
        ":",
        ",",
        ".",
        "“quoted”",
        "(x)",
        "Café",
        "naïve",
        "-",
    ]);
    prop::collection::vec(word, 0..9).prop_map(|w| w.join(" "))
}

proptest! {
    // Fixed seed, no failure file: deterministic, and nothing written into src/.
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5a2e),
        ..ProptestConfig::default()
    })]

    /// Phrases keyed by word ids are the phrases keyed by copied words: the same words,
    /// coverage, holders and scores, in the same order.
    #[test]
    fn word_ids_give_the_phrases_copies_gave(
        titles in prop::collection::vec(line(), 1..6),
        headings in prop::collection::vec(prop::collection::vec(line(), 0..3), 6),
        avoid in prop::collection::hash_set(prop::sample::select(vec!["product", "ruff", "keys", "zzz"]), 0..2),
    ) {
        let avoid: HashSet<String> = avoid.into_iter().map(String::from).collect();
        let m: Vec<Member> = titles
            .iter()
            .zip(&headings)
            .map(|(t, h)| Member { title: t, headings: h })
            .collect();
        prop_assert_eq!(shared(&m, &avoid), shared_by_copy(&m, &avoid));
    }
}

fn common_words(groups: &[Vec<Member>]) -> Vec<String> {
    let held: Vec<Vec<String>> = groups.iter().map(|g| held_words(g)).collect();
    common_of(&held)
}

fn members<'a>(titles: &'a [&'a str], none: &'a [String]) -> Vec<Member<'a>> {
    titles
        .iter()
        .map(|t| Member {
            title: t,
            headings: none,
        })
        .collect()
}

#[test]
fn the_shared_title_phrase_wins() {
    let none = Vec::new();
    let m = members(
        &[
            "Wix Stores: Adding Product Options",
            "Wix Stores: Managing Product Options",
            "Wix Stores: Setting Up Shipping",
            "Wix Bookings: Adding a Service",
        ],
        &none,
    );
    assert_eq!(label(&m, &HashSet::new()).as_deref(), Some("wix stores"));
    // A brand word shared by every sibling is avoided: the next shared phrase is used.
    let avoid: HashSet<String> = ["wix".to_string()].into();
    assert_eq!(label(&m, &avoid).as_deref(), Some("product options"));
}

#[test]
fn possessives_stay_whole_and_words_come_from_two_titles() {
    let none = Vec::new();
    let m = members(
        &[
            "Ruff's formatter",
            "The Ruff formatter and Black",
            "Configuring the linter",
        ],
        &none,
    );
    let l = label(&m, &HashSet::new()).unwrap();
    assert_eq!(l, "ruff formatter");
    assert!(!l.split(' ').any(|w| w == "s"));
}

#[test]
fn a_word_most_groups_share_is_common() {
    let none = Vec::new();
    let a = members(&["Wix Stores: Options", "Wix Stores: Shipping"], &none);
    let b = members(&["Wix Bookings: Services", "Calendar sync"], &none);
    let c = members(&["Wix Editor: Menus", "Wix Editor: Layers", "Fonts"], &none);
    let d = members(&["Billing history", "Invoices"], &none);
    let groups = vec![a.clone(), b.clone(), c.clone(), d.clone()];
    // "wix" is in a quarter or more of the titles of 3 of 4 groups (3 >= ceil(2.4)).
    assert_eq!(common_words(&groups), ["wix"]);
    let texts = [
        "Acme Cloud deploys apps.",
        "Invoices: Acme bills monthly.",
        "Acme's status page.",
        "Rotate keys often.",
    ];
    assert_eq!(brand_words(texts.into_iter()), ["acme"]);
    assert!(brand_words(texts[..3].iter().copied()).is_empty());
    assert!(common_words(&[a, d]).is_empty());
}

#[test]
fn nothing_shared_falls_back_to_the_first_title() {
    let none = Vec::new();
    let m = members(&["API keys and tokens", "Status page"], &none);
    assert_eq!(label(&m, &HashSet::new()), None);
    let l = title_label(&m, &HashSet::new()).unwrap();
    assert!(l == "api keys" || l == "keys and tokens", "{l}");
}
