//! The `openai` and `anthropic` LLM backends and the `openai` embedder against the loopback
//! server: prompts, retries on every injected fault, memo contents, fallbacks, interruption,
//! dry runs, and that the API key never reaches a file, the memo or a message.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::llm_server::{Fault, Server};

pub(crate) const KEY_VAR: &str = "C2S_TEST_LLM_KEY";
pub(crate) const SECRET: &str = "sk-test-SECRET-4f9a1c";

pub(crate) fn corpus(dir: &Path, n: usize) {
    let docs = dir.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let topics = [
        "billing invoices",
        "custom domains",
        "mobile app login",
        "email marketing",
    ];
    for i in 0..n {
        let t = topics[i % topics.len()];
        std::fs::write(
            docs.join(format!("doc-{i:03}.md")),
            format!(
                "# Doc {i} about {t}\n\nHow {t} work, step {i}. More text about {t} for readers.\n"
            ),
        )
        .unwrap();
    }
}

/// Writes c2s.toml for the server; `extra` is appended TOML.
pub(crate) fn config(dir: &Path, llm: &str, extra: &str) {
    std::fs::write(
        dir.join("c2s.toml"),
        format!(
            "[corpus]\npaths = [\"docs\"]\n[output]\ndir = \"out\"\n[tree]\nK = 2\n{llm}\n{extra}\n"
        ),
    )
    .unwrap();
}

pub(crate) fn openai(server: &Server, limits: &str) -> String {
    format!(
        "[llm]\nbackend = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"test-model\"\napi_key_env = \"{KEY_VAR}\"\n[llm.limits]\nbackoff_s = 0.01\nmax_backoff_s = 0.05\n{limits}\n",
        server.url
    )
}

pub(crate) fn build(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_c2s"))
        .arg("build")
        .args(args)
        .current_dir(dir)
        .env(KEY_VAR, SECRET)
        .output()
        .unwrap()
}

pub(crate) fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Memo entries of a stage, and whether any value contains `needle`.
pub(crate) fn memo(dir: &Path, stage: &str, needle: &str) -> (usize, bool) {
    let db = rusqlite::Connection::open(dir.join("cache/c2s.sqlite")).unwrap();
    let mut q = db
        .prepare("SELECT value FROM memo WHERE stage = ?1")
        .unwrap();
    let values: Vec<Vec<u8>> = q
        .query_map([stage], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let hit = values
        .iter()
        .any(|v| String::from_utf8_lossy(v).contains(needle));
    (values.len(), hit)
}

/// No file below `dir` (output, memo, WAL) and no output stream holds the key.
pub(crate) fn assert_no_leak(dir: &Path, outputs: &[&Output]) {
    for o in outputs {
        assert!(
            !String::from_utf8_lossy(&o.stdout).contains(SECRET),
            "key in stdout"
        );
        assert!(!err(o).contains(SECRET), "key in stderr: {}", err(o));
    }
    for f in crate::common::files(dir) {
        let bytes = std::fs::read(dir.join(&f)).unwrap();
        let hit = bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes());
        assert!(!hit, "the API key leaked into {f}");
    }
}

#[test]
fn openai_build_runs_every_stage_and_a_rebuild_calls_nothing() {
    let server = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path(), 4);
    // Frontmatter with title and description: its card needs no model call.
    std::fs::write(
        tmp.path().join("docs/own-card.md"),
        "---\ntitle: Refund policy\ndescription: When and how refunds are issued.\n---\nRefunds are issued within 5 days.\n",
    )
    .unwrap();
    config(
        tmp.path(),
        &openai(&server, ""),
        "[llm.stages.card]\nmodel = \"cheap-model\"\nprice_input_per_mtok = 1.0\nprice_output_per_mtok = 2.0\n",
    );
    let o = build(tmp.path(), &["--json"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(server.count("card"), 4);
    for stage in ["summary", "label", "tags", "repartition"] {
        assert!(server.count(stage) >= 1, "no {stage} request");
    }
    let reqs = server.requests();
    let card = reqs.iter().find(|r| r.stage() == "card").unwrap();
    assert_eq!(card.path, "/v1/chat/completions");
    assert_eq!(
        card.header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );
    assert_eq!(
        card.body["model"], "cheap-model",
        "the card stage's own model"
    );
    let keys: Vec<&String> = card.body.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["model", "max_tokens", "messages", "response_format"],
        "only fields the user set are sent, and the card's JSON schema"
    );
    assert_eq!(card.body["response_format"]["json_schema"]["name"], "card");
    let summary = reqs.iter().find(|r| r.stage() == "summary").unwrap();
    assert_eq!(summary.body["model"], "test-model");
    // Results come from the model: cards, and the scripted labels become folder names.
    let docs = std::fs::read_to_string(tmp.path().join("out/documents.json")).unwrap();
    assert!(
        docs.contains("Model: Doc 0 about billing invoices"),
        "{docs}"
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["llm_usage"]["card"]["calls"], 4);
    assert!(docs.contains("Refund policy"), "{docs}");
    assert!(
        report["llm_usage"]["card"]["input_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(report["llm_usage"]["card"]["cost"].as_f64().unwrap() > 0.0);
    assert!(
        report["llm_usage"]["summary"].get("cost").is_none(),
        "no price, no cost"
    );
    let lock = std::fs::read_to_string(tmp.path().join("out/c2s.lock")).unwrap();
    assert!(
        lock.contains("card@v2:") && lock.contains("cheap-model"),
        "{lock}"
    );
    assert_eq!(
        memo(tmp.path(), "card", "").0,
        5,
        "4 model cards + 1 frontmatter card"
    );
    let before = server.requests().len();
    let again = build(tmp.path(), &[]);
    assert!(again.status.success(), "{}", err(&again));
    assert_eq!(
        server.requests().len(),
        before,
        "a no-op rebuild makes no calls"
    );
    assert_no_leak(tmp.path(), &[&o, &again]);
}

/// One fault on the first card request: the build succeeds with exactly one extra request.
fn fault_case(name: &str, fault: Fault, limits: &str, min_secs: f64) {
    let server = Server::start();
    server.fail("card", vec![fault]);
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path(), 4);
    config(
        tmp.path(),
        &openai(&server, &format!("concurrency = 1\n{limits}")),
        "",
    );
    let t0 = Instant::now();
    let o = build(tmp.path(), &["-q"]);
    assert!(o.status.success(), "{name}: {}", err(&o));
    assert_eq!(server.count("card"), 5, "{name}: 4 cards + 1 retry");
    assert!(
        t0.elapsed().as_secs_f64() >= min_secs,
        "{name}: retried too early"
    );
    let (n, garbage) = memo(tmp.path(), "card", "choices");
    assert_eq!(
        (n, garbage),
        (4, false),
        "{name}: memo holds the 4 good cards only"
    );
    assert_no_leak(tmp.path(), &[&o]);
}

#[test]
fn a_429_with_retry_after_is_retried_after_the_wait() {
    let h = vec![("Retry-After".to_string(), "1".to_string())];
    fault_case(
        "429",
        Fault::Status(429, h, r#"{"error":{"message":"rate limited"}}"#.into()),
        "",
        1.0,
    );
}

#[test]
fn a_500_then_success() {
    fault_case("500", Fault::Status(500, vec![], "oops".into()), "", 0.0);
}

#[test]
fn a_slow_reply_past_the_timeout_is_retried() {
    fault_case(
        "slow",
        Fault::Slow(Duration::from_secs(3)),
        "timeout_s = 0.7",
        0.7,
    );
}

#[test]
fn malformed_json_then_a_valid_answer() {
    fault_case("malformed", Fault::MalformedJson, "", 0.0);
}

#[test]
fn a_truncated_body_is_retried() {
    fault_case("truncated", Fault::Truncated, "", 0.0);
}

#[test]
fn a_connection_reset_is_retried() {
    fault_case("reset", Fault::Reset, "", 0.0);
}

#[test]
fn a_401_fails_at_once_with_the_servers_message_and_no_key() {
    let server = Server::start();
    let msg = format!(r#"{{"error":{{"message":"Incorrect API key provided: {SECRET}"}}}}"#);
    server.fail(
        "card",
        (0..10)
            .map(|_| Fault::Status(401, vec![], msg.clone()))
            .collect(),
    );
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path(), 4);
    config(tmp.path(), &openai(&server, "concurrency = 1"), "");
    let o = build(tmp.path(), &["-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert_eq!(server.count("card"), 1, "no retry on 401");
    let e = err(&o);
    assert!(
        e.contains("HTTP 401")
            && e.contains("Incorrect API key provided")
            && e.contains("api_key_env"),
        "{e}"
    );
    assert!(e.contains("[redacted]"), "{e}");
    assert_eq!(memo(tmp.path(), "card", "").0, 0);
    assert!(
        !tmp.path().join("out").exists(),
        "no output from a failed build"
    );
    assert_no_leak(tmp.path(), &[&o]);
}

/// Rows of the memo's table of rejected answers, by stage.
fn rejected(dir: &Path, stage: &str) -> usize {
    let db = rusqlite::Connection::open(dir.join("cache/c2s.sqlite")).unwrap();
    db.query_row(
        "SELECT COUNT(*) FROM rejected WHERE stage = ?1",
        [stage],
        |r| r.get::<_, i64>(0),
    )
    .unwrap() as usize
}

#[test]
fn unusable_answers_fall_back_and_are_remembered_until_retry_rejected() {
    let server = Server::start();
    server.fail("card", vec![Fault::Garbage, Fault::Garbage]);
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path(), 4);
    config(tmp.path(), &openai(&server, "concurrency = 1"), "");
    let o = build(tmp.path(), &["--json"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(
        server.count("card"),
        5,
        "one stricter second ask, then the fallback"
    );
    let strict = server
        .requests()
        .into_iter()
        .filter(|r| r.stage() == "card")
        .nth(1)
        .unwrap();
    assert!(
        strict.user().contains("could not be used"),
        "{}",
        strict.user()
    );
    let e = err(&o);
    assert!(
        e.contains("doc-000.md") && e.contains("extractive card") && e.contains("--retry-rejected"),
        "{e}"
    );
    // The stand-in is memoized with the reason, beside the three answers.
    assert_eq!(memo(tmp.path(), "card", "").0, 4);
    assert!(!memo(tmp.path(), "card", "not able").1);
    assert_eq!(rejected(tmp.path(), "card"), 1);
    let lock = std::fs::read_to_string(tmp.path().join("out/c2s.lock")).unwrap();
    assert!(lock.contains("\"fallbacks\": 1"), "{lock}");
    // Nothing changed: no call, not even for the rejected card (the model would be asked the
    // same question), and the dry run predicts as much.
    let o = build(tmp.path(), &["-q"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(server.count("card"), 5);
    // A full rebuild reuses the stand-in too, and says so.
    let o = build(tmp.path(), &["--full"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(server.count("card"), 5);
    assert!(
        err(&o).contains("rejected by an earlier build"),
        "{}",
        err(&o)
    );
    // --retry-rejected asks for that card alone, and the dry run says so first.
    let dry = build(tmp.path(), &["--dry-run", "--retry-rejected"]);
    let said = String::from_utf8_lossy(&dry.stdout);
    assert!(said.contains("card: 1 to compute"), "{said}");
    assert_eq!(server.count("card"), 5);
    let o = build(tmp.path(), &["-q", "--retry-rejected"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(server.count("card"), 6);
    assert_eq!(memo(tmp.path(), "card", "").0, 4);
    assert_eq!(rejected(tmp.path(), "card"), 0);
    let lock = std::fs::read_to_string(tmp.path().join("out/c2s.lock")).unwrap();
    assert!(!lock.contains("\"fallbacks\""), "{lock}");
}

#[test]
fn anthropic_messages_api_with_version_header_and_a_529() {
    let server = Server::start();
    server.fail(
        "card",
        vec![Fault::Status(
            529,
            vec![("retry-after-ms".into(), "50".into())],
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.into(),
        )],
    );
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path(), 4);
    let llm = format!(
        "[llm]\nbackend = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"claude-test\"\napi_key_env = \"{KEY_VAR}\"\n[llm.params]\ntemperature = 0.0\n[llm.limits]\nconcurrency = 1\nbackoff_s = 0.01\n",
        server.url
    );
    config(tmp.path(), &llm, "");
    let o = build(tmp.path(), &["-q"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(server.count("card"), 5);
    let r = server
        .requests()
        .into_iter()
        .find(|r| r.stage() == "card")
        .unwrap();
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some(SECRET));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert!(r.header("authorization").is_none());
    assert_eq!(r.body["temperature"], 0.0);
    assert!(r.body["system"].as_str().unwrap().contains("catalog cards"));
    assert_eq!(memo(tmp.path(), "card", "").0, 4);
    assert_no_leak(tmp.path(), &[&o]);
}

#[test]
fn an_interrupted_build_repeats_no_finished_call() {
    let server = Server::start();
    server.set_latency(Duration::from_millis(40));
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path(), 60);
    config(tmp.path(), &openai(&server, "concurrency = 4"), "");
    let mut child = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["build", "-q"])
        .current_dir(tmp.path())
        .env(KEY_VAR, SECRET)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.count("card") < 25 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = memo(tmp.path(), "card", "").0;
    assert!(
        (10..60).contains(&kept),
        "{kept} cards persisted before the kill"
    );
    server.set_latency(Duration::ZERO);
    let first_run = server.count("card");
    let o = build(tmp.path(), &["-q"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(
        server.count("card") - first_run,
        60 - kept,
        "only the unfinished cards are asked again"
    );
    assert_eq!(memo(tmp.path(), "card", "").0, 60);
}

#[test]
fn a_dry_run_calls_no_model_and_estimates_the_cost() {
    let server = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path(), 4);
    config(
        tmp.path(),
        &openai(&server, ""),
        "[llm.stages.card]\nprice_input_per_mtok = 3.0\n",
    );
    let o = build(tmp.path(), &["--dry-run", "--json"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(server.requests().len(), 0);
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["estimate"]["llm_calls"].as_u64().unwrap() >= 4, "{r}");
    assert!(r["estimate"]["cost"].as_f64().unwrap() > 0.0, "{r}");
}

#[test]
fn a_missing_key_names_the_variable() {
    let server = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path(), 2);
    config(tmp.path(), &openai(&server, ""), "");
    let o = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .arg("build")
        .current_dir(tmp.path())
        .env_remove(KEY_VAR)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains(KEY_VAR), "{}", err(&o));
    assert_eq!(server.requests().len(), 0);
}

#[test]
fn openai_embeddings_are_batched_and_retried() {
    let server = Server::start();
    server.fail(
        "embeddings",
        vec![Fault::Status(503, vec![], "busy".into()), Fault::Reset],
    );
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path(), 8);
    let embed = format!(
        "[embed]\nbackend = \"openai\"\n[embed.openai]\nbase_url = \"{}/v1\"\nmodel = \"embed-test\"\nbatch_size = 3\n[embed.openai.limits]\nconcurrency = 1\nbackoff_s = 0.01\n",
        server.url
    );
    config(tmp.path(), "", &embed);
    let o = build(tmp.path(), &["--json"]);
    assert!(o.status.success(), "{}", err(&o));
    let reqs: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.stage() == "embeddings")
        .collect();
    assert!(
        reqs.iter()
            .all(|r| r.body["input"].as_array().unwrap().len() <= 3)
    );
    assert!(
        reqs.iter()
            .all(|r| r.body.get("dimensions").is_none() && r.header("authorization").is_none())
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["stages"]["embed"]["computed"], 8);
    // 8 documents in batches of 3 = 3 requests, plus 2 retried faults, plus re-embedding requests.
    let reembed = report["stages"]["reembed"]["computed"].as_u64().unwrap() as usize;
    assert_eq!(reqs.len(), 3 + 2 + reembed.div_ceil(3));
    assert_eq!(memo(tmp.path(), "embed", "").0, 8);
    let before = server.requests().len();
    let o = build(tmp.path(), &["-q"]);
    assert!(o.status.success());
    assert_eq!(server.requests().len(), before);
}

/// Runs against a real OpenAI-compatible server (e.g. llama.cpp's llama-server) when
/// C2S_TEST_OPENAI_URL is set; C2S_TEST_OPENAI_MODEL names the model.
#[test]
fn real_openai_compatible_server_when_configured() {
    let Ok(url) = std::env::var("C2S_TEST_OPENAI_URL") else {
        eprintln!("note: C2S_TEST_OPENAI_URL is not set; the real-server test does not run");
        return;
    };
    let model = std::env::var("C2S_TEST_OPENAI_MODEL").unwrap_or_else(|_| "local".into());
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path(), 6);
    let llm = format!(
        "[llm]\nbackend = \"openai\"\nbase_url = \"{url}\"\nmodel = \"{model}\"\nmax_output_tokens = 200\n[llm.params]\ntemperature = 0.0\n[llm.limits]\nconcurrency = 2\ntimeout_s = 300\n"
    );
    config(tmp.path(), &llm, "");
    let o = build(tmp.path(), &["--json"]);
    assert!(o.status.success(), "{}", err(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    eprintln!(
        "real server: llm_usage {} warnings {}",
        r["llm_usage"], r["warning_list"]
    );
    assert!(
        r["llm_usage"]["card"]["calls"].as_u64().unwrap() >= 6,
        "{r}"
    );
    let tree = crate::common::read_tree(&tmp.path().join("out"));
    assert_eq!(tree.doc_ids.len(), 6);
}
