//! Include directives (issue 48): MkDocs snippets, FastAPI's code includes and mdBook's
//! `{{#include}}` are resolved inside the project root, an included file is an input of the
//! pages that include it, and what cannot be resolved is named with its page and line.

use std::path::Path;

use crate::common::{c2s, copy_dir, data_dir, skip, stderr};

/// `file` under `root`, written with its folders.
fn write(root: &Path, file: &str, text: &str) {
    let p = root.join(file);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A docs repo laid out as FastAPI's: `docs/en/mkdocs.yml`, pages under `docs/en/docs/`, the
/// code they include in `docs_src/` at the repository root, and a `c2s.toml` there.
fn fastapi_like(root: &Path) {
    write(
        root,
        "c2s.toml",
        "[corpus]\npaths = [\"docs/en/docs\"]\n\n[output]\ndir = \"out\"\n",
    );
    write(
        root,
        "docs/en/mkdocs.yml",
        "site_name: Demo\nnav:\n  - index.md\n  - Tutorial:\n    - tutorial/first.md\n    - tutorial/query.md\n    - tutorial/body.md\n",
    );
    write(
        root,
        "docs/en/docs/index.md",
        "# Demo { #demo }\n\nA demo framework for APIs.\n",
    );
    write(
        root,
        "docs/en/docs/tutorial/first.md",
        "# First Steps { #first-steps }\n\nThe simplest file:\n\n{* ../../docs_src/first_steps/tutorial001_py39.py *}\n",
    );
    write(
        root,
        "docs/en/docs/tutorial/query.md",
        "# Query Parameters { #query-parameters }\n\nDeclare them as function parameters:\n\n{* ../../docs_src/first_steps/tutorial001_py39.py ln[3:5] hl[4] *}\n",
    );
    write(
        root,
        "docs/en/docs/tutorial/body.md",
        "# Request Body { #request-body }\n\nUse a model:\n\n{* ../../docs_src/body/tutorial001_py39.py *}\n",
    );
    write(
        root,
        "docs_src/first_steps/tutorial001_py39.py",
        "from demo import Demo\n\napp = Demo()\n\n@app.get(\"/items\")\ndef read_items(skip: int = 0):\n    return {\"skip\": skip}\n",
    );
    write(
        root,
        "docs_src/body/tutorial001_py39.py",
        "from pydantic import BaseModel\n\nclass Item(BaseModel):\n    name: str\n",
    );
}

fn build_json(root: &Path) -> (serde_json::Value, String) {
    let o = c2s(root, &["build", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    (serde_json::from_slice(&o.stdout).unwrap(), stderr(&o))
}

/// Source path (relative to the corpus folder) → the document's text.
fn texts(out: &Path) -> std::collections::BTreeMap<String, String> {
    let docs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("documents.json")).unwrap())
            .unwrap();
    docs.as_object()
        .unwrap()
        .values()
        .map(|d| {
            (
                d["source"].as_str().unwrap().to_string(),
                d["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn an_include_edit_rebuilds_exactly_the_pages_that_include_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fastapi_like(root);
    let (first, _) = build_json(root);
    assert_eq!(first["warnings"], 0, "{first}");
    let t = texts(&root.join("out"));
    assert!(
        t["docs/en/docs/tutorial/first.md"].contains("```python\nfrom demo import Demo\n"),
        "the code is inlined in its language: {t:?}"
    );
    assert!(
        t["docs/en/docs/tutorial/query.md"].contains("app = Demo()\n\n@app.get")
            && !t["docs/en/docs/tutorial/query.md"].contains("def read_items"),
        "ln[3:5] picks lines 3 to 5: {t:?}"
    );
    assert!(t.values().all(|x| !x.contains("{*") && !x.contains("hl[")));
    let lock = std::fs::read_to_string(root.join("out/c2s.lock")).unwrap();
    assert!(
        lock.contains("\"docs_src/body/tutorial001_py39.py\""),
        "{lock}"
    );

    // Edit the code two pages include: `check` names it, and the build makes those two pages again.
    write(
        root,
        "docs_src/first_steps/tutorial001_py39.py",
        "from demo import Demo\n\napp = Demo(title=\"Shop\")\n\n@app.get(\"/items\")\ndef read_items(skip: int = 0, limit: int = 10):\n    return {\"skip\": skip}\n",
    );
    let check = c2s(root, &["check"]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    assert!(
        stderr(&check).contains("modified source: docs_src/first_steps/tutorial001_py39.py"),
        "{}",
        stderr(&check)
    );
    let (after, _) = build_json(root);
    assert_eq!(
        after["embed_texts_made"], 2,
        "exactly the two pages: {after}"
    );
    assert_eq!(after["doc_entries_made"], 2, "{after}");
    let t = texts(&root.join("out"));
    assert!(
        t["docs/en/docs/tutorial/first.md"].contains("limit: int = 10"),
        "{t:?}"
    );
    assert!(
        t["docs/en/docs/tutorial/query.md"].contains("title=\"Shop\""),
        "{t:?}"
    );
    let o = c2s(root, &["check"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "fresh after the build: {}",
        stderr(&o)
    );

    // A deleted include: `check` says so, and the build names the page, the line and the path.
    std::fs::remove_file(root.join("docs_src/body/tutorial001_py39.py")).unwrap();
    let check = c2s(root, &["check"]);
    assert!(
        stderr(&check).contains("deleted source: docs_src/body/tutorial001_py39.py"),
        "{}",
        stderr(&check)
    );
    let (_, err) = build_json(root);
    assert!(
        err.contains("docs/en/docs/tutorial/body.md:5: cannot include ../../docs_src/body/tutorial001_py39.py: no such file"),
        "{err}"
    );
    assert!(!texts(&root.join("out"))["docs/en/docs/tutorial/body.md"].contains("{*"));
}

#[test]
fn a_traversal_include_is_refused_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    write(&root, "book.toml", "[book]\ntitle = \"T\"\n");
    write(
        &root,
        "src/SUMMARY.md",
        "# Summary\n\n- [Intro](intro.md)\n- [More](more.md)\n",
    );
    write(
        &root,
        "src/intro.md",
        "# Intro\n\nThe password file:\n\n```\n{{#include ../../../../../../../../etc/passwd}}\n```\n",
    );
    write(tmp.path(), "secret.txt", "the secret");
    write(
        &root,
        "src/more.md",
        "# More\n\n{{#include ../../secret.txt}}\n",
    );
    let o = c2s(&root, &["build", "src", "--out", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("intro.md:6: include ../../../../../../../../etc/passwd refused: it is outside the project root"),
        "{err}"
    );
    assert!(
        err.contains("more.md:3: include ../../secret.txt refused"),
        "{err}"
    );
    let t = texts(&root.join("out"));
    assert!(
        t.values()
            .all(|x| !x.contains("root:") && !x.contains("the secret")),
        "{t:?}"
    );
}

#[test]
fn the_mdbook_guide_resolves_fenced_includes_and_shows_escaped_ones_as_text() {
    let src = data_dir().join("docs-repos/mdbook");
    if !src.is_dir() {
        return skip(&format!(
            "docs repo {} not found (set C2S_DATA_DIR)",
            src.display()
        ));
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("mdbook");
    copy_dir(&src, &repo);
    let o = c2s(&repo, &["build", "guide/src", "--out", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = texts(&repo.join("out"));
    // Inside a code fence, as mdBook resolves it: the example preprocessor's code.
    let pre = &t["for_developers/preprocessors.md"];
    assert!(
        pre.contains("fn main()") && !pre.contains("{{#include ../../../examples/nop"),
        "{pre}"
    );
    // The guide's own examples are escaped: shown as the book shows them, nothing read.
    let book = &t["format/mdbook.md"];
    assert!(book.contains("```hbs\n{{#include file.rs}}\n```"), "{book}");
    assert!(!book.contains("\\{{#include"), "{book}");
    // The watcher options are one file two pages include.
    assert!(
        t["cli/watch.md"].contains("--watcher"),
        "{}",
        t["cli/watch.md"]
    );
    // The one include whose file is not in the shared copy is named with its page and line.
    let err = stderr(&o);
    assert!(
        err.contains(
            "for_developers/preprocessors.md:69: cannot include ../../../examples/remove-emphasis"
        ),
        "{err}"
    );
}

#[test]
fn uv_snippets_read_from_the_folder_of_mkdocs_yml() {
    let src = data_dir().join("docs-repos/uv");
    if !src.is_dir() {
        return skip(&format!(
            "docs repo {} not found (set C2S_DATA_DIR)",
            src.display()
        ));
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("uv");
    copy_dir(&src, &repo);
    let o = c2s(&repo, &["build", "docs", "--out", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = texts(&repo.join("out"));
    // `--8<-- "CONTRIBUTING.md"` is the repository's own CONTRIBUTING.md, beside mkdocs.yml.
    assert!(t["reference/contributing.md"].contains("## Finding ways to help"));
    assert!(t.values().all(|x| !x.contains("--8<--")));
    assert!(
        stderr(&o)
            .contains("concepts/preview.md:71: cannot include docs/reference/.preview-features.md"),
        "a generated file not in the repo is named: {}",
        stderr(&o)
    );
}
