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

#[test]
fn imported_snippets_are_read_from_the_page_or_the_site_root_and_nest() {
    let files = [
        ("docs/docs.json", r#"{"name": "X", "navigation": []}"#),
        (
            "docs/snippets/setup.mdx",
            "---\ntitle: no\n---\nimport Inner from './inner.mdx';\n\n<Note>Run it.</Note>\n\n<Inner />\n",
        ),
        ("docs/snippets/inner.mdx", "Inner text.\n"),
        ("docs/guide/_part.md", "A part.\n"),
    ];
    let (_t, mut inc) = project(&files, Dialect::Any);
    let mark = |p: &str| crate::markdown::mdx::marker(&format!("include {p}"));
    let page = format!(
        "# Page\n\n{}\n\n  {}\n",
        mark("/snippets/setup.mdx"),
        mark("./_part.md")
    );
    let (out, w) = expand(&mut inc, "docs/guide/page.mdx", &page);
    assert_eq!(out, "# Page\n\n\n\nRun it.\n\nInner text.\n\n  A part.\n");
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(inc.used.len(), 3, "each snippet is an input");
    let (out, w) = expand(&mut inc, "docs/guide/page.mdx", &mark("/snippets/gone.mdx"));
    assert_eq!(out, "");
    assert!(
        w[0].contains("cannot include snippets/gone.mdx: no such file"),
        "{w:?}"
    );
    // An import that leaves the project root is refused.
    std::fs::write(inc.project.root.parent().unwrap().join("secret.mdx"), "key").unwrap();
    let (out, w) = expand(
        &mut inc,
        "docs/guide/page.mdx",
        &mark("../../../secret.mdx"),
    );
    assert_eq!(out, "");
    assert!(
        w[0].contains("refused: it is outside the project root"),
        "{w:?}"
    );
}

#[test]
fn an_endpoint_marker_renders_the_operation_from_the_named_or_the_sites_spec() {
    let spec = r#"{"openapi": "3.0.0", "paths": {"/users": {"get": {"summary": "List users",
        "responses": {"200": {"description": "The users."}}}}}}"#;
    let files = [
        (
            "docs/docs.json",
            r#"{"name": "X", "navigation": {"tabs": [{"tab": "API", "openapi": "specs/api.yaml"}]}}"#,
        ),
        (
            "docs/specs/api.yaml",
            "openapi: 3.0.0\npaths:\n  /pets:\n    post:\n      summary: Add a pet\n",
        ),
        ("docs/openapi.json", spec),
    ];
    let (_t, mut inc) = project(&files, Dialect::Any);
    let mark = |v: &str| crate::markdown::mdx::marker(&format!("openapi {v}"));
    let (out, w) = expand(
        &mut inc,
        "docs/api/list.mdx",
        &mark("/openapi.json GET /users"),
    );
    assert_eq!(
        out,
        "## GET /users\n\nList users\n\n### Responses\n\n- `200`: The users."
    );
    assert!(w.is_empty(), "{w:?}");
    let (out, _) = expand(&mut inc, "docs/api/pet.mdx", &mark("POST /pets"));
    assert!(
        out.starts_with("## POST /pets\n\nAdd a pet"),
        "the spec docs.json names: {out}"
    );
    let (out, w) = expand(&mut inc, "docs/api/x.mdx", &mark("DELETE /users"));
    assert_eq!(out, "");
    assert!(
        w[0].contains("no spec of the site has DELETE /users"),
        "{w:?}"
    );
    let (_, w) = expand(
        &mut inc,
        "docs/api/x.mdx",
        &mark("openapi.json GETS /users"),
    );
    assert!(w[0].contains("names no operation"), "{w:?}");
}
