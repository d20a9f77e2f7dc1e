//! Host profiles (`[output] host`, `[output.limits]`): a build and `check` measure the skills
//! against the chosen host's limits (files and bytes per skill, skills per request, estimated
//! tokens per file) and warn, naming the skill or file; bad limits are config errors.

use serde_json::Value;

use crate::common::{c2s, ok, stderr, synth_corpus};

fn build(dir: &std::path::Path, sets: &[&str]) -> (Value, String) {
    let mut args = vec!["build", "c", "--out", "o", "--json"];
    for s in sets {
        args.extend(["--set", s]);
    }
    let o = c2s(dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    (serde_json::from_slice(&o.stdout).unwrap(), stderr(&o))
}

#[test]
fn each_host_has_its_limits_and_each_limit_can_be_overridden() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // One skill of 230 documents, and one document of about 12,500 estimated tokens.
    synth_corpus(&d.join("c"), 230, 1, 4);
    let long = "A long page about the hydrology of river deltas and their sediments. ".repeat(720);
    std::fs::write(d.join("c/zz-long.md"), format!("# Deltas\n\n{long}\n")).unwrap();

    // The default host fits by construction: bundles for the files cap, parts for the long
    // document.
    let (report, err) = build(d, &["K=1"]);
    let p = &report["platform"];
    assert_eq!(p["host"], "all");
    assert_eq!(p["limits"]["files_per_skill"], 200);
    assert_eq!(p["limits"]["tokens_per_file"], 10_000);
    assert!(p["per_skill"][0]["files"].as_u64().unwrap() <= 200, "{p}");
    assert_eq!(p["files_over_tokens"], 0, "{p}");
    assert!(
        p["longest_file"]["tokens"].as_u64().unwrap() <= 10_000,
        "{p}"
    );
    assert_eq!(p["warnings"], serde_json::json!([]), "{p}");
    assert!(err.contains("Packed skill-00-"), "{err}");
    assert!(
        crate::common::files(&d.join("o"))
            .iter()
            .any(|f| f.contains("/parts/")),
        "the long document is in parts"
    );
    let check: Value = serde_json::from_str(&ok(
        d,
        &["check", "c", "--out", "o", "--json", "--set", "K=1"],
    ))
    .unwrap();
    assert_eq!(
        check["platform"], report["platform"],
        "check measures the same"
    );

    // The host shapes the files: Claude Code has no files cap (one file per document) but
    // a token cap (the long document stays in parts).
    let (report, _) = build(d, &["K=1", "output.host=claude-code"]);
    assert_ne!(report["tree"]["kind"], "up_to_date");
    let p = &report["platform"];
    assert_eq!(p["limits"]["files_per_skill"], Value::Null);
    assert!(p["per_skill"][0]["files"].as_u64().unwrap() > 200, "{p}");
    assert_eq!(p["warnings"], serde_json::json!([]), "{p}");
    let all = crate::common::files(&d.join("o"));
    assert!(!all.iter().any(|f| f.contains("/bundles/")));
    assert!(all.iter().any(|f| f.contains("/parts/")));

    // Over a limit that packing cannot meet is a warning naming the skill and the fix.
    let (report, _) = build(d, &["K=1", "output.limits.files_per_skill=5"]);
    let warnings = report["platform"]["warnings"].to_string();
    assert!(
        warnings.contains("accept at most 5 per skill") && warnings.contains("tree.p"),
        "{warnings}"
    );
    assert!(warnings.contains("documents = \\\"by-id\\\""), "{warnings}");

    let (report, _) = build(
        d,
        &[
            "K=1",
            "output.host=skills-api",
            "output.limits.files_per_skill=1000",
        ],
    );
    assert_eq!(report["platform"]["limits"]["files_per_skill"], 1000);
    assert_eq!(report["platform"]["files_over_tokens"], 0, "no token limit");
    assert_eq!(report["platform"]["warnings"], serde_json::json!([]));
    assert!(
        report["platform"]["longest_file"]["tokens"]
            .as_u64()
            .unwrap()
            > 10_000,
        "without a token cap the long document is one file"
    );

    let (report, _) = build(d, &["K=1", "output.host=files"]);
    assert_eq!(report["platform"]["limits"], serde_json::json!({}));
}

#[test]
fn a_bad_host_or_limit_is_a_config_error() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 10, 2, 1);
    let o = c2s(
        d,
        &[
            "build",
            "c",
            "--out",
            "o",
            "--set",
            "output.limits.skills=0",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("output.limits.skills"),
        "{}",
        stderr(&o)
    );
    std::fs::write(
        d.join("c2s.toml"),
        "[corpus]\npaths = [\"c\"]\n[output]\nhost = \"claude-desktop\"\n",
    )
    .unwrap();
    let o = c2s(d, &["build"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("claude-desktop") && e.contains("skills-api"),
        "{e}"
    );
}

#[test]
fn a_corpus_that_cannot_fit_the_host_is_refused_before_building() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 40, 4, 2);
    let sets = [
        "--set",
        "output.limits.skills=2",
        "--set",
        "output.limits.bytes_per_skill=4500",
    ];
    let mut args = vec!["build", "c", "--out", "o"];
    args.extend(sets);
    let o = c2s(d, &args);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("40 documents (their text: ")
            && e.contains(
                "at most 2 skills of 4500 bytes each (4500 bytes per upload) hold 9000 bytes"
            ),
        "{e}"
    );
    assert!(
        e.contains("help: set [output] documents = \"by-id\""),
        "{e}"
    );
    assert!(!d.join("o").exists(), "nothing was built");
    // The first choice the help names: with the documents served by id, the skills hold only
    // their rows (40 × 200 bytes), which fit.
    let mut by_id = args.clone();
    by_id.extend(["--set", "output.documents=by-id"]);
    let o = c2s(d, &by_id);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !crate::common::files(&d.join("o"))
            .iter()
            .any(|f| f.contains("/docs/") || f.contains("/bundles/")),
        "no document files in the skills"
    );
    std::fs::remove_dir_all(d.join("o")).unwrap();
    // Served by id, a corpus whose rows alone are too many is refused too, without that hint.
    let mut tight = vec!["build", "c", "--out", "o"];
    tight.extend([
        "--set",
        "output.limits.skills=1",
        "--set",
        "output.limits.bytes_per_skill=1000",
        "--set",
        "output.documents=by-id",
    ]);
    let e = stderr(&c2s(d, &tight));
    assert!(
        e.contains(
            "40 documents (their rows on the navigation pages, about 200 bytes each: 8000 bytes)"
        ),
        "{e}"
    );
    assert!(!e.contains("documents = \"by-id\""), "{e}");
    let o = c2s(
        d,
        &["build", "c", "--out", "o", "--set", "output.host=files"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The issue's own example, at full size: 50,000 documents of 5 KB (250 MB) cannot fit 8
/// skills of any upload host. The build says so after ingest, with the numbers and the choices,
/// before any stage runs; nothing is written.
#[test]
fn fifty_thousand_documents_of_five_kilobytes_are_refused_early() {
    use std::io::Write as _;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let corpus = d.join("c");
    std::fs::create_dir_all(&corpus).unwrap();
    let filler = "Every ticket in this archive describes one customer request in full. ".repeat(73);
    // Five files of 10,000 records each (each file under corpus.max_file_bytes).
    for f in 0..5 {
        let mut w = std::io::BufWriter::new(
            std::fs::File::create(corpus.join(format!("part-{f}.jsonl"))).unwrap(),
        );
        for i in 0..10_000 {
            let n = f * 10_000 + i;
            let text = format!("Ticket {n} about order {}. {filler}", n * 7919);
            assert!((5_000..5_200).contains(&text.len()), "{}", text.len());
            let rec = serde_json::json!({"id": format!("t{n}"), "title": format!("Ticket {n}"), "text": text});
            writeln!(w, "{rec}").unwrap();
        }
    }
    let started = std::time::Instant::now();
    let o = c2s(d, &["build", "c", "--out", "o"]);
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("50000 documents (their text: ")
            && e.contains("cannot fit [output] host = \"all\": at most 8 skills of 8000000 bytes each (200 files of at most 10000 tokens) hold 64000000 bytes"),
        "{e}"
    );
    assert!(
        e.contains("help: set [output] documents = \"by-id\""),
        "{e}"
    );
    assert!(!d.join("o").exists(), "nothing was built");
    assert!(!e.contains("Clustered"), "no stage ran: {e}");
    // The Skills API's own 30 MB per skill refuses it too.
    let o = c2s(
        d,
        &[
            "build",
            "c",
            "--out",
            "o",
            "--set",
            "output.host=skills-api",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("at most 8 skills of 30000000 bytes each (30000000 bytes per upload) hold 240000000 bytes"),
        "{e}"
    );
    eprintln!("refused in {secs:.1} s");
}
