//! `c2s ask --offline` finds a reachable gold document; `c2s eval` runs every method, reports the
//! metrics table and per-query JSON, and is deterministic.

use crate::common::{build_example, c2s, example, ok, repo, stderr};

#[test]
fn offline_navigator_finds_the_reachable_document() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, cache) = build_example(tmp.path());
    let j: serde_json::Value = serde_json::from_str(&ok(
        &example(),
        &[
            "ask",
            "--offline",
            "How do I roll back a bad deployment?",
            "--json",
            "-q",
            "--out",
            out.to_str().unwrap(),
            "--set",
            &cache,
        ],
    ))
    .unwrap();
    let docs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("documents.json")).unwrap()).unwrap();
    let rollback = docs
        .as_object()
        .unwrap()
        .iter()
        .find(|(_, d)| d["title"] == "Rolling back a deployment")
        .unwrap()
        .0;
    assert_eq!(&j["ids"][0], rollback, "{j}");
    assert!(
        j["answer"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("rollback"),
        "{j}"
    );
    assert!(j["nav_bytes"].as_u64().unwrap() > 0 && j["doc_bytes"].as_u64().unwrap() > 0);
    assert!(j["path"][0].as_str().unwrap().ends_with("SKILL.md"));
}

fn dataset(dir: &std::path::Path) {
    let topics = [
        (
            "Pairing the remote",
            "Hold Back and Play for three seconds to pair the Bluetooth remote with the television.",
        ),
        (
            "Picture modes",
            "Choose Dynamic, Standard or Movie picture mode to match the lighting of the room.",
        ),
        (
            "Sound output",
            "Select a soundbar over HDMI ARC as the sound output for the speakers.",
        ),
        (
            "Network reset",
            "Reset the network settings when the Wi-Fi connection keeps dropping.",
        ),
        (
            "Parental lock",
            "Set a four digit PIN to lock channels and apps for children.",
        ),
        (
            "Software update",
            "Update the firmware over the internet or from a USB drive.",
        ),
    ];
    let mut corpus = String::new();
    let mut queries = String::new();
    for (i, (title, text)) in topics.iter().enumerate() {
        for v in 0..4 {
            corpus.push_str(&format!(
                "{}\n",
                serde_json::json!({"id": format!("s{i}-{v}"), "title": format!("{title} {v}"), "text": format!("{text} Variant {v} explains detail number {v}.")})
            ));
        }
        queries.push_str(&format!(
            "{}\n",
            serde_json::json!({"id": format!("q{i}"), "question": format!("How does {} work?", title.to_lowercase()), "answer": text, "gold_ids": [format!("s{i}-0")]})
        ));
    }
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("corpus.jsonl"), corpus).unwrap();
    std::fs::write(dir.join("queries.jsonl"), queries).unwrap();
}

#[test]
fn eval_reports_every_method_and_is_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    dataset(&tmp.path().join("tv"));
    let run = |json: &str| {
        let o = c2s(
            tmp.path(),
            &[
                "eval", "--data", "tv", "-q", "--json", json, "--set", "tree.p=4", "--set", "K=3",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let table = String::from_utf8_lossy(&o.stdout).into_owned();
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(tmp.path().join(json)).unwrap()).unwrap();
        (table, report)
    };
    let (table, a) = run("a.json");
    for m in ["navigator", "navigator+fallback", "bm25", "dense", "hybrid"] {
        assert!(table.contains(&format!("| {m} |")), "{table}");
        assert_eq!(a["summaries"][m]["queries"], 6);
    }
    assert!(table.contains("paired bootstrap"), "{table}");
    let bm25 = &a["summaries"]["bm25"]["means"];
    assert!(bm25["hit@5"].as_f64().unwrap() > 0.8, "{bm25}");
    assert!(
        a["summaries"]["navigator"]["routing_accuracy"]
            .as_f64()
            .is_some()
    );
    assert_eq!(a["results"].as_array().unwrap().len(), 30);
    let (_, b) = run("b.json");
    assert_eq!(
        a["summaries"]["navigator"]["means"],
        b["summaries"]["navigator"]["means"]
    );
    assert_eq!(a["comparisons"], b["comparisons"]);
    let bad = c2s(tmp.path(), &["eval", "--data", "tv", "--methods", "oracle"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("unknown method `oracle`"));
    let missing = c2s(tmp.path(), &["eval", "--data", "nowhere"]);
    assert_eq!(missing.status.code(), Some(2));
}

/// Recall@5 of `method` in an eval report.
fn recall5(report: &serde_json::Value, method: &str) -> f64 {
    report["summaries"][method]["means"]["recall@5"]
        .as_f64()
        .unwrap()
}

/// The offline default (extractive + hashed) routes at least as well as flat BM25 on the shared
/// sets: within 0.02 Recall@5, as issue 26 asks. Routing with the hashed cosine at full weight
/// (`--dense-weight 1`, the old default) falls short on emanual (0.835 against 0.876), so this
/// fails if the lexical evidence loses its weight again.
#[test]
fn hashed_navigator_routes_as_well_as_bm25() {
    let data = crate::common::data_dir();
    for set in ["wixqa-sample", "emanual"] {
        if !data.join(set).join("corpus.jsonl").is_file() {
            crate::common::skip(&format!("benchmark set {set} not found (set C2S_DATA_DIR)"));
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let run = |json: &str, extra: &[&str]| {
            let dir = data.join(set);
            let mut args = vec![
                "eval",
                "--data",
                dir.to_str().unwrap(),
                "--methods",
                "navigator,bm25",
                "-q",
                "--json",
                json,
            ];
            args.extend(extra);
            let o = c2s(tmp.path(), &args);
            assert!(o.status.success(), "{}", stderr(&o));
            let r: serde_json::Value =
                serde_json::from_slice(&std::fs::read(tmp.path().join(json)).unwrap()).unwrap();
            r
        };
        let r = run("default.json", &[]);
        let (nav, bm25) = (recall5(&r, "navigator"), recall5(&r, "bm25"));
        assert!(
            nav >= bm25 - 0.02,
            "{set}: navigator Recall@5 {nav:.3} is more than 0.02 below BM25's {bm25:.3}"
        );
        if set == "emanual" {
            let full = recall5(&run("full.json", &["--dense-weight", "1"]), "navigator");
            assert!(
                full < nav,
                "{set}: dense weight 1 gives {full:.3}, the default {nav:.3}"
            );
        }
    }
}

/// A docs repo is scored as it is built (issue 48): `--corpus` names its docs folder, a
/// `corpus/` folder in DATA is the default, and gold ids are page paths. On the mdBook guide's
/// questions (bench/docs-qa/mdbook) the navigator finds the gold page as often as flat BM25.
#[test]
fn eval_scores_a_docs_folder_with_page_paths_as_gold_ids() {
    let guide = crate::common::data_dir().join("docs-repos/mdbook");
    if !guide.is_dir() {
        return crate::common::skip(&format!("{} not found (set C2S_DATA_DIR)", guide.display()));
    }
    let tmp = tempfile::tempdir().unwrap();
    let book = tmp.path().join("mdbook");
    crate::common::copy_dir(&guide, &book);
    let qa = repo().join("bench/docs-qa/mdbook");
    let json = tmp.path().join("r.json");
    let o = c2s(
        &book,
        &[
            "eval",
            "--data",
            qa.to_str().unwrap(),
            "--corpus",
            "guide/src",
            "--out",
            tmp.path().join("t").to_str().unwrap(),
            "--methods",
            "navigator,bm25",
            "-q",
            "--json",
            json.to_str().unwrap(),
            "--set",
            &format!("cache.path={}", tmp.path().join("m.sqlite").display()),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(r["summaries"]["navigator"]["queries"], 23);
    let (nav, bm25) = (recall5(&r, "navigator"), recall5(&r, "bm25"));
    assert!(
        bm25 > 0.9,
        "gold page paths map onto the pages: bm25 {bm25}"
    );
    assert!(nav >= bm25, "navigator {nav} < bm25 {bm25}");

    // DATA/corpus/ as a folder is the default corpus; gold ids are paths in it.
    let data = tmp.path().join("set");
    std::fs::create_dir_all(data.join("corpus/billing")).unwrap();
    std::fs::create_dir_all(data.join("corpus/network")).unwrap();
    std::fs::write(
        data.join("corpus/billing/refunds.md"),
        "# Refunds\n\nA refund takes five days to reach the card.\n",
    )
    .unwrap();
    std::fs::write(
        data.join("corpus/billing/invoices.md"),
        "# Invoices\n\nDownload an invoice as a PDF.\n",
    )
    .unwrap();
    std::fs::write(
        data.join("corpus/network/router.md"),
        "# Router\n\nRestart the router to reset the wifi.\n",
    )
    .unwrap();
    std::fs::write(
        data.join("queries.jsonl"),
        "{\"id\": \"q1\", \"question\": \"how long does a refund take\", \"answer\": \"\", \"gold_ids\": [\"billing/refunds.md\"]}\n",
    )
    .unwrap();
    let o = c2s(
        tmp.path(),
        &[
            "eval",
            "--data",
            "set",
            "--methods",
            "bm25",
            "-q",
            "--json",
            "s.json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("s.json")).unwrap()).unwrap();
    assert_eq!(recall5(&r, "bm25"), 1.0, "{r}");
}
