//! Shared helpers: running the binary, reading an output tree, generating synthetic corpora.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Acme example's folder, `examples/`: its `c2s.toml` builds `docs/` (the repository's own
/// `c2s.toml` builds the guide).
pub fn example() -> PathBuf {
    repo().join("examples")
}

/// The shared benchmark sets (`../shared/data`, or `C2S_DATA_DIR`).
pub fn data_dir() -> PathBuf {
    std::env::var_os("C2S_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared/data"))
}

/// Runs `c2s ARGS` in `cwd`.
pub fn c2s(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_LOG")
        .output()
        .expect("run c2s")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs a command that must succeed and returns its stdout.
pub fn ok(cwd: &Path, args: &[&str]) -> String {
    let o = c2s(cwd, args);
    assert!(o.status.success(), "c2s {args:?} failed: {}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Builds the repo's example corpus into `tmp/out` with a cache of its own; returns the output
/// folder and the `cache.path=...` override to pass to later commands on it.
pub fn build_example(tmp: &Path) -> (PathBuf, String) {
    build_example_with(tmp, &[])
}

/// [`build_example`] with more `--set`s (e.g. the clustered tree of two levels that the example
/// had before the tree followed its folders: `tree.structure=cluster`, `K=4`).
pub fn build_example_with(tmp: &Path, sets: &[&str]) -> (PathBuf, String) {
    let (out, _) = build_in(tmp, &["-q"], sets);
    let cache = format!("cache.path={}", tmp.join("memo.sqlite").display());
    (out, cache)
}

/// `c2s build ARGS --out tmp/out` in `examples/` (so its `c2s.toml`), with a memo of its own in `tmp` and
/// more `--set`s; it must succeed. Returns the output folder and stderr.
pub fn build_in(tmp: &Path, args: &[&str], sets: &[&str]) -> (PathBuf, String) {
    let out = tmp.join("out");
    let cache = format!("cache.path={}", tmp.join("memo.sqlite").display());
    let mut all = vec!["build"];
    all.extend_from_slice(args);
    all.extend(["--out", out.to_str().unwrap(), "--set", &cache]);
    for s in sets {
        all.extend(["--set", s]);
    }
    let o = c2s(&example(), &all);
    assert!(o.status.success(), "c2s {all:?} failed: {}", stderr(&o));
    (out, stderr(&o))
}

/// The first fenced block of `lang` after the text `after` in `page`: `README.md`, or a page of
/// the guide by its file name (`incremental.md` is `docs/src/incremental.md`).
pub fn doc_block(page: &str, after: &str, lang: &str) -> String {
    let path = if page == "README.md" {
        repo().join(page)
    } else {
        repo().join("docs/src").join(page)
    };
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let from = text
        .find(after)
        .unwrap_or_else(|| panic!("{page} lacks {after:?}"));
    let fence = format!("```{lang}\n");
    let start = from + text[from..].find(&fence).expect("a fenced block follows") + fence.len();
    text[start..start + text[start..].find("```").unwrap()].to_string()
}

/// Snapshot settings: snapshots live in the repo's `snapshots/`.
pub fn insta_settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(repo().join("snapshots"));
    s.set_prepend_module_to_snapshot(false);
    // A version bump or a new config field must not rewrite every snapshot.
    s.add_filter(r#""c2s_version": "[^"]+""#, r#""c2s_version": "[version]""#);
    s.add_filter(
        r#""config_hash": "[0-9a-f]+""#,
        r#""config_hash": "[hash]""#,
    );
    s.add_filter(r"\bc2s \d+\.\d+\.\d+\S*", "c2s [version]");
    // What an output was built from, relative to it: a test's output sits in a temporary folder.
    s.add_filter(r#""(config|corpus)": "[^"]*""#, r#""$1": "[path]""#);
    // Temporary folders (tempfile's `.tmpXXXXXX`, anywhere) never reach a snapshot as such.
    s.add_filter(r"(/[^\s/]+)*/\.tmp[A-Za-z0-9]{6,}", "[tmp]");
    s
}

/// Whether a test that needs an optional part must fail instead of skipping.
pub fn require_all() -> bool {
    std::env::var("C2S_REQUIRE_ALL").is_ok_and(|v| v == "1")
}

/// Skips loudly, or panics under C2S_REQUIRE_ALL=1.
pub fn skip(what: &str) {
    assert!(!require_all(), "C2S_REQUIRE_ALL=1 but {what}");
    eprintln!("\n!!!! SKIPPED: {what} (set C2S_REQUIRE_ALL=1 to make this a failure)\n");
}

/// Every file below `dir`, relative, sorted.
/// The text of the output page (under `out`) made from `source`: its `source:` line names it,
/// or ends with `/source` (a source shown relative to the project, not the corpus folder).
pub fn output_page(out: &Path, source: &str) -> String {
    files(out)
        .into_iter()
        .filter(|f| f.ends_with(".md") && f.contains("/docs/"))
        .map(|f| std::fs::read_to_string(out.join(f)).unwrap())
        .find(|t| {
            t.lines().any(|l| {
                l.strip_prefix("source: \"")
                    .and_then(|l| l.strip_suffix('"'))
                    .is_some_and(|s| s == source || s.ends_with(&format!("/{source}")))
            })
        })
        .unwrap_or_else(|| panic!("no output page of {source} in {:?}", files(out)))
}

pub fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// One parsed SKILL.md / INDEX.md.
#[derive(Debug, Clone)]
pub struct NavFile {
    pub path: String,
    pub folder: String,
    pub name: String,
    pub description: String,
    pub num_documents: usize,
    pub bytes: usize,
    /// Ids of the document rows (from the files their `docs/<name>.md` links open).
    pub doc_rows: Vec<String>,
    /// Ids of the `@see` stubs, and the links they carry (relative to this file's folder).
    pub see_rows: Vec<String>,
    pub see_links: Vec<String>,
    /// Ids of the `@see` stubs of documents that live in another skill (no link: a skill
    /// stands alone).
    pub see_elsewhere: Vec<String>,
    pub child_links: Vec<String>,
    pub text: String,
}

/// The link target of a `- [text](target) …` row.
fn link_target(row: &str) -> Option<String> {
    let start = row.find("](")? + 2;
    let end = start + row[start..].find(')')?;
    Some(row[start..end].to_string())
}

/// The id of the document a row links: the anchor of a bundle's section
/// (`bundles/NNN.md#<id>`), or the `id:` in the frontmatter of the linked `docs/<name>.md`
/// file (`page` is the linking page's path in `out`), so the link must lead to a real file.
fn doc_id(out: &Path, page: &str, link: &str) -> Option<String> {
    if let Some((file, anchor)) = link.split_once('#') {
        return file.contains("bundles/").then(|| anchor.to_string());
    }
    if !link.contains("docs/") || !link.ends_with(".md") {
        return None;
    }
    let file = Path::new(page).parent().unwrap().join(link);
    let text = std::fs::read_to_string(out.join(&file))
        .unwrap_or_else(|e| panic!("{page} links {link}, which cannot be read: {e}"));
    let id = text
        .lines()
        .skip(1)
        .take_while(|l| *l != "---")
        .find_map(|l| l.strip_prefix("id: "))
        .unwrap_or_else(|| panic!("{} has no id in its frontmatter", file.display()));
    Some(serde_yaml_ng::from_str::<String>(id).unwrap())
}

/// Whether an output path is a navigation file (not a document file).
pub fn is_nav(path: &str) -> bool {
    (path.ends_with("SKILL.md") || path.ends_with("INDEX.md")) && !path.contains("/docs/")
}

pub fn parse_nav(out: &Path, rel: &str) -> NavFile {
    let text = std::fs::read_to_string(out.join(rel)).unwrap();
    let mut front = text.split("---\n");
    front.next();
    let yaml: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(front.next().unwrap()).expect("frontmatter is YAML");
    let folder = Path::new(rel)
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let body = text.split("## Contents\n").nth(1).unwrap_or("");
    let body = body.split("\n## ").next().unwrap_or("");
    let mut nav = NavFile {
        path: rel.to_string(),
        folder,
        name: yaml["name"].as_str().unwrap().to_string(),
        description: yaml["description"].as_str().unwrap().to_string(),
        num_documents: yaml["metadata"]["documents"]
            .as_str()
            .expect("metadata.documents is a string")
            .parse()
            .unwrap(),
        bytes: text.len(),
        doc_rows: Vec::new(),
        see_rows: Vec::new(),
        see_links: Vec::new(),
        see_elsewhere: Vec::new(),
        child_links: Vec::new(),
        text: text.clone(),
    };
    for line in body.lines() {
        if let Some(rest) = line
            .strip_prefix("- @see ")
            .filter(|l| l.ends_with(", in another skill)"))
        {
            let id = rest.rsplit_once("(id: `").expect("a stub names its id").1;
            nav.see_elsewhere
                .push(id.split('`').next().unwrap().to_string());
            continue;
        }
        let Some(target) = link_target(line) else {
            continue;
        };
        if line.starts_with("- @see ") {
            nav.see_rows
                .push(doc_id(out, rel, &target).expect("a stub links a document file"));
            nav.see_links.push(target);
        } else if let Some(id) = doc_id(out, rel, &target) {
            nav.doc_rows.push(id);
        } else if line.starts_with("- [") {
            nav.child_links.push(target);
        }
    }
    nav
}

/// The whole output tree: navigation files by path, and the document ids of documents.json.
pub struct OutTree {
    pub nav: BTreeMap<String, NavFile>,
    pub roots: Vec<String>,
    pub doc_ids: BTreeSet<String>,
}

pub fn read_tree(out: &Path) -> OutTree {
    let mut nav = BTreeMap::new();
    let mut roots = Vec::new();
    for f in files(out) {
        if is_nav(&f) {
            if f.ends_with("SKILL.md") {
                roots.push(f.clone());
            }
            nav.insert(f.clone(), parse_nav(out, &f));
        }
    }
    let docs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("documents.json")).unwrap()).unwrap();
    let doc_ids = docs.as_object().unwrap().keys().cloned().collect();
    OutTree {
        nav,
        roots,
        doc_ids,
    }
}

/// Writes `n` Markdown documents over `topics` topics with distinct vocabularies.
pub fn synth_corpus(dir: &Path, n: usize, topics: usize, seed: u64) {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move |m: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % m.max(1)
    };
    const SYL: [&str; 16] = [
        "ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "so", "gu", "da", "fi", "ho", "be",
        "xa",
    ];
    const COMMON: [&str; 12] = [
        "the", "system", "user", "can", "with", "data", "and", "when", "settings", "page", "for",
        "is",
    ];
    let word = |t: usize, i: usize| {
        format!(
            "{}{}{}",
            SYL[t % 16],
            SYL[(t / 16 + i) % 16],
            SYL[(i * 7 + t) % 16]
        )
    };
    std::fs::create_dir_all(dir).unwrap();
    for d in 0..n {
        let t = next(topics);
        let mut title = Vec::new();
        for _ in 0..3 {
            title.push(word(t, next(6)));
        }
        let mut body = String::new();
        for _ in 0..(3 + next(3)) {
            let mut s = Vec::new();
            for _ in 0..(8 + next(6)) {
                if next(10) < 5 {
                    s.push(word(t, next(6)));
                } else {
                    s.push(COMMON[next(COMMON.len())].to_string());
                }
            }
            body.push_str(&s.join(" "));
            body.push_str(". ");
        }
        let text = format!("# {}\n\n{}\n", title.join(" "), body);
        std::fs::write(dir.join(format!("doc-{d:05}.md")), text).unwrap();
    }
}

/// Runs `git ARGS` in `dir` (an identity and no signing of its own); returns stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Copies a folder's files.
/// Commits the repository at `a` (a docs repo with its built output) and clones it to `b`, as a
/// teammate or a CI job gets it: without the memo, which is not committed.
pub fn commit_and_clone(a: &Path, b: &Path) {
    git(a, &["init", "-q"]);
    git(a, &["add", "."]);
    git(a, &["commit", "-q", "-m", "docs and their skills"]);
    let parent = b.parent().unwrap();
    git(
        parent,
        &["clone", "-q", a.to_str().unwrap(), b.to_str().unwrap()],
    );
}

/// Appends `text` to the file at `path` (an edit).
pub fn append(path: &Path, text: &str) {
    let mut all = std::fs::read_to_string(path).unwrap();
    all.push_str(text);
    std::fs::write(path, all).unwrap();
}

pub fn copy_dir(from: &Path, to: &Path) {
    for f in files(from) {
        let dest = to.join(&f);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&f), dest).unwrap();
    }
}

/// Every file of a folder with its bytes, in path order.
pub fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files(dir)
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(dir.join(&f)).unwrap();
            (f, bytes)
        })
        .collect()
}

/// The folder of one top-level skill of the output `out` (the first the file system lists).
pub fn first_skill(out: &Path) -> PathBuf {
    std::fs::read_dir(out.join("skills"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

/// `c2s build c --out o --json` in `dir`, with a `--set` per item of `sets`: the build's JSON.
pub fn build_json(dir: &Path, sets: &[&str]) -> serde_json::Value {
    let mut args = vec!["build", "c", "--out", "o", "--json"];
    for s in sets {
        args.extend(["--set", s]);
    }
    let o = c2s(dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The first document of a `documents.json` (by id): its id and title.
/// Each document's file, from `documents.json`: id → its `file` (relative to the output root,
/// `…#<id>` for a bundle's section).
pub fn doc_files(out: &Path) -> BTreeMap<String, String> {
    let docs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("documents.json")).unwrap()).unwrap();
    docs.as_object()
        .unwrap()
        .iter()
        .filter_map(|(id, d)| Some((id.clone(), d["file"].as_str()?.to_string())))
        .collect()
}

pub fn first_document(docs: &serde_json::Value) -> (String, String) {
    docs.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v["title"].as_str().unwrap().to_string()))
        .next()
        .unwrap()
}

/// Runs one line of the docs with bash in `dir`, the test's `c2s` first on PATH.
pub fn sh(dir: &Path, line: &str) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_c2s")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new("bash")
        .args(["-euo", "pipefail", "-c", line])
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "`{line}` failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Polls `done` every 50 ms until it holds; after `secs` seconds fails with `why()`.
pub fn wait_for(secs: u64, mut done: impl FnMut() -> bool, why: impl FnOnce() -> String) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !done() {
        if std::time::Instant::now() >= deadline {
            panic!("{}", why());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
