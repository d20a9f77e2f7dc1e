//! Navigation as good as search: passages of long documents memoized one by one, the navigator
//! ranking by a document's later text, the fallback on ambiguous routing only, the `search` tool
//! over MCP and in the agent loop, and the setup paths (printed model config, dry run without a
//! key).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{c2s, ok, repo, stderr};
use crate::llm_server::Server;
use crate::serve::{mcp_handshake, oa_text, oa_tools, rpc, spawn_mcp};

/// A long document: `n` paragraphs of distinct words; paragraph `special` carries `phrase`.
fn long_doc(n: usize, special: usize, phrase: &str) -> String {
    let mut s = String::from("# Field manual\n\n");
    for i in 0..n {
        if i == special {
            s.push_str(&format!("The {phrase} is stored in the north annex.\n\n"));
            continue;
        }
        let words: Vec<String> = (0..40).map(|w| format!("alpha{i}word{w}")).collect();
        s.push_str(&words.join(" "));
        s.push_str(".\n\n");
    }
    s
}

fn build_json(dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["build", "c", "--out", "o", "-q", "--json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&ok(dir, &args)).unwrap()
}

fn computed(r: &Value, stage: &str) -> u64 {
    r["stages"][stage]["computed"].as_u64().unwrap_or(0)
}

#[test]
fn passages_are_memoized_one_by_one() {
    let tmp = tempfile::tempdir().unwrap();
    let c = tmp.path().join("c");
    std::fs::create_dir_all(&c).unwrap();
    std::fs::write(c.join("manual.md"), long_doc(60, 999, "")).unwrap();
    for i in 0..5 {
        std::fs::write(
            c.join(format!("short{i}.md")),
            format!("# Note {i}\n\nA short note number {i}.\n"),
        )
        .unwrap();
    }
    let first = build_json(tmp.path(), &[]);
    let passages = computed(&first, "chunk");
    assert!(passages >= 10, "{first}");
    // Edit one paragraph far into the document: its card and head embedding stay the same.
    let path = c.join("manual.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("alpha50word7 ", "alpha50word7 edited ")).unwrap();
    let second = build_json(tmp.path(), &[]);
    assert_eq!(computed(&second, "chunk"), 1, "{second}");
    // The rest come from the memo (one boundary near the edit may have moved).
    assert!(second["stages"]["chunk"]["reused"].as_u64().unwrap() >= passages - 2);
    assert_eq!(computed(&second, "embed"), 0, "{second}");
    // Chunking off: no passages.
    let off = build_json(tmp.path(), &["--set", "embed.chunk_tokens=0"]);
    assert_eq!(computed(&off, "chunk"), 0);
}

#[test]
fn a_document_the_head_covers_has_no_passages() {
    let tmp = tempfile::tempdir().unwrap();
    let c = tmp.path().join("c");
    std::fs::create_dir_all(&c).unwrap();
    // About 150 estimated tokens: over `embed.chunk_tokens` (100), under twice it.
    let sentence = "The relay keeps every queued message until the broker acknowledges it. ";
    for i in 0..3 {
        std::fs::write(
            c.join(format!("page{i}.md")),
            format!("# Page {i}\n\n{}\n", sentence.repeat(11)),
        )
        .unwrap();
    }
    let r = build_json(tmp.path(), &[]);
    assert_eq!(computed(&r, "chunk"), 0, "{r}");
    // Over twice the limit, the same pages get passages.
    let r = build_json(tmp.path(), &["--set", "embed.chunk_tokens=60"]);
    assert!(computed(&r, "chunk") >= 6, "{r}");
}

#[test]
fn the_navigator_finds_a_document_by_its_later_text() {
    let tmp = tempfile::tempdir().unwrap();
    crate::common::synth_corpus(&tmp.path().join("c"), 60, 6, 9);
    std::fs::write(
        tmp.path().join("c/manual.md"),
        long_doc(80, 70, "quartz calibration ledger"),
    )
    .unwrap();
    ok(tmp.path(), &["build", "c", "--out", "o", "-q"]);
    let r: Value = serde_json::from_str(&ok(
        tmp.path(),
        &[
            "ask",
            "--offline",
            "where is the quartz calibration ledger",
            "--out",
            "o",
            "--json",
        ],
    ))
    .unwrap();
    let manual = {
        let docs: Value =
            serde_json::from_slice(&std::fs::read(tmp.path().join("o/documents.json")).unwrap())
                .unwrap();
        docs.as_object()
            .unwrap()
            .iter()
            .find(|(_, d)| d["source"] == "manual.md")
            .unwrap()
            .0
            .clone()
    };
    assert_eq!(r["ids"][0], manual.as_str(), "{r}");
    assert!(r["answer"].as_str().unwrap().contains("north annex"), "{r}");
}

#[test]
fn the_fallback_triggers_when_routing_is_ambiguous_only() {
    let tmp = tempfile::tempdir().unwrap();
    crate::common::synth_corpus(&tmp.path().join("c"), 240, 8, 4);
    ok(
        tmp.path(),
        &["build", "c", "--out", "o", "-q", "--set", "K=8"],
    );
    let ask = |q: &str| -> Value {
        serde_json::from_str(&ok(
            tmp.path(),
            &["ask", "--offline", "--fallback", q, "--out", "o", "--json"],
        ))
        .unwrap()
    };
    let skills = std::fs::read_dir(tmp.path().join("o/skills"))
        .unwrap()
        .count();
    assert!(skills > 4, "{skills} skills: need more than the beam");
    // Words of one topic only (the synthetic vocabulary of topic 0): routing is clear.
    let doc = std::fs::read_to_string(tmp.path().join("c/doc-00000.md")).unwrap();
    let title = doc.lines().next().unwrap().trim_start_matches("# ");
    let clear = ask(title);
    assert_eq!(clear["fell_back"], false, "{clear}");
    // Words every document shares: no skill stands out.
    let vague = ask("the system settings page for the user data");
    assert_eq!(vague["fell_back"], true, "{vague}");
    assert!(!vague["ids"].as_array().unwrap().is_empty());
}

#[test]
fn search_is_a_tool_over_mcp_and_in_the_agent_loop() {
    let tmp = tempfile::tempdir().unwrap();
    let out = crate::skill_pack::build_small(tmp.path());
    let (mut child, mut stdin, mut stdout) = spawn_mcp(out.to_str().unwrap(), tmp.path());
    mcp_handshake(&mut stdin, &mut stdout, "2025-06-18");
    let list = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"search"), "{names:?}");
    let hit = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "VAT number invoice"}}}),
    );
    let text = hit["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.lines().count() <= 10 && text.contains(" — VAT and sales tax"),
        "{text}"
    );
    drop(stdin);
    assert!(child.wait().unwrap().success());
    // The agent calls it, then opens the hit.
    let server = Server::start();
    server.script(
        "agent",
        vec![
            oa_tools(&[("search", json!({"query": "roll back a deployment"}))]),
            oa_tools(&[("get_document", json!({"id": "109dfcffffafa131"}))]),
            oa_text("Run acme rollback [109dfcffffafa131]."),
        ],
    );
    let trace = tmp.path().join("trace.json");
    let o = c2s(
        tmp.path(),
        &[
            "ask",
            "How do I roll back?",
            "--out",
            out.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
            "--set",
            "agent.backend=openai",
            "--set",
            &format!("agent.base_url={}/v1", server.url),
            "--set",
            "agent.model=m",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let t: Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let search = t["trace"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["tool"] == "search")
        .expect("the search call is traced");
    assert!(search["result_bytes"].as_u64().unwrap() > 0);
    let reqs = server.requests();
    assert!(
        reqs[1]
            .body
            .to_string()
            .contains("Rolling back a deployment")
    );
    assert!(reqs[0].body["tools"].to_string().contains("\"search\""));
}

#[test]
fn the_printed_model_config_works_when_pasted() {
    let Some(_) = crate::onnx::model_parts() else {
        return;
    };
    let o = Command::new(repo().join("scripts/fetch-models.sh"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8_lossy(&o.stdout);
    let toml = printed
        .split("paste these lines into c2s.toml:\n")
        .nth(1)
        .expect("the script prints config lines");
    let tmp = tempfile::tempdir().unwrap();
    crate::common::synth_corpus(&tmp.path().join("docs"), 8, 2, 1);
    std::fs::write(tmp.path().join("c2s.toml"), toml).unwrap();
    ok(tmp.path(), &["build", "-q"]);
    let lock = std::fs::read_to_string(tmp.path().join("c2s-out/c2s.lock")).unwrap();
    assert!(lock.contains("\"embed\": \"onnx:"), "{lock}");
    // Beside models/, `backend = "onnx"` alone is enough.
    let beside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo().join("models"), beside.path().join("models")).unwrap();
    crate::common::synth_corpus(&beside.path().join("docs"), 8, 2, 1);
    // The config README.md shows for this case.
    let readme = crate::common::doc_block("embeddings.md", "# Neural embeddings", "toml");
    assert_eq!(readme, "[embed]\nbackend = \"onnx\"\n");
    std::fs::write(beside.path().join("c2s.toml"), readme).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["build", "-q"])
        .current_dir(beside.path())
        .env_remove("ORT_DYLIB_PATH")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_dry_run_estimates_without_the_api_key() {
    let tmp = tempfile::tempdir().unwrap();
    crate::common::synth_corpus(&tmp.path().join("c"), 10, 2, 1);
    let o = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args([
            "build",
            "c",
            "--out",
            "o",
            "--dry-run",
            "--set",
            "llm.backend=openai",
            "--set",
            "llm.base_url=http://127.0.0.1:9/v1",
            "--set",
            "llm.model=gpt-4o-mini",
            "--set",
            "llm.api_key_env=C2S_TEST_UNSET_KEY",
        ])
        .current_dir(tmp.path())
        .env_remove("C2S_TEST_UNSET_KEY")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("LLM calls: ") && out.contains("card: 10 to compute"),
        "{out}"
    );
    assert!(
        stderr(&o).contains("C2S_TEST_UNSET_KEY is not set"),
        "{}",
        stderr(&o)
    );
    assert!(!tmp.path().join("o").exists());
}
