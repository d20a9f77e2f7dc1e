//! reST tables as Markdown pipe tables: grid tables, simple tables, and the `list-table` and
//! `csv-table` directives. A cell's lines are joined; a cell that spans columns fills the first.

use super::Ctx;
use super::lines::{blank, dedent, list_marker};

/// Writes rows (the first is the header) as a pipe table.
fn pipe(rows: &[Vec<String>], ctx: &mut Ctx, out: &mut Vec<String>) {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    if width == 0 {
        return;
    }
    for (r, row) in rows.iter().enumerate() {
        let cells: Vec<String> = (0..width)
            .map(|c| {
                let text = row.get(c).map(|s| s.trim()).unwrap_or("");
                super::inline::convert(text, &ctx.refs, &mut ctx.anon)
                    .replace('\n', " ")
                    .replace('|', "\\|")
            })
            .collect();
        out.push(format!("| {} |", cells.join(" | ")));
        if r == 0 {
            out.push(format!("|{}", "---|".repeat(width)));
        }
    }
}

/// A grid table (`+---+` borders, `|` cell lines; `+===+` after the header).
pub(super) fn grid(lines: &[String], ctx: &mut Ctx, out: &mut Vec<String>) {
    let border = &lines[0];
    let cols: Vec<usize> = border
        .char_indices()
        .filter(|(_, c)| *c == '+')
        .map(|(i, _)| i)
        .collect();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut cur: Vec<String> = vec![String::new(); cols.len().saturating_sub(1)];
    let mut header_rows = None;
    for l in &lines[1..] {
        if l.starts_with('+') {
            if cur.iter().any(|c| !c.trim().is_empty()) {
                rows.push(std::mem::take(&mut cur));
                cur = vec![String::new(); cols.len().saturating_sub(1)];
            }
            if l.contains('=') && header_rows.is_none() {
                header_rows = Some(rows.len());
            }
            continue;
        }
        for (c, w) in cols.windows(2).enumerate() {
            let cell = l.get(w[0] + 1..w[1]).unwrap_or("").trim();
            if !cell.is_empty() {
                if !cur[c].is_empty() {
                    cur[c].push(' ');
                }
                cur[c].push_str(cell.trim_end_matches('|').trim());
            }
        }
    }
    if header_rows.is_none() {
        // No header row: Markdown needs one, so an empty one.
        rows.insert(0, vec![String::new(); cols.len().saturating_sub(1)]);
    } else if let Some(h) = header_rows.filter(|&h| h > 1) {
        let merged: Vec<String> = (0..cols.len() - 1)
            .map(|c| {
                rows[..h]
                    .iter()
                    .map(|r| r[c].as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        rows.splice(..h, [merged]);
    }
    pipe(&rows, ctx, out);
}

/// Whether `l` is a simple table's border (`===  ====`).
pub(super) fn is_simple_border(l: &str) -> bool {
    l.starts_with('=') && l.contains(' ') && l.chars().all(|c| c == '=' || c == ' ')
}

/// The line after the simple table starting at `i`: after its last border (a border followed
/// by a blank line or the end).
pub(super) fn simple_end(lines: &[String], i: usize) -> usize {
    let mut j = i + 1;
    while j < lines.len() {
        if is_simple_border(&lines[j]) && lines.get(j + 1).is_none_or(|n| blank(n)) {
            return j + 1;
        }
        j += 1;
    }
    lines.len()
}

/// A simple table: columns from the top border's `=` runs; a line whose first column is blank
/// continues the row above.
pub(super) fn simple(lines: &[String], ctx: &mut Ctx, out: &mut Vec<String>) {
    let border = &lines[0];
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut start = None;
    for (k, c) in border.char_indices().chain([(border.len(), ' ')]) {
        match (c, start) {
            ('=', None) => start = Some(k),
            (' ', Some(s)) => {
                spans.push((s, k));
                start = None;
            }
            _ => {}
        }
    }
    let borders = lines.iter().filter(|l| is_simple_border(l)).count();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header_rows = None;
    for l in &lines[1..] {
        if is_simple_border(l) {
            if header_rows.is_none() && borders > 2 {
                header_rows = Some(rows.len());
            }
            continue;
        }
        if blank(l) || l.starts_with('-') && l.chars().all(|c| c == '-' || c == ' ') {
            continue;
        }
        let cell = |k: usize| -> String {
            let (a, b) = spans[k];
            let b = if k + 1 == spans.len() { l.len() } else { b };
            l.get(a.min(l.len())..b.min(l.len()))
                .unwrap_or("")
                .trim()
                .to_string()
        };
        let cells: Vec<String> = (0..spans.len()).map(cell).collect();
        if cells[0].is_empty() && !rows.is_empty() {
            let last = rows.last_mut().expect("a row");
            for (c, text) in cells.into_iter().enumerate() {
                if !text.is_empty() {
                    last[c] = format!("{} {text}", last[c]).trim().to_string();
                }
            }
        } else {
            rows.push(cells);
        }
    }
    if header_rows.is_none() {
        rows.insert(0, vec![String::new(); spans.len()]);
    }
    pipe(&rows, ctx, out);
}

/// A `list-table`: a bullet list of rows, each a bullet list of cells.
pub(super) fn list_table(content: &[String], ctx: &mut Ctx, out: &mut Vec<String>) {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for l in content {
        if blank(l) {
            continue;
        }
        let t = l.trim_start();
        let ind = l.len() - t.len();
        if ind == 0 && list_marker(t).is_some() {
            rows.push(Vec::new());
            let rest = t[1..].trim_start();
            if let Some(cell) = rest.strip_prefix("- ").or_else(|| rest.strip_prefix("* ")) {
                rows.last_mut()
                    .expect("a row")
                    .push(cell.trim().to_string());
            }
        } else if let Some(row) = rows.last_mut() {
            match t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
                Some(cell) => row.push(cell.trim().to_string()),
                None if t == "-" || t == "*" => row.push(String::new()),
                None => match row.last_mut() {
                    Some(c) => {
                        c.push(' ');
                        c.push_str(t);
                    }
                    None => row.push(t.to_string()),
                },
            }
        }
    }
    if rows.is_empty() {
        return;
    }
    pipe(&rows, ctx, out);
}

/// A `csv-table`: its `:header:` and its rows, inline or from its content (a `:file:` is not
/// read).
pub(super) fn csv_table(
    header: Option<&str>,
    content: &[String],
    ctx: &mut Ctx,
    out: &mut Vec<String>,
) {
    let mut rows: Vec<Vec<String>> = Vec::new();
    if let Some(h) = header {
        rows.push(csv_row(h));
    }
    let content = dedent(content);
    let mut record = String::new();
    for l in content.iter().filter(|l| !blank(l)) {
        if !record.is_empty() {
            record.push(' ');
        }
        record.push_str(l.trim());
        // A record goes on while a quoted field is open.
        if record.matches('"').count().is_multiple_of(2) {
            rows.push(csv_row(&record));
            record.clear();
        }
    }
    if rows.is_empty() {
        return;
    }
    if header.is_none() {
        rows.insert(0, Vec::new());
    }
    pipe(&rows, ctx, out);
}

/// One CSV record: comma-separated fields, `"quoted, fields"` with `""` for a quote.
fn csv_row(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => cells.push(std::mem::take(&mut cur).trim().to_string()),
            c => cur.push(c),
        }
    }
    cells.push(cur.trim().to_string());
    cells
}
