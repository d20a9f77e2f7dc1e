//! The agent loop against what small local models really send (a scripted OpenAI-compatible
//! server): tool calls written as text (bare, fenced, tagged) run the tool, the JSON action
//! protocol answers a two-step question under its schema, an answer citing an unopened document
//! is refused, and `c2s eval` scores `rag`, `agentic-search` and `agent` alike, resumably.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::build_example;
use crate::llm_server::Server;
use crate::serve::{ask, first_doc, first_skill, oa_text, oa_tools, tool_sequence};

/// Runs `c2s ask` and returns the trace.
fn ask_trace(out: &Path, server: &Server, extra: &[&str], trace: &Path) -> (String, Value) {
    let o = ask(out, server, "openai", extra, trace);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, t) = tool_sequence(trace);
    (String::from_utf8_lossy(&o.stdout).into_owned(), t)
}

#[test]
fn tool_calls_written_as_text_run_the_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let id = first_doc(&out);
    let call = json!({"name": "get_document", "arguments": {"id": id}}).to_string();
    for (shape, text) in [
        ("bare", call.clone()),
        ("fenced", format!("I will open it.\n```json\n{call}\n```")),
        ("tagged", format!("<tool_call>\n{call}\n</tool_call>")),
    ] {
        let server = Server::start();
        server.script(
            "agent",
            vec![
                oa_text(&text),
                oa_text(&format!("Deploy with the CLI [{id}].")),
            ],
        );
        let trace = tmp.path().join(format!("{shape}.json"));
        let (stdout, t) = ask_trace(&out, &server, &["agent.protocol=\"tools\""], &trace);
        assert_eq!(t["fetched"], json!([id]), "{shape}: {t}");
        assert_eq!(t["stopped"], "answered", "{shape}");
        assert!(
            stdout.starts_with("Deploy with the CLI"),
            "{shape}: {stdout}"
        );
        // The call came as text, so its result goes back as text (no tool_call_id to answer).
        let second = &server.requests()[1];
        let last = second.body["messages"].as_array().unwrap().last().unwrap();
        assert_eq!(last["role"], "user", "{shape}");
        assert!(
            last["content"]
                .as_str()
                .unwrap()
                .contains(&format!("id: {id}")),
            "{shape}"
        );
    }
}

#[test]
fn auto_switches_to_the_json_protocol_after_a_call_written_as_text() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let id = first_doc(&out);
    let server = Server::start();
    let call = json!({"name": "get_document", "arguments": {"id": id}}).to_string();
    let answer =
        json!({"action": "answer", "answer": format!("Use the CLI [{id}]."), "cite": [id]});
    server.script("agent", vec![oa_text(&call), oa_text(&answer.to_string())]);
    let trace = tmp.path().join("t.json");
    let (_, t) = ask_trace(&out, &server, &["agent.answer=\"inline\""], &trace);
    assert_eq!(
        (t["stopped"].as_str(), t["protocol"].as_str()),
        (Some("answered"), Some("json"))
    );
    let reqs = server.requests();
    assert!(reqs[0].body.get("tools").is_some() && reqs[0].body.get("response_format").is_none());
    assert!(
        reqs[1].body.get("tools").is_none(),
        "the JSON protocol sends no tools"
    );
    assert_eq!(reqs[1].body["response_format"]["type"], "json_schema");
}

/// The actions a JSON-protocol request's schema allows.
fn allowed(req: &Value) -> Vec<String> {
    req["response_format"]["json_schema"]["schema"]["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            b["properties"]["action"]["enum"][0]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn the_json_action_protocol_answers_a_two_step_question() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let skill = first_skill(&out);
    let server = Server::start();
    // Step 1 reads the skill; step 2 opens a document that it lists; then the answer.
    let skill_md =
        std::fs::read_to_string(out.join("skills").join(&skill).join("SKILL.md")).unwrap();
    let name = skill_md
        .split("docs/")
        .nth(1)
        .and_then(|r| r.split(".md").next())
        .unwrap()
        .to_string();
    // The file is named after its source; its id is in documents.json (and its frontmatter).
    let listed = crate::common::doc_files(&out)
        .into_iter()
        .find(|(_, f)| {
            f.starts_with(&format!("skills/{skill}/")) && f.ends_with(&format!("/docs/{name}.md"))
        })
        .unwrap()
        .0;
    let act = |v: Value| oa_text(&v.to_string());
    server.script(
        "agent",
        vec![
            act(json!({"action": "cat", "arg": format!("skills/{skill}/SKILL.md")})),
            act(json!({"action": "get_document", "arg": listed})),
            act(json!({"action": "answer", "answer": format!("It is explained here [{listed}]."), "cite": [listed]})),
        ],
    );
    let trace = tmp.path().join("t.json");
    // The skills alone to start from (no outline below them), and the answer written inline.
    let sets = [
        "agent.protocol=\"json\"",
        "agent.outline_tokens=0",
        "agent.answer=\"inline\"",
    ];
    let (stdout, t) = ask_trace(&out, &server, &sets, &trace);
    assert_eq!(t["stopped"], "answered", "{t}");
    assert_eq!(t["cited"], json!([listed]));
    assert!(stdout.contains(&format!("`{listed}` ")), "{stdout}");
    let reqs: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[0].get("tools").is_none());
    // Nothing open yet: no answer; no id seen yet: no get_document; ls is left to cat.
    assert_eq!(allowed(&reqs[0]), ["cat", "grep", "search"]);
    // After the skill: its documents can be opened, but the skill is not read twice.
    assert!(allowed(&reqs[1]).contains(&"get_document".to_string()));
    let cat = &reqs[1]["response_format"]["json_schema"]["schema"]["anyOf"][0];
    let files: Vec<&str> = cat["properties"]["arg"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        !files.contains(&format!("skills/{skill}/SKILL.md").as_str()),
        "{files:?}"
    );
    assert!(
        files
            .iter()
            .any(|f| f.starts_with(&format!("skills/{skill}/")))
    );
    // A document is open: the answer may cite it, and only it.
    let branches = reqs[2]["response_format"]["json_schema"]["schema"]["anyOf"]
        .as_array()
        .unwrap();
    let answer = branches.last().unwrap();
    // By its title, which no other document of the example has.
    let docs: Value =
        serde_json::from_slice(&std::fs::read(out.join("documents.json")).unwrap()).unwrap();
    assert_eq!(
        answer["properties"]["cite"]["items"]["enum"],
        json!([docs[&listed]["title"]])
    );
    // Results come back as text, marked as tool results.
    let last = reqs[1]["messages"].as_array().unwrap().last().unwrap();
    assert!(last["content"].as_str().unwrap().contains("<tool_result>"));
}

#[test]
fn an_answer_citing_an_unopened_document_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let docs: Value =
        serde_json::from_slice(&std::fs::read(out.join("documents.json")).unwrap()).unwrap();
    let ids: Vec<&String> = docs.as_object().unwrap().keys().collect();
    let (opened, other) = (ids[0].clone(), ids[1].clone());
    // Cites a document it never opened, is told so, then cites the opened one.
    let server = Server::start();
    server.script(
        "agent",
        vec![
            oa_tools(&[("get_document", json!({"id": opened}))]),
            oa_text(&format!("Use the CLI [{other}].")),
            oa_text(&format!("Use the CLI [{opened}].")),
        ],
    );
    let trace = tmp.path().join("t.json");
    let (_, t) = ask_trace(&out, &server, &[], &trace);
    assert_eq!(
        (t["stopped"].as_str(), &t["cited"]),
        (Some("answered"), &json!([opened]))
    );
    let note = server.requests()[2].body.to_string();
    assert!(
        note.contains(&format!("cites {other}, which you have not opened")),
        "{note}"
    );
    // Persisting: the answer is not shown as one.
    let server = Server::start();
    server.script(
        "agent",
        vec![
            oa_tools(&[("get_document", json!({"id": opened}))]),
            oa_text(&format!("Use the CLI [{other}].")),
            oa_text(&format!("Really, use the CLI [{other}].")),
            oa_text(&format!("Still [{other}].")),
        ],
    );
    let (stdout, t) = ask_trace(&out, &server, &["agent.protocol=\"tools\""], &trace);
    assert_eq!(t["stopped"], "ungrounded", "{t}");
    assert!(stdout.starts_with("No grounded answer"), "{stdout}");
    assert!(!stdout.contains("use the CLI"), "{stdout}");
    assert!(t["unverified"].as_str().unwrap().contains(&other));
}

fn dataset(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let corpus: String = (0..6)
        .map(|i| json!({"id": format!("d{i}"), "title": format!("Topic {i}"), "text": format!("Topic {i} explains feature {i} in detail.")}).to_string() + "\n")
        .collect();
    std::fs::write(dir.join("corpus.jsonl"), corpus).unwrap();
    std::fs::write(
        dir.join("queries.jsonl"),
        json!({"id": "q1", "question": "What does topic 2 explain?", "answer": "feature 2", "gold_ids": ["d2"]}).to_string() + "\n",
    )
    .unwrap();
}

fn eval(tmp: &Path, server: &Server, extra: &[&str]) -> (String, Value) {
    let json_out = tmp.join("eval.json");
    let mut sets: Vec<String> = vec![
        "llm.backend=\"openai\"".into(),
        format!("llm.base_url=\"{}/v1\"", server.url),
        "llm.model=\"m\"".into(),
        format!(
            "cache.path={:?}",
            tmp.join("memo.sqlite").display().to_string()
        ),
    ];
    sets.extend(extra.iter().map(|s| s.to_string()));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_c2s"));
    cmd.args(["eval", "--data", tmp.join("data").to_str().unwrap()])
        .args(["--methods", "rag,agentic-search,agent,bm25", "--judge"])
        .args(["--json", json_out.to_str().unwrap()])
        .args(["--out", tmp.join("tree").to_str().unwrap()])
        .current_dir(tmp);
    for s in &sets {
        cmd.args(["--set", s]);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = serde_json::from_slice(&std::fs::read(json_out).unwrap()).unwrap();
    (String::from_utf8_lossy(&o.stdout).into_owned(), r)
}

#[test]
fn eval_scores_rag_agentic_search_and_the_agent_alike_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    dataset(&tmp.path().join("data"));
    let server = Server::start();
    server.script(
        "rag",
        vec![oa_text(
            &json!({"answer": "It explains feature 2 [d2].", "cite": ["d2"]}).to_string(),
        )],
    );
    server.script(
        "search_agent",
        vec![
            oa_tools(&[("search", json!({"query": "topic 2"}))]),
            oa_tools(&[("get_document", json!({"id": "d2"}))]),
            oa_text("Feature 2 [d2]."),
        ],
    );
    server.script(
        "agent",
        vec![
            oa_tools(&[("get_document", json!({"id": "d2"}))]),
            oa_text("It explains feature 2 [d2]."),
        ],
    );
    let grade = json!({"correct": 1, "context_recall": 1, "faithful": true}).to_string();
    server.script("judge", (0..3).map(|_| oa_text(&grade)).collect());
    let (stdout, r) = eval(tmp.path(), &server, &[]);
    for m in ["rag", "agentic-search", "agent"] {
        assert!(stdout.contains(&format!("| {m} | ")), "{stdout}");
        let res = r["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["method"] == m)
            .unwrap();
        let metrics = &res["metrics"];
        for k in [
            "token_f1",
            "citation_precision",
            "citation_recall",
            "opened_recall",
            "turns",
            "input_tokens",
            "output_tokens",
            "seconds",
            "factuality",
            "context_recall",
            "hallucination",
        ] {
            assert!(metrics.get(k).is_some(), "{m} lacks {k}: {metrics}");
        }
        assert_eq!(metrics["citation_recall"], 1.0, "{m}");
        assert_eq!(res["cited"], json!(["d2"]), "{m}");
        assert!(metrics["token_f1"].as_f64().unwrap() > 0.3, "{m}");
    }
    assert!(r["rag_retriever"].is_string());
    assert!(r["summaries"]["agent"]["intervals"]["token_f1"].is_array());
    let reqs = server.requests();
    let rag = reqs.iter().find(|q| q.stage() == "rag").unwrap();
    assert!(
        rag.user()
            .contains("<document key=\"doc-1\" title=\"Model: Topic 2 explains"),
        "{}",
        rag.user()
    );
    let search = reqs.iter().find(|q| q.stage() == "search_agent").unwrap();
    let tools: Vec<&str> = search.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["search", "get_document"]);
    assert!(
        stdout.contains("agent and guided vs the other answering methods"),
        "{stdout}"
    );
    // Every answer was memoized: the same evaluation again asks the model nothing.
    let before = server.requests().len();
    let (again, r2) = eval(tmp.path(), &server, &[]);
    let extra: Vec<&str> = server.requests()[before..]
        .iter()
        .map(|r| r.stage())
        .collect();
    assert!(
        extra.is_empty(),
        "replayed from the memo, but asked again: {extra:?}"
    );
    assert_eq!(
        r["summaries"]["agent"]["means"]["token_f1"],
        r2["summaries"]["agent"]["means"]["token_f1"]
    );
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.contains("ms/query") && !l.starts_with("| bm25"))
            .count()
    };
    assert_eq!(strip(&stdout), strip(&again));
}

/// Six questions, one per topic of [`dataset`]'s corpus.
fn six_questions(dir: &Path) {
    dataset(dir);
    let queries: String = (0..6)
        .map(|i| json!({"id": format!("q{i}"), "question": format!("What does topic {i} explain?"), "answer": format!("feature {i}"), "gold_ids": [format!("d{i}")]}).to_string() + "\n")
        .collect();
    std::fs::write(dir.join("queries.jsonl"), queries).unwrap();
}

/// `rag` over six questions at the given concurrency, on a memo of its own: the report's
/// results, the server's most requests at once, and stderr.
fn rag_eval(tmp: &Path, concurrency: usize) -> (Vec<Value>, usize, Value, String) {
    let server = Server::start();
    server.set_latency(std::time::Duration::from_millis(150));
    let json_out = tmp.join("eval.json");
    let o = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["eval", "--data", tmp.join("data").to_str().unwrap()])
        .args(["--methods", "rag", "--json", json_out.to_str().unwrap()])
        .args(["--out", tmp.join("tree").to_str().unwrap()])
        .args([
            "--set",
            "llm.backend=\"openai\"",
            "--set",
            "llm.model=\"m\"",
        ])
        .args(["--set", &format!("llm.base_url=\"{}/v1\"", server.url)])
        .args(["--set", &format!("llm.limits.concurrency={concurrency}")])
        .arg("--set")
        .arg(format!(
            "cache.path={:?}",
            tmp.join("memo.sqlite").display().to_string()
        ))
        .current_dir(tmp)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&std::fs::read(json_out).unwrap()).unwrap();
    let results = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["method"] == "rag")
        .map(|x| {
            json!([
                x["query"],
                x["cited"],
                x["answer"],
                x["metrics"]["token_f1"]
            ])
        })
        .collect();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    (results, server.max_in_flight(), r, stderr)
}

#[test]
fn eval_answers_questions_at_once_and_reports_the_same() {
    let one = tempfile::tempdir().unwrap();
    six_questions(&one.path().join("data"));
    let three = tempfile::tempdir().unwrap();
    six_questions(&three.path().join("data"));
    let (seq, seq_peak, report, stderr) = rag_eval(one.path(), 1);
    let (par, par_peak, _, _) = rag_eval(three.path(), 3);
    assert_eq!(seq_peak, 1, "concurrency 1 sends one request at a time");
    assert!(
        par_peak >= 2,
        "questions were answered one by one: {par_peak}"
    );
    assert_eq!(seq, par, "the report depends on the concurrency");
    let ids: Vec<&str> = seq.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["q0", "q1", "q2", "q3", "q4", "q5"],
        "in the queries' order"
    );
    // The eval says what its build asked the model, as `c2s build` does.
    assert!(
        report["build_llm_usage"]["card"]["calls"].as_u64().unwrap() >= 6,
        "{report}"
    );
    assert!(
        stderr.contains("Built") && stderr.contains("answers: card"),
        "{stderr}"
    );
}
