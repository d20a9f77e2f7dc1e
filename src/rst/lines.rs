//! reST's lines: indentation, blank lines, adornments, indented bodies, list markers and
//! fields; and the Markdown lines they become (list items, quotes, fences).

pub(super) fn expand_tabs(line: &str) -> String {
    if !line.contains('\t') {
        return line.trim_end().to_string();
    }
    let mut s = String::new();
    for c in line.chars() {
        if c == '\t' {
            let n = 8 - s.chars().count() % 8;
            s.extend(std::iter::repeat_n(' ', n));
        } else {
            s.push(c);
        }
    }
    s.trim_end().to_string()
}

pub(super) fn indent(l: &str) -> usize {
    l.len() - l.trim_start_matches(' ').len()
}

pub(super) fn blank(l: &str) -> bool {
    l.trim().is_empty()
}

/// A line of one repeated punctuation character (a section adornment or a transition).
pub(super) fn adornment(l: &str) -> Option<char> {
    let c = l.chars().next()?;
    let ok = l.len() >= 2
        && "=-`:'\"~^_*+#<>.".contains(c)
        && l.chars().all(|x| x == c)
        && !l.starts_with(' ');
    ok.then_some(c)
}

/// The lines from `from` that belong to an indented body: blank lines and lines indented by at
/// least `min`, up to the first other line; trailing blank lines are not part of it.
pub(super) fn body_end(lines: &[String], from: usize, min: usize) -> usize {
    let mut end = from;
    let mut j = from;
    while j < lines.len() && (blank(&lines[j]) || indent(&lines[j]) >= min.max(1)) {
        j += 1;
        if !blank(&lines[j - 1]) {
            end = j;
        }
    }
    end
}

/// `lines` without their common indentation.
pub(super) fn dedent(lines: &[String]) -> Vec<String> {
    let min = lines
        .iter()
        .filter(|l| !blank(l))
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| {
            if blank(l) {
                String::new()
            } else {
                l[min..].to_string()
            }
        })
        .collect()
}

/// `body` (Markdown lines) under a list marker: the first line after it, the rest indented.
pub(super) fn under_marker(marker: &str, body: Vec<String>, out: &mut Vec<String>) {
    let pad = " ".repeat(marker.len());
    let mut first = true;
    for l in body {
        if first {
            out.push(format!("{marker}{l}"));
            first = false;
        } else if l.is_empty() {
            out.push(l);
        } else {
            out.push(format!("{pad}{l}"));
        }
    }
    if first {
        out.push(marker.trim_end().to_string());
    }
}

/// Markdown lines, each prefixed with `> `.
pub(super) fn quoted(body: Vec<String>, out: &mut Vec<String>) {
    for l in body {
        out.push(if l.is_empty() {
            ">".into()
        } else {
            format!("> {l}")
        });
    }
}

/// A fenced code block of `code` lines.
pub(super) fn fence(lang: &str, code: &[String], out: &mut Vec<String>) {
    let longest = code
        .iter()
        .map(|l| l.trim_start().chars().take_while(|&c| c == '`').count())
        .max()
        .unwrap_or(0);
    let ticks = "`".repeat(longest.max(2) + 1);
    out.push(format!("{ticks}{lang}"));
    let mut code = code.to_vec();
    while code.last().is_some_and(|l| blank(l)) {
        code.pop();
    }
    out.extend(code);
    out.push(ticks);
}

/// A bullet or enumerated list marker with the spaces after it, when `l` starts with one.
pub(super) fn list_marker(l: &str) -> Option<&str> {
    let b = l.as_bytes();
    let marker_len = if l.starts_with(['-', '*', '+']) || l.starts_with('•') {
        l.chars().next().map_or(1, char::len_utf8)
    } else {
        let (open, body) = match l.strip_prefix('(') {
            Some(r) => (1, r),
            None => (0, l),
        };
        let n = body
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '#')
            .count();
        let close = body.as_bytes().get(n).copied();
        let ok = n > 0 && (n == 1 || !body.starts_with('#'));
        match close {
            Some(b'.') | Some(b')') if ok && (open == 0 || close == Some(b')')) => open + n + 1,
            _ => return None,
        }
    };
    let spaces = b[marker_len..].iter().take_while(|&&c| c == b' ').count();
    if marker_len == l.len() {
        return Some(l);
    }
    (spaces > 0).then(|| &l[..marker_len + spaces])
}

/// `:name: value` (a field), not a role (`:ref:`…``).
pub(super) fn field(t: &str) -> Option<(&str, &str)> {
    let rest = t.strip_prefix(':')?;
    let end = rest.find(':')?;
    let name = &rest[..end];
    let after = &rest[end + 1..];
    let ok = !name.is_empty()
        && !name.starts_with(' ')
        && !name.ends_with(' ')
        && (after.is_empty() || after.starts_with(' '));
    ok.then(|| (name, after.trim()))
}
