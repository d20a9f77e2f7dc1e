//! The guided walk for small models against a scripted OpenAI-compatible server that refuses a
//! guided request without an enum schema and (where set) one longer than its context, as
//! llama.cpp does: a walk down two levels, a backtrack after "not here", a choice outside the
//! menu asked again once, the step cap, a citation of a document not shown refused, and
//! `c2s eval --methods guided` stopping at its time budget and resuming from the memo.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::build_example;
use crate::llm_server::{Server, guided_keys};
use crate::serve::{ask, ask_question, oa_text};

/// `c2s ask` on the example output, guided; stdout and the trace.
fn guided_ask(out: &Path, server: &Server, extra: &[&str], trace: &Path) -> (String, Value) {
    let mut sets = vec!["agent.protocol=\"guided\""];
    sets.extend_from_slice(extra);
    let o = ask(out, server, "openai", &sets, trace);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t: Value = serde_json::from_slice(&std::fs::read(trace).unwrap()).unwrap();
    (String::from_utf8_lossy(&o.stdout).into_owned(), t)
}

fn kinds(t: &Value) -> Vec<String> {
    t["trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect()
}

/// A scripted reply: the JSON object as the message's text.
fn reply(v: Value) -> Value {
    oa_text(&v.to_string())
}

fn pick(key: &str) -> Value {
    reply(json!({"reason": "test", "pick": [key]}))
}

/// The example built into a temporary folder, and a loopback server.
fn example() -> (tempfile::TempDir, PathBuf, Server) {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    (tmp, out, Server::start())
}

#[test]
fn a_small_local_model_walks_two_levels_by_menus_and_answers_from_what_it_opened() {
    let (tmp, out, server) = example();
    // Every prompt fits a small model's context.
    server.set_context(2048);
    let trace = tmp.path().join("t.json");
    // No protocol set: a model named as small on a loopback server is guided by default.
    let o = ask(
        &out,
        &server,
        "openai",
        &["llm.model=\"qwen2.5-coder-0.5b-instruct\""],
        &trace,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t: Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    assert_eq!(t["protocol"], "guided", "{t}");
    assert_eq!(t["stopped"], "answered", "{t}");
    let k = kinds(&t);
    let menus = k.iter().filter(|k| *k == "menu").count();
    assert!(menus >= 2, "a menu per level: {k:?}");
    assert!(k.contains(&"open".to_string()) && k.contains(&"documents".to_string()));
    assert_eq!(k.iter().filter(|k| *k == "answer").count(), 1, "{k:?}");
    // Each menu is in the trace, and each request's choices were the menu's keys.
    let first_menu = t["trace"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "menu")
        .unwrap();
    assert!(
        first_menu["text"]
            .as_str()
            .unwrap()
            .starts_with("Top-level skills")
    );
    for r in server.requests() {
        assert!(r.stage().starts_with("guided"), "{}", r.stage());
        assert!(!guided_keys(&r.body).is_empty());
        assert!(guided_keys(&r.body).len() <= 12, "a menu is cut to a dozen");
    }
    let cited: Vec<&str> = t["cited"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let fetched = t["fetched"].as_array().unwrap();
    assert!(!cited.is_empty() && cited.iter().all(|c| fetched.iter().any(|f| f == c)));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(&format!("[{}]", cited[0])),
        "the key is rewritten to the id: {stdout}"
    );
    assert!(stdout.contains("sources:"), "{stdout}");
    // Tokens are counted by part of the prompt.
    for part in ["system", "question", "menus", "documents", "format"] {
        assert!(t["prompt_parts"][part].as_u64().unwrap() > 0, "{part}: {t}");
    }
}

#[test]
fn a_menu_of_groups_is_not_asked_where_the_navigators_best_documents_agree() {
    let (tmp, out, server) = example();
    let trace = tmp.path().join("t.json");
    let o = ask_question(
        &out,
        &server,
        "openai",
        "How do I back up and migrate my Postgres and Redis databases?",
        &["agent.protocol=\"guided\""],
        &trace,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t: Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let k = kinds(&t);
    let decisive = t["trace"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "decisive")
        .unwrap_or_else(|| panic!("the top-level menu is decisive: {k:?}"));
    assert_eq!(decisive["args"], json!(["skill-02-db"]), "{decisive}");
    assert!(
        decisive["text"]
            .as_str()
            .unwrap()
            .starts_with("Top-level skills")
    );
    // The top-level menu never went to the model: its first request is the group's menu.
    let requests = server.requests();
    assert!(!requests.is_empty());
    for r in &requests {
        assert!(
            !r.body.to_string().contains("Top-level skills"),
            "{}",
            r.body
        );
    }
    assert_eq!(t["turns"].as_u64().unwrap() as usize, requests.len());
    assert_eq!(t["stopped"], "answered", "{t}");
    assert!(!t["fetched"].as_array().unwrap().is_empty(), "{t}");
}

#[test]
fn not_here_backs_the_walk_up_to_the_next_choice() {
    let (tmp, out, server) = example();
    server.script(
        "guided_answer",
        vec![reply(json!({"reason": "These are about something else.", "verdict": "unrelated", "answer": "", "cite": []}))],
    );
    let trace = tmp.path().join("t.json");
    let (_, t) = guided_ask(&out, &server, &[], &trace);
    let k = kinds(&t);
    let not_here = k
        .iter()
        .position(|k| k == "not_here")
        .expect("a not-here step");
    assert!(
        k[not_here..].contains(&"open".to_string()),
        "the walk opened other documents after backing up: {k:?}"
    );
    assert_eq!(t["stopped"], "answered", "{t}");
    // The documents of the first try are not offered again, so the answer cites later ones.
    let opens: Vec<&Value> = t["trace"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "open")
        .collect();
    let first: Vec<&Value> = opens[0]["args"]["ids"].as_array().unwrap().iter().collect();
    for c in t["cited"].as_array().unwrap() {
        assert!(!first.contains(&c), "{c} was shown in the first try");
    }
}

#[test]
fn a_choice_outside_the_menu_is_asked_again_once() {
    let (tmp, out, server) = example();
    server.script("guided", vec![pick("no-such-skill")]);
    let trace = tmp.path().join("t.json");
    let (_, t) = guided_ask(&out, &server, &[], &trace);
    let k = kinds(&t);
    assert_eq!(k.iter().filter(|k| *k == "retry").count(), 1, "{k:?}");
    assert!(!k.contains(&"fallback".to_string()));
    let second = &server.requests()[1];
    assert!(
        second
            .user()
            .contains("no-such-skill is not a key of the menu"),
        "{}",
        second.user()
    );
    assert_eq!(t["stopped"], "answered");
    // Wrong twice: the navigator's first option stands in and the walk goes on.
    let server = Server::start();
    server.script("guided", vec![pick("nope"), pick("still-nope")]);
    let (_, t) = guided_ask(&out, &server, &[], &trace);
    assert!(kinds(&t).contains(&"fallback".to_string()));
    assert_eq!(t["stopped"], "answered");
}

#[test]
fn the_walk_stops_at_the_step_cap() {
    let (tmp, out, server) = example();
    let not_here = reply(json!({"reason": "no", "verdict": "unrelated", "answer": "", "cite": []}));
    server.script("guided_answer", vec![not_here; 20]);
    let trace = tmp.path().join("t.json");
    let (stdout, t) = guided_ask(&out, &server, &["agent.max_turns=4"], &trace);
    assert_eq!(t["stopped"], "budget", "{t}");
    assert_eq!(t["turns"], 4);
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    // The last call is kept for an answer that has no "not here" to choose.
    assert!(is_last(&requests[3].body), "{}", requests[3].user());
    assert!(requests[..3].iter().all(|r| !is_last(&r.body)));
    assert!(
        stdout.starts_with("No answer: the agent used its 4 model calls"),
        "{stdout}"
    );
}

/// Whether a request is a walk's last answer: documents and a schema without a verdict.
fn is_last(body: &Value) -> bool {
    let p = &body["response_format"]["json_schema"]["schema"]["properties"];
    p["cite"].is_object() && p["verdict"].is_null()
}

/// The document ids each `open` of a trace showed.
fn opened(t: &Value) -> Vec<Vec<String>> {
    t["trace"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "open")
        .map(|e| {
            let ids = e["args"]["ids"].as_array().unwrap();
            ids.iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn after_two_misses_the_walk_answers_from_the_best_documents_it_was_shown() {
    let (tmp, out, server) = example();
    let unrelated =
        reply(json!({"reason": "no", "verdict": "unrelated", "answer": "", "cite": []}));
    server.script("guided_answer", vec![unrelated; 2]);
    let trace = tmp.path().join("t.json");
    let (_, t) = guided_ask(&out, &server, &[], &trace);
    let k = kinds(&t);
    assert_eq!(k.iter().filter(|k| *k == "not_here").count(), 2, "{k:?}");
    let last = k.iter().position(|k| k == "last").expect("a last answer");
    assert!(
        k[..last].iter().filter(|k| *k == "backtrack").count() == 1,
        "{k:?}"
    );
    assert_eq!(t["stopped"], "answered", "{t}");
    assert!(t["turns"].as_u64().unwrap() < 10, "it stopped looking: {t}");
    // The last answer is shown only documents shown before, and cites one of them.
    let opens = opened(&t);
    let (last_docs, before) = opens.split_last().unwrap();
    assert!(!last_docs.is_empty() && last_docs.len() <= 3);
    assert!(
        last_docs
            .iter()
            .all(|d| before.iter().flatten().any(|b| b == d))
    );
    let cited = t["cited"][0].as_str().unwrap();
    assert!(last_docs.iter().any(|d| d == cited), "{t}");
    assert!(is_last(&server.requests().last().unwrap().body));
}

#[test]
fn the_navigators_best_document_is_shown_beside_the_models_picks() {
    let (tmp, out, server) = example();
    let trace = tmp.path().join("t.json");
    // The first menu's keys, from a walk that follows the navigator.
    guided_ask(&out, &server, &[], &trace);
    let keys = guided_keys(&server.requests()[0].body);
    let billing = keys
        .iter()
        .find(|k| k.contains("billing"))
        .unwrap_or_else(|| panic!("a billing skill among {keys:?}"));
    // The model picks billing for a question about deploying.
    let server = Server::start();
    server.script("guided", vec![pick(billing)]);
    let (_, t) = guided_ask(&out, &server, &[], &trace);
    let entries = t["trace"].as_array().unwrap();
    let s = entries
        .iter()
        .find(|e| e["kind"] == "suggest")
        .unwrap_or_else(|| panic!("a suggestion: {t}"));
    assert!(s["text"].as_str().unwrap().contains("deploy/"), "{s}");
    let id = s["args"]["id"].as_str().unwrap();
    // It is shown with the picks, in the same request, under a key the answer may cite.
    let opens = opened(&t);
    assert!(
        opens[0].len() >= 2 && opens[0].iter().any(|d| d == id),
        "{t}"
    );
    let answer = server
        .requests()
        .into_iter()
        .find(|r| r.stage() == "guided_answer")
        .unwrap();
    assert_eq!(guided_keys(&answer.body).len(), opens[0].len());
    assert!(
        answer.user().matches("<document key=").count() == opens[0].len(),
        "{}",
        answer.user()
    );
}

#[test]
fn an_answer_citing_a_document_it_was_not_shown_is_refused() {
    let (tmp, out, server) = example();
    server.script(
        "guided_answer",
        vec![reply(json!({"reason": "r", "verdict": "answers", "answer": "Deploy it [doc-9].", "cite": ["doc-9"]}))],
    );
    let trace = tmp.path().join("t.json");
    let (_, t) = guided_ask(&out, &server, &[], &trace);
    assert!(kinds(&t).contains(&"citation".to_string()), "{t}");
    let answers: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.stage() == "guided_answer")
        .collect();
    assert!(
        answers[1]
            .user()
            .contains("You cited doc-9, which you were not shown")
    );
    assert_eq!(t["stopped"], "answered");
    assert!(!t["answer"].as_str().unwrap().contains("doc-9"));
}

fn dataset(dir: &Path, n: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let corpus: String = (0..n)
        .map(|i| json!({"id": format!("d{i}"), "title": format!("Topic {i}"), "text": format!("Topic {i} explains feature {i} in detail.")}).to_string() + "\n")
        .collect();
    std::fs::write(dir.join("corpus.jsonl"), corpus).unwrap();
    let queries: String = (0..n)
        .map(|i| json!({"id": format!("q{i}"), "question": format!("What does topic {i} explain?"), "answer": format!("feature {i}"), "gold_ids": [format!("d{i}")]}).to_string() + "\n")
        .collect();
    std::fs::write(dir.join("queries.jsonl"), queries).unwrap();
}

/// `c2s eval --methods rag,guided` on the dataset, with a memo of its own; the report and stderr.
fn eval(tmp: &Path, server: &Server, extra: &[&str]) -> (Value, String) {
    let json_out = tmp.join("eval.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_c2s"));
    cmd.args(["eval", "--data", tmp.join("data").to_str().unwrap()])
        .args(["--methods", "rag,guided"])
        .args(["--json", json_out.to_str().unwrap()])
        .args(["--out", tmp.join("tree").to_str().unwrap()])
        .args(extra)
        .current_dir(tmp);
    for s in [
        "llm.backend=\"openai\"".to_string(),
        format!("llm.base_url=\"{}/v1\"", server.url),
        "llm.model=\"m\"".into(),
        "llm.limits.concurrency=1".into(),
        format!(
            "cache.path={:?}",
            tmp.join("memo.sqlite").display().to_string()
        ),
    ] {
        cmd.args(["--set", &s]);
    }
    let o = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{stderr}");
    (
        serde_json::from_slice(&std::fs::read(json_out).unwrap()).unwrap(),
        stderr,
    )
}

#[test]
fn eval_stops_at_its_time_budget_and_goes_on_from_the_memo() {
    let tmp = tempfile::tempdir().unwrap();
    dataset(&tmp.path().join("data"), 4);
    let server = Server::start();
    server.set_latency(Duration::from_millis(400));
    // 0.6 s: the first question (a rag call and a guided walk, 400 ms a call) outlasts it.
    let (r, stderr) = eval(tmp.path(), &server, &["--max-minutes", "0.01"]);
    assert!(
        stderr.contains("questions answered by every method"),
        "{stderr}"
    );
    let first = r["summaries"]["guided"]["queries"].as_u64().unwrap();
    assert!((1..4).contains(&first), "{first} of 4 within the budget");
    assert_eq!(r["summaries"]["rag"]["queries"].as_u64().unwrap(), first);
    let asked: Vec<String> = server.requests().iter().map(|q| q.user()).collect();
    // Again without a budget: the answered questions are replayed, the rest asked.
    server.set_latency(Duration::ZERO);
    let before = server.requests().len();
    let (r, _) = eval(tmp.path(), &server, &[]);
    assert_eq!(r["summaries"]["guided"]["queries"], 4);
    let again: Vec<String> = server.requests()[before..]
        .iter()
        .map(|q| q.user())
        .collect();
    for q in &asked {
        assert!(!again.contains(q), "asked twice: {q}");
    }
    let guided: Vec<&Value> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["method"] == "guided")
        .collect();
    assert!(
        guided.iter().all(|x| x["stopped"] == "answered"),
        "{guided:?}"
    );
    assert!(
        r["answer_comparisons"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k.starts_with("guided vs rag"))
    );
}

#[test]
fn the_small_model_bench_script_runs_every_answering_method() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("tiny-set");
    dataset(&data, 3);
    let server = Server::start();
    // The guide's command, on a set of three questions and against the loopback server.
    let block = crate::common::doc_block("evaluation.md", "With a small local model:", "sh");
    let line = block
        .lines()
        .find(|l| l.starts_with("scripts/bench-small-models.sh"))
        .unwrap();
    let args: Vec<&str> = line
        .split(" #")
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(args[1..], ["0.5b", "20", "60"], "{line}");
    let o = Command::new(crate::common::repo().join(args[0]))
        .args(&args[1..])
        .arg(&data)
        .env("C2S_BIN", env!("CARGO_BIN_EXE_c2s"))
        .env("BENCH_BASE_URL", format!("{}/v1", server.url))
        .env("BENCH_RESULTS", tmp.path())
        .env("BENCH_CACHE", tmp.path().join("cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let file = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("tiny-set-qwen2.5-coder-0.5b-") && n.ends_with(".json")
        })
        .unwrap_or_else(|| panic!("no results file: {stdout}"));
    let r: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    for m in ["rag", "agentic-search", "agent", "guided"] {
        assert_eq!(r["summaries"][m]["queries"], 3, "{m}");
    }
    assert_eq!(r["model"], "openai:qwen2.5-coder-0.5b-instruct-q4_k_m");
    assert!(stdout.contains("| guided | 3 |"), "{stdout}");
}
