//! The shared benchmark corpora build, and their gold ids are document ids (or aliases of folded duplicates).

use std::collections::BTreeSet;

use crate::common::{c2s, data_dir, files, read_tree, repo, skip, stderr};

fn check_dataset(name: &str) {
    let dir = data_dir().join(name);
    if !dir.join("corpus.jsonl").is_file() {
        skip(&format!(
            "benchmark data {} not found (set C2S_DATA_DIR)",
            dir.display()
        ));
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let built = c2s(
        &repo(),
        &[
            "build",
            dir.join("corpus.jsonl").to_str().unwrap(),
            "-q",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(built.status.success(), "{}", stderr(&built));
    // Real documentation is not mistaken for planted instructions (no false flags).
    let flagged: Vec<String> = stderr(&built)
        .lines()
        .filter(|l| {
            l.contains("never used for navigation text") || l.contains("it is not used (the card")
        })
        .map(str::to_string)
        .collect();
    assert!(
        flagged.is_empty(),
        "{name}: {} false flags: {flagged:#?}",
        flagged.len()
    );
    let tree = read_tree(&out);
    let docs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("documents.json")).unwrap()).unwrap();
    let mut known: BTreeSet<String> = tree.doc_ids.clone();
    for d in docs.as_object().unwrap().values() {
        for a in d["aliases"].as_array().into_iter().flatten() {
            known.insert(a.as_str().unwrap().to_string());
        }
    }
    // Every document is a file an agent can open with plain file tools (named after its title
    // where the ids are hashes).
    let all = files(&out);
    let by_id = crate::common::doc_files(&out);
    for (id, file) in &by_id {
        let file = file.split('#').next().unwrap();
        assert!(all.iter().any(|f| f == file), "{name}: {id}: no {file}");
    }
    let queries = std::fs::read_to_string(dir.join("queries.jsonl")).unwrap();
    let mut gold = 0;
    for line in queries.lines() {
        let q: serde_json::Value = serde_json::from_str(line).unwrap();
        for g in q["gold_ids"].as_array().unwrap() {
            gold += 1;
            let g = g.as_str().unwrap();
            assert!(
                known.contains(g),
                "{name}: gold id {g} is not a document id"
            );
            // An alias is folded into a document that has a file.
            assert!(
                by_id.contains_key(g) || !tree.doc_ids.contains(g),
                "{name}: gold id {g} has no file in documents.json"
            );
        }
    }
    assert!(gold > 100);
    assert!(
        tree.roots.len() <= 10 && tree.roots.len() >= 2,
        "{name}: {} skills",
        tree.roots.len()
    );
}

#[test]
fn wixqa_sample_builds_with_gold_ids() {
    check_dataset("wixqa-sample");
}

#[test]
fn emanual_builds_with_gold_ids() {
    check_dataset("emanual");
}

#[test]
fn covidqa_builds_with_gold_ids() {
    check_dataset("covidqa");
}
