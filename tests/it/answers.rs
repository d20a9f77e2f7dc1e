//! A build's model answers as small models write them (scripted): a label that is a number or
//! the prompt's own words, a summary with an invented command, a server that refuses the JSON
//! schema. Each is repaired, asked again or falls back with a warning, and the build counts how
//! every stage's answers were used; long stages print progress off a terminal.

use std::process::Command;

use serde_json::{Value, json};

use crate::llm::{build, config, corpus, err, openai};
use crate::llm_server::{Fault, Server};

fn oa(text: &str) -> Value {
    json!({"choices": [{"message": {"role": "assistant", "content": text}}], "usage": {"prompt_tokens": 50, "completion_tokens": 5}})
}

fn report(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}", err(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn answers_are_checked_repaired_asked_again_and_counted() {
    let server = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path(), 4);
    // One request at a time, so the scripted answers go to the groups in order.
    config(tmp.path(), &openai(&server, "concurrency = 1"), "");
    server.script(
        "label",
        vec![
            oa("{\"label\": \"5\"}"),
            oa("{\"label\": \"readers text\"}"),
            oa("{\"label\": \"no quotes no punctuation\"}"),
            oa("no quotes no punctuation"),
        ],
    );
    server.script(
        "summary",
        vec![oa(
            "{\"summary\": \"Readers find the text about each topic here. Clear it with `docker cache prune` first.\"}",
        )],
    );
    let r = report(&build(tmp.path(), &["--json"]));
    let answers = |stage: &str| r["llm_usage"][stage]["answers"].clone();
    assert_eq!(answers("label")["retried"], 1, "{r}");
    assert_eq!(answers("label")["fallback"], 1, "{r}");
    assert!(answers("summary")["repaired"].as_u64().unwrap() >= 1, "{r}");
    assert!(
        answers("card")["repaired"].as_u64().unwrap() >= 1,
        "fenced JSON: {r}"
    );
    for stage in ["card", "summary", "label", "tags"] {
        assert!(r["llm_usage"][stage]["answers"].is_object(), "{stage}: {r}");
    }
    // The retry said why, and the fallback is named in a warning.
    let retry = server
        .requests()
        .into_iter()
        .filter(|q| q.stage() == "label")
        .nth(1)
        .unwrap();
    assert!(
        retry.user().contains("is a number, not a subject"),
        "{}",
        retry.user()
    );
    let warnings = r["warning_list"].to_string();
    assert!(
        warnings.contains("label: two answers were unusable"),
        "{warnings}"
    );
    // Nothing invented reaches the output; the label drawn from the members does.
    let out = crate::common::read_tree(&tmp.path().join("out"));
    let all: String = out.nav.values().map(|n| n.text.clone()).collect();
    assert!(!all.contains("docker"), "{all}");
    assert!(
        all.contains("Readers find the text about each topic here."),
        "{all}"
    );
    assert!(
        all.contains("readers text") || all.contains("Readers text"),
        "{all}"
    );
    // The label that fell back is remembered: a full rebuild asks nothing and says so; asked
    // again on purpose, its answers are counted again.
    let calls = server.requests().len();
    let summary = crate::common::stderr(&build(tmp.path(), &["--full"]));
    assert_eq!(server.requests().len(), calls, "{summary}");
    assert!(
        summary.contains("rejected by an earlier build"),
        "{summary}"
    );
    let summary = crate::common::stderr(&build(tmp.path(), &["--retry-rejected"]));
    assert!(summary.contains("answers: label"), "{summary}");
}

#[test]
fn a_server_that_refuses_the_schema_is_asked_without_it() {
    let server = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path(), 4);
    config(tmp.path(), &openai(&server, "concurrency = 1"), "");
    server.fail(
        "card",
        vec![Fault::Status(
            400,
            vec![],
            r#"{"error":{"message":"response_format json_schema is not supported"}}"#.into(),
        )],
    );
    let r = report(&build(tmp.path(), &["--json"]));
    assert_eq!(server.count("card"), 5, "the refused request is sent again");
    let cards: Vec<Value> = server
        .requests()
        .into_iter()
        .filter(|q| q.stage() == "card")
        .map(|q| q.body)
        .collect();
    assert!(cards[0].get("response_format").is_some());
    assert!(
        cards[1..]
            .iter()
            .all(|b| b.get("response_format").is_none())
    );
    let warnings = r["warning_list"].to_string();
    assert!(warnings.contains("refused the JSON schema"), "{warnings}");

    // With `structured_output = "json_schema"` the refusal is an error, and `off` sends none.
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path(), 4);
    let strict = openai(&server, "").replace(
        "model = \"test-model\"",
        "model = \"test-model\"\nstructured_output = \"json_schema\"",
    );
    config(tmp.path(), &strict, "");
    server.fail(
        "card",
        vec![Fault::Status(
            400,
            vec![],
            "response_format is not supported".into(),
        )],
    );
    let o = build(tmp.path(), &["-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("HTTP 400"), "{}", err(&o));
    let before = server.requests().len();
    config(
        tmp.path(),
        &strict.replace("\"json_schema\"", "\"off\""),
        "",
    );
    report(&build(tmp.path(), &["--json"]));
    assert!(
        server.requests()[before..]
            .iter()
            .all(|q| q.body.get("response_format").is_none())
    );
}

#[test]
fn long_stages_print_progress_lines_off_a_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    crate::common::synth_corpus(&tmp.path().join("docs"), 12, 3, 7);
    let o = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["build", "docs", "--out", "out"])
        .current_dir(tmp.path())
        .env("C2S_PROGRESS_MS", "0")
        .env("C2S_THROTTLE_MS", "5")
        .output()
        .unwrap();
    let e = err(&o);
    assert!(o.status.success(), "{e}");
    let line = e
        .lines()
        .find(|l| l.trim_start().starts_with("Carding 1/12 ("))
        .unwrap_or_else(|| panic!("{e}"));
    assert!(
        line.contains("/s, about ") && line.ends_with(" left)"),
        "{line}"
    );
    assert!(e.contains("Embedding "), "{e}");
}
