use super::project::Dialect;
use super::*;

/// A project in a temporary folder: `files` written under it, the site configuration chosen
/// by `dialect`.
fn project(files: &[(&str, &str)], dialect: Dialect) -> (tempfile::TempDir, Includer) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    for (path, text) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let root = canonical(&root);
    let bases = match dialect {
        Dialect::MdBook => Vec::new(),
        _ => vec![root.join("docs/en")],
    };
    let p = Project {
        root,
        bases,
        dialect,
    };
    (tmp, Includer::new(p, 1 << 20))
}

fn expand(inc: &mut Includer, page: &str, text: &str) -> (String, Vec<String>) {
    let mut d = Diagnostics::default();
    let path = inc.project.root.join(page);
    let out = inc
        .expand(text, &path, (page, 1), &mut d)
        .unwrap_or_else(|| text.to_string());
    (out, d.warnings.iter().map(|w| w.to_string()).collect())
}

#[test]
fn mdbook_includes_in_fences_with_ranges_and_anchors() {
    let code = "// ANCHOR: all\nfn a() {}\n// ANCHOR: two\nfn b() {}\n// ANCHOR_END: two\n// ANCHOR_END: all\n";
    let (_t, mut inc) = project(&[("src/file.rs", code)], Dialect::MdBook);
    let page = "```rust\n{{#include file.rs:two}}\n```\n\n```\n{{#include file.rs:2}}\n```\n";
    let (out, w) = expand(&mut inc, "src/page.md", page);
    assert_eq!(out, "```rust\nfn b() {}\n```\n\n```\nfn a() {}\n```\n");
    assert!(w.is_empty(), "{w:?}");
    let (out, _) = expand(&mut inc, "src/page.md", "{{#include file.rs:all}}");
    assert_eq!(out, "fn a() {}\nfn b() {}", "anchor lines never show");
    let (out, _) = expand(&mut inc, "src/page.md", "{{#rustdoc_include file.rs::2}}");
    assert_eq!(out, "fn a() {}");
    assert_eq!(inc.used.len(), 1, "one file read, once");
}

#[test]
fn an_escaped_mdbook_include_is_shown_as_text_and_a_bare_helper_stays() {
    let (_t, mut inc) = project(&[("src/file.rs", "fn a() {}\n")], Dialect::MdBook);
    let page = "```hbs\n\\{{#include file.rs}}\n```\nthe `{{#include}}`d lines\n";
    let (out, w) = expand(&mut inc, "src/page.md", page);
    assert_eq!(
        out,
        "```hbs\n{{#include file.rs}}\n```\nthe `{{#include}}`d lines\n"
    );
    assert!(w.is_empty() && inc.used.is_empty(), "{w:?}");
}

#[test]
fn a_playground_outside_a_fence_becomes_a_code_block() {
    let (_t, mut inc) = project(&[("src/ex.rs", "fn main() {}\n")], Dialect::MdBook);
    let (out, _) = expand(
        &mut inc,
        "src/page.md",
        "Try it:\n\n{{#playground ex.rs editable}}\n",
    );
    assert_eq!(out, "Try it:\n\n```rust\nfn main() {}\n```\n");
}

#[test]
fn mkdocs_snippets_quoted_block_sections_lines_and_escape() {
    let part = "intro\n--8<-- [start:usage]\nuse it\n--8<-- [end:usage]\nlast\n";
    let files = [
        ("docs/en/part.md", part),
        ("docs/en/CONTRIBUTING.md", "# Contributing\n\nHelp.\n"),
    ];
    let (_t, mut inc) = project(&files, Dialect::MkDocs);
    let page = "a\n--8<-- \"CONTRIBUTING.md\"\n    --8<-- 'part.md:usage'\n--8<--\npart.md:1:1\n--8<--\n;--8<-- \"x.md\"\n";
    let (out, w) = expand(&mut inc, "docs/en/docs/page.md", page);
    assert_eq!(
        out,
        "a\n# Contributing\n\nHelp.\n    use it\nintro\n--8<-- \"x.md\"\n"
    );
    assert!(w.is_empty(), "{w:?}");
    let (out, _) = expand(&mut inc, "docs/en/docs/page.md", "--8<-- \"part.md\"");
    assert_eq!(out, "intro\nuse it\nlast", "section markers never show");
}

#[test]
fn fastapi_code_includes_become_fenced_code_in_their_language() {
    let code = "from fastapi import FastAPI\n\napp = FastAPI()\n\n@app.get(\"/\")\ndef root():\n    return {}\n";
    let (_t, mut inc) = project(
        &[
            ("docs_src/first/tutorial001.py", code),
            ("docs/en/mkdocs.yml", ""),
        ],
        Dialect::MkDocs,
    );
    let page = "Intro.\n\n{* ../../docs_src/first/tutorial001.py hl[3] *}\n\n{* ../../docs_src/first/tutorial001.py ln[5:7] *}\n";
    let (out, w) = expand(&mut inc, "docs/en/docs/tutorial/first.md", page);
    assert!(w.is_empty(), "{w:?}");
    assert!(
        out.starts_with("Intro.\n\n```python\nfrom fastapi import FastAPI\n"),
        "{out}"
    );
    assert!(
        out.ends_with("```python\n@app.get(\"/\")\ndef root():\n    return {}\n```\n"),
        "{out}"
    );
    assert!(!out.contains("hl[") && !out.contains("{*"));
}

#[test]
fn a_traversal_outside_the_project_is_refused_and_a_missing_file_named() {
    let (tmp, mut inc) = project(
        &[("src/a.md", "x"), ("docs/en/mkdocs.yml", "")],
        Dialect::Any,
    );
    std::fs::write(tmp.path().join("secret.txt"), "password").unwrap();
    let page = "one\n{{#include ../../secret.txt}}\n--8<-- \"../../../secret.txt\"\n{{#include nowhere.rs}}\n";
    let (out, w) = expand(&mut inc, "src/a.md", page);
    assert!(!out.contains("password"), "{out}");
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(
        w[0].contains("src/a.md:2")
            && w[0].contains("refused")
            && w[0].contains("outside the project root"),
        "{w:?}"
    );
    assert!(
        w[1].contains("src/a.md:3") && w[1].contains("refused"),
        "{w:?}"
    );
    assert!(
        w[2].contains("src/a.md:4") && w[2].contains("nowhere.rs") && w[2].contains("no such file"),
        "{w:?}"
    );
    assert!(inc.used.is_empty(), "a refused file is not read");
}

#[test]
fn nested_markdown_includes_are_read_in_their_dialect() {
    let files = [
        ("src/a.md", "x"),
        (
            "src/arg.md",
            "!!! note \"Watch\"\n    {{#include more.md}}\n",
        ),
        ("src/more.md", "polls the folder"),
    ];
    let (_t, mut inc) = project(&files, Dialect::Any);
    let (out, _) = expand(&mut inc, "src/a.md", "{{#include arg.md}}\n");
    assert!(
        out.contains("**Watch**") && out.contains("polls the folder"),
        "{out}"
    );
    assert!(!out.contains("!!!") && !out.contains("{{#"), "{out}");
    assert_eq!(inc.used.len(), 2);
}

#[test]
fn a_page_without_directives_is_left_alone() {
    let (_t, mut inc) = project(&[], Dialect::Any);
    let mut d = Diagnostics::default();
    assert!(
        inc.expand("plain {text}", Path::new("/x/a.md"), ("a.md", 1), &mut d)
            .is_none()
    );
}
