//! Layouts that fit the host by construction: documents packed into bundle files when one file
//! per document would pass the files cap, leaf pages folded into their parent's page when that
//! is not enough, long documents split into parts under the token cap; bundled documents open by
//! id, by link and through `cat`'s anchor; an edit rewrites its own bundle and the path to the
//! root; a 10,000-document build for the Skills API publishes to a server that enforces the
//! real limits, and packs into upload zips within them.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::common::{build_json, c2s, contents, ok, stderr, synth_corpus};
use crate::serve::{mcp_handshake, rpc, spawn_mcp};
use crate::skills_server::SkillsServer;

/// Output files of `o` by path.
fn outputs(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    contents(&dir.join("o")).into_iter().collect()
}

fn max_skill_files(report: &Value) -> u64 {
    report["platform"]["per_skill"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["files"].as_u64().unwrap())
        .max()
        .unwrap()
}

#[test]
fn a_skill_over_the_files_cap_is_bundled_and_its_documents_open_by_id() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 120, 3, 5);
    // One file per document would be about 150 files per skill; the cap is 40.
    let report = build_json(d, &["K=2", "output.limits.files_per_skill=40"]);
    assert!(max_skill_files(&report) <= 40, "{}", report["platform"]);
    assert_eq!(report["platform"]["warnings"], json!([]));
    let files = outputs(d);
    let bundles: Vec<&String> = files.keys().filter(|k| k.contains("/bundles/")).collect();
    assert!(!bundles.is_empty());
    assert!(
        !files.keys().any(|k| k.contains("/docs/")),
        "every document is in a bundle"
    );

    // Every row links a bundle section that holds the document.
    let docs: Value = serde_json::from_slice(&files["documents.json"]).unwrap();
    let mut linked = 0;
    for (path, bytes) in &files {
        if !(path.ends_with("INDEX.md") || path.ends_with("SKILL.md")) {
            continue;
        }
        let text = String::from_utf8_lossy(bytes);
        let folder = Path::new(path).parent().unwrap();
        for target in text.split("](").skip(1).filter_map(|t| t.split(')').next()) {
            let Some((file, id)) = target.split_once('#') else {
                continue;
            };
            if file.is_empty() {
                continue;
            }
            let bundle = folder.join(file);
            let bundle = normalize(&bundle);
            let body = String::from_utf8_lossy(&files[&bundle]);
            assert!(
                body.contains(&format!("<a id=\"{id}\"></a>")),
                "{path} links {target}, which {bundle} does not hold"
            );
            assert!(docs.get(id).is_some(), "{id} is a document");
            linked += 1;
        }
    }
    assert!(linked >= 120, "{linked} links");

    // get_document by id, and cat of the link's anchor, give the one document.
    let out = d.join("o");
    let (id, title) = crate::common::first_document(&docs);
    let bundle = bundles
        .iter()
        .find(|b| String::from_utf8_lossy(&files[**b]).contains(&format!("<a id=\"{id}\"")))
        .unwrap()
        .to_string();
    let (mut child, mut stdin, mut stdout) = spawn_mcp(out.to_str().unwrap(), d);
    mcp_handshake(&mut stdin, &mut stdout, "2025-06-18");
    let call = |stdin: &mut _, stdout: &mut _, n: u64, name: &str, args: Value| {
        let r = rpc(
            stdin,
            stdout,
            json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": name, "arguments": args}}),
        );
        assert_eq!(r["result"]["isError"], false, "{r}");
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let got = call(
        &mut stdin,
        &mut stdout,
        2,
        "get_document",
        json!({"id": id}),
    );
    assert!(
        got.starts_with(&format!("id: {id}\ntitle: {title}")),
        "{got}"
    );
    let section = call(
        &mut stdin,
        &mut stdout,
        3,
        "cat",
        json!({"path": format!("{bundle}#{id}")}),
    );
    assert!(
        section.starts_with(&format!("<a id=\"{id}\"></a>")),
        "{section}"
    );
    assert_eq!(
        section.matches("<a id=\"").count(),
        1,
        "one section alone: {section}"
    );
    let text = docs[&id]["text"].as_str().unwrap();
    assert!(section.contains(text.lines().last().unwrap()), "{section}");
    drop(stdin);
    child.wait().unwrap();

    // The offline agent finds documents in bundles as it found them in files.
    let ask = ok(d, &["ask", "--offline", "--out", "o", &title]);
    assert!(ask.contains("sources:"), "{ask}");
}

fn normalize(p: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    parts.join("/")
}

#[test]
fn leaf_pages_fold_into_their_parent_when_bundles_are_not_enough() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 300, 3, 9);
    let sets = ["K=1", "p=4", "output.limits.files_per_skill=60"];
    let report = build_json(d, &sets);
    assert!(max_skill_files(&report) <= 60, "{}", report["platform"]);
    let files = outputs(d);
    let tree: Value = serde_json::from_slice(&files["tree.json"]).unwrap();
    let folded: Vec<&Value> = tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n.get("page").is_some())
        .collect();
    assert!(!folded.is_empty(), "some leaves are sections");
    for n in &folded {
        let page = n["page"].as_str().unwrap();
        let (file, anchor) = page.split_once('#').unwrap();
        let body = String::from_utf8_lossy(&files[file]);
        assert!(
            body.contains(&format!("<a id=\"{anchor}\"></a>\n### {anchor}")),
            "{page}"
        );
        assert!(
            !files.contains_key(&format!("{}/INDEX.md", n["path"].as_str().unwrap())),
            "a folded leaf has no page of its own"
        );
        let first = n["docs"][0].as_str().unwrap();
        assert!(
            body.contains(&format!("#{first})")),
            "its rows are in {file}"
        );
    }
    // The navigator and check work on the folded layout.
    ok(d, &["ask", "--offline", "--out", "o", "kalomi settings"]);
    ok(
        d,
        &[
            "check", "c", "--out", "o", "--set", sets[0], "--set", sets[1], "--set", sets[2],
        ],
    );
}

#[test]
fn a_long_document_is_split_into_parts_under_the_token_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 20, 2, 3);
    let para = "Sediment settles where the river slows, and the delta grows a little each year. ";
    let long: String = (0..60)
        .map(|i| format!("## Reach {i}\n\n{}\n\n", para.repeat(12)))
        .collect();
    std::fs::write(d.join("c/delta.md"), format!("# Deltas\n\n{long}")).unwrap();
    let report = build_json(d, &["K=2", "output.limits.tokens_per_file=2000"]);
    assert_eq!(
        report["platform"]["files_over_tokens"], 0,
        "{}",
        report["platform"]
    );
    let files = outputs(d);
    let first = files
        .iter()
        .find(|(k, v)| {
            k.contains("/docs/") && String::from_utf8_lossy(v).contains("title: \"Deltas\"")
        })
        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
        .unwrap();
    let parts: Vec<(&String, String)> = files
        .iter()
        .filter(|(k, _)| k.contains("/parts/"))
        .map(|(k, v)| (k, String::from_utf8_lossy(v).into_owned()))
        .collect();
    assert!(parts.len() >= 5, "{}", parts.len());
    let n = parts.len() + 1;
    assert!(
        first.1.contains(&format!("part: \"1 of {n}\"")),
        "{}",
        first.1
    );
    assert!(first.1.contains(&format!("This document is in {n} parts")));
    assert!(first.1.contains("2. [part 2](../parts/"), "{}", first.1);
    assert!(
        first.1.contains("— Reach"),
        "the table says what each part holds"
    );
    // Together the parts are the document, in order.
    let body = |t: &str| t.split_once("\n---\n").unwrap().1.to_string();
    let mut joined = body(&first.1);
    joined = joined.split_once("\n\n").unwrap().1.to_string();
    let mut sorted = parts.clone();
    sorted.sort_by_key(|(k, _)| {
        k.rsplit_once('-')
            .unwrap()
            .1
            .trim_end_matches(".md")
            .parse::<usize>()
            .unwrap()
    });
    for (_, t) in &sorted {
        let b = body(t);
        joined.push_str(b.split_once(").\n\n").unwrap().1);
    }
    for i in [0, 29, 59] {
        assert!(joined.contains(&format!("## Reach {i}\n")), "reach {i}");
    }
    assert_eq!(joined.matches("Sediment settles").count(), 60 * 12);
}

#[test]
fn an_edit_rewrites_its_bundle_and_the_path_to_the_root() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 200, 4, 11);
    let sets = ["K=2", "output.limits.files_per_skill=60"];
    build_json(d, &sets);
    let before = outputs(d);
    let docs: Value = serde_json::from_slice(&before["documents.json"]).unwrap();
    let (id, entry) = docs.as_object().unwrap().iter().nth(7).unwrap();
    let source = entry["source"].as_str().unwrap();
    let path = [d.join(source), d.join("c").join(source)]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("source {source}"));
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        format!("{text}\nOne more settings line for the page.\n"),
    )
    .unwrap();
    build_json(d, &sets);
    let after = outputs(d);
    let changed: Vec<&String> = after
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    let bundles: Vec<&&String> = changed.iter().filter(|k| k.contains("/bundles/")).collect();
    assert_eq!(bundles.len(), 1, "{changed:?}");
    assert!(
        String::from_utf8_lossy(&after[*bundles[0]]).contains(&format!("<a id=\"{id}\"")),
        "the edited document's bundle"
    );
    let pages = changed
        .iter()
        .filter(|k| k.ends_with("INDEX.md") || k.ends_with("SKILL.md"))
        .count();
    assert!(pages <= 4, "at most the path to the root: {changed:?}");
}

#[test]
fn ten_thousand_documents_for_the_skills_api_fit_and_publish() {
    const KEY: &str = "sk-ant-test-10k";
    let server = SkillsServer::start(KEY);
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 10_000, 40, 17);
    std::fs::write(
        d.join("c2s.toml"),
        format!(
            "[corpus]\npaths = [\"c\"]\n[output]\ndir = \"o\"\nhost = \"skills-api\"\n[publish]\napi_key_env = \"C2S_TEST_SKILLS_KEY\"\nbase_url = \"{}\"\n[publish.limits]\nbackoff_s = 0.05\n",
            server.url
        ),
    )
    .unwrap();
    let o = c2s(d, &["build", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let p = &report["platform"];
    assert_eq!(p["host"], "skills-api");
    assert_eq!(p["warnings"], json!([]), "{p}");
    for s in p["per_skill"].as_array().unwrap() {
        assert!(s["files"].as_u64().unwrap() <= 200, "{s}");
        assert!(s["bytes"].as_u64().unwrap() <= 30_000_000, "{s}");
    }
    assert!(stderr(&o).contains("Packed"), "{}", stderr(&o));
    // Without a token cap bundles still stay near one read each, not one per skill.
    assert!(
        p["longest_file"]["bytes"].as_u64().unwrap() < 400_000,
        "{}",
        p["longest_file"]
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_c2s"))
        .arg("publish")
        .current_dir(d)
        .env("C2S_TEST_SKILLS_KEY", KEY)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let skills = server.skills();
    assert_eq!(skills.len(), p["skills"].as_u64().unwrap() as usize);
    for s in skills.values() {
        let files = &s.versions.last().unwrap().1;
        assert!(files.len() <= 200, "{}", files.len());
        assert!(files.iter().any(|f| f.ends_with("/SKILL.md")));
    }
    // The same skills as claude.ai upload zips: within 200 entries each, as the real unzip
    // lists them, and a discovery index naming every one.
    let o = c2s(d, &["pack", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let packed: Value = serde_json::from_slice(&o.stdout).unwrap();
    let packed = packed["skills"].as_array().unwrap();
    assert_eq!(packed.len(), skills.len());
    for s in packed {
        let zip = s["upload"].as_str().unwrap();
        let o = std::process::Command::new("unzip")
            .args(["-Z1", zip])
            .output()
            .expect("unzip runs");
        assert!(o.status.success(), "{zip}");
        let entries = String::from_utf8(o.stdout).unwrap().lines().count();
        assert_eq!(entries as u64, s["files"].as_u64().unwrap());
        assert!(entries <= 200, "{zip}: {entries} entries");
    }
}
