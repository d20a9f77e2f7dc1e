//! The offline default reads as if a person wrote it (issue 26), on a documentation site
//! written as real ones are (`tests/fixtures/docsite`: reference links, raw HTML, `<angle>`
//! links, code blocks, possessives, a product name in every page): Markdown cleaned in
//! navigation text and document files, labels without the word every sibling shares, names
//! as entity tags, and offline answers that bring their code block and name their sources.

use std::path::{Path, PathBuf};

use crate::common::{c2s, copy_dir, files, ok, repo, stderr};

/// Builds the fixture with small knobs (several skills of a few pages); returns the output.
fn build_docsite(tmp: &Path) -> PathBuf {
    copy_dir(&repo().join("tests/fixtures/docsite"), tmp);
    ok(
        tmp,
        &[
            "build",
            "docs",
            "--out",
            "out",
            "-q",
            "--set",
            "K=3",
            "--set",
            "tree.p=3",
            "--set",
            "tree.min_cluster_size=2",
        ],
    );
    tmp.join("out")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn tree_nodes(out: &Path) -> Vec<serde_json::Value> {
    let t: serde_json::Value = serde_json::from_str(&read(&out.join("tree.json"))).unwrap();
    t["nodes"].as_array().unwrap().clone()
}

#[test]
fn markdown_is_clean_in_navigation_text_and_document_files() {
    let tmp = tempfile::tempdir().unwrap();
    let out = build_docsite(tmp.path());
    let all = files(&out);
    let nav: Vec<&String> = all
        .iter()
        .filter(|f| f.ends_with("SKILL.md") || f.ends_with("INDEX.md"))
        .collect();
    assert!(!nav.is_empty());
    let docs = read(&out.join("documents.json"));
    let cards: serde_json::Value = serde_json::from_str(&docs).unwrap();
    let mut navigation: String = nav.iter().map(|f| read(&out.join(f))).collect();
    for d in cards.as_object().unwrap().values() {
        navigation.push_str(&format!(
            "{}\n{}\n{}\n",
            d["title"], d["one_line"], d["phrases"]
        ));
    }
    // Links read once; no raw tag, icon class or link target reaches navigation text.
    for bad in [
        "quill-lspquill-lsp",
        "<i ",
        "</",
        "fa-bolt",
        "<details",
        "](http",
        "settings (all)>",
    ] {
        assert!(
            !navigation.contains(bad),
            "`{bad}` in navigation text:\n{navigation}"
        );
    }
    // Document files keep Markdown and code, and lose raw tags (their text stays).
    let index = all
        .iter()
        .find(|f| f.contains("/docs/") && read(&out.join(f)).contains("title: \"Quill\""))
        .expect("index.md's file");
    let text = read(&out.join(index));
    assert!(
        !text.contains("<i class") && !text.contains("<summary>"),
        "{text}"
    );
    assert!(
        text.contains("Why another linter?") && text.contains("[quill-lsp][quill-lsp]"),
        "{text}"
    );
    let install = all
        .iter()
        .map(|f| read(&out.join(f)))
        .find(|t| t.contains("title: \"Installing Quill\""))
        .unwrap();
    assert!(
        install.contains("```console\nbrew install quill\n```"),
        "{install}"
    );
    assert!(install.contains("Python 3.8 or newer"), "{install}");
}

#[test]
fn offline_answers_bring_their_code_block_and_name_their_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let out = build_docsite(tmp.path());
    let o = c2s(
        tmp.path(),
        &[
            "ask",
            "--offline",
            "How do I install Quill with Homebrew?",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let (answer, rest) = text.split_once("\nsources:\n").expect("a sources list");
    assert!(
        answer.contains("```console\nbrew install quill\n```"),
        "{answer}"
    );
    assert!(!answer.trim_end().ends_with(':'), "{answer}");
    // Sources name the document's title and source file, not only its id.
    let first = rest.lines().next().unwrap();
    assert!(
        first.contains("Installing Quill (installation.md)"),
        "{rest}"
    );
    let j: serde_json::Value = serde_json::from_str(&ok(
        tmp.path(),
        &[
            "ask",
            "--offline",
            "How do I install Quill with Homebrew?",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ],
    ))
    .unwrap();
    assert_eq!(j["sources"][0]["title"], "Installing Quill");
    assert_eq!(j["sources"][0]["source"], "installation.md");
}

#[test]
fn a_brand_word_every_sibling_shares_never_makes_a_label() {
    let tmp = tempfile::tempdir().unwrap();
    let out = build_docsite(tmp.path());
    let nodes = tree_nodes(&out);
    assert!(nodes.len() >= 2, "{nodes:?}");
    for n in &nodes {
        let label = n["label"].as_str().unwrap();
        assert!(
            !label.split(' ').any(|w| w == "quill"),
            "`quill` (in every page's title) labels {}",
            n["path"]
        );
        // A possessive stays whole: "Quill's" never leaves an "s" behind.
        assert!(!label.split(' ').any(|w| w == "s"), "{label}");
        assert!((1..=5).contains(&label.split(' ').count()), "{label}");
    }
    for f in files(&out).iter().filter(|f| f.starts_with("skills/")) {
        assert!(!f.split('/').nth(1).unwrap().contains("quill"), "{f}");
    }
}

#[test]
fn entity_tags_are_names_not_capitalized_words() {
    let tmp = tempfile::tempdir().unwrap();
    let out = build_docsite(tmp.path());
    let tags: Vec<String> = tree_nodes(&out)
        .iter()
        .flat_map(|n| n["entities"].as_array().cloned().unwrap_or_default())
        .map(|e| e.as_str().unwrap().to_string())
        .collect();
    // Sentence-initial capitals ("Install the Quill extension", "Add a comment", "Run the
    // linter hook", "Start by running") are not names.
    for word in [
        "Install", "Add", "Run", "Start", "Then", "Most", "Many", "Settings",
    ] {
        assert!(!tags.iter().any(|t| t == word), "`{word}` tagged: {tags:?}");
    }
    let index = read(&out.join("entity_index.md")).to_lowercase();
    for name in [
        "black",
        "neovim",
        "flake8",
        "noqa",
        "pyproject.toml",
        "f401",
        "quill check",
    ] {
        assert!(
            index.lines().any(|l| l.starts_with(&format!("{name} — "))),
            "`{name}` missing from the entity index:\n{index}"
        );
    }
}

#[test]
fn readability_report_is_clean_on_the_docsite() {
    let tmp = tempfile::tempdir().unwrap();
    let out = build_docsite(tmp.path());
    let gold = tmp.path().join("gold.txt");
    std::fs::write(&gold, "Quill\n").unwrap();
    let r = crate::readability::report(&out, &gold);
    assert_eq!(r["term_lists"], 0.0, "{r}");
    assert_eq!(r["rows_cut"], 0.0, "{r}");
    assert_eq!(r["cards_cut"], 0.0, "{r}");
}

#[test]
fn document_files_are_named_after_their_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let out = build_docsite(tmp.path());
    let docs: serde_json::Value = serde_json::from_str(&read(&out.join("documents.json"))).unwrap();
    let docs = docs.as_object().unwrap();
    assert_eq!(docs.len(), 9);
    for (id, d) in docs {
        let source = d["source"].as_str().unwrap();
        let file = d["file"].as_str().expect("documents.json gives each file");
        let stem = Path::new(source).file_stem().unwrap().to_string_lossy();
        assert!(
            file.ends_with(&format!("/docs/{stem}.md")),
            "{source} is in {file}"
        );
        assert_ne!(stem, id.as_str(), "the id is a hash of the path");
        // The id stays in the file's frontmatter.
        assert!(
            read(&out.join(file)).starts_with(&format!("---\nid: \"{id}\"\n")),
            "{file}"
        );
    }
    // No file is named by a hash.
    for f in files(&out).iter().filter(|f| f.contains("/docs/")) {
        let name = f.rsplit('/').next().unwrap();
        assert!(
            !name
                .trim_end_matches(".md")
                .chars()
                .all(|c| c.is_ascii_hexdigit()),
            "{f}"
        );
    }
}
