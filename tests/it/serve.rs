//! The serve phase: sandboxed tools (escape attempts), the agent loop against the loopback
//! server for both APIs, `c2s mcp` with a real client handshake, and the agent in `c2s eval`.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use c2s::serve::tools::Tools;
use serde_json::{Value, json};

use crate::common::{build_example, c2s, example, files, repo, skip, stderr};
use crate::llm_server::Server;

pub(crate) fn first_skill(out: &Path) -> String {
    let mut skills: Vec<String> = std::fs::read_dir(out.join("skills"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("skill-"))
        .collect();
    skills.sort();
    skills[0].clone()
}

pub(crate) fn first_doc(out: &Path) -> String {
    let docs: Value =
        serde_json::from_slice(&std::fs::read(out.join("documents.json")).unwrap()).unwrap();
    docs.as_object().unwrap().keys().next().unwrap().clone()
}

#[test]
fn no_tool_reaches_outside_the_output() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    std::fs::write(tmp.path().join("secret.txt"), "TOP SECRET").unwrap();
    std::os::unix::fs::symlink(tmp.path(), out.join("skills/escape-dir")).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("secret.txt"), out.join("secret-link.md")).unwrap();
    let before: Vec<(String, Vec<u8>)> = files(&out)
        .into_iter()
        .filter(|f| !f.contains("escape-dir") && !f.contains("secret-link"))
        .map(|f| (f.clone(), std::fs::read(out.join(&f)).unwrap()))
        .collect();
    let tools = Tools::open(&out).unwrap();
    let long = "a/".repeat(600);
    let attempts: Vec<String> = vec![
        "..".into(),
        "../".into(),
        "../secret.txt".into(),
        "../../etc/passwd".into(),
        "skills/../../secret.txt".into(),
        "./../secret.txt".into(),
        "skills/./../../secret.txt".into(),
        "/etc/passwd".into(),
        "/".into(),
        tmp.path().join("secret.txt").display().to_string(),
        "~/secret.txt".into(),
        "%2e%2e/secret.txt".into(),
        "..%2fsecret.txt".into(),
        "skills/%2e%2e/%2e%2e/secret.txt".into(),
        "skills/escape-dir/secret.txt".into(),
        "skills/escape-dir".into(),
        "secret-link.md".into(),
        "skills\0/../../secret.txt".into(),
        "secret.txt\0.md".into(),
        long,
        "x".repeat(300),
        "\\..\\secret.txt".into(),
        "....//....//secret.txt".into(),
        "file:///etc/passwd".into(),
    ];
    assert!(attempts.len() >= 20);
    for a in &attempts {
        for (tool, args) in [
            ("cat", json!({"path": a})),
            ("ls", json!({"path": a})),
            ("grep", json!({"pattern": "SECRET", "path": a})),
        ] {
            match tools.call(tool, &args) {
                Err(_) => {}
                Ok(text) => panic!("{tool} {a:?} was not refused: {text:.200}"),
            }
        }
        assert!(
            tools.call("get_document", &json!({"id": a})).is_err(),
            "get_document {a:?}"
        );
    }
    // A recursive grep from the root does not follow the symlinks out.
    let all = tools
        .call("grep", &json!({"pattern": "TOP SECRET"}))
        .unwrap();
    assert_eq!(all, "no matches");
    // Patterns that blow up are refused, not run.
    for p in ["a{1000}{1000}", "((a{100}){100}){100}", "(", "[z-a]"] {
        assert!(
            tools.call("grep", &json!({"pattern": p})).is_err(),
            "pattern {p:?}"
        );
    }
    // What is allowed works, and nothing was changed.
    let skill = first_skill(&out);
    assert!(tools.call("ls", &json!({})).unwrap().contains("skills/"));
    assert!(
        tools
            .call("cat", &json!({"path": format!("skills/{skill}/SKILL.md")}))
            .unwrap()
            .starts_with("---")
    );
    let hits = tools
        .call(
            "grep",
            &json!({"pattern": "^name:", "path": "skills", "ignore_case": true}),
        )
        .unwrap();
    assert!(
        hits.contains(&format!("skills/{skill}/SKILL.md:2: name: {skill}")),
        "{hits}"
    );
    let id = first_doc(&out);
    assert!(
        tools
            .call("get_document", &json!({"id": &id[..6]}))
            .unwrap()
            .starts_with(&format!("id: {id}"))
    );
    let miss = tools
        .call("get_document", &json!({"id": format!("{}zz", &id[..4])}))
        .unwrap_err()
        .to_string();
    assert!(
        miss.contains("close ids") && miss.contains(&id[..4]),
        "{miss}"
    );
    let after: Vec<(String, Vec<u8>)> = before
        .iter()
        .map(|(f, _)| (f.clone(), std::fs::read(out.join(f)).unwrap()))
        .collect();
    assert_eq!(before, after, "tools have no side effects");
}

type ToolsReply = fn(&[(&str, Value)]) -> Value;
type TextReply = fn(&str) -> Value;

/// An OpenAI chat answer with tool calls.
pub fn oa_tools(calls: &[(&str, Value)]) -> Value {
    let tc: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (n, a))| json!({"id": format!("call_{i}"), "type": "function", "function": {"name": n, "arguments": a.to_string()}}))
        .collect();
    json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": tc}}], "usage": {"prompt_tokens": 100, "completion_tokens": 10}})
}

pub fn oa_text(text: &str) -> Value {
    json!({"choices": [{"message": {"role": "assistant", "content": text}}], "usage": {"prompt_tokens": 120, "completion_tokens": 20}})
}

fn an_tools(calls: &[(&str, Value)]) -> Value {
    let blocks: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (n, a))| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": n, "input": a}))
        .collect();
    json!({"content": blocks, "stop_reason": "tool_use", "usage": {"input_tokens": 100, "output_tokens": 10}})
}

fn an_text(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "usage": {"input_tokens": 120, "output_tokens": 20}})
}

pub(crate) fn ask(
    out: &Path,
    server: &Server,
    backend: &str,
    extra: &[&str],
    trace: &Path,
) -> std::process::Output {
    ask_question(out, server, backend, "How do I deploy?", extra, trace)
}

/// [`ask`] with another question.
pub(crate) fn ask_question(
    out: &Path,
    server: &Server,
    backend: &str,
    question: &str,
    extra: &[&str],
    trace: &Path,
) -> std::process::Output {
    let base = if backend == "anthropic" {
        server.url.clone()
    } else {
        format!("{}/v1", server.url)
    };
    let mut args: Vec<String> = vec![
        "ask".into(),
        question.into(),
        "--out".into(),
        out.display().to_string(),
        "--trace".into(),
        trace.display().to_string(),
    ];
    for s in [
        format!("llm.backend={backend:?}"),
        format!("llm.base_url={base:?}"),
        "llm.model=\"m\"".into(),
        "llm.limits.backoff_s=0.01".into(),
    ]
    .into_iter()
    .chain(extra.iter().map(|s| s.to_string()))
    {
        args.push("--set".into());
        args.push(s);
    }
    Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(&args)
        .current_dir(repo())
        .output()
        .unwrap()
}

pub(crate) fn tool_sequence(trace: &Path) -> (Vec<String>, Value) {
    let t: Value = serde_json::from_slice(&std::fs::read(trace).unwrap()).unwrap();
    let seq = t["trace"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "tool")
        .map(|e| e["tool"].as_str().unwrap().to_string())
        .collect();
    (seq, t)
}

fn agent_round_trip(backend: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let skill = first_skill(&out);
    let id = first_doc(&out);
    let server = Server::start();
    let (tools, text): (ToolsReply, TextReply) = if backend == "anthropic" {
        (an_tools, an_text)
    } else {
        (oa_tools, oa_text)
    };
    server.script(
        "agent",
        vec![
            tools(&[("ls", json!({"path": "skills"}))]),
            tools(&[
                ("cat", json!({"path": format!("skills/{skill}/SKILL.md")})),
                ("cat", json!({"path": "../secret"})),
            ]),
            tools(&[("get_document", json!({"id": id}))]),
            text(&format!("Deploy with the CLI [{id}].")),
        ],
    );
    let trace = tmp.path().join("trace.json");
    let o = ask(&out, &server, backend, &[], &trace);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("Deploy with the CLI") && stdout.contains(&format!("sources:\n  `{id}` ")),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("4 turns") && stderr.contains("tokens"),
        "{stderr}"
    );
    let (seq, t) = tool_sequence(&trace);
    assert_eq!(seq, ["ls", "cat", "cat", "get_document"]);
    assert_eq!(t["cited"], json!([id]));
    assert_eq!(t["stopped"], "answered");
    assert_eq!(t["input_tokens"], 100 * 3 + 120);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    let first = &reqs[0];
    assert!(first.system().contains("Grounding rule") && first.system().contains("get_document"));
    // The opening is the question; the outline of the tree is in the system prompt: the skills,
    // their groups and the documents by title, never by id.
    let opening = first.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(opening["content"], "Question: How do I deploy?\n");
    let system = first.system();
    assert!(
        system.contains(&format!("- skills/{skill}/SKILL.md: ")) && !system.contains(&id),
        "{system}"
    );
    // The refused escape went back to the model as an error result.
    let last = reqs[3].body.to_string();
    assert!(last.contains("refused path"), "{last}");
    if backend == "anthropic" {
        assert_eq!(
            first.body["system"][0]["cache_control"]["type"],
            "ephemeral"
        );
        let tools = first.body["tools"].as_array().unwrap();
        assert_eq!(tools.last().unwrap()["cache_control"]["type"], "ephemeral");
        assert!(last.contains("tool_result"));
    } else {
        assert_eq!(first.body["tools"][0]["type"], "function");
        assert!(
            reqs[1].body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["role"] == "tool")
        );
    }
}

#[test]
fn openai_agent_navigates_fetches_and_cites() {
    agent_round_trip("openai");
}

#[test]
fn anthropic_agent_navigates_fetches_and_cites() {
    agent_round_trip("anthropic");
}

#[test]
fn the_turn_budget_stops_the_agent_and_a_silent_model_is_nudged_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let server = Server::start();
    server.script(
        "agent",
        (0..10).map(|_| oa_tools(&[("ls", json!({}))])).collect(),
    );
    let trace = tmp.path().join("t.json");
    let o = ask(&out, &server, "openai", &["agent.max_turns=3"], &trace);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (seq, t) = tool_sequence(&trace);
    assert_eq!(
        (seq.len(), t["turns"].as_u64(), t["stopped"].as_str()),
        (1, Some(3), Some("budget"))
    );
    // The same call again is not run: it gets a note, in the tool result the API expects.
    assert_eq!(t["repeats"], 2, "{t}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let third = reqs[2].body["messages"].as_array().unwrap();
    let note = third.last().unwrap();
    assert_eq!(note["role"], "tool");
    assert!(
        note["content"]
            .as_str()
            .unwrap()
            .contains("You already called ls"),
        "{note}"
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.starts_with("No answer: the agent used its 3 model calls"),
        "{stdout}"
    );

    let server = Server::start();
    server.script(
        "agent",
        vec![oa_text(""), oa_text(""), oa_text("never reached")],
    );
    let o = ask(&out, &server, "openai", &[], &trace);
    assert!(o.status.success());
    let (_, t) = tool_sequence(&trace);
    assert_eq!(t["stopped"], "no_answer");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "one nudge, then stop");
    assert!(
        reqs[1]
            .body
            .to_string()
            .contains("You stopped without calling a tool")
    );
}

/// `c2s mcp --out OUT` started in `cwd`, with its pipes.
pub fn spawn_mcp(
    out: &str,
    cwd: &Path,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    BufReader<std::process::ChildStdout>,
) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["mcp", "--out", out])
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    (child, stdin, stdout)
}

/// The client's side of the MCP handshake: `initialize` at `version`, then `initialized`.
/// Returns the server's `initialize` result.
pub fn mcp_handshake(stdin: &mut impl Write, stdout: &mut impl BufRead, version: &str) -> Value {
    let init = rpc(
        stdin,
        stdout,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
    );
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    init["result"].clone()
}

pub fn rpc(stdin: &mut impl Write, stdout: &mut impl BufRead, msg: Value) -> Value {
    writeln!(stdin, "{msg}").unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

#[test]
fn mcp_server_handshake_lists_and_calls_tools() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let (mut child, mut stdin, mut stdout) = spawn_mcp(out.to_str().unwrap(), &example());
    let init = mcp_handshake(&mut stdin, &mut stdout, "2025-06-18");
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert_eq!(init["serverInfo"]["name"], "c2s");
    assert!(init["capabilities"]["tools"].is_object());
    assert!(init["capabilities"]["resources"].is_object());
    assert!(
        init["instructions"]
            .as_str()
            .unwrap()
            .contains("get_document")
    );
    let list = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ls", "cat", "grep", "search", "get_document"]);
    assert!(list["result"]["tools"][1]["inputSchema"]["required"].is_array());
    assert_eq!(
        list["result"]["tools"][1]["annotations"]["readOnlyHint"],
        true
    );
    let id = first_doc(&out);
    let doc = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "get_document", "arguments": {"id": id}}}),
    );
    assert_eq!(doc["result"]["isError"], false);
    assert!(
        doc["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with(&format!("id: {id}"))
    );
    let bad = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "cat", "arguments": {"path": "../../etc/passwd"}}}),
    );
    assert_eq!(bad["result"]["isError"], true);
    let res = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 5, "method": "resources/list"}),
    );
    let uri = res["result"]["resources"][0]["uri"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(uri.starts_with("c2s://skills/") && uri.ends_with("/SKILL.md"));
    let read = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": {"uri": uri}}),
    );
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("---")
    );
    let unknown = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 7, "method": "nope"}),
    );
    assert_eq!(unknown["error"]["code"], -32601);
    let no_tool = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "rm", "arguments": {}}}),
    );
    assert_eq!(no_tool["error"]["code"], -32602, "{no_tool}");
    let missing = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": {"uri": "c2s://skills/nope/SKILL.md"}}),
    );
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// The SDK's lifecycle: a request before `initialize` is answered with an error (and the
/// session stays open for the handshake), `ping` works before it, and a client asking for a
/// version the server does not know is offered one it does.
#[test]
fn mcp_server_answers_before_the_handshake_and_negotiates_the_version() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let (mut child, mut stdin, mut stdout) = spawn_mcp(out.to_str().unwrap(), &example());
    let early = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    assert_eq!(early["id"], 1);
    assert!(early["error"]["message"].is_string(), "{early}");
    let ping = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    );
    assert_eq!(ping["result"], json!({}), "{ping}");
    let init = mcp_handshake(&mut stdin, &mut stdout, "1999-01-01");
    let offered = init["protocolVersion"].as_str().unwrap();
    assert!(
        offered.starts_with("20") && offered != "1999-01-01",
        "{init}"
    );
    let list = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    );
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 5);
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// A 2026-07-28 client skips the handshake and names the version in each request's `_meta`.
#[test]
fn mcp_serves_a_stateless_client_without_the_handshake() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let (mut child, mut stdin, mut stdout) = spawn_mcp(out.to_str().unwrap(), &example());
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let found = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}),
    );
    let versions = found["result"]["supportedVersions"].as_array().unwrap();
    assert!(versions.contains(&json!("2025-06-18")), "{found}");
    let id = first_doc(&out);
    let doc = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "get_document", "arguments": {"id": id}, "_meta": meta}}),
    );
    assert_eq!(doc["result"]["isError"], false, "{doc}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// The official MCP Python SDK (PyPI `mcp`, installed by `scripts/fetch-mcp-client.sh`) as the
/// client, the way an MCP host runs `c2s mcp`: handshake, tools, a document, the sandbox,
/// resources and a protocol error.
#[test]
fn the_official_python_mcp_client_uses_c2s_mcp() {
    let sdk = repo().join("tools/mcp-client");
    if !sdk.join("mcp").is_dir() {
        skip("the MCP Python SDK is not installed (run scripts/fetch-mcp-client.sh)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let id = first_doc(&out);
    let o = Command::new("timeout")
        .arg("120")
        .arg("python3")
        .arg(repo().join("tests/fixtures/mcp_client.py"))
        .args([env!("CARGO_BIN_EXE_c2s"), out.to_str().unwrap(), &id])
        .env("PYTHONPATH", &sdk)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let seen: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(seen["server"], "c2s");
    assert!(
        seen["protocol"].as_str().unwrap().starts_with("20"),
        "{seen}"
    );
    assert_eq!(seen["has_instructions"], true);
    assert_eq!(
        seen["tools"],
        json!(["ls", "cat", "grep", "search", "get_document"])
    );
    assert_eq!(seen["read_only"], true);
    assert_eq!(seen["document"]["is_error"], false);
    assert!(
        seen["document"]["text"]
            .as_str()
            .unwrap()
            .starts_with(&format!("id: {id}")),
        "{seen}"
    );
    assert_eq!(seen["refused"]["is_error"], true);
    assert!(
        seen["refused"]["text"]
            .as_str()
            .unwrap()
            .contains("refused")
    );
    let resources = seen["resources"].as_array().unwrap();
    assert!(!resources.is_empty());
    assert!(resources.iter().all(|r| {
        let r = r.as_str().unwrap();
        r.starts_with("c2s://skills/") && r.ends_with("/SKILL.md")
    }));
    assert_eq!(seen["skill_starts"], "---\n");
    assert_eq!(seen["missing_resource"], -32002);
}

#[test]
fn mcp_refuses_a_folder_that_is_not_an_output() {
    let tmp = tempfile::tempdir().unwrap();
    let o = c2s(tmp.path(), &["mcp", "--out", "nowhere"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("c2s build"), "{}", stderr(&o));
}
