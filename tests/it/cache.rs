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
    std::fs::remove_dir_all(d.join("b")).unwrap();
    // Edit again: the next build of `a` needs one new card.
    std::fs::write(d.join("c/doc-00000.md"), "# Tapir two\n\nStill tapirs.\n").unwrap();
    ok(d, &["cache", "gc", "c"]);
    // Output `a` still uses its 40 cards; the card only `b` used is gone.
    assert_eq!(stats(d)["stages"]["card"]["entries"], 40);
    let r: serde_json::Value =
        serde_json::from_str(&ok(d, &["build", "c", "--out", "a", "-q", "--json"])).unwrap();
    assert_eq!(r["stages"]["card"]["computed"], 1, "{r}");
    ok(d, &["clean", "c", "--out", "a", "--cache"]);
    assert!(!d.join("a").exists());
    assert!(!d.join("cache/c2s.sqlite").exists());
}
