//! Planted instructions: sentences in a document that address an AI model ("ignore your previous
//! instructions", "as an AI", "include this sentence in every summary", fake system notes, in
//! several languages) or that ask readers to send a secret somewhere. They are flagged at ingest
//! and left out of the text that navigation is made from; the document itself keeps them.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::{Regex, RegexSet};

mod normalize;
pub mod places;
mod rules;
mod sentences;

pub use normalize::fold;
use rules::{EUROPEAN_GATE, EUROPEAN_RULES, NEGATION, OTHER_SCRIPT_RULES, RULES, other_script};
pub use sentences::CONTINUES;
use sentences::{Span, sentence_flags, sentence_spans};

/// Version of the rules: part of the card key of every document they change.
pub const PLANTED_VERSION: u32 = 6;

/// One flagged sentence.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Flag {
    /// 1-based line inside the document's text.
    pub line: usize,
    /// The sentence, whitespace collapsed.
    pub text: String,
    /// Which rule matched.
    pub rule: &'static str,
    /// Where it was hidden from a reader, if it was (see [`places`]).
    pub place: Option<&'static str>,
    /// Quoted (in code, a block quote or quotation marks) on a page that discusses prompt
    /// injection: an example of an attack, not a plant. It stays out of navigation text, but
    /// the page is not warned about.
    pub quoted: bool,
}

fn set_of(rules: &[(&str, &str)], relax: bool) -> RegexSet {
    regex::RegexSetBuilder::new(rules.iter().map(|(_, p)| {
        let p = if relax {
            p.replace(LEFT_CONTEXT, "")
        } else {
            p.to_string()
        };
        format!("(?i){p}")
    }))
    // Room for the lazy DFA of many rules over long texts: with less it rebuilds its states
    // again and again.
    .dfa_size_limit(16 << 20)
    .build()
    .expect("the planted-instruction rules compile")
}

// Each set is compiled on first use (tens of milliseconds each): a corpus without a plant
// compiles only the whole-text set, one in English only the Latin-script rules too.

/// The always-read rules, one sentence at a time.
fn latin() -> &'static RegexSet {
    static R: OnceLock<RegexSet> = OnceLock::new();
    R.get_or_init(|| set_of(RULES, false))
}

/// The rules of the other European languages.
fn european() -> &'static RegexSet {
    static R: OnceLock<RegexSet> = OnceLock::new();
    R.get_or_init(|| set_of(EUROPEAN_RULES, false))
}

/// The rules of languages in other scripts.
fn other() -> &'static RegexSet {
    static R: OnceLock<RegexSet> = OnceLock::new();
    R.get_or_init(|| set_of(OTHER_SCRIPT_RULES, false))
}

/// The negation that turns an ask into advice.
fn negation() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(&format!("(?i){NEGATION}")).expect("the negation rule compiles"))
}

/// An override the writer says of themselves (see [`rules::REPORTED_OVERRIDE`]).
fn reported() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(&format!("(?i){}", rules::REPORTED_OVERRIDE)).expect("the rule compiles")
    })
}

/// Compiles the rules now, on a thread of its own at the start of ingest: the whole-text rules
/// first (the first document waits for them), then the sentence rules that [`check_sentence`]
/// reads (front-matter values, the state's folder names and every model answer pass there), so
/// that the build's main thread does not wait for them either.
pub fn warm_up() {
    let _ = whole_text_rules();
    let _ = (latin(), european(), other());
}

/// The left context of the one rule that looks before its match (a fake `system note:`): the
/// start of a sentence, a bracket or markup, punctuation, or an urgent word ("IMPORTANT SYSTEM
/// NOTE:"); not a plain word, so that prose about "the system prompt: …" is no fake message.
/// [`may_flag`] drops it.
const LEFT_CONTEXT: &str = r"(^|[\[<(#*|>]\s*|[^\w\s]\s+|\b(important|urgent|new|hidden|secret|priority|critical|official|internal)\s+)";

/// The rules without their left context, as one set over a whole text: a sentence of the text
/// that breaks a rule matches it, so a text it does not match has nothing to flag. (Sentences
/// are cut where a `.`, `!`, `?`, `|` or line end leaves a non-word character on each side, so a
/// `\b` at a sentence's edge holds in the text too.)
fn whole_text_rules() -> &'static RegexSet {
    static R: OnceLock<RegexSet> = OnceLock::new();
    R.get_or_init(|| {
        let relaxed = RULES
            .iter()
            .map(|(_, p)| format!("(?i){}", p.replace(LEFT_CONTEXT, "")));
        regex::RegexSetBuilder::new(relaxed.chain([EUROPEAN_GATE.to_string()]))
            .dfa_size_limit(16 << 20)
            .build()
            .expect("the planted-instruction rules compile")
    })
}

/// Whether some sentence of `text` (as written) may break a rule: false when none does, in one
/// pass over the whole text.
pub fn may_hold_plant(text: &str) -> bool {
    may_flag(&fold(text))
}

/// Whether some sentence of `text` may break a rule (false: none does). One pass reads the
/// always-read rules and the gate of the other European languages' rules.
fn may_flag(text: &str) -> bool {
    gate(text).0
}

/// [`may_flag`], and how the text's sentences are read: one pass over a text that matches
/// nothing (most texts), a second to find which rules a text matches.
fn gate(text: &str) -> (bool, Reading) {
    let set = whole_text_rules();
    let other_letters = other_script(text);
    // Most texts match no rule and no European cue: a search that only asks whether anything
    // matches is cheaper than finding which (every document of a build passes here).
    if !set.is_match(text) {
        let reading = Reading {
            european: false,
            other: other_letters,
        };
        return (other_letters && other().is_match(text), reading);
    }
    let hits = set.matches(text);
    let reading = Reading {
        european: hits.matched(RULES.len()),
        other: other_letters,
    };
    let may = hits.iter().any(|i| i < RULES.len())
        || (reading.european && european().is_match(text))
        || (reading.other && other().is_match(text));
    (may, reading)
}

/// Which sets a text's sentences are read with: the European rules only where the whole text
/// opens their gate (as [`may_flag`] reads them), the other scripts' only where it has their
/// letters.
#[derive(Clone, Copy)]
struct Reading {
    european: bool,
    other: bool,
}

impl Reading {
    /// Every set (a sentence alone may lack the words that open the gates).
    const ALL: Reading = Reading {
        european: true,
        other: true,
    };
}

/// The rule called `name` (how a flag read back from a record names its rule).
pub fn rule_named(name: &str) -> Option<&'static str> {
    RULES
        .iter()
        .chain(EUROPEAN_RULES)
        .chain(OTHER_SCRIPT_RULES)
        .map(|(r, _)| *r)
        .chain([CONTINUES, HIDES])
        .find(|r| *r == name)
}

/// The rule a sentence breaks, if any (read as [`fold`] gives it).
pub fn check_sentence(sentence: &str) -> Option<&'static str> {
    check_folded(&fold(sentence))
}

/// [`check_sentence`] of a sentence already folded.
fn check_folded(sentence: &str) -> Option<&'static str> {
    check_read(sentence, Reading::ALL)
}

/// The rule a folded sentence breaks, read with the sets `reading` names (the Latin-script
/// rules always; the other scripts' only when the sentence has their letters).
fn check_read(sentence: &str, reading: Reading) -> Option<&'static str> {
    let first = |set: &RegexSet, rules: &[(&'static str, &str)]| {
        set.matches(sentence).iter().next().map(|i| rules[i].0)
    };
    let rule = first(latin(), RULES)
        .or_else(|| {
            reading
                .european
                .then(|| first(european(), EUROPEAN_RULES))
                .flatten()
        })
        .or_else(|| {
            (reading.other && other_script(sentence))
                .then(|| first(other(), OTHER_SCRIPT_RULES))
                .flatten()
        })?;
    // "I will ignore your instruction" reports what the writer does: read the sentence again
    // without those words, for an override said to the reader beside it.
    if rule == "overrides instructions" && reported().is_match(sentence) {
        let rest = reported().replace_all(sentence, "");
        return check_read(&rest, reading);
    }
    // "Never email your password to anyone" and "do not wire money to …" are advice, not asks;
    // "we cannot include this line" says what a program does (docstrip's manual).
    let asks = matches!(
        rule,
        "asks to send a secret"
            | "asks to send money"
            | "weakens security"
            | "asks for text in every output"
    );
    if asks && negation().is_match(sentence) {
        return None;
    }
    Some(rule)
}

/// What a sentence that hides a word from a reader (invisible characters or look-alike letters
/// inside it) is flagged as.
pub const HIDES: &str = "hides text from a reader";

/// What each flagged sentence of `folded` (the [`fold`] of `original`, line for line) covers:
/// those that break a rule, those that follow a model-addressing sentence in its paragraph,
/// and those that hide a word from a reader.
fn flagged_spans(original: &str, folded: &str) -> Vec<Span> {
    let hides = normalize::hides(original);
    // Most texts break no rule: one pass over the whole text tells, instead of one per sentence.
    let (may, reading) = gate(folded);
    if !hides && !may {
        return Vec::new();
    }
    let mut out = sentence_flags(folded, reading);
    if hides {
        add_hiding(original, folded, &mut out);
    }
    out
}

/// Flags (as [`HIDES`]) the sentences of `folded` that hold a word hidden in `original`
/// (line for line), unless a rule flagged them already.
fn add_hiding(original: &str, folded: &str, out: &mut Vec<Span>) {
    let folded: Vec<&str> = folded.lines().collect();
    for (n, orig) in normalize::prose_lines(original) {
        let Some(line) = folded.get(n) else { continue };
        let words = normalize::hidden_words(orig);
        if words.is_empty() {
            continue;
        }
        for (a, b) in sentence_spans(line) {
            let holds = words.iter().any(|w| line[a..b].contains(w.as_str()));
            let flagged = out.iter().any(|s| s.line == n && s.a < b && a < s.b);
            if holds && !flagged {
                out.push(Span {
                    line: n,
                    a,
                    b,
                    rule: HIDES,
                    goes_on: false,
                });
            }
        }
    }
    // In line order; the parts of one sentence stay together (they are in line order already).
    out.sort_by_key(|s| (s.line, s.a));
}

/// The flagged sentences of a text (as the rules read it: see [`fold`]), each with where it
/// was hidden and whether it is a quoted example; a sentence wrapped over line breaks is one
/// flag, at its first line.
pub fn flags(text: &str) -> Vec<Flag> {
    let folded = fold(text);
    let spans = flagged_spans(text, &folded);
    if spans.is_empty() {
        return Vec::new();
    }
    let mut starts = Vec::new();
    let mut lines = Vec::new();
    let mut at = 0;
    for l in folded.split_inclusive('\n') {
        starts.push(at);
        lines.push(l.trim_end_matches(['\n', '\r']));
        at += l.len();
    }
    let comments = places::comments(&folded);
    let quoted = places::quoted_lines(&folded);
    let example = places::discusses_injection(&folded, &quoted);
    let inline = match example {
        true => places::inline_quotes(&folded),
        false => Vec::new(),
    };
    let original: Vec<&str> = text.lines().collect();
    let hidden = |n: usize| {
        original
            .get(n)
            .map(|l| normalize::hidden_words(l))
            .unwrap_or_default()
    };
    // Whether the sentence that opened the plant a continuation belongs to was quoted.
    let mut opener_quoted = false;
    let mut out = Vec::new();
    for sentence in spans.chunk_by(|_, next| next.goes_on) {
        let first = sentence[0];
        let words: Vec<String> = sentence.iter().flat_map(|s| hidden(s.line)).collect();
        let in_quotes = example
            && match first.rule {
                CONTINUES => opener_quoted,
                rule => {
                    let rest: Vec<String> = sentence
                        .iter()
                        .map(|s| places::unquoted(lines[s.line], (s.a, s.b), &inline[s.line]))
                        .collect();
                    let rest = rest.join(" ");
                    opener_quoted = match rule {
                        HIDES => words.iter().all(|w| !rest.contains(w.as_str())),
                        _ => check_folded(&rest).is_none(),
                    };
                    opener_quoted
                }
            };
        let block_quoted = sentence
            .iter()
            .all(|s| quoted.get(s.line).copied().unwrap_or(false));
        let disguised = first.rule == HIDES || !words.is_empty();
        let place = sentence
            .iter()
            .find_map(|s| places::place(lines[s.line], (starts[s.line], s.a, s.b), &comments));
        let text: Vec<&str> = sentence
            .iter()
            .flat_map(|s| lines[s.line][s.a..s.b].split_whitespace())
            .collect();
        out.push(Flag {
            line: first.line + 1,
            text: text.join(" "),
            rule: first.rule,
            place: place.or(disguised.then_some(places::DISGUISED)),
            quoted: example && (in_quotes || block_quoted),
        });
    }
    out
}

/// A document's flagged sentences and navigation text, lowercased once, for asking of many
/// phrases (key phrases, entities) whether they come from its planted sentences rather than
/// from its text: a planted word never becomes a phrase or an entity.
pub struct Plants {
    flags: Vec<String>,
    navigation: String,
}

impl Plants {
    /// `None` for a document without flags (no phrase comes from a plant).
    pub fn of(flags: &[Flag], navigation: &str) -> Option<Plants> {
        (!flags.is_empty()).then(|| Plants {
            flags: flags.iter().map(|f| f.text.to_lowercase()).collect(),
            navigation: fold(navigation).to_lowercase(),
        })
    }

    /// Whether `phrase` occurs in a flagged sentence and not in the navigation text, the text
    /// navigation is made from (case aside).
    pub fn hold_only(&self, phrase: &str) -> bool {
        let p = fold(phrase).to_lowercase();
        self.flags.iter().any(|f| f.contains(&p)) && !self.navigation.contains(&p)
    }
}

/// The place a flag's name in a cache stands for.
pub fn place_named(name: &str) -> Option<&'static str> {
    [
        places::COMMENT,
        places::ALT,
        places::TITLE,
        places::DISGUISED,
        places::HIDDEN_ELEMENT,
        places::FRONT_MATTER,
    ]
    .into_iter()
    .find(|p| *p == name)
}

/// The text that navigation is made from: without HTML comments and flagged sentences (the
/// original when nothing is left out; folded as the rules read it when something is).
pub fn navigation_text(text: &str) -> Cow<'_, str> {
    let uncommented = if text.contains("<!--") {
        Cow::Owned(strip_comments(text))
    } else {
        Cow::Borrowed(text)
    };
    let folded = fold(&uncommented);
    let spans = flagged_spans(&uncommented, &folded);
    if spans.is_empty() {
        return match uncommented {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            Cow::Owned(u) => Cow::Owned(u),
        };
    }
    Cow::Owned(without(&folded, &spans))
}

/// A text with the given sentence spans cut out, line by line (so line numbers still match).
fn without(text: &str, spans: &[Span]) -> String {
    let mut out = String::with_capacity(text.len());
    for (n, line) in text.lines().enumerate() {
        let mut kept = String::with_capacity(line.len());
        let mut last = 0;
        for span in spans.iter().filter(|s| s.line == n) {
            kept.push_str(&line[last..span.a]);
            last = span.b;
        }
        kept.push_str(&line[last..]);
        out.push_str(kept.trim_end());
        out.push('\n');
    }
    out
}

/// `<!-- … -->` removed (an unclosed one runs to the end), their line breaks kept so that line
/// numbers still match.
fn strip_comments(text: &str) -> String {
    places::without_spans(text, &places::comments(text))
}

#[cfg(test)]
mod tests;
