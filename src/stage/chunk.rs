//! Chunk stage: a long document is split into passages for embedding. Boundaries fall at line
//! breaks and sentence ends and depend only on the text around them (a run of short lines is
//! cut where a line's own hash says so), so an edit re-embeds only the passages it touches.

/// A model-independent estimate of subword tokens: words and punctuation marks, plus one more
/// for every 8 characters of a long word (close to WordPiece counts on English text).
pub fn estimate_tokens(s: &str) -> usize {
    let mut n = 0;
    let mut word = 0usize;
    for c in s.chars() {
        if c.is_alphanumeric() || c == '_' {
            word += 1;
        } else {
            if word > 0 {
                n += 1 + (word - 1) / 8;
                word = 0;
            }
            if !c.is_whitespace() {
                n += 1;
            }
        }
    }
    if word > 0 {
        n += 1 + (word - 1) / 8;
    }
    n
}

/// The passages of `text`: at most `max` of about `limit` estimated tokens each.
pub fn passages(text: &str, limit: usize, max: usize) -> Vec<String> {
    let limit = limit.max(16);
    let mut units: Vec<(String, usize)> = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let n = estimate_tokens(line);
        if n <= limit {
            units.push((line.to_string(), n));
        } else {
            units.extend(split_long(line, limit));
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut size = 0;
    let flush = |cur: &mut String, size: &mut usize, out: &mut Vec<String>| {
        if !cur.is_empty() {
            out.push(std::mem::take(cur));
        }
        *size = 0;
    };
    for (unit, n) in units {
        // A large unit stands alone; a run of small ones is cut at the limit, and after a line
        // whose hash says so once the passage holds three quarters of the limit
        // (content-defined: an edit rarely moves a cut past the next such line). Passages so
        // come out near the configured size (`embed.chunk_tokens`); cutting from a quarter of
        // the limit on made them a third of it (340 bytes for a documented 200 tokens).
        if n * 2 >= limit || size + n > limit {
            flush(&mut cur, &mut size, &mut out);
        }
        if !cur.is_empty() {
            cur.push('\n');
        }
        cur.push_str(&unit);
        size += n;
        let cut_here = blake3::hash(unit.as_bytes()).as_bytes()[0].is_multiple_of(3);
        if n * 2 >= limit || (size * 4 >= limit * 3 && cut_here) {
            flush(&mut cur, &mut size, &mut out);
        }
        if out.len() >= max {
            break;
        }
    }
    flush(&mut cur, &mut size, &mut out);
    out.truncate(max);
    out
}

/// A line longer than `limit`: sentence windows of at most `limit` (a sentence longer than
/// that is cut by words).
fn split_long(line: &str, limit: usize) -> Vec<(String, usize)> {
    let mut pieces: Vec<String> = Vec::new();
    for s in crate::text::sentences(line) {
        if estimate_tokens(&s) <= limit {
            pieces.push(s);
        } else {
            let words: Vec<&str> = s.split_whitespace().collect();
            let mut cur = String::new();
            for w in words {
                if !cur.is_empty() && estimate_tokens(&cur) + estimate_tokens(w) > limit {
                    pieces.push(std::mem::take(&mut cur));
                }
                if !cur.is_empty() {
                    cur.push(' ');
                }
                cur.push_str(w);
            }
            if !cur.is_empty() {
                pieces.push(cur);
            }
        }
    }
    let mut out: Vec<(String, usize)> = Vec::new();
    let mut cur = String::new();
    for p in pieces {
        if !cur.is_empty() && estimate_tokens(&cur) + estimate_tokens(&p) > limit {
            let n = estimate_tokens(&cur);
            out.push((std::mem::take(&mut cur), n));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(&p);
    }
    if !cur.is_empty() {
        let n = estimate_tokens(&cur);
        out.push((cur, n));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_estimate_counts_words_and_marks() {
        assert_eq!(estimate_tokens("Hello, world!"), 4);
        assert_eq!(estimate_tokens("internationalization"), 3);
        assert_eq!(estimate_tokens(""), 0);
    }

    fn para(i: usize, words: usize) -> String {
        (0..words)
            .map(|w| format!("w{i}x{w}"))
            .collect::<Vec<_>>()
            .join(" ")
            + "."
    }

    #[test]
    fn passages_respect_the_limit_and_the_cap() {
        let text: String = (0..40).map(|i| para(i, 30) + "\n").collect();
        let p = passages(&text, 100, 64);
        assert!(p.len() > 5);
        assert!(p.iter().all(|x| estimate_tokens(x) <= 100), "{p:?}");
        assert_eq!(passages(&text, 100, 3).len(), 3);
        let long = para(0, 500);
        let p = passages(&long, 64, 64);
        assert!(p.len() >= 8 && p.iter().all(|x| estimate_tokens(x) <= 64));
    }

    #[test]
    fn passages_come_near_the_documented_size() {
        // Lines of 8 to 32 tokens, as wrapped prose and lists give: passages average at least
        // 70% of the limit, and a 30 KB page fits the default cap (128 passages of 100).
        let lines: Vec<String> = (0..600).map(|i| para(i, 6 + (i * 11) % 20)).collect();
        let text = lines.join("\n");
        let p = passages(&text, 200, 1000);
        let mean = p.iter().map(|x| estimate_tokens(x)).sum::<usize>() / p.len();
        assert!(mean >= 140, "mean passage of {mean} tokens");
        let page: String = text.chars().take(30_000).collect();
        assert!(passages(&page, 100, 1000).len() < 128);
    }

    #[test]
    fn an_edit_moves_only_nearby_boundaries() {
        let paras: Vec<String> = (0..60).map(|i| para(i, 8 + (i * 7) % 25)).collect();
        let before = passages(&paras.join("\n"), 120, 64);
        let mut changed = 0;
        let edits = [5, 12, 20, 31, 44, 52];
        for &k in &edits {
            let mut edited = paras.clone();
            edited[k] = format!("{} and a few more words", edited[k]);
            let after = passages(&edited.join("\n"), 120, 64);
            changed += after.iter().filter(|p| !before.contains(p)).count();
        }
        // Measured on covidqa's papers (edits in the middle of 40 of them): 1.12 per edit.
        assert!(
            changed as f64 / edits.len() as f64 <= 1.5,
            "{changed} passages changed over {} edits",
            edits.len()
        );
    }
}
