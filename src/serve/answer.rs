//! The offline answer: the sentences of the fetched documents that share the most distinctive
//! words with the question, each with the code block or list it introduces.

use crate::markdown::{Block, blocks};
use crate::retrieval::terms;
use crate::text::{distinctiveness, sentences, stem, words};

/// Sentences in an answer.
const SENTENCES: usize = 2;
/// Lines of an introduced code block or list shown; the rest is cut with a note.
const SHOWN_LINES: usize = 12;

/// One candidate sentence: where it stands and what follows it.
struct Candidate {
    score: f32,
    /// Document rank, block and sentence position: the document order of the answer.
    at: (usize, usize, usize),
    text: String,
    /// What the sentence introduces: the code block right after its paragraph when it is the
    /// paragraph's last sentence, or after a colon the list or lines that follow.
    follows: Option<String>,
}

/// The answer from `docs` (best first): the two best-matching sentences in document order, each
/// followed by the code block (fenced) or list it introduces. Headings are not answers, and a
/// sentence planted for an AI model never is one.
pub fn extractive_answer<'t>(query: &str, docs: impl Iterator<Item = &'t str>) -> String {
    // Each question term with the weight of the word as asked (a stem is not in the table).
    let q: Vec<(String, f32)> = words(query)
        .filter(|w| !terms(w).is_empty())
        .map(|w| (stem(&w), distinctiveness(&w).max(0.5)))
        .collect();
    let overlap = |text: &str| -> f32 {
        let held = terms(text);
        q.iter()
            .filter(|(t, _)| held.contains(t))
            .map(|(_, w)| w)
            .sum()
    };
    let mut scored: Vec<Candidate> = Vec::new();
    for (rank, text) in docs.enumerate() {
        let bs = blocks(text);
        let mut pos = 0usize;
        for (b, block) in bs.iter().enumerate() {
            let Block::Text(para) = block else {
                continue;
            };
            let lines: Vec<&str> = para.lines().collect();
            let mut k = 0usize;
            for (l, line) in lines.iter().enumerate() {
                let ss: Vec<String> = sentences(line)
                    .into_iter()
                    .filter(|s| crate::planted::check_sentence(s).is_none())
                    .collect();
                for (j, s) in ss.iter().enumerate() {
                    pos += 1;
                    k += 1;
                    let line_end = j + 1 == ss.len();
                    let colon = s.ends_with(':');
                    let follows = if !line_end {
                        None
                    } else if l + 1 < lines.len() {
                        // The lines after a colon in the same paragraph: the list it opens.
                        colon.then(|| as_list(&lines[l + 1..].join("\n")))
                    } else {
                        bs.get(b + 1).and_then(|n| introduced(n, colon))
                    };
                    let mut score = overlap(s);
                    if let Some(f) = &follows {
                        // A command that answers "how do I install X" holds the question's words.
                        score += 0.5 * overlap(f);
                    }
                    if score > 0.0 {
                        // Earlier documents and earlier sentences win ties.
                        let bonus = 1.0 / (1.0 + rank as f32 + pos as f32 / 50.0);
                        scored.push(Candidate {
                            score: score + 0.1 * bonus,
                            at: (rank, b, k),
                            text: s.clone(),
                            follows,
                        });
                    }
                }
            }
        }
    }
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.at.cmp(&b.at)));
    scored.truncate(SENTENCES);
    scored.sort_by_key(|c| c.at);
    let mut out = String::new();
    for c in scored {
        if !out.is_empty() {
            out.push(if out.ends_with('\n') { '\n' } else { ' ' });
        }
        out.push_str(&c.text);
        if let Some(f) = c.follows {
            out.push_str("\n\n");
            out.push_str(&f);
            out.push('\n');
        }
    }
    out.trim_end().to_string()
}

/// The block after a sentence, as the answer shows it: a code block fenced, or (after a colon)
/// the list or lines it introduces; at most [`SHOWN_LINES`] lines.
fn introduced(next: &Block, colon: bool) -> Option<String> {
    match next {
        Block::Code { lang, code } if !code.trim().is_empty() => {
            Some(format!("```{lang}\n{}\n```", clipped_lines(code)))
        }
        Block::Text(list) if colon => Some(as_list(list)),
        _ => None,
    }
}

/// Lines shown as a list.
fn as_list(lines: &str) -> String {
    clipped_lines(lines)
        .lines()
        .map(|l| format!("- {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn clipped_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= SHOWN_LINES {
        return text.trim_end().to_string();
    }
    let mut t = lines[..SHOWN_LINES].join("\n");
    t.push_str(&format!(
        "\n… ({} more lines in the document)",
        lines.len() - SHOWN_LINES
    ));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_that_answers_comes_with_its_sentence() {
        let doc = "# Installing Ruff\n\nRuff is available on PyPI.\n\nInstall it with Homebrew on macOS:\n\n```sh\nbrew install ruff\n```\n\nSee the changelog for what is new.\n";
        let a = extractive_answer("How do I install ruff with Homebrew?", [doc].into_iter());
        assert!(a.contains("Install it with Homebrew on macOS:"), "{a}");
        assert!(a.contains("```sh\nbrew install ruff\n```"), "{a}");
        assert!(
            !a.contains("Installing Ruff Ruff"),
            "a heading is not an answer: {a}"
        );
        assert!(!a.trim_end().ends_with(':'), "{a}");
    }

    #[test]
    fn a_colon_brings_its_list() {
        let doc = "Ruff supports these editors:\n- VS Code\n- Neovim\n- Helix\n\nOther text here.";
        let a = extractive_answer("Which editors does ruff support?", [doc].into_iter());
        assert!(
            a.starts_with("Ruff supports these editors:\n\n- VS Code\n- Neovim"),
            "{a}"
        );
    }

    #[test]
    fn long_blocks_are_cut_with_a_note() {
        let code: String = (0..30).map(|i| format!("line {i}\n")).collect();
        let doc = format!("Run the migration script:\n\n```\n{code}```\n");
        let a = extractive_answer("migration script", [doc.as_str()].into_iter());
        assert!(
            a.contains("line 11\n… (18 more lines in the document)"),
            "{a}"
        );
    }
}
