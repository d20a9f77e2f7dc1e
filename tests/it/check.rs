//! `c2s check`: exit 0 when fresh, 1 for each kind of staleness (with the message snapshotted),
//! 2 on error; it needs no cache.

use std::path::Path;

use crate::common::{c2s, insta_settings, ok, stderr, synth_corpus};

fn setup() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    synth_corpus(&tmp.path().join("c"), 40, 4, 9);
    ok(tmp.path(), &["build", "c", "--out", "o", "-q"]);
    tmp
}

fn check(dir: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["check", "c", "--out", "o"];
    args.extend_from_slice(extra);
    let o = c2s(dir, &args);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    (o.status.code(), text)
}

#[test]
fn fresh_output_exits_0_without_a_cache() {
    let tmp = setup();
    std::fs::remove_dir_all(tmp.path().join("cache")).unwrap();
    let (code, text) = check(tmp.path(), &[]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(text, "o is up to date\n");
    assert!(
        !tmp.path().join("cache").exists(),
        "check must not create a cache"
    );
}

#[test]
fn every_kind_of_staleness_is_reported() {
    let tmp = setup();
    let d = tmp.path();
    std::fs::write(d.join("c/zz-new.md"), "# New\n\nA new document.\n").unwrap();
    std::fs::write(d.join("c/doc-00001.md"), "# Changed\n\nEdited text.\n").unwrap();
    std::fs::remove_file(d.join("c/doc-00002.md")).unwrap();
    let (code, text) = check(d, &[]);
    assert_eq!(code, Some(1));
    insta_settings().bind(|| insta::assert_snapshot!("check_sources", text));

    let tmp = setup();
    let d = tmp.path();
    let skill = crate::common::first_skill(&d.join("o"));
    let skill_md = skill.join("SKILL.md");
    let mut t = std::fs::read_to_string(&skill_md).unwrap();
    t.push_str("hand edit\n");
    std::fs::write(&skill_md, t).unwrap();
    std::fs::remove_file(d.join("o/entity_index.json")).unwrap();
    std::fs::write(d.join("o/notes.txt"), "mine").unwrap();
    let (code, text) = check(d, &[]);
    assert_eq!(code, Some(1));
    let text = text.replace(skill.file_name().unwrap().to_str().unwrap(), "<skill>");
    insta_settings().bind(|| insta::assert_snapshot!("check_outputs", text));

    let (code, text) = check(d, &["--set", "tree.p=7"]);
    assert_eq!(code, Some(1));
    assert!(text.contains("configuration changed"), "{text}");
    assert!(
        text.contains("help: run `c2s build c --out o --set tree.p=7`"),
        "{text}"
    );
}

#[test]
fn never_built_json_and_errors() {
    let tmp = tempfile::tempdir().unwrap();
    synth_corpus(&tmp.path().join("c"), 10, 2, 1);
    let (code, text) = check(tmp.path(), &[]);
    assert_eq!(code, Some(1));
    assert!(text.contains("never built"), "{text}");
    let o = c2s(tmp.path(), &["check", "c", "--out", "o", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["fresh"], false);
    assert_eq!(j["no_lock"], true);
    assert_eq!(j["fix"], "c2s build c --out o");
    let o = c2s(tmp.path(), &["check", "missing", "--out", "o"]);
    assert_eq!(o.status.code(), Some(2));
    std::fs::write(tmp.path().join("c2s.toml"), "[tree]\nbogus = 1\n").unwrap();
    assert_eq!(c2s(tmp.path(), &["check"]).status.code(), Some(2));
}

#[test]
fn check_on_a_fresh_clone_elsewhere() {
    // The manifest records paths relative to the corpus, so a copy of the repo checks fresh.
    let tmp = setup();
    let copy = tempfile::tempdir().unwrap();
    for dir in ["c", "o"] {
        let status = std::process::Command::new("cp")
            .args([
                "-r",
                tmp.path().join(dir).to_str().unwrap(),
                copy.path().to_str().unwrap(),
            ])
            .status()
            .unwrap();
        assert!(status.success());
    }
    let (code, text) = check(copy.path(), &[]);
    assert_eq!(code, Some(0), "{text}");
}
