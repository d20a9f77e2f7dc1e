//! `c2s publish` against a loopback Skills API: one skill per folder, no-op publishes send
//! nothing, an edit makes one version, `--prune`, resuming a killed publish, 429 and 413, the
//! key in no file; and `c2s check` as a pre-commit hook run by the real `pre-commit`.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::{files, git, ok, repo, skip, stderr, synth_corpus};
use crate::skills_server::SkillsServer;

const KEY: &str = "sk-ant-test-4e7c1d9a0b";

fn write_config(dir: &Path, server: &SkillsServer, extra: &str) {
    std::fs::write(
        dir.join("c2s.toml"),
        format!(
            "[corpus]\npaths = [\"docs\"]\n[tree]\nK = 4\np = 5\n[publish]\napi_key_env = \"C2S_TEST_SKILLS_KEY\"\nbase_url = \"{}\"\ndisplay_prefix = \"docs: \"\n{extra}[publish.limits]\nbackoff_s = 0.05\n",
            server.url
        ),
    )
    .unwrap();
}

fn publish(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_c2s"))
        .arg("publish")
        .args(args)
        .current_dir(dir)
        .env("C2S_TEST_SKILLS_KEY", KEY)
        .output()
        .unwrap()
}

fn setup(server: &SkillsServer) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    synth_corpus(&tmp.path().join("docs"), 60, 5, 8);
    write_config(tmp.path(), server, "");
    ok(tmp.path(), &["build", "-q"]);
    tmp
}

fn skill_folders(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir.join("c2s-out/skills"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `c2s publish` with the `[publish]` config README.md shows, the server's URL set on the
/// command line and the key in the variable it names.
fn publish_as_readme(dir: &Path, server: &SkillsServer, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_c2s"))
        .arg("publish")
        .args(args)
        .args(["--set", &format!("publish.base_url={}", server.url)])
        .current_dir(dir)
        .env("ANTHROPIC_API_KEY", KEY)
        .output()
        .unwrap()
}

#[test]
fn publish_creates_then_sends_only_what_changed() {
    let server = SkillsServer::start(KEY);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    synth_corpus(&dir.join("docs"), 60, 5, 8);
    let publish_cfg =
        crate::common::doc_block("publishing.md", "## The Skills API (`c2s publish`)", "toml");
    std::fs::write(
        dir.join("c2s.toml"),
        format!("[corpus]\npaths = [\"docs\"]\n[tree]\nK = 4\np = 5\n{publish_cfg}"),
    )
    .unwrap();
    ok(dir, &["build", "-q"]);
    let publish = |dir: &Path, args: &[&str]| publish_as_readme(dir, &server, args);
    let folders = skill_folders(dir);
    // A dry run needs no key and sends nothing.
    let dry = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["publish", "--dry-run"])
        .current_dir(dir)
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    assert!(dry.status.success(), "{}", stderr(&dry));
    let plan = String::from_utf8_lossy(&dry.stdout);
    assert_eq!(plan.matches("create ").count(), folders.len(), "{plan}");
    assert!(server.calls().is_empty());
    // The first publish: one skill per folder, each upload one top-level folder.
    let o = publish(dir, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let skills = server.skills();
    assert_eq!(skills.len(), folders.len());
    let titles: Vec<String> = skills.values().map(|s| s.display_title.clone()).collect();
    for f in &folders {
        assert!(titles.contains(&format!("docs: {f}")), "{titles:?}");
    }
    let creates: Vec<_> = server
        .calls()
        .into_iter()
        .filter(|c| c.method == "POST")
        .collect();
    assert_eq!(creates.len(), folders.len());
    for c in &creates {
        assert_eq!(c.header("anthropic-beta"), Some("skills-2025-10-02"));
        let top = c.files[0].0.split('/').next().unwrap().to_string();
        assert!(c.files.iter().any(|(n, _)| *n == format!("{top}/SKILL.md")));
        assert!(c.files.iter().any(|(n, _)| n.contains("/docs/")));
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    let snippet: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        snippet["container"]["skills"].as_array().unwrap().len(),
        folders.len()
    );
    assert_eq!(snippet["container"]["skills"][0]["type"], "custom");
    // The build keeps the manifest; check stays fresh.
    ok(dir, &["build", "-q"]);
    assert!(dir.join("c2s-out/c2s-publish.json").is_file());
    assert_eq!(crate::common::c2s(dir, &["check"]).status.code(), Some(0));
    // A no-op publish sends nothing.
    let before = server.calls().len();
    let o = publish(dir, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(server.calls().len(), before);
    // One edited document: exactly one new version, of the skill that holds it.
    let doc = dir.join("docs/doc-00003.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    std::fs::write(&doc, format!("{text}\nA remark on quasar telemetry.\n")).unwrap();
    ok(dir, &["build", "-q"]);
    let o = publish(dir, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let new: Vec<_> = server.calls().into_iter().skip(before).collect();
    let posts: Vec<_> = new.iter().filter(|c| c.method == "POST").collect();
    assert_eq!(
        posts.len(),
        1,
        "{:?}",
        new.iter().map(|c| &c.path).collect::<Vec<_>>()
    );
    assert!(posts[0].path.ends_with("/versions"));
    assert_eq!(server.skills().len(), folders.len());
    // The key is in no file and no output.
    for f in files(dir) {
        let bytes = std::fs::read(dir.join(&f)).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "{f} holds the key"
        );
    }
    assert!(!stdout.contains(KEY) && !stderr(&o).contains(KEY));
}

#[test]
fn prune_deletes_exactly_the_vanished_skill() {
    let server = SkillsServer::start(KEY);
    let tmp = setup(&server);
    let dir = tmp.path();
    assert!(publish(dir, &[]).status.success());
    // Remove every document of one skill: it leaves the tree.
    let tree: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("c2s-out/tree.json")).unwrap()).unwrap();
    let docs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("c2s-out/documents.json")).unwrap())
            .unwrap();
    let nodes = tree["nodes"].as_array().unwrap();
    let gone_root = nodes
        .iter()
        .filter(|n| n["path"].as_str().unwrap().matches('/').count() == 1)
        .min_by_key(|n| {
            let p = n["path"].as_str().unwrap();
            nodes
                .iter()
                .filter(|m| m["path"].as_str().unwrap().starts_with(p))
                .map(|m| m["docs"].as_array().unwrap().len())
                .sum::<usize>()
        })
        .unwrap();
    let prefix = gone_root["path"].as_str().unwrap().to_string();
    let gone_folder = prefix.rsplit('/').next().unwrap().to_string();
    for n in nodes
        .iter()
        .filter(|n| n["path"].as_str().unwrap().starts_with(&prefix))
    {
        for id in n["docs"].as_array().unwrap() {
            let source = docs[id.as_str().unwrap()]["source"].as_str().unwrap();
            std::fs::remove_file(dir.join(source)).unwrap();
        }
    }
    ok(dir, &["build", "-q"]);
    assert!(!skill_folders(dir).contains(&gone_folder));
    let gone_id = server
        .skills()
        .into_iter()
        .find(|(_, s)| s.display_title == format!("docs: {gone_folder}"))
        .unwrap()
        .0;
    // Without --prune it is kept, and said so.
    let o = publish(dir, &[]);
    assert!(stderr(&o).contains("--prune deletes it"), "{}", stderr(&o));
    assert!(server.skills().contains_key(&gone_id));
    let before = server.calls().len();
    let o = publish(dir, &["--prune"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let deletes: Vec<String> = server
        .calls()
        .into_iter()
        .skip(before)
        .filter(|c| c.method == "DELETE" && !c.path.contains("/versions/"))
        .map(|c| c.path)
        .collect();
    assert_eq!(deletes, [format!("/v1/skills/{gone_id}")]);
    assert!(!server.skills().contains_key(&gone_id));
}

#[test]
fn a_killed_publish_resumes_without_twins() {
    let server = SkillsServer::start(KEY);
    let tmp = setup(&server);
    let dir = tmp.path();
    let folders = skill_folders(dir);
    server.set_delay(Duration::from_millis(400));
    let mut child = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["publish", "-q"])
        .current_dir(dir)
        .env("C2S_TEST_SKILLS_KEY", KEY)
        .spawn()
        .unwrap();
    let clock = Instant::now();
    while server.skills().is_empty() && clock.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(server.skills().len() < folders.len(), "killed too late");
    server.set_delay(Duration::ZERO);
    let o = publish(dir, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(server.skills().len(), folders.len(), "no skill twice");
}

#[test]
fn rate_limits_and_oversized_uploads() {
    let server = SkillsServer::start(KEY);
    let tmp = setup(&server);
    let dir = tmp.path();
    server.throttle(1);
    let clock = Instant::now();
    let o = publish(dir, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        clock.elapsed() >= Duration::from_secs(1),
        "Retry-After was not honoured"
    );
    assert_eq!(server.skills().len(), skill_folders(dir).len());
    // A 413 from the server stops with its message and what to do.
    let other = SkillsServer::start(KEY);
    other.set_max_body(200);
    write_config(dir, &other, "");
    std::fs::remove_file(dir.join("c2s-out/c2s-publish.json")).unwrap();
    let o = publish(dir, &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("413") && e.contains("help:"), "{e}");
    // Over the configured per-skill limit: refused before anything is sent.
    let third = SkillsServer::start(KEY);
    write_config(dir, &third, "max_skill_bytes = 1000\n");
    let o = publish(dir, &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("over the Skills API's limit of 1000 bytes") && e.contains("skill-"),
        "{e}"
    );
    assert!(third.calls().is_empty());
    // Over the files limit: refused before anything is sent, naming the skill.
    write_config(dir, &third, "max_skill_files = 2\n");
    let e = stderr(&publish(dir, &[]));
    assert!(
        e.contains("files, over the Skills API's limit of 2 files per skill")
            && e.contains("skill-"),
        "{e}"
    );
    assert!(third.calls().is_empty());
}

#[test]
fn the_stand_in_server_refuses_a_skill_over_200_files() {
    // One skill of 240 documents, one file each (host "files"): c2s's own check is lifted so
    // that the server's rule shows.
    let server = SkillsServer::start(KEY);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    crate::common::synth_corpus(&dir.join("docs"), 240, 1, 3);
    write_config(
        dir,
        &server,
        "max_skill_files = 100000\n[output]\nhost = \"files\"\n",
    );
    let toml = std::fs::read_to_string(dir.join("c2s.toml")).unwrap();
    std::fs::write(dir.join("c2s.toml"), toml.replace("K = 4", "K = 1")).unwrap();
    crate::common::ok(dir, &["build", "-q"]);
    let o = publish(dir, &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("at most 200 files"), "{e}");
    assert!(server.skills().is_empty(), "nothing was created");
}

/// The `pre-commit` tool (PyPI), when installed.
fn pre_commit() -> Option<Command> {
    let try_cmd = |c: &str, a: &[&str]| {
        Command::new(c)
            .args(a)
            .arg("--version")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|_| {
                let mut cmd = Command::new(c);
                cmd.args(a);
                cmd
            })
    };
    try_cmd("pre-commit", &[]).or_else(|| try_cmd("python3", &["-m", "pre_commit"]))
}

#[test]
fn the_pre_commit_hook_passes_fresh_output_and_fails_stale() {
    let Some(_) = pre_commit() else {
        skip("the pre-commit tool (pip install pre-commit)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // This repository's hook definition, in a hook repository of its own.
    let hooks = tmp.path().join("hooks");
    std::fs::create_dir(&hooks).unwrap();
    std::fs::copy(
        repo().join(".pre-commit-hooks.yaml"),
        hooks.join(".pre-commit-hooks.yaml"),
    )
    .unwrap();
    git(&hooks, &["init", "-q"]);
    git(&hooks, &["add", "."]);
    git(&hooks, &["commit", "-q", "-m", "hooks"]);
    let rev = String::from_utf8(
        Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(&hooks)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    // A docs repository that commits its compiled skills, with the config README.md shows.
    let docs = tmp.path().join("docs-repo");
    synth_corpus(&docs.join("docs"), 20, 3, 2);
    let config = crate::common::doc_block("incremental.md", "### From this repository", "yaml")
        .replace("https://github.com/OWNER/c2s", hooks.to_str().unwrap())
        .replace("REV", &rev);
    std::fs::write(docs.join(".pre-commit-config.yaml"), config).unwrap();
    std::fs::write(docs.join("c2s.toml"), "[corpus]\npaths = [\"docs\"]\n").unwrap();
    ok(&docs, &["build", "-q"]);
    git(&docs, &["init", "-q"]);
    git(&docs, &["add", "."]);
    git(&docs, &["commit", "-q", "-m", "docs"]);
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_c2s"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |docs: &Path| {
        let mut cmd = pre_commit().unwrap();
        cmd.args(["run", "--all-files"])
            .current_dir(docs)
            .env("PATH", &path)
            .env("PRE_COMMIT_HOME", tmp.path().join("pc-home"))
            .output()
            .unwrap()
    };
    let o = run(&docs);
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(o.status.success(), "{out}");
    assert!(out.contains("Passed"), "{out}");
    // The local form of the hook, also from README.md.
    let local = crate::common::doc_block("incremental.md", "### Local", "yaml");
    std::fs::write(docs.join(".pre-commit-config.yaml"), local).unwrap();
    let o = run(&docs);
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(o.status.success() && out.contains("Passed"), "{out}");
    // Edit a source without rebuilding: the hook fails with c2s's message.
    let f = docs.join("docs/doc-00001.md");
    let text = std::fs::read_to_string(&f).unwrap();
    std::fs::write(&f, format!("{text}\nA new line.\n")).unwrap();
    let o = run(&docs);
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("modified source: docs/doc-00001.md") && out.contains("c2s build"),
        "{out}"
    );
}

#[test]
fn the_ci_job_fails_a_fresh_clone_with_stale_output() {
    // README's CI job: `c2s check` on a fresh clone of a repository that commits its output.
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    synth_corpus(&src.join("docs"), 15, 3, 3);
    std::fs::write(src.join("c2s.toml"), "[corpus]\npaths = [\"docs\"]\n").unwrap();
    ok(&src, &["build", "-q"]);
    git(&src, &["init", "-q"]);
    git(&src, &["add", "."]);
    git(&src, &["commit", "-q", "-m", "docs"]);
    let job = crate::common::doc_block("incremental.md", "## In CI", "sh");
    let check_line = job
        .lines()
        .find(|l| l.trim_start().starts_with("c2s check"))
        .expect("the job runs c2s check");
    let args: Vec<&str> = check_line.split_whitespace().skip(1).collect();
    let clone = tmp.path().join("clone");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            src.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    assert_eq!(crate::common::c2s(&clone, &args).status.code(), Some(0));
    std::fs::write(src.join("docs/doc-00002.md"), "# Changed\n\nNew text.\n").unwrap();
    git(&src, &["commit", "-q", "-am", "edit without rebuilding"]);
    let clone2 = tmp.path().join("clone2");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            src.to_str().unwrap(),
            clone2.to_str().unwrap(),
        ],
    );
    let o = crate::common::c2s(&clone2, &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}
