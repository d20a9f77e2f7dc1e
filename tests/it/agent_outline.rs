//! The agent as a small local model needs it (a scripted OpenAI-compatible server): it starts
//! from an outline of the tree in its system prompt, names documents by title, opens several at
//! once, and has its answer composed from the documents it cites in a prompt of their own (the
//! prompt `rag` answers with), checked like any answer.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::build_example;
use crate::llm_server::Server;
use crate::serve::{ask, oa_text, tool_sequence};

fn act(v: Value) -> Value {
    oa_text(&v.to_string())
}

/// `c2s ask` with the JSON protocol and `extra` settings; the trace and stdout.
fn ask_json(out: &Path, server: &Server, extra: &[&str], trace: &Path) -> (String, Value) {
    let mut sets = vec!["agent.protocol=\"json\""];
    sets.extend_from_slice(extra);
    let o = ask(out, server, "openai", &sets, trace);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, t) = tool_sequence(trace);
    (String::from_utf8_lossy(&o.stdout).into_owned(), t)
}

/// `(id, title)` of every document, in id order.
fn documents(out: &Path) -> Vec<(String, String)> {
    let docs: Value =
        serde_json::from_slice(&std::fs::read(out.join("documents.json")).unwrap()).unwrap();
    docs.as_object()
        .unwrap()
        .iter()
        .map(|(id, d)| (id.clone(), d["title"].as_str().unwrap().to_string()))
        .collect()
}

/// The first two documents whose titles no other document has.
fn two_titled(out: &Path) -> [(String, String); 2] {
    let docs = documents(out);
    let unique: Vec<(String, String)> = docs
        .iter()
        .filter(|(_, t)| docs.iter().filter(|(_, u)| u == t).count() == 1)
        .cloned()
        .collect();
    [unique[0].clone(), unique[1].clone()]
}

#[test]
fn the_agent_starts_from_an_outline_that_fits_its_budget() {
    let tmp = tempfile::tempdir().unwrap();
    // Skills with groups below them: the clustered tree of two levels.
    let (out, _) =
        crate::common::build_example_with(tmp.path(), &["tree.structure=cluster", "K=4"]);
    let [(_, title), _] = two_titled(&out);
    let server = Server::start();
    let trace = tmp.path().join("t.json");
    // The default budget (half of no context limit: 4,000 tokens) holds the example's documents.
    ask_json(&out, &server, &["agent.max_turns=1"], &trace);
    let first = &server.requests()[0];
    let s = first.system();
    assert!(
        s.contains("Outline of the tree (each skill, then its groups and their documents):"),
        "{s}"
    );
    assert!(s.contains(&format!("- document: {title}\n")), "{s}");
    assert!(
        s.contains("/INDEX.md — "),
        "groups are shown with their counts: {s}"
    );
    // The question is the first user message, after the outline (a prompt cache keeps the rest).
    assert_eq!(first.user(), "Question: How do I deploy?\n");
    // The trace holds what the model was told.
    let t: Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    assert_eq!(t["system"].as_str().unwrap(), s);
    // A small budget: the skills alone, in full.
    let small = Server::start();
    ask_json(
        &out,
        &small,
        &["agent.max_turns=1", "agent.outline_tokens=0"],
        &trace,
    );
    let s = small.requests()[0].system();
    assert!(s.contains("Top-level skills (folders under skills/"), "{s}");
    assert!(
        !s.contains("- document: ") && !s.contains("/INDEX.md"),
        "{s}"
    );
    // Documents the outline shows can be opened by title from the first turn.
    let schema = small.requests()[0].body["response_format"]["json_schema"]["schema"].to_string();
    assert!(!schema.contains(&title), "not shown, not offered");
    let schema = server.requests()[0].body["response_format"]["json_schema"]["schema"].to_string();
    assert!(schema.contains(&title), "{schema}");
}

#[test]
fn documents_opened_by_title_several_at_once_answer_through_the_composed_prompt() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let [(a, title_a), (b, title_b)] = two_titled(&out);
    let server = Server::start();
    server.script(
        "agent",
        vec![
            act(json!({"action": "get_document", "arg": [title_a, title_b]})),
            act(json!({"action": "answer", "cite": [title_b]})),
        ],
    );
    let b_text = std::fs::read_to_string(out.join(documents_file(&out, &b))).unwrap();
    // An answer made of the cited document's own words.
    let words: Vec<&str> = body_words(&b_text);
    let answer = format!("{} [{b}]", words.join(" "));
    server.script(
        "rag",
        vec![oa_text(&json!({"answer": answer, "cite": [b]}).to_string())],
    );
    let trace = tmp.path().join("t.json");
    let (stdout, t) = ask_json(&out, &server, &[], &trace);
    assert_eq!(t["fetched"], json!([a, b]), "{t}");
    assert_eq!(
        (t["stopped"].as_str(), &t["cited"]),
        (Some("answered"), &json!([b])),
        "{t}"
    );
    assert!(stdout.starts_with(&words.join(" ")), "{stdout}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "two browsing turns and the composed answer");
    // The answer action names documents only; the composed prompt holds the cited one alone.
    let answer_branch = reqs[1].body["response_format"]["json_schema"]["schema"]["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"]["action"]["enum"][0] == "answer")
        .unwrap()
        .clone();
    assert!(answer_branch["properties"].get("answer").is_none());
    assert_eq!(
        answer_branch["properties"]["cite"]["items"]["enum"],
        json!([title_a, title_b])
    );
    let compose = &reqs[2];
    assert_eq!(compose.stage(), "rag");
    // The prompt keys its one document `doc-1` (a short key a small model copies), titled.
    assert!(
        compose
            .user()
            .contains(&format!("<document key=\"doc-1\" title=\"{title_b}\"")),
        "{}",
        compose.user()
    );
    assert!(!compose.user().contains(&format!("title=\"{title_a}\"")));
    assert_eq!(
        compose.body["response_format"]["json_schema"]["schema"]["properties"]["cite"]["items"]["enum"],
        json!(["doc-1"])
    );
    let kinds: Vec<&str> = t["trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"compose"), "{kinds:?}");
}

#[test]
fn a_composed_answer_its_documents_do_not_hold_is_not_given() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let [(a, title_a), _] = two_titled(&out);
    let server = Server::start();
    server.script(
        "agent",
        vec![
            act(json!({"action": "get_document", "arg": [title_a]})),
            act(json!({"action": "answer", "cite": [title_a]})),
        ],
    );
    let made_up =
        "Quantum flux capacitors recalibrate zebra telemetry nightly across orbital warehouses.";
    server.script(
        "rag",
        vec![oa_text(
            &json!({"answer": format!("{made_up} [{a}]"), "cite": [a]}).to_string(),
        )],
    );
    let trace = tmp.path().join("t.json");
    let (stdout, t) = ask_json(&out, &server, &[], &trace);
    assert_eq!(t["stopped"], "ungrounded", "{t}");
    assert!(stdout.starts_with("No grounded answer"), "{stdout}");
    assert!(!stdout.contains("Quantum"), "{stdout}");
    assert!(t["unverified"].as_str().unwrap().contains("Quantum"));
    assert_eq!(
        server.count("rag"),
        1,
        "a composed answer is not asked again"
    );
}

#[test]
fn the_last_turn_composes_from_what_was_opened_without_asking_the_browsing_model() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let [(a, title_a), _] = two_titled(&out);
    let server = Server::start();
    server.script(
        "agent",
        vec![act(json!({"action": "get_document", "arg": [title_a]}))],
    );
    let a_text = std::fs::read_to_string(out.join(documents_file(&out, &a))).unwrap();
    let answer = body_words(&a_text).join(" ");
    server.script(
        "rag",
        vec![oa_text(&json!({"answer": answer, "cite": []}).to_string())],
    );
    let trace = tmp.path().join("t.json");
    let (_, t) = ask_json(&out, &server, &["agent.max_turns=2"], &trace);
    assert_eq!(server.count("agent"), 1, "turn 2 is the composed answer");
    assert_eq!(server.count("rag"), 1);
    // It cited nothing, but the one document it was given holds what it says.
    assert_eq!(
        (
            t["stopped"].as_str(),
            &t["cited"],
            t["attributed"].as_bool()
        ),
        (Some("answered"), &json!([a]), Some(true)),
        "{t}"
    );
    // Inline answers (the setting) keep the old last turn: the browsing model answers.
    let inline = Server::start();
    inline.script(
        "agent",
        vec![act(json!({"action": "get_document", "arg": [title_a]}))],
    );
    ask_json(
        &out,
        &inline,
        &["agent.max_turns=2", "agent.answer=\"inline\""],
        &trace,
    );
    assert_eq!((inline.count("agent"), inline.count("rag")), (2, 0));
}

/// The file of a document (`documents.json` `file`), from the output root.
fn documents_file(out: &Path, id: &str) -> String {
    let docs: Value =
        serde_json::from_slice(&std::fs::read(out.join("documents.json")).unwrap()).unwrap();
    docs[id]["file"].as_str().unwrap().to_string()
}

/// Twelve words of a document file's body (after its frontmatter and title).
fn body_words(text: &str) -> Vec<&str> {
    let body = text.rsplit("\n---\n").next().unwrap_or(text);
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .flat_map(|l| l.split_whitespace())
        .filter(|w| w.chars().all(|c| c.is_alphanumeric()))
        .take(12)
        .collect()
}
