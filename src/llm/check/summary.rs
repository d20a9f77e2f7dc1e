//! The summary check: plain sentences that name nothing the members do not hold (commands,
//! numbers, addresses, names), no echo of the prompt, no copied runs, at most a few sentences.

use super::{Parsed, Source, word_tokens};
use crate::text::{sentences, zipf};

/// Words a routing summary may hold at most, and sentences.
pub const SUMMARY_MAX_WORDS: usize = 90;
pub const SUMMARY_MAX_SENTENCES: usize = 4;
/// A sentence copied from a member (a run of this many words, or of most of the sentence) is an
/// echo, not a summary.
pub const COPY_RUN_WORDS: usize = 20;

/// A routing summary: plain sentences, nothing the members do not contain, no echo of the prompt,
/// at most a few sentences. Sentences that fail are dropped; nothing left is an error.
pub fn summary(raw: &str, members: &Source, prompt: &Source) -> Result<Parsed<String>, String> {
    let mut repairs = Vec::new();
    let mut kept_lines = Vec::new();
    let mut list_lines = 0;
    for line in raw.lines() {
        let t = line.trim();
        let t = t
            .strip_prefix("Summary:")
            .or_else(|| t.strip_prefix("**Summary:**"))
            .unwrap_or(t)
            .trim();
        if t.is_empty() {
            continue;
        }
        if is_list_line(t) {
            list_lines += 1;
            continue;
        }
        kept_lines.push(t.to_string());
    }
    if list_lines > 0 {
        repairs.push(format!(
            "dropped {list_lines} list line(s): a summary is sentences, not a retelling"
        ));
    }
    let text = kept_lines.join(" ");
    let mut out: Vec<String> = Vec::new();
    for s in sentences(&text) {
        let s = strip_echoed_lead(&s, prompt, &mut repairs);
        if s.ends_with(':') {
            repairs.push(format!("dropped `{}`: it introduces a list", clip(&s)));
            continue;
        }
        if prompt.longest_copied_run(&s) >= 6 && !members.has_phrase(&s) {
            repairs.push(format!("dropped `{}`: it repeats the prompt", clip(&s)));
            continue;
        }
        let words = s.split_whitespace().count();
        let copied = members.longest_copied_run(&s);
        if copied >= COPY_RUN_WORDS || (words >= 10 && copied * 5 >= words * 4) {
            repairs.push(format!("dropped `{}`: it copies a member", clip(&s)));
            continue;
        }
        if let Some(rule) = crate::planted::check_sentence(&s) {
            repairs.push(format!(
                "dropped `{}`: it {rule}, as text planted for AI models does",
                clip(&s)
            ));
            continue;
        }
        if let Some(term) = unsupported(&s, members).into_iter().next() {
            repairs.push(format!(
                "dropped `{}`: no member contains `{term}`",
                clip(&s)
            ));
            continue;
        }
        out.push(s);
    }
    if out.len() > SUMMARY_MAX_SENTENCES {
        out.truncate(SUMMARY_MAX_SENTENCES);
        repairs.push(format!("kept the first {SUMMARY_MAX_SENTENCES} sentences"));
    }
    while out.len() > 1
        && out
            .iter()
            .map(|s| s.split_whitespace().count())
            .sum::<usize>()
            > SUMMARY_MAX_WORDS
    {
        out.pop();
        if !repairs.iter().any(|r| r.starts_with("shortened")) {
            repairs.push(format!("shortened to at most {SUMMARY_MAX_WORDS} words"));
        }
    }
    let joined = out.join(" ");
    if joined.split_whitespace().count() < 3 {
        let why = if repairs.is_empty() {
            "it is empty".to_string()
        } else {
            repairs
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        };
        return Err(format!("no usable sentence is left ({why})"));
    }
    Ok(Parsed {
        value: joined,
        repairs,
    })
}

/// `The sub-groups have in common: X` → `X`, when the part before the colon repeats the prompt.
fn strip_echoed_lead(s: &str, prompt: &Source, repairs: &mut Vec<String>) -> String {
    if let Some((lead, rest)) = s.split_once(": ")
        && lead.split_whitespace().count() <= 10
        && prompt.longest_copied_run(lead) >= 4
        && rest.split_whitespace().count() >= 3
    {
        repairs.push(format!(
            "dropped the lead `{lead}:`, which repeats the prompt"
        ));
        let mut c = rest.chars();
        return c
            .next()
            .map(|f| f.to_uppercase().chain(c).collect())
            .unwrap_or_default();
    }
    s.to_string()
}

fn clip(s: &str) -> String {
    crate::text::clip_words(s, 8) + "…"
}

/// `- x`, `* x`, `1. x`, `| a | b |`: a line of a list or table.
fn is_list_line(t: &str) -> bool {
    t.starts_with("- ")
        || t.starts_with("* ")
        || t.starts_with('|')
        || t.split_once(". ").is_some_and(|(n, _)| {
            !n.is_empty() && n.len() <= 3 && n.chars().all(|c| c.is_ascii_digit())
        })
}

/// The commands, numbers, addresses and names in a sentence that the members do not contain.
pub fn unsupported(sentence: &str, members: &Source) -> Vec<String> {
    let mut out = Vec::new();
    // `code` spans: a command or setting must be quoted from a member.
    let mut rest = sentence;
    while let Some(a) = rest.find('`') {
        let Some(b) = rest[a + 1..].find('`') else {
            break;
        };
        let code = &rest[a + 1..a + 1 + b];
        if !code.trim().is_empty() && !members.has_phrase(code) {
            out.push(code.to_string());
        }
        rest = &rest[a + b + 2..];
    }
    let plain = sentence.replace('`', " ");
    let tokens: Vec<&str> = plain.split_whitespace().collect();
    for (i, raw) in tokens.iter().enumerate() {
        let tok = raw.trim_matches(|c: char| {
            matches!(
                c,
                ',' | ';' | ':' | '.' | '!' | '?' | '(' | ')' | '"' | '\'' | '“' | '”'
            )
        });
        if tok.is_empty() {
            continue;
        }
        let lower = tok.to_lowercase();
        let risky = lower.contains("://")
            || lower.starts_with("www.")
            || lower.contains('@')
            || lower.chars().any(|c| c.is_ascii_digit())
            || lower.starts_with('-') && lower.len() > 1
            || lower.contains(['/', '_', '=', '\\'])
            || inner_dot(&lower);
        if risky {
            if !members.has_phrase(&lower) {
                out.push(tok.to_string());
            }
            continue;
        }
        // A name: a rare word capitalized inside the sentence, or an acronym (title-cased common
        // words, such as "Overview", aside).
        let starts_sentence = i == 0 || tokens[i - 1].ends_with([':', '.', '!', '?']);
        let mut chars = tok.chars();
        let first_upper = chars.next().is_some_and(char::is_uppercase);
        let acronym = tok.len() >= 2 && tok.chars().all(|c| c.is_uppercase() || c.is_ascii_digit());
        let name = (first_upper && !starts_sentence) || acronym;
        let rare = if acronym { 5.0 } else { 3.5 };
        if name && zipf(&lower) < rare {
            let parts: Vec<String> = word_tokens(&lower).collect();
            if !parts.iter().all(|p| members.has_word(p)) {
                out.push(tok.to_string());
            }
        }
    }
    out
}

/// `file.txt`, `docker.io`: a dot between letters inside a token.
fn inner_dot(t: &str) -> bool {
    let b = t.as_bytes();
    (1..b.len().saturating_sub(1)).any(|i| {
        b[i] == b'.' && b[i - 1].is_ascii_alphanumeric() && b[i + 1].is_ascii_alphanumeric()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(t: &str) -> Source {
        Source::new([t])
    }

    #[test]
    fn summaries_lose_invented_commands_and_echoes() {
        let m = src(
            "Build cache: run acme build --no-cache to rebuild from scratch. Logs: view build logs in the dashboard.",
        );
        let p = src("The group holds these documents (title: excerpt):");
        let s = summary(
            "The group holds these documents (title: excerpt): Build cache and logs.\nBuild problems are solved with the build cache and logs. Clearing the cache can be done with `docker cache prune`. Use acme build --no-cache to rebuild.",
            &m,
            &p,
        )
        .unwrap();
        assert!(!s.value.contains("docker"), "{}", s.value);
        assert!(s.value.contains("--no-cache"), "{}", s.value);
        assert!(!s.value.contains("holds these documents"), "{}", s.value);
        assert!(s.repairs.len() >= 2, "{:?}", s.repairs);
        let list = summary("- Build cache: rebuild.\n- Logs: view logs.", &m, &p);
        assert!(list.is_err());
        let long: String = (0..12)
            .map(|_| "Build logs help with build problems. ")
            .collect();
        let s = summary(&long, &m, &p).unwrap();
        assert!(s.value.split_whitespace().count() <= SUMMARY_MAX_WORDS);
    }

    #[test]
    fn names_and_numbers_must_be_in_the_members() {
        let m = src("Enable two-factor authentication in Settings. Codes last 30 seconds.");
        assert!(unsupported("Codes last 30 seconds in Settings.", &m).is_empty());
        assert_eq!(unsupported("Codes last 60 seconds.", &m), vec!["60"]);
        assert_eq!(unsupported("It works with Okta.", &m), vec!["Okta"]);
        assert_eq!(
            unsupported("Email help@x.example for help.", &m),
            vec!["help@x.example"]
        );
        assert!(unsupported("The Two-Factor Authentication page.", &m).is_empty());
        assert!(
            unsupported("Settings Overview: the Settings page.", &m).is_empty(),
            "title case"
        );
        assert_eq!(unsupported("Use the SSO page.", &m), vec!["SSO"]);
    }
}
