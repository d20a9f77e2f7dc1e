//! `c2s build --dry-run` predicts the build that follows it: per stage, the results it says it
//! would compute are the results the build computes and the calls the model gets, over a
//! sequence of edits, additions and deletions, with a model behind `[llm]` (the loopback server).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::common::synth_corpus;
use crate::llm::{build, config, err, openai};
use crate::llm_server::Server;

/// Computed results per stage, from a build's (or a dry run's) `--json` report.
fn computed(report: &Value) -> BTreeMap<String, u64> {
    report["stages"]
        .as_object()
        .map(|stages| {
            stages
                .iter()
                .map(|(k, v)| (k.clone(), v["computed"].as_u64().unwrap_or(0)))
                .filter(|(_, n)| *n > 0)
                .collect()
        })
        .unwrap_or_default()
}

/// What a dry run predicts and what the build then does.
struct Step {
    /// Computed per stage if the model answers as it did for the same items.
    likely: BTreeMap<String, u64>,
    /// Computed per stage if every new answer differs (absent offline: nothing is guessed).
    upper: Option<BTreeMap<String, u64>>,
    actual: BTreeMap<String, u64>,
    calls: usize,
}

/// The dry run's prediction, then the build's figures.
fn predict_then_build(dir: &Path, server: &Server) -> Step {
    let before = server.requests().len();
    let dry = build(dir, &["--dry-run", "--json"]);
    assert!(dry.status.success(), "{}", err(&dry));
    assert_eq!(
        server.requests().len(),
        before,
        "a dry run called the model"
    );
    let predicted: Value = serde_json::from_slice(&dry.stdout).unwrap();
    let real = build(dir, &["--json"]);
    assert!(real.status.success(), "{}", err(&real));
    let report: Value = serde_json::from_slice(&real.stdout).unwrap();
    let calls = server.requests().len() - before;
    Step {
        likely: computed(&predicted),
        upper: predicted.get("if_answers_differ").map(computed),
        actual: computed(&report),
        calls,
    }
}

/// The corpus's pages, in path order.
fn pages(dir: &Path) -> Vec<std::path::PathBuf> {
    let docs = dir.join("docs");
    crate::common::files(&docs)
        .iter()
        .map(|f| docs.join(f))
        .collect()
}

fn edit(file: &Path, line: &str) {
    let mut text = std::fs::read_to_string(file).unwrap();
    text.push_str(line);
    std::fs::write(file, text).unwrap();
}

/// 60 synthetic pages built once with the loopback model `server`, in a temporary folder.
fn built_with(server: &Server) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    synth_corpus(&dir.join("docs"), 60, 4, 11);
    config(dir, &openai(server, ""), "");
    let first = build(dir, &["-q"]);
    assert!(first.status.success(), "{}", err(&first));
    tmp
}

#[test]
fn the_dry_run_predicts_each_stage_of_the_next_build() {
    let server = Server::start();
    let tmp = built_with(&server);
    let dir = tmp.path();
    let docs = pages(dir);
    type Change<'a> = Box<dyn Fn() + 'a>;
    let steps: Vec<(&str, Change)> = vec![
        ("nothing", Box::new(|| {})),
        (
            "one edit",
            Box::new(|| edit(&docs[3], "\nOne more sentence about the weather.\n")),
        ),
        (
            "two edits",
            Box::new(|| {
                edit(&docs[10], "\nA note on invoices.\n");
                edit(&docs[40], "\nA note on domains.\n");
            }),
        ),
        (
            "an addition",
            Box::new(|| {
                std::fs::write(
                    dir.join("docs/new-page.md"),
                    "# A new page\n\nThis page is about the weather and invoices.\n",
                )
                .unwrap()
            }),
        ),
        (
            "a deletion",
            Box::new(|| std::fs::remove_file(&docs[20]).unwrap()),
        ),
    ];
    for (name, step) in steps {
        step();
        let Step {
            likely,
            upper,
            actual,
            calls,
        } = predict_then_build(dir, &server);
        // The build lies between the bounds. An edit leaves the scripted model's answers for
        // the same items as they were (its cards name a page's first line, its summaries are
        // fixed), so there the likely count is exact, as with a real model that writes the
        // same card and summary after a small edit; a new page's card is the model's to write.
        let upper = upper.expect("a model's dry run gives its upper bound");
        for (stage, n) in &actual {
            let (low, high) = (
                likely.get(stage).copied().unwrap_or(0),
                upper.get(stage).copied().unwrap_or(0),
            );
            assert!(
                low <= *n && *n <= high,
                "{name}: {stage} {low} <= {n} <= {high} fails: {likely:?} {actual:?} {upper:?}"
            );
        }
        if name.contains("edit") || name == "nothing" {
            assert_eq!(
                likely, actual,
                "{name}: the dry run predicted {likely:?}, the build computed {actual:?}"
            );
        }
        let llm: u64 = actual
            .iter()
            .filter(|(stage, _)| {
                ["card", "summary", "label", "tags", "repartition"].contains(&stage.as_str())
            })
            .map(|(_, n)| n)
            .sum();
        assert_eq!(llm as usize, calls, "{name}: {actual:?} vs {calls} calls");
    }
}

#[test]
fn offline_the_dry_run_is_exact_and_gives_no_upper_bound() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    synth_corpus(&dir.join("docs"), 40, 3, 5);
    std::fs::write(
        dir.join("c2s.toml"),
        "[corpus]\npaths = [\"docs\"]\n[tree]\nK = 2\n",
    )
    .unwrap();
    let ok = |args: &[&str]| {
        let o = crate::common::c2s(dir, args);
        assert!(o.status.success(), "{}", err(&o));
        o
    };
    ok(&["build", "-q"]);
    let first = std::fs::read_dir(dir.join("docs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    edit(&first, "\nAnother sentence about invoices and domains.\n");
    let dry: Value = serde_json::from_slice(&ok(&["build", "--dry-run", "--json"]).stdout).unwrap();
    assert!(dry.get("if_answers_differ").is_none(), "{dry}");
    let real: Value = serde_json::from_slice(&ok(&["build", "--json"]).stdout).unwrap();
    assert_eq!(computed(&dry), computed(&real));
    assert!(!computed(&real).is_empty());
}

#[test]
fn a_model_whose_summaries_follow_their_input_reaches_the_upper_bound() {
    let server = Server::start();
    server.vary_summaries();
    let tmp = built_with(&server);
    let dir = tmp.path();
    let doc = pages(dir).remove(3);
    edit(&doc, "\nOne more sentence about the weather.\n");
    let Step {
        likely,
        upper,
        actual,
        ..
    } = predict_then_build(dir, &server);
    let upper = upper.expect("a model's dry run gives its upper bound");
    // The leaf's new summary differs, so its parent is asked again: more than the likely count,
    // and exactly what the upper bound said.
    assert!(
        actual["summary"] > likely["summary"],
        "{likely:?} {actual:?}"
    );
    assert_eq!(upper, actual, "{likely:?}");
}
