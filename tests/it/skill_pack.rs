//! The output as a drop-in skill pack: every top-level skill passes the reference validator,
//! documents are files, the entity index answers a grep in one line, serving needs the output
//! alone, skills install into a shared skills folder, and platform limits are reported.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::build_example::tree_snapshot;
use crate::common::{
    build_example, c2s, copy_dir, doc_block, files, insta_settings, is_nav, ok, read_tree, repo,
    skip, stderr,
};
use crate::llm_server::Server;
use crate::serve::{oa_text, oa_tools, rpc, spawn_mcp};

/// The small fixture: 11 Markdown files and a JSON Lines file with a duplicate, two levels with
/// K = 2 and p = 3, and a wide soft-assignment gap so that it has `@see` stubs.
pub fn build_small(tmp: &Path) -> PathBuf {
    let out = tmp.join("out");
    let cache = format!("cache.path={}", tmp.join("memo.sqlite").display());
    ok(
        &repo(),
        &[
            "build",
            "tests/fixtures/small",
            "-q",
            "--out",
            out.to_str().unwrap(),
            "--set",
            "K=2",
            "--set",
            "tree.p=3",
            "--set",
            "tree.tau=0.2",
            // Soft assignment (`@see` stubs) is the clustered tree's.
            "--set",
            "tree.structure=cluster",
            "--set",
            &cache,
        ],
    );
    out
}

#[test]
fn small_fixture_whole_output_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let out = build_small(tmp.path());
    let snap = tree_snapshot(&out, |_| false);
    assert!(snap.contains("- @see "), "the fixture has no stub:\n{snap}");
    insta_settings().bind(|| insta::assert_snapshot!("small_fixture_tree", snap));
}

/// The reference validator, when installed (`scripts/fetch-skills-ref.sh`).
pub(crate) fn skills_ref() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("C2S_SKILLS_REF") {
        return Some(PathBuf::from(p));
    }
    let local = repo().join("tools/skills-ref/node_modules/.bin/skills-ref");
    let node = Command::new("node").arg("--version").output().is_ok();
    (node && local.is_file()).then_some(local)
}

pub(crate) fn validate_all(validator: &Path, out: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(out.join("skills")).unwrap() {
        let dir = e.unwrap().path();
        let o = Command::new(validator)
            .arg("validate")
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "skills-ref rejects {}:\n{}{}",
            dir.display(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        n += 1;
    }
    n
}

#[test]
fn every_top_level_skill_passes_the_reference_validator() {
    let Some(validator) = skills_ref() else {
        skip("the Agent Skills validator (run scripts/fetch-skills-ref.sh; needs Node.js)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (example, _) = build_example(tmp.path());
    let small = build_small(tmp.path());
    // A larger generated corpus, with labels from many different words.
    crate::common::synth_corpus(&tmp.path().join("synth"), 300, 9, 3);
    ok(tmp.path(), &["build", "synth", "-q", "--out", "synth-out"]);
    // The same corpus packed for a small files cap: bundles and folded leaf pages.
    let packed = [
        "build",
        "synth",
        "-q",
        "--out",
        "packed-out",
        "--set",
        "K=1",
        "--set",
        "p=4",
        "--set",
        "output.limits.files_per_skill=60",
    ];
    ok(tmp.path(), &packed);
    let packed_files = crate::common::files(&tmp.path().join("packed-out"));
    assert!(packed_files.iter().any(|f| f.contains("/bundles/")));
    // And with the documents served by id: navigation pages alone.
    ok(
        tmp.path(),
        &[
            "build",
            "synth",
            "-q",
            "--out",
            "by-id-out",
            "--set",
            "output.documents=by-id",
        ],
    );
    let n = validate_all(&validator, &example)
        + validate_all(&validator, &small)
        + validate_all(&validator, &tmp.path().join("synth-out"))
        + validate_all(&validator, &tmp.path().join("packed-out"))
        + validate_all(&validator, &tmp.path().join("by-id-out"));
    assert!(n >= 9, "{n} skills validated");
    // And the validator is not a rubber stamp: an extra frontmatter field fails it.
    let bad = tmp.path().join("bad-skill");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(
        bad.join("SKILL.md"),
        "---\nname: bad-skill\ndescription: x\nlevel: 2\n---\n",
    )
    .unwrap();
    let o = Command::new(&validator)
        .arg("validate")
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!o.status.success());
}

#[test]
fn frontmatter_holds_only_agent_skills_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let out = build_small(tmp.path());
    for f in files(&out).into_iter().filter(|f| is_nav(f)) {
        let text = std::fs::read_to_string(out.join(&f)).unwrap();
        let front = text.split("---\n").nth(1).unwrap();
        let y: serde_yaml_ng::Mapping = serde_yaml_ng::from_str(front).unwrap();
        for k in y.keys() {
            let k = k.as_str().unwrap();
            assert!(
                [
                    "name",
                    "description",
                    "license",
                    "compatibility",
                    "allowed-tools",
                    "metadata"
                ]
                .contains(&k),
                "{f}: field {k}"
            );
        }
        for (k, v) in y["metadata"].as_mapping().unwrap() {
            assert!(v.is_string(), "{f}: metadata.{k:?} is not a string");
        }
        let desc = y["description"].as_str().unwrap();
        assert!(desc.encode_utf16().count() <= 1024 && !desc.is_empty());
        if f.ends_with("SKILL.md") {
            assert!(desc.contains("Use for questions about"), "{f}: {desc}");
        }
    }
}

#[test]
fn documents_are_files_and_stubs_link_their_home() {
    let tmp = tempfile::tempdir().unwrap();
    let out = build_small(tmp.path());
    let tree = read_tree(&out);
    let all = files(&out);
    let doc_files = crate::common::doc_files(&out);
    let docs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("documents.json")).unwrap()).unwrap();
    let sources: std::collections::BTreeMap<String, String> = docs
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, d)| (id.clone(), d["source"].as_str().unwrap().to_string()))
        .collect();
    for id in &tree.doc_ids {
        // Each is a file of its own, named after its source: a record's own id, or the file's
        // name.
        let file: Vec<&String> = all.iter().filter(|f| **f == doc_files[id]).collect();
        assert_eq!(file.len(), 1, "{id}: {file:?}");
        let source = &sources[id];
        let name = if source.contains(".jsonl:") {
            id.clone()
        } else {
            Path::new(source)
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        };
        assert!(
            file[0].ends_with(&format!("/docs/{name}.md")),
            "{source}: {}",
            file[0]
        );
        let text = std::fs::read_to_string(out.join(file[0])).unwrap();
        assert!(
            text.starts_with(&format!("---\nid: \"{id}\"\ntitle: ")),
            "{text}"
        );
        assert!(text.contains("\nsource: \""));
        // Each skill folder holds its documents: it can be copied alone.
        let skill = file[0].split('/').take(2).collect::<Vec<_>>().join("/");
        assert!(all.iter().any(|f| f == &format!("{skill}/SKILL.md")));
    }
    // The folded duplicate has a file too, pointing at the document it was folded into.
    let alias = all
        .iter()
        .find(|f| f.ends_with("/docs/faq-cancel-copy.md"))
        .unwrap();
    let text = std::fs::read_to_string(out.join(alias)).unwrap();
    assert!(text.contains("same_as: \"faq-cancel\"") && text.contains("(faq-cancel.md)"));
    let mut stubs = 0;
    for nav in tree.nav.values() {
        let dir = Path::new(&nav.path).parent().unwrap();
        for (id, link) in nav.see_rows.iter().zip(&nav.see_links) {
            let home = out.join(dir).join(link);
            assert!(home.is_file(), "{}: stub {link}", nav.path);
            assert_eq!(
                home.canonicalize().unwrap(),
                out.join(&doc_files[id]).canonicalize().unwrap(),
                "{link} is {id}'s file"
            );
            assert!(!nav.doc_rows.contains(id));
            stubs += 1;
        }
        // A stub of a document in another skill names its id: its home is another skill's.
        let skill = nav.path.split('/').take(2).collect::<Vec<_>>().join("/");
        for id in &nav.see_elsewhere {
            assert!(
                !doc_files[id].starts_with(&format!("{skill}/")),
                "{}: {id} is in this skill, yet not linked",
                nav.path
            );
            stubs += 1;
        }
    }
    assert!(stubs > 0);
}

#[test]
fn a_grep_of_the_entity_index_returns_the_whole_answer_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out = build_small(tmp.path());
    let o = Command::new("grep")
        .args(["-i", "let's encrypt", "entity_index.md"])
        .current_dir(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    let (entity, paths) = lines[0].split_once(" — ").unwrap();
    assert_eq!(entity, "let's encrypt");
    for p in paths.split(", ") {
        assert!(out.join(p).is_dir(), "{p} is not a folder of the output");
    }
    // Keys are lowercase; every level is tagged (a top-level skill appears as well as groups).
    let index = std::fs::read_to_string(out.join("entity_index.md")).unwrap();
    let body: Vec<&str> = index.lines().skip(4).collect();
    assert!(body.iter().all(|l| {
        let k = l.split(" — ").next().unwrap();
        k == k.to_lowercase()
    }));
    assert!(body.iter().any(|l| {
        l.split(" — ")
            .nth(1)
            .unwrap()
            .split(", ")
            .any(|p| p.matches('/').count() == 1)
    }));
    // Each skill folder has its own index, with paths inside the skill.
    let skill_index = files(&out)
        .into_iter()
        .find(|f| f.ends_with("/entities.md") && f.matches('/').count() == 2)
        .unwrap();
    let text = std::fs::read_to_string(out.join(&skill_index)).unwrap();
    assert!(text.lines().skip(4).all(|l| l.contains(" — ")), "{text}");
    // The JSON keeps the counts.
    let json: Value =
        serde_json::from_slice(&std::fs::read(out.join("entity_index.json")).unwrap()).unwrap();
    assert!(json["let's encrypt"]["count"].as_u64().unwrap() >= 1);
}

/// Splits a command line on spaces, keeping double-quoted words together.
fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn ask_offline_ask_and_mcp_run_from_a_copy_of_the_output_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let built = build_small(tmp.path());
    let empty = tmp.path().join("elsewhere");
    copy_dir(&built, &empty.join("copy"));
    std::fs::remove_file(tmp.path().join("memo.sqlite")).unwrap();
    // The offline navigator: the embedder settings come from c2s.lock.
    let answer = ok(
        &empty,
        &[
            "ask",
            "--offline",
            "how do I roll back a deployment",
            "--out",
            "copy",
        ],
    );
    assert!(answer.contains("acme rollback"), "{answer}");
    let j: Value = serde_json::from_str(&ok(
        &empty,
        &[
            "ask",
            "--offline",
            "VAT number on invoices",
            "--out",
            "copy",
            "--json",
        ],
    ))
    .unwrap();
    assert!(!j["ids"].as_array().unwrap().is_empty());
    // The agent, against a loopback model, with the command README.md shows.
    let server = Server::start();
    let skill = files(&empty.join("copy"))
        .into_iter()
        .find(|f| f.ends_with("/SKILL.md"))
        .unwrap();
    let doc = files(&empty.join("copy"))
        .into_iter()
        .find(|f| f.ends_with("/docs/faq-cancel.md"))
        .unwrap();
    server.script(
        "agent",
        vec![
            oa_tools(&[("cat", json!({"path": skill}))]),
            oa_tools(&[("cat", json!({"path": doc}))]),
            oa_text("Cancel under Billing → Plan [faq-cancel]."),
        ],
    );
    let line = doc_block("serving.md", "the\nsame settings come from `--set`:", "sh");
    let line = line
        .trim()
        .replace("http://127.0.0.1:8080", &server.url)
        .replace("--out c2s-out", "--out copy");
    let args = shell_words(line.strip_prefix("c2s ").unwrap());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = c2s(&empty, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    // Reading the document's file counts as opening it: the answer is grounded and cited.
    assert!(stdout.contains("sources:\n  `faq-cancel` "), "{stdout}");
    // MCP.
    // Started as README.md's client config says.
    let client: Value = serde_json::from_str(&doc_block("serving.md", "## MCP", "json"))
        .expect("the README's config is JSON");
    let server_cfg = &client["mcpServers"]["docs"];
    assert_eq!(server_cfg["command"], "c2s");
    let args: Vec<String> = server_cfg["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().replace("/path/to/c2s-out", "copy"))
        .collect();
    assert_eq!(args, ["mcp", "--out", "copy"]);
    let (mut child, mut stdin, mut stdout) = spawn_mcp(&args[2], &empty);
    let init = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "c2s");
    let got = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_document", "arguments": {"id": "faq-cancel-copy"}}}),
    );
    let text = got["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("id: faq-cancel\n"),
        "an alias resolves: {text}"
    );
    let cat = rpc(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "cat", "arguments": {"path": doc}}}),
    );
    assert_eq!(cat["result"]["isError"], false);
    drop(stdin);
    assert!(child.wait().unwrap().success());
    // A folder that is not an output is a clear error naming it.
    for args in [
        &["ask", "--offline", "x", "--out", "nope"][..],
        &["mcp", "--out", "."][..],
        &["ask", "--offline", "x"][..],
    ] {
        let o = c2s(&empty, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert!(
            e.contains("is not a compiled c2s output") && e.contains("help:"),
            "{e}"
        );
    }
}

#[test]
fn skills_dir_installs_beside_other_skills_and_refuses_a_clash() {
    let tmp = tempfile::tempdir().unwrap();
    let repo_dir = tmp.path().join("repo");
    let shared = repo_dir.join(".claude/skills");
    let neighbour = shared.join("my-own-skill");
    std::fs::create_dir_all(&neighbour).unwrap();
    std::fs::write(neighbour.join("SKILL.md"), "---\nname: my-own-skill\n---\n").unwrap();
    copy_dir(&repo().join("tests/fixtures/small"), &repo_dir.join("docs"));
    // The config README.md shows.
    let config = doc_block("publishing.md", "## Claude Code", "toml");
    assert!(
        config.contains("skills_dir = \".claude/skills\""),
        "{config}"
    );
    std::fs::write(repo_dir.join("c2s.toml"), config + "[tree]\nK = 2\np = 3\n").unwrap();
    ok(&repo_dir, &["build", "-q"]);
    let ours: Vec<String> = std::fs::read_dir(&shared)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("skill-"))
        .collect();
    assert!(ours.len() >= 2, "{ours:?}");
    assert!(!repo_dir.join("c2s-out/skills").exists());
    assert_eq!(
        std::fs::read_to_string(neighbour.join("SKILL.md")).unwrap(),
        "---\nname: my-own-skill\n---\n"
    );
    assert_eq!(c2s(&repo_dir, &["check"]).status.code(), Some(0));
    // Editing a skill file by hand makes the output stale.
    let skill_md = shared.join(&ours[0]).join("SKILL.md");
    let text = std::fs::read_to_string(&skill_md).unwrap();
    std::fs::write(&skill_md, format!("{text}\nedited\n")).unwrap();
    assert_eq!(c2s(&repo_dir, &["check"]).status.code(), Some(1));
    ok(&repo_dir, &["build", "-q"]);
    assert_eq!(c2s(&repo_dir, &["check"]).status.code(), Some(0));
    // Serving reads the skills where they were installed.
    let mcp_ls = c2s_tools_ls(&repo_dir.join("c2s-out"), "skills");
    for name in &ours {
        assert!(mcp_ls.contains(name.as_str()), "{mcp_ls}");
    }
    assert!(!mcp_ls.contains("my-own-skill"), "{mcp_ls}");
    // A second output that would write a folder of the same name is refused.
    let other = c2s(&repo_dir, &["build", "-q", "--out", "other-out"]);
    assert_eq!(other.status.code(), Some(2));
    let e = stderr(&other);
    assert!(
        e.contains("refusing to write the skill folder") && e.contains("help:"),
        "{e}"
    );
    // clean removes our folders and nothing else.
    ok(&repo_dir, &["clean"]);
    let left: Vec<String> = std::fs::read_dir(&shared)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["my-own-skill"]);
}

fn c2s_tools_ls(out: &Path, path: &str) -> String {
    let tools = c2s::serve::tools::Tools::open(out).unwrap();
    tools.ls(path).unwrap()
}

#[test]
fn build_and_check_report_platform_limits() {
    let tmp = tempfile::tempdir().unwrap();
    crate::common::synth_corpus(&tmp.path().join("c"), 120, 12, 5);
    let o = c2s(
        tmp.path(),
        &["build", "c", "--out", "o", "--json", "--set", "K=12"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let skills = report["platform"]["skills"].as_u64().unwrap();
    assert_eq!(skills as usize, report["skills"].as_u64().unwrap() as usize);
    let per = report["platform"]["per_skill"].as_array().unwrap();
    assert!(per.iter().all(|s| s["files"].as_u64().unwrap() >= 2));
    assert!(skills > 8, "{skills} skills");
    assert!(stderr(&o).contains("one Claude API request loads at most 8"));
    let check: Value = serde_json::from_str(&ok(
        tmp.path(),
        &["check", "c", "--out", "o", "--json", "--set", "K=12"],
    ))
    .unwrap();
    assert_eq!(check["fresh"], true);
    assert_eq!(check["platform"], report["platform"]);
    let human = c2s(tmp.path(), &["check", "c", "--out", "o", "--set", "K=12"]);
    assert_eq!(
        human.status.code(),
        Some(0),
        "over the cap is a warning, never a failure"
    );
    assert!(stderr(&human).contains("warning: "), "{}", stderr(&human));
}
