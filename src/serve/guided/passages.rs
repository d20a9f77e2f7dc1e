//! A document cut to its share of a small model's context: whole when it fits, else the
//! passages (paragraphs) that share the most words with the question, chosen nearest first and
//! shown in the document's order.

use crate::serve::agent::ground::content_words;

/// The text of a document within `max` characters: the whole text, or the passages that hold
/// the most of the question's content words (chosen in that order, ties by position, while they
/// fit), in the document's order, a `…` line where passages were left out.
pub fn nearest(text: &str, question: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let wanted = content_words(question);
    let passages: Vec<&str> = text
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let mut scored: Vec<(usize, usize)> = passages
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let held = content_words(p);
            (
                wanted
                    .iter()
                    .filter(|w| held.binary_search(w).is_ok())
                    .count(),
                i,
            )
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut chosen: Vec<(usize, &str)> = Vec::new();
    let mut used = 0;
    for (_, i) in scored {
        // Each passage costs its text and a separator line.
        let room = max.saturating_sub(used + 3);
        if room < 80 {
            break;
        }
        let p = crate::text::clip_chars(passages[i], room);
        used += p.len() + 3;
        chosen.push((i, p));
    }
    chosen.sort_by_key(|c| c.0);
    let mut out = String::new();
    let mut next = 0;
    for (i, p) in chosen {
        if !out.is_empty() {
            out.push_str(if i == next { "\n\n" } else { "\n…\n" });
        }
        out.push_str(p);
        next = i + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::nearest;

    #[test]
    fn a_long_document_keeps_the_passages_nearest_the_question() {
        let text = format!(
            "Intro paragraph about the product.\n\n{}\n\nTo reset a password, open Settings and choose Reset.\n\nBilling happens monthly.",
            "Filler words here. ".repeat(40)
        );
        let cut = nearest(&text, "How do I reset my password?", 200);
        assert!(cut.contains("To reset a password"), "{cut}");
        assert!(cut.len() <= 200, "{}", cut.len());
        // Too little room for more: the nearest passage alone.
        let cut = nearest(&text, "How do I reset my password?", 90);
        assert_eq!(cut, "To reset a password, open Settings and choose Reset.");
        // Chosen nearest first, shown in the document's order.
        let cut = nearest(
            &text,
            "How do I reset my password and what is billing?",
            200,
        );
        let (reset, billing) = (cut.find("To reset").unwrap(), cut.find("Billing").unwrap());
        assert!(reset < billing, "{cut}");
        assert_eq!(nearest("short", "q", 200), "short");
    }
}
