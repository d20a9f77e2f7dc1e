//! Incremental builds: recomputation counts per stage for no-op, edit, add/delete and config
//! changes; stable folder names; random edit sequences keep the invariants and `check` fresh.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;

use crate::common::{c2s, doc_files, files, is_nav, ok, synth_corpus};
use crate::invariants::check_invariants;

const KNOBS: [&str; 4] = ["--set", "tree.p=5", "--set", "K=4"];

fn build(dir: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["build", "c", "--out", "o", "-q", "--json"];
    args.extend_from_slice(&KNOBS);
    args.extend_from_slice(extra);
    serde_json::from_str(&ok(dir, &args)).unwrap()
}

fn computed(report: &serde_json::Value, stage: &str) -> u64 {
    report["stages"][stage]["computed"].as_u64().unwrap_or(0)
}

fn contents(out: &Path) -> BTreeMap<String, Vec<u8>> {
    files(out)
        .into_iter()
        .map(|f| (f.clone(), std::fs::read(out.join(&f)).unwrap()))
        .collect()
}

fn mtimes(out: &Path) -> BTreeMap<String, std::time::SystemTime> {
    files(out)
        .into_iter()
        .map(|f| {
            let t = std::fs::metadata(out.join(&f)).unwrap().modified().unwrap();
            (f, t)
        })
        .collect()
}

fn setup(n: usize) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    synth_corpus(&tmp.path().join("c"), n, 12, 5);
    tmp
}

/// The navigation file whose Contents list the document in `docs/<name>` as a home row.
fn home_of(out: &Path, name: &str) -> String {
    let row = format!("](docs/{name}) —");
    files(out)
        .into_iter()
        .find(|f| is_nav(f) && std::fs::read_to_string(out.join(f)).unwrap().contains(&row))
        .expect("document has a home")
}

/// The navigation files that list the document in `docs/<name>` as an `@see` stub.
fn stubs_of(files: &BTreeMap<String, Vec<u8>>, name: &str) -> Vec<String> {
    let link = format!("/docs/{name})");
    files
        .iter()
        .filter(|(f, bytes)| {
            is_nav(f)
                && String::from_utf8_lossy(bytes)
                    .lines()
                    .any(|l| l.starts_with("- @see ") && l.contains(&link))
        })
        .map(|(f, _)| f.clone())
        .collect()
}

fn doc_id(dir: &Path, file: &str) -> String {
    let docs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("o/documents.json")).unwrap()).unwrap();
    docs.as_object()
        .unwrap()
        .iter()
        .find(|(_, d)| d["source"] == file)
        .unwrap()
        .0
        .clone()
}

#[test]
fn noop_rebuild_computes_nothing() {
    let tmp = setup(120);
    let first = build(tmp.path(), &[]);
    assert_eq!(computed(&first, "card"), 120);
    let second = build(tmp.path(), &[]);
    assert_eq!(second["tree"]["kind"], "up_to_date");
    assert_eq!(second["stages"], serde_json::json!({}));
    assert_eq!(second["files"]["written"], 0);
    // After `clean` the tree is clustered afresh; the memo still serves every card.
    ok(tmp.path(), &["clean", "c", "--out", "o"]);
    let third = build(tmp.path(), &[]);
    assert_eq!(third["tree"]["kind"], "full", "{third}");
    assert_eq!(third["stages"]["card"]["reused"], 120);
}

#[test]
fn one_edit_recomputes_only_its_path_to_the_root() {
    let tmp = setup(300);
    let first = build(tmp.path(), &[]);
    let levels = first["levels"].as_u64().unwrap();
    assert!(levels >= 3, "want a deep tree, got {levels} levels");
    let out = tmp.path().join("o");
    let id = doc_id(tmp.path(), "doc-00007.md");
    let before = contents(&out);
    let mtimes_before = mtimes(&out);
    let file = tmp.path().join("c/doc-00007.md");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("# ", "# Quasar telemetry ", 1)).unwrap();
    let r = build(tmp.path(), &[]);
    assert_eq!(r["tree"]["kind"], "warm");
    assert_eq!(computed(&r, "card"), 1);
    assert_eq!(computed(&r, "embed"), 1);
    assert_eq!(computed(&r, "tags"), 1, "only the leaf's tags");
    for stage in ["summary", "label"] {
        let n = computed(&r, stage);
        assert!(
            n >= 1 && n <= levels,
            "{stage}: {n} recomputed for {levels} levels"
        );
    }
    assert_eq!(computed(&r, "reembed"), 0);
    // The files that changed are the document's navigation path, its own document file, the
    // groups that list it as an `@see` stub (before or after: its row shows the new title), and
    // the corpus-wide files (the entity indexes, each skill's included, and the serving data).
    let own_file = doc_files(&out)[&id].clone();
    let name = own_file.rsplit_once("/docs/").unwrap().1;
    assert_eq!(name, "doc-00007.md", "the file is named after its source");
    let leaf = home_of(&out, name);
    let after = contents(&out);
    let mut stub_leaves = stubs_of(&before, name);
    stub_leaves.extend(stubs_of(&after, name));
    // (The state's shards are named by stage and key, not by folder: a warm build uses no
    // `reembed` result, say.)
    let named = |m: &BTreeMap<String, Vec<u8>>| {
        let keys = m.keys().filter(|f| !f.starts_with("state/"));
        keys.cloned().collect::<Vec<_>>()
    };
    assert_eq!(named(&before), named(&after), "folder names are stable");
    assert_eq!(
        Path::new(&own_file).parent().unwrap().parent().unwrap(),
        Path::new(&leaf).parent().unwrap(),
        "the file is in its home group"
    );
    assert_ne!(
        before[&own_file], after[&own_file],
        "the document's file has the new text"
    );
    let corpus_wide = [
        "documents.json",
        "entity_index.json",
        "entity_index.md",
        "tree.json",
        "vectors.bin",
        "state.jsonl",
        "c2s.lock",
    ];
    // Only the edited document's file is rewritten: every other one keeps its mtime.
    let mtimes_after = mtimes(&out);
    for (f, t) in &mtimes_before {
        if f.contains("/docs/") && *f != own_file {
            assert_eq!(mtimes_after.get(f), Some(t), "{f} was rewritten");
        }
    }
    for (f, bytes) in &after {
        if before.get(f) == Some(bytes) {
            continue;
        }
        let on_path =
            is_nav(f) && leaf.starts_with(Path::new(f).parent().unwrap().to_str().unwrap());
        let global = corpus_wide.contains(&f.as_str())
            || f.starts_with("state/")
            || f.ends_with("/entities.md")
            || stub_leaves.contains(f)
            || *f == own_file;
        assert!(
            on_path || global,
            "{f} changed but is not on the path of {leaf}"
        );
    }
    assert!(
        after[&leaf] != before[&leaf],
        "the leaf itself shows the new title"
    );
}

#[test]
fn an_edit_deletes_no_state_file_and_a_full_build_makes_the_reembeds_again() {
    let tmp = setup(80);
    let d = tmp.path();
    let first = build(d, &[]);
    assert!(
        computed(&first, "reembed") > 0,
        "the fixture re-embeds clusters: {first}"
    );
    let state = |d: &Path| -> Vec<String> {
        files(&d.join("o"))
            .into_iter()
            .filter(|f| f.starts_with("state/"))
            .collect()
    };
    let before = state(d);
    assert!(
        before.iter().any(|f| f.starts_with("state/reembed")),
        "{before:?}"
    );
    let doc = d.join("c").join(&files(&d.join("c"))[0]);
    let mut text = std::fs::read_to_string(&doc).unwrap();
    text.push_str("\nOne more sentence about the weather.\n");
    std::fs::write(&doc, text).unwrap();
    let edit = build(d, &[]);
    assert_eq!(edit["tree"]["kind"], "warm", "{edit}");
    assert_eq!(computed(&edit, "reembed"), 0);
    // The tree was updated in place: what it was clustered with stays in the state.
    assert_eq!(state(d), before);
    assert_eq!(c2s(d, &["check", "--out", "o"]).status.code(), Some(0));
    let full = build(d, &["--full"]);
    assert_eq!(full["tree"]["kind"], "full", "{full}");
    assert!(state(d).iter().any(|f| f.starts_with("state/reembed")));
}

#[test]
fn add_and_delete_warm_start_keeps_invariants_and_names() {
    let tmp = setup(200);
    build(tmp.path(), &[]);
    let out = tmp.path().join("o");
    let folders_before: Vec<String> = files(&out)
        .into_iter()
        .filter(|f| f.ends_with(".md"))
        .collect();
    std::fs::remove_file(tmp.path().join("c/doc-00003.md")).unwrap();
    std::fs::write(
        tmp.path().join("c/new-a.md"),
        "# Zebra migration\n\nZebra herds migrate north when the rains begin.\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("c/new-b.md"),
        "# Zebra stripes\n\nStripes help zebras confuse biting flies.\n",
    )
    .unwrap();
    let r = build(tmp.path(), &[]);
    assert_eq!(r["tree"]["kind"], "warm", "{r}");
    assert_eq!(r["tree"]["added"], 2);
    assert_eq!(r["tree"]["deleted"], 1);
    assert_eq!(computed(&r, "card"), 2);
    assert_eq!(computed(&r, "embed"), 2);
    check_invariants(&out, 201, 5, 4);
    let folders_after: Vec<String> = files(&out)
        .into_iter()
        .filter(|f| f.ends_with(".md"))
        .collect();
    let kept = folders_before
        .iter()
        .filter(|f| folders_after.contains(f))
        .count();
    assert!(
        kept * 10 >= folders_before.len() * 9,
        "most folders keep their names ({kept}/{})",
        folders_before.len()
    );
    assert_eq!(
        c2s(
            tmp.path(),
            &[
                "check", "c", "--out", "o", "--set", "tree.p=5", "--set", "K=4"
            ]
        )
        .status
        .code(),
        Some(0)
    );
}

#[test]
fn config_change_of_k_reuses_cards_and_embeddings() {
    let tmp = setup(150);
    build(tmp.path(), &[]);
    let r = build(tmp.path(), &["--set", "K=3"]);
    assert_eq!(r["tree"]["kind"], "full");
    assert_eq!(computed(&r, "card"), 0);
    assert_eq!(computed(&r, "embed"), 0);
    assert_eq!(r["stages"]["card"]["reused"], 150);
}

#[test]
fn large_changes_and_full_rebuild_from_scratch() {
    let tmp = setup(100);
    build(tmp.path(), &[]);
    for i in 0..40 {
        std::fs::remove_file(tmp.path().join(format!("c/doc-{i:05}.md"))).unwrap();
    }
    let r = build(tmp.path(), &[]);
    assert_eq!(r["tree"]["kind"], "full");
    assert!(
        r["tree"]["reason"]
            .as_str()
            .unwrap()
            .contains("full_rebuild_share"),
        "{r}"
    );
    let r = build(tmp.path(), &["--full"]);
    assert_eq!(r["tree"]["reason"], "--full");
    assert_eq!(computed(&r, "card"), 0);
}

#[derive(Debug, Clone)]
enum Step {
    Add(u16),
    Edit(u16),
    Delete(u16),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0u16..500).prop_map(Step::Add),
        (0u16..500).prop_map(Step::Edit),
        (0u16..500).prop_map(Step::Delete)
    ]
}

fn apply(dir: &Path, s: &Step, n: &mut usize) {
    let existing: Vec<String> = {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    match s {
        Step::Add(k) => {
            std::fs::write(
                dir.join(format!("added-{k}-{n}.md")),
                format!("# Added {k}\n\nNew words quokka{k} wombat{k} appear here.\n"),
            )
            .unwrap();
            *n += 1;
        }
        Step::Edit(k) => {
            let f = dir.join(&existing[*k as usize % existing.len()]);
            let t = std::fs::read_to_string(&f).unwrap();
            std::fs::write(&f, format!("{t}\nEdited with marmot{k}.\n")).unwrap();
        }
        Step::Delete(k) if existing.len() > 20 => {
            std::fs::remove_file(dir.join(&existing[*k as usize % existing.len()])).unwrap();
            *n -= 1;
        }
        Step::Delete(_) => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 4,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x1C2),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_edits_keep_invariants_and_check_fresh(steps in prop::collection::vec(step(), 1..5)) {
        let tmp = setup(80);
        build(tmp.path(), &[]);
        let mut n = 80;
        for s in &steps {
            apply(&tmp.path().join("c"), s, &mut n);
            build(tmp.path(), &[]);
            check_invariants(&tmp.path().join("o"), n, 5, 4);
            let st = c2s(tmp.path(), &["check", "c", "--out", "o", "--set", "tree.p=5", "--set", "K=4"]);
            prop_assert_eq!(st.status.code(), Some(0), "{}", String::from_utf8_lossy(&st.stderr));
        }
    }
}

#[test]
fn dry_run_explains_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    synth_corpus(&tmp.path().join("c"), 60, 5, 6);
    // Before any build: a dry run plans everything and creates neither output nor cache.
    let first = ok(tmp.path(), &["build", "c", "--out", "o", "--dry-run"]);
    assert!(first.contains("card: 60 to compute"), "{first}");
    assert!(!tmp.path().join("o").exists() && !tmp.path().join("cache").exists());
    build(tmp.path(), &[]);
    let out = tmp.path().join("o");
    let before = contents(&out);
    let entries = |d: &Path| -> serde_json::Value {
        serde_json::from_str(&ok(d, &["cache", "stats", "c", "--json"])).unwrap()
    };
    let cache_before = entries(tmp.path());
    std::fs::write(
        tmp.path().join("c/doc-00004.md"),
        "# Narwhal tusks\n\nNarwhal tusks are teeth with sensory nerves.\n",
    )
    .unwrap();
    let mut args = vec!["build", "c", "--out", "o", "--dry-run", "--explain"];
    args.extend_from_slice(&KNOBS);
    let text = ok(tmp.path(), &args);
    let id = doc_id(tmp.path(), "doc-00004.md");
    assert!(
        text.contains(&format!("card {id}: input content changed")),
        "{text}"
    );
    assert!(text.contains("LLM calls:"), "{text}");
    args.push("--json");
    args.extend_from_slice(&[
        "--set",
        "llm.price_input_per_mtok=1.0",
        "--set",
        "llm.price_output_per_mtok=2.0",
    ]);
    let j: serde_json::Value = serde_json::from_str(&ok(tmp.path(), &args)).unwrap();
    assert!(j["estimate"]["llm_calls"].as_u64().unwrap() >= 2, "{j}");
    assert!(j["estimate"]["cost"].as_f64().unwrap() > 0.0, "{j}");
    assert_eq!(contents(&out), before, "a dry run writes no output");
    assert_eq!(
        entries(tmp.path()),
        cache_before,
        "a dry run writes no cache entry"
    );
}
