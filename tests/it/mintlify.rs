//! A Mintlify site compiled as its authors wrote it (`tests/fixtures/mintlify`: pages of
//! Mintlify's own docs): `docs.json`'s tabs and groups as the tree's sections, the default
//! language's pages only, imported snippets inlined, endpoint pages rendered from their
//! OpenAPI spec, components read as the site shows them, and the snippets and the spec as
//! inputs whose edit makes the output stale.

use std::path::Path;

use crate::common::{c2s, copy_dir, ok, output_page, repo, stderr};

fn project(tmp: &Path) {
    copy_dir(&repo().join("tests/fixtures/mintlify"), tmp);
    std::fs::create_dir_all(tmp.join(".git")).unwrap();
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// The text outside code fences.
fn prose(md: &str) -> String {
    let mut fenced = false;
    md.lines()
        .filter(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_mintlify_site_follows_docs_json_and_reads_its_pages_as_the_site_shows_them() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d);
    let o = c2s(d, &["build", "docs", "--out", "out"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("Structured from docs.json"), "{err}");
    assert!(err.contains("Ingested 8 documents"), "{err}");
    assert!(
        err.contains("es/index.mdx (another language's or version's page"),
        "{err}"
    );
    assert!(
        !err.contains("cannot include"),
        "every snippet is found: {err}"
    );
    let out = d.join("out");
    let docs = read(&out.join("documents.json"));
    for gone in [
        "es/",
        "snippets/",
        "agent-context/",
        "openapi.json",
        "docs.json",
    ] {
        assert!(
            !docs.contains(&format!("\"source\": \"{gone}")),
            "{gone} is not a page: {docs}"
        );
    }
    let skills: Vec<String> = std::fs::read_dir(out.join("skills"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        skills.iter().any(|s| s.ends_with("-documentation"))
            && skills.iter().any(|s| s.ends_with("-api-reference")),
        "the tabs are the skills: {skills:?}"
    );
    // An endpoint page: the operation from openapi.json.
    let status = output_page(&out, "api/update/status.mdx");
    assert!(
        status.contains("## GET /project/update-status/{statusId}\n"),
        "{status}"
    );
    assert!(
        status.contains("- `statusId` (path, string, required): The status ID"),
        "{status}"
    );
    assert!(
        status.contains("### Responses\n\n- `200`: A successful response\n"),
        "{status}"
    );
    // An imported snippet, and the fields it documents titled by their names.
    let badge = output_page(&out, "components/badge.mdx");
    assert!(badge.contains("> **`icon` (string)**"), "{badge}");
    assert!(badge.contains("The icon to display."), "{badge}");
    let quick = output_page(&out, "quickstart.mdx");
    assert!(
        quick.contains("Get my documentation live on a published Mintlify site"),
        "the imported prompt snippet: {quick}"
    );
    for (name, text) in [
        ("badge", &badge),
        ("quickstart", &quick),
        ("status", &status),
    ] {
        let p = prose(text);
        assert!(
            !p.contains("<Badge") && !p.contains("<ResponseField") && !p.contains("import "),
            "no MDX outside code in {name}: {p}"
        );
        assert!(
            !p.contains('\u{E000}'),
            "no include marker is left in {name}"
        );
    }
    // Code keeps its components as written.
    assert!(
        badge.contains("```mdx\n<Badge>Badge</Badge>\n```"),
        "{badge}"
    );
}

#[test]
fn an_edited_snippet_or_spec_makes_the_output_stale_and_the_build_remakes_its_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d);
    let o = c2s(d, &["init"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("Mintlify (docs/docs.json), pages in docs/"),
        "{err}"
    );
    ok(d, &["build", "-q"]);
    ok(d, &["check"]);
    let spec = d.join("docs/openapi.json");
    let text = read(&spec).replace("Get update status", "Get the update's status");
    std::fs::write(&spec, text).unwrap();
    let check = c2s(d, &["check"]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    assert!(
        stderr(&check).contains("modified source: docs/openapi.json"),
        "{}",
        stderr(&check)
    );
    ok(d, &["build", "-q"]);
    let status = output_page(&d.join("c2s-out"), "api/update/status.mdx");
    assert!(status.contains("Get the update's status"), "{status}");
    let snippet = d.join("docs/snippets/icons-optional.mdx");
    let text = read(&snippet).replace("The icon to display.", "The icon shown.");
    std::fs::write(&snippet, text).unwrap();
    let check = c2s(d, &["check"]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    ok(d, &["build", "-q"]);
    let badge = output_page(&d.join("c2s-out"), "components/badge.mdx");
    assert!(badge.contains("The icon shown."), "{badge}");
    ok(d, &["check"]);
}
