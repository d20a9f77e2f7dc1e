//! `[output] documents = "by-id"`: the skill folders hold navigation pages only, each row names
//! its document's id, and agents open documents with `get_document` (the reference code's way
//! of serving a corpus too large for the host); `ask`, `check` and a switch back to document
//! files work; with a files cap the leaf pages fold as they do for bundles.

use serde_json::{Value, json};

use crate::common::{build_json as build, c2s, files, ok, stderr, synth_corpus};
use crate::serve::{mcp_handshake, rpc, spawn_mcp};

#[test]
fn documents_by_id_leave_the_skills_with_navigation_only() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 120, 3, 5);
    build(d, &["K=2", "output.documents=by-id"]);
    let out = d.join("o");
    let all = files(&out);
    let skills: Vec<&String> = all.iter().filter(|f| f.starts_with("skills/")).collect();
    assert!(
        skills
            .iter()
            .all(|f| f.ends_with("SKILL.md") || f.ends_with("INDEX.md") || f.contains("entities")),
        "only navigation and entity files: {skills:?}"
    );
    // Every document has a row naming its id, on some page.
    let docs: Value =
        serde_json::from_slice(&std::fs::read(out.join("documents.json")).unwrap()).unwrap();
    let pages: String = skills
        .iter()
        .filter(|f| f.ends_with(".md"))
        .map(|f| std::fs::read_to_string(out.join(f)).unwrap())
        .collect();
    for id in docs.as_object().unwrap().keys() {
        assert!(
            pages.contains(&format!("(id: `{id}`) — ")),
            "no row names {id}"
        );
    }
    assert!(pages.contains("with `get_document` and the id"));
    assert!(!pages.contains("docs/<id>.md"), "no page points at files");
    assert!(!pages.contains("](docs/") && !pages.contains("/docs/"));

    // The MCP server opens a row's document by its id.
    let (id, title) = crate::common::first_document(&docs);
    let (mut child, mut stdin, mut stdout) = spawn_mcp(out.to_str().unwrap(), d);
    mcp_handshake(&mut stdin, &mut stdout, "2025-06-18");
    let r = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "get_document", "arguments": {"id": id}}}),
    );
    assert_eq!(r["result"]["isError"], false, "{r}");
    let got = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        got.starts_with(&format!("id: {id}\ntitle: {title}")),
        "{got}"
    );
    drop(stdin);
    child.wait().unwrap();

    // The offline navigator and check work from the output.
    let ask = ok(d, &["ask", "--offline", "--out", "o", &title]);
    assert!(ask.contains("sources:") && ask.contains(&id), "{ask}");
    let o = c2s(
        d,
        &[
            "check",
            "c",
            "--out",
            "o",
            "--set",
            "K=2",
            "--set",
            "output.documents=by-id",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // Back to document files: the setting is part of the config, so the output is stale and a
    // build writes the files again.
    let o = c2s(d, &["check", "c", "--out", "o", "--set", "K=2"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    build(d, &["K=2"]);
    assert!(files(&out).iter().any(|f| f.contains("/docs/")));
}

#[test]
fn by_id_pages_fold_under_a_files_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 300, 3, 6);
    let free = build(d, &["K=1", "p=4", "output.documents=by-id"]);
    let pages = free["platform"]["per_skill"][0]["files"].as_u64().unwrap();
    let cap = pages * 2 / 3;
    let capped = build(
        d,
        &[
            "K=1",
            "p=4",
            "output.documents=by-id",
            &format!("output.limits.files_per_skill={cap}"),
        ],
    );
    let files = capped["platform"]["per_skill"][0]["files"]
        .as_u64()
        .unwrap();
    assert!(
        files <= cap,
        "{files} files for a cap of {cap} ({pages} unfolded)"
    );
    assert_eq!(capped["platform"]["warnings"], json!([]));
    let tree: Value =
        serde_json::from_slice(&std::fs::read(d.join("o/tree.json")).unwrap()).unwrap();
    let folded = tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n.get("page").is_some_and(|p| !p.is_null()))
        .count();
    assert!(folded > 0, "some leaf pages are folded");
}
