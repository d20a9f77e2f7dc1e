//! What an include takes of its file: mdBook's line ranges and anchors, MkDocs snippets' line
//! ranges and sections, FastAPI's `ln[..]`; and how the text is set in the page (indent, fence).

use std::path::Path;

pub(super) fn unquote(s: &str) -> &str {
    let s = s.trim();
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

/// `path:a:b` → (`path`, `a:b`); a Windows drive letter is not a selector.
pub(super) fn split_selector(spec: &str) -> (&str, Option<&str>) {
    match spec.split_once(':') {
        Some((p, sel)) if p.len() > 1 => (p, Some(sel)),
        _ => (spec, None),
    }
}

/// Line numbers are 1-based and inclusive; a missing end is the last line.
pub(super) fn line_range(lines: &[&str], a: &str, b: Option<&str>) -> Option<String> {
    let n = lines.len();
    let from = if a.is_empty() {
        1
    } else {
        a.parse::<usize>().ok()?.max(1)
    };
    let to = match b {
        None => from,
        Some("") => n,
        Some(b) => b.parse::<usize>().ok()?.min(n),
    };
    (from <= to && from <= n).then(|| lines[from - 1..to].join("\n"))
}

/// mdBook's selectors: `2`, `::10`, `2:`, `2:10`, or an anchor name.
pub(super) fn select_mdbook(text: &str, sel: Option<&str>) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let clean = |ls: &[&str]| -> String {
        ls.iter()
            .filter(|l| !l.contains("ANCHOR:") && !l.contains("ANCHOR_END:"))
            .copied()
            .collect::<Vec<_>>()
            .join("\n")
    };
    let Some(sel) = sel.filter(|s| !s.is_empty()) else {
        return Some(clean(&lines));
    };
    let (a, b) = match sel.split_once(':') {
        Some((a, b)) => (a, Some(b)),
        None => (sel, None),
    };
    if a.is_empty() || a.chars().all(|c| c.is_ascii_digit()) {
        let r = line_range(&lines, a, b)?;
        return Some(clean(&r.lines().collect::<Vec<_>>()));
    }
    let start = lines
        .iter()
        .position(|l| anchor_of(l, "ANCHOR:") == Some(a))?;
    let end = lines[start..]
        .iter()
        .position(|l| anchor_of(l, "ANCHOR_END:") == Some(a))?;
    Some(clean(&lines[start + 1..start + end]))
}

pub(super) fn anchor_of<'a>(line: &'a str, mark: &str) -> Option<&'a str> {
    let at = line.find(mark)?;
    let name = line[at + mark.len()..].trim_start();
    let end = name
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(name.len());
    Some(&name[..end])
}

/// MkDocs snippet selectors: `start:end` line numbers, or a section between
/// `--8<-- [start:name]` and `--8<-- [end:name]`; section markers never show.
pub(super) fn select_snippet(text: &str, sel: Option<&str>) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let marker = |l: &str| {
        let t = l.trim();
        t.contains("--8<-- [start:") || t.contains("--8<-- [end:")
    };
    let picked = match sel.filter(|s| !s.is_empty()) {
        None => lines.join("\n"),
        Some(sel) if sel.chars().next().is_some_and(|c| c.is_ascii_digit()) => {
            let (a, b) = sel
                .split_once(':')
                .map_or((sel, Some("")), |(a, b)| (a, Some(b)));
            line_range(&lines, a, b)?
        }
        Some(name) => {
            let start = lines
                .iter()
                .position(|l| l.contains(&format!("--8<-- [start:{name}]")))?;
            let end = lines[start..]
                .iter()
                .position(|l| l.contains(&format!("--8<-- [end:{name}]")))?;
            lines[start + 1..start + end].join("\n")
        }
    };
    Some(
        picked
            .lines()
            .filter(|l| !marker(l))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// FastAPI's `ln[a:b,c]`: the listed lines and ranges, in order.
pub(super) fn select_ranges(text: &str, ranges: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let picked: Vec<String> = ranges
        .split(',')
        .filter_map(|r| match r.split_once(':') {
            Some((a, b)) => line_range(&lines, a.trim(), Some(b.trim())),
            None => line_range(&lines, r.trim(), None),
        })
        .collect();
    if picked.is_empty() {
        text.to_string()
    } else {
        picked.join("\n")
    }
}

pub(super) fn push_indented(out: &mut String, indent: &str, text: &str) {
    for (i, l) in text.trim_end_matches('\n').split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if !l.is_empty() {
            out.push_str(indent);
        }
        out.push_str(l);
    }
}

/// `text` in a code fence tagged with the language of `file`'s extension.
pub(super) fn fenced(file: &Path, text: &str) -> String {
    let ext = file
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let lang = match ext.as_str() {
        "py" => "python",
        "rs" => "rust",
        "js" | "mjs" | "cjs" => "javascript",
        "ts" | "mts" => "typescript",
        "sh" | "bash" => "bash",
        "yml" => "yaml",
        "md" => "markdown",
        "txt" => "text",
        other => other,
    };
    let ticks = if text.contains("```") { "````" } else { "```" };
    format!("{ticks}{lang}\n{}\n{ticks}", text.trim_end_matches('\n'))
}
