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
    // Each output has its records of used results and of recipes beside the memo.
    let count = |kind: &str| {
        std::fs::read_dir(d.join("cache"))
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                let name = name.to_string_lossy();
                name.starts_with(&format!("{kind}-")) && name.ends_with(".bin")
            })
            .count()
    };
    let records = || {
        assert_eq!(count("used"), count("recipes"), "one of each per output");
        count("used")
    };
    assert_eq!(records(), 2);
    std::fs::remove_dir_all(d.join("b")).unwrap();
    // Edit again: the next build of `a` needs one new card.
    std::fs::write(d.join("c/doc-00000.md"), "# Tapir two\n\nStill tapirs.\n").unwrap();
    ok(d, &["cache", "gc", "c"]);
    // Output `a` still uses its 40 cards; the card only `b` used is gone, with b's record.
    assert_eq!(stats(d)["stages"]["card"]["entries"], 40);
    assert_eq!(records(), 1);
    let r: serde_json::Value =
        serde_json::from_str(&ok(d, &["build", "c", "--out", "a", "-q", "--json"])).unwrap();
    assert_eq!(r["stages"]["card"]["computed"], 1, "{r}");
    ok(d, &["clean", "c", "--out", "a", "--cache"]);
    assert!(!d.join("a").exists());
    assert!(!d.join("cache/c2s.sqlite").exists());
    assert_eq!(records(), 0, "clean --cache removes the output's record");
}
