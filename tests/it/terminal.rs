//! Progress on a real pseudo-terminal (util-linux `script`): what stays on the screen.

use std::path::Path;
use std::process::Command;

/// What a terminal `cols` wide shows after `bytes` (its rows at the end), and every text ever
/// drawn on it, colors left out: text, `\r`, `\n`, wrapping at the edge, colors (ignored),
/// `ESC[2K` (clear the line) and `ESC[nA` (up n lines), the sequences c2s and indicatif write.
fn screen(bytes: &[u8], cols: usize) -> (Vec<String>, String) {
    let text = String::from_utf8_lossy(bytes);
    let mut rows: Vec<Vec<char>> = vec![Vec::new()];
    let mut drawn = String::new();
    let (mut row, mut col) = (0usize, 0usize);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' | '\n' => {
                drawn.push('\n');
                if c == '\n' {
                    row += 1;
                }
                col = 0;
            }
            '\x1b' if chars.peek() == Some(&'[') => {
                chars.next();
                let mut arg = String::new();
                let end = loop {
                    match chars.next() {
                        Some(d) if d.is_ascii_digit() || d == ';' => arg.push(d),
                        other => break other,
                    }
                };
                match end {
                    Some('K') => rows[row].clear(),
                    Some('A') => row = row.saturating_sub(arg.parse().unwrap_or(1)),
                    _ => {}
                }
            }
            c => {
                drawn.push(c);
                if col == cols {
                    row += 1;
                    col = 0;
                }
                while rows.len() <= row {
                    rows.push(Vec::new());
                }
                let line = &mut rows[row];
                line.resize(line.len().max(col + 1), ' ');
                line[col] = c;
                col += 1;
            }
        }
        while rows.len() <= row {
            rows.push(Vec::new());
        }
    }
    let shown = rows
        .into_iter()
        .map(|r| r.into_iter().collect::<String>().trim_end().to_string())
        .filter(|r| !r.is_empty())
        .collect();
    (shown, drawn)
}

/// `c2s ARGS` in `dir` on a pseudo-terminal whose size is `size` (rows, cols), or unknown
/// (0 × 0, as a pty that nobody sized reports); what it wrote, as a terminal receives it.
fn on_pty(dir: &Path, size: Option<(u16, u16)>, args: &str) -> Option<Vec<u8>> {
    if Command::new("script").arg("--version").output().is_err() {
        crate::common::skip("util-linux `script` is not installed (apt install bsdutils)");
        return None;
    }
    let stty = match size {
        Some((r, c)) => format!("stty rows {r} cols {c}"),
        None => "stty rows 0 cols 0".to_string(),
    };
    let line = format!("{stty}; exec {} {args}", env!("CARGO_BIN_EXE_c2s"));
    let o = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env("TERM", "xterm")
        // Slow enough that each stage's bar is drawn.
        .env("C2S_THROTTLE_MS", "40")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    Some(o.stdout)
}

const BAR: &str = "Carding [";

#[test]
fn bars_are_cleared_on_a_terminal_and_not_drawn_where_its_size_is_unknown() {
    let tmp = tempfile::tempdir().unwrap();
    crate::common::copy_dir(
        &crate::common::repo().join("examples/docs"),
        &tmp.path().join("docs"),
    );
    // A sized terminal narrower than 80 columns: bars are drawn, and none is left behind.
    let Some(out) = on_pty(tmp.path(), Some((40, 60)), "build docs --out out") else {
        return;
    };
    let (shown, drawn) = screen(&out, 60);
    assert!(drawn.contains(BAR), "no bar was drawn");
    assert!(
        shown.iter().all(|l| !l.contains(" [")),
        "a bar stayed on the screen:\n{}",
        shown.join("\n")
    );
    assert!(shown.iter().any(|l| l.contains("Finished")), "{shown:?}");
    // A terminal of unknown size: indicatif would pad bars to 80 columns, which wrap on a
    // narrower one and stay; the plain lines are written instead.
    let tmp = tempfile::tempdir().unwrap();
    crate::common::copy_dir(
        &crate::common::repo().join("examples/docs"),
        &tmp.path().join("docs"),
    );
    let Some(out) = on_pty(tmp.path(), None, "build docs --out out") else {
        return;
    };
    let (shown, drawn) = screen(&out, 60);
    assert!(!drawn.contains(BAR), "a bar was drawn:\n{drawn}");
    assert!(shown.iter().all(|l| !l.contains(" [")), "{shown:?}");
    assert!(shown.iter().any(|l| l.contains("Finished")), "{shown:?}");
}
