//! The recipes beside the memo (`recipes-<id>.bin`): an edit build recalls the keys' inputs of
//! unchanged leaf groups and the hashes of unchanged documents' texts to embed instead of making
//! them, gives the same output as a build that makes them all, and makes a text again when the
//! memo lacks its vector. The entries of `documents.json` are copied from the file on disk by
//! the recipes kept for it (`entries-<id>.bin`).

use crate::common::synth_corpus;
use crate::statfirst::{
    append, build, damage, records, remove_memo, same_output, settle, setup, twin_build,
};

/// Leaf groups whose members did not change are keyed from the recipes the last build
/// recorded (`recipes-<id>.bin`), without their inputs being made; the output is the same as
/// when every input is made, and a damaged record is not read.
#[test]
fn an_edit_build_makes_only_the_inputs_of_groups_that_changed() {
    let tmp = setup(120);
    let d = tmp.path();
    let cache = d.join("cache");
    let leaves = || {
        let tree: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.join("o/tree.json")).unwrap()).unwrap();
        let nodes = tree["nodes"].as_array().unwrap().clone();
        nodes.iter().filter(|n| n["level"] == 1).count() as u64
    };
    assert_eq!(
        records(&cache, "recipes").len(),
        1,
        "the build recorded its recipes"
    );
    // `p` makes every input on every build: its cache folder loses the recipes each time.
    let build_p = || twin_build(d, "recipes");
    build_p();
    for (step, name) in ["doc-00003.md", "doc-00017.md", "doc-00031.md"]
        .iter()
        .enumerate()
    {
        append(
            &d.join("c").join(name),
            &format!("Step {step} adds a tide table."),
        );
        let o = build(d, "o");
        let p = build_p();
        // The group of the edited document, and any it moved to: what earlier edits made is
        // kept in the overlay of the recipes (the file itself is rewritten only when more
        // than about 1% missed).
        let made = o["group_inputs_made"].as_u64().unwrap();
        assert!(
            (1..=2).contains(&made) && made < leaves(),
            "step {step}: {made} of {} made: {o}",
            leaves()
        );
        assert_eq!(
            p["group_inputs_made"].as_u64(),
            Some(leaves()),
            "step {step}: {p}"
        );
        // Only the edited document's text to embed was made, every one of `p`'s.
        assert_eq!(o["embed_texts_made"], 1, "step {step}: {o}");
        assert_eq!(p["embed_texts_made"], 120, "step {step}: {p}");
        assert_eq!(o["stages"], p["stages"], "step {step}");
        same_output(&d.join("o"), &d.join("p"), &format!("step {step}"));
        settle();
    }
    // A damaged record is not read: every input is made, and the output is the same.
    damage(&records(&cache, "recipes"));
    append(&d.join("c/doc-00009.md"), "A last tide table.");
    let o = build(d, "o");
    let p = build_p();
    assert_eq!(o["group_inputs_made"].as_u64(), Some(leaves()), "{o}");
    assert_eq!(o["embed_texts_made"], 120, "{o}");
    assert_eq!(o["stages"], p["stages"]);
    same_output(&d.join("o"), &d.join("p"), "after damage");
}

/// A long document's paragraphs (`n` of them, in words of its own).
fn long_text(doc: usize, n: usize) -> String {
    let mut text = format!("# Long report {doc}\n\n");
    for p in 0..n {
        let words: Vec<String> = (0..40)
            .map(|w| format!("w{doc}x{}", (p * 7 + w * 3) % 97))
            .collect();
        text.push_str(&format!("Section {p} notes {}.\n\n", words.join(" ")));
    }
    text
}

/// The texts of long documents (a head and passages each) are recalled by recipe like the
/// others; when the memo lacks their vectors (a new memo under the same output's records), each
/// text is made again from its document and gives the output a build without recipes gives.
#[test]
fn texts_to_embed_are_recalled_and_made_again_when_the_memo_lacks_them() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 30, 3, 7);
    for i in 0..4 {
        std::fs::write(d.join(format!("c/long-{i}.md")), long_text(i, 30)).unwrap();
    }
    settle();
    let first = build(d, "o");
    assert_eq!(first["embed_texts_made"], 34, "{first}");
    let passages = first["stages"]["chunk"]["computed"].as_u64().unwrap();
    assert!(passages >= 8, "the long documents have passages: {first}");
    settle();
    append(
        &d.join("c/long-2.md"),
        "Section 99 adds a closing tide table.",
    );
    let o = build(d, "o");
    assert_eq!(o["embed_texts_made"], 1, "{o}");
    assert_eq!(o["stages"]["embed"]["computed"], 1, "{o}");
    // A cold build elsewhere makes every text; this one, with its recipes and nothing else,
    // makes none (the edited document's is in the overlay of the recipes), computes every
    // vector, and writes the same output.
    let q = twin_build(d, "recipes");
    assert_eq!(q["embed_texts_made"], 34, "{q}");
    std::fs::remove_dir_all(d.join("o")).unwrap();
    remove_memo(&d.join("cache"));
    for f in records(&d.join("cache"), "used") {
        std::fs::remove_file(f).unwrap();
    }
    let o = build(d, "o");
    // Every text's hash is recalled (the edited one's from the overlay of the recipes), and
    // every text is made again to be embedded.
    assert_eq!(o["embed_texts_made"], 0, "{o}");
    assert_eq!(o["stages"]["embed"]["computed"], 34, "{o}");
    assert_eq!(o["stages"]["chunk"], q["stages"]["chunk"], "{o}");
    same_output(&d.join("o"), &d.join("p"), "texts made again");
}

/// The entries of `documents.json` whose recipe the file on disk was made from are copied from
/// it, the others made; the output is the same as when every entry is made. A file whose stat
/// moved (edited by hand) or a damaged record of recipes makes every entry again.
#[test]
fn documents_json_copies_the_unchanged_entries_of_the_file_on_disk() {
    let tmp = setup(120);
    let d = tmp.path();
    let cache = d.join("cache");
    assert_eq!(
        records(&cache, "entries").len(),
        1,
        "the build recorded them"
    );
    // `p` makes every entry on every build: its cache folder loses the record each time.
    let build_p = || twin_build(d, "entries");
    build_p();
    for (step, name) in ["doc-00004.md", "doc-00040.md"].iter().enumerate() {
        append(
            &d.join("c").join(name),
            &format!("Step {step} adds a ferry timetable."),
        );
        let o = build(d, "o");
        let p = build_p();
        assert_eq!(o["doc_entries_made"], 1, "step {step}: {o}");
        assert_eq!(p["doc_entries_made"], 120, "step {step}: {p}");
        same_output(&d.join("o"), &d.join("p"), &format!("step {step}"));
        settle();
    }
    // A hand edit of the file: its stat moved, nothing is copied from it, and it is replaced.
    let docs = d.join("o/documents.json");
    let text = std::fs::read_to_string(&docs).unwrap();
    std::fs::write(&docs, text.replacen("ferry", "FERRY", 1)).unwrap();
    settle();
    append(&d.join("c/doc-00007.md"), "A ferry runs at noon.");
    let o = build(d, "o");
    build_p();
    assert_eq!(o["doc_entries_made"], 120, "{o}");
    same_output(&d.join("o"), &d.join("p"), "after a hand edit");
    settle();
    // A damaged record is not read.
    damage(&records(&cache, "entries"));
    append(&d.join("c/doc-00008.md"), "A ferry runs at one.");
    let o = build(d, "o");
    build_p();
    assert_eq!(o["doc_entries_made"], 120, "{o}");
    same_output(&d.join("o"), &d.join("p"), "after damage");
    // And the next build copies again.
    settle();
    append(&d.join("c/doc-00009.md"), "A ferry runs at two.");
    assert_eq!(build(d, "o")["doc_entries_made"], 1);
}
