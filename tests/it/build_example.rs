//! The repo's example corpus: full snapshot of the output tree, determinism, no-op rebuilds, `--json`.

use std::time::SystemTime;

use crate::common::{build_example, c2s, example, files, insta_settings, ok};

/// The state file with each vector shown by its size (base64 of floats reads as noise).
fn elide_vectors(text: &str) -> String {
    text.lines()
        .map(|l| {
            for form in ["f32", "f32z"] {
                if let Some((head, tail)) = l.split_once(&format!("\"{form}\":\"")) {
                    return format!("{head}\"{form}\":<{} chars>}}\n", tail.len() - 2);
                }
            }
            format!("{l}\n")
        })
        .collect()
}

/// Every file of an output as a reviewer reads it (binary files by size), except those `skip`
/// rejects.
pub fn tree_snapshot(out: &std::path::Path, skip: impl Fn(&str) -> bool) -> String {
    let mut s = String::new();
    for f in files(out).into_iter().filter(|f| !skip(f)) {
        s.push_str(&format!("==> {f} <==\n"));
        let bytes = std::fs::read(out.join(&f)).unwrap();
        match String::from_utf8(bytes) {
            Ok(text) if f.starts_with("state/") => s.push_str(&elide_vectors(&text)),
            Ok(text) => s.push_str(&text),
            Err(e) => s.push_str(&format!("<binary, {} bytes>\n", e.as_bytes().len())),
        }
        s.push('\n');
    }
    s
}

#[test]
fn example_tree_snapshot() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let list = files(&out).join("\n");
    // Navigation files, entity indexes and the manifest; document files and documents.json
    // are in the small fixture's snapshot (small_fixture.rs).
    let nav_only = |f: &str| f.contains("/docs/") || f == "documents.json";
    insta_settings().bind(|| {
        insta::assert_snapshot!("example_file_list", list);
        insta::assert_snapshot!("example_tree", tree_snapshot(&out, nav_only));
    });
}

#[test]
fn two_builds_are_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    // Separate caches: the second build must compute everything again and still match.
    let ca = format!("cache.path={}", tmp.path().join("ca.sqlite").display());
    let cb = format!("cache.path={}", tmp.path().join("cb.sqlite").display());
    ok(
        &example(),
        &["build", "-q", "--out", a.to_str().unwrap(), "--set", &ca],
    );
    ok(
        &example(),
        &["build", "-q", "--out", b.to_str().unwrap(), "--set", &cb],
    );
    assert_eq!(files(&a), files(&b));
    for f in files(&a) {
        assert_eq!(
            std::fs::read(a.join(&f)).unwrap(),
            std::fs::read(b.join(&f)).unwrap(),
            "{f} differs"
        );
    }
}

fn mtimes(out: &std::path::Path) -> Vec<(String, SystemTime)> {
    files(out)
        .into_iter()
        .map(|f| {
            let m = std::fs::metadata(out.join(&f)).unwrap().modified().unwrap();
            (f, m)
        })
        .collect()
}

#[test]
fn rebuild_without_changes_touches_nothing_and_json_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let cache = format!("cache.path={}", tmp.path().join("memo.sqlite").display());
    let args = [
        "build",
        "-q",
        "--json",
        "--out",
        out.to_str().unwrap(),
        "--set",
        &cache,
    ];
    let first: serde_json::Value = serde_json::from_str(&ok(&example(), &args)).unwrap();
    for key in [
        "documents",
        "levels",
        "skills",
        "navigation_files",
        "warnings",
        "seconds",
        "stages",
        "kmeans_device",
    ] {
        assert!(first.get(key).is_some(), "--json lacks {key}: {first}");
    }
    assert_eq!(first["documents"], 29);
    assert_eq!(first["stages"]["card"]["computed"], 29);
    assert_eq!(first["stages"]["card"]["reused"], 0);
    let before = mtimes(&out);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let second: serde_json::Value = serde_json::from_str(&ok(&example(), &args)).unwrap();
    assert_eq!(second["files"]["written"], 0);
    assert_eq!(second["tree"]["kind"], "up_to_date");
    assert_eq!(second["stages"], serde_json::json!({}));
    assert_eq!(mtimes(&out), before);
}

#[test]
fn progress_lines_and_quiet() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let cache = format!("cache.path={}", tmp.path().join("memo.sqlite").display());
    let o = c2s(
        &example(),
        &["build", "--out", out.to_str().unwrap(), "--set", &cache],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("Ingested 29 documents"), "{err}");
    assert!(err.contains("Finished"), "{err}");
    let q = c2s(
        &example(),
        &[
            "build",
            "-q",
            "--out",
            out.to_str().unwrap(),
            "--set",
            &cache,
        ],
    );
    assert!(
        q.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&q.stderr)
    );
}
