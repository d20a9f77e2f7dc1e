//! The memo on disk: `cache stats`, `cache gc` keeping only what live outputs use, `clean --cache`.

use std::path::Path;

use crate::common::{ok, synth_corpus};

fn stats(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&ok(dir, &["cache", "stats", "c", "--json"])).unwrap()
}

#[test]
fn gc_keeps_live_entries_and_clean_removes_the_memo() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 40, 4, 3);
    ok(d, &["build", "c", "--out", "a", "-q"]);
    assert_eq!(stats(d)["stages"]["card"]["entries"], 40);
    // A second output of an edited corpus adds entries; deleting it makes them garbage.
    std::fs::write(
        d.join("c/doc-00000.md"),
        "# Tapir\n\nTapirs browse fruit in the forest.\n",
    )
    .unwrap();
    ok(d, &["build", "c", "--out", "b", "-q"]);
    assert_eq!(stats(d)["stages"]["card"]["entries"], 41);
    // Each output has its records of used results and of recipes beside the memo, and an edit
    // build adds their overlays.
    let count = |kind: &str, ext: &str| {
        std::fs::read_dir(d.join("cache"))
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                let name = name.to_string_lossy();
                name.starts_with(&format!("{kind}-")) && name.ends_with(ext)
            })
            .count()
    };
    let records = || {
        assert_eq!(
            count("used", ".bin"),
            count("recipes", ".bin"),
            "one of each per output"
        );
        count("used", ".bin")
    };
    let overlays = || count("used", ".add") + count("recipes", ".add") + count("parsed", ".add");
    assert_eq!(overlays(), 0, "first builds write no overlay");
    let doc1 = d.join("c/doc-00001.md");
    let text = std::fs::read_to_string(&doc1).unwrap();
    std::fs::write(&doc1, format!("{text}\nTapirs swim well.\n")).unwrap();
    ok(d, &["build", "c", "--out", "b", "-q"]);
    assert_eq!(stats(d)["stages"]["card"]["entries"], 42);
    assert_eq!(records(), 2);
    assert!(
        overlays() >= 1,
        "the edit build of b kept what it added in overlays"
    );
    std::fs::remove_dir_all(d.join("b")).unwrap();
    // Edit again: the next build of `a` needs two new cards.
    std::fs::write(d.join("c/doc-00000.md"), "# Tapir two\n\nStill tapirs.\n").unwrap();
    ok(d, &["cache", "gc", "c"]);
    // Output `a` still uses its 40 cards; the cards only `b` used are gone, with b's records
    // and their overlays.
    assert_eq!(stats(d)["stages"]["card"]["entries"], 40);
    assert_eq!(records(), 1);
    assert_eq!(overlays(), 0, "gc removes the overlays of a gone output");
    let r: serde_json::Value =
        serde_json::from_str(&ok(d, &["build", "c", "--out", "a", "-q", "--json"])).unwrap();
    assert_eq!(r["stages"]["card"]["computed"], 2, "{r}");
    assert!(overlays() >= 1, "{r}");
    ok(d, &["clean", "c", "--out", "a", "--cache"]);
    assert!(!d.join("a").exists());
    assert!(!d.join("cache/c2s.sqlite").exists());
    assert_eq!(records(), 0, "clean --cache removes the output's record");
    assert_eq!(overlays(), 0, "and its overlays");
}

/// The slots record of the output `out` in the memo of `dir`.
fn slots_record(dir: &Path, out: &str) -> Vec<u8> {
    let db = rusqlite::Connection::open(dir.join("cache/c2s.sqlite")).unwrap();
    let name = format!("slots:{}", dir.join(out).to_string_lossy());
    db.query_row("SELECT value FROM records WHERE name = ?1", [name], |r| {
        r.get(0)
    })
    .unwrap()
}

#[test]
fn a_small_edit_keeps_the_slots_record_and_gc_keeps_what_it_used() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Large enough that one edit moves well under 1% of the keys.
    synth_corpus(&d.join("c"), 1200, 12, 5);
    ok(d, &["build", "c", "--out", "a", "-q"]);
    let before = slots_record(d, "a");
    std::fs::write(
        d.join("c/doc-00000.md"),
        "# Tapir\n\nTapirs browse fruit in the forest.\n",
    )
    .unwrap();
    let r: serde_json::Value =
        serde_json::from_str(&ok(d, &["build", "c", "--out", "a", "-q", "--json"])).unwrap();
    assert_eq!(r["stages"]["card"]["computed"], 1, "{r}");
    assert_eq!(
        slots_record(d, "a"),
        before,
        "one edit does not rewrite 37 MB at 100k"
    );
    // The kept record does not know the edit's keys; gc keeps them from the state file.
    // (`--full` runs every stage: the build is up to date.)
    ok(d, &["cache", "gc", "c"]);
    let full = ["build", "c", "--out", "a", "-q", "--json", "--full"];
    let r: serde_json::Value = serde_json::from_str(&ok(d, &full)).unwrap();
    for stage in ["card", "embed"] {
        assert_eq!(r["stages"][stage]["computed"], 0, "{stage}: {r}");
    }
    // The older record still explains the next edit.
    std::fs::write(d.join("c/doc-00000.md"), "# Tapir two\n\nStill tapirs.\n").unwrap();
    let out = ok(d, &["build", "c", "--out", "a", "--dry-run", "--explain"]);
    assert!(out.contains("input content changed"), "{out}");
    // Many edits at once rewrite it.
    for i in 1..40 {
        let f = d.join(format!("c/doc-{i:05}.md"));
        let text = std::fs::read_to_string(&f).unwrap();
        std::fs::write(&f, format!("{text}\nEdited {i}.\n")).unwrap();
    }
    ok(d, &["build", "c", "--out", "a", "-q"]);
    assert_ne!(slots_record(d, "a"), before);
}
