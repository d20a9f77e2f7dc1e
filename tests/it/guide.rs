//! The guide in `docs/`: mdBook builds it, its links and anchors resolve, every page is in its
//! summary, and c2s's own compiled copy of it (`docs-skills/`) is fresh, valid, and goes stale
//! on an edit.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};

use crate::common::{c2s, copy_dir, repo, skip, stderr};

fn guide() -> PathBuf {
    repo().join("docs/src")
}

/// Every Markdown page of the guide, by file name.
fn pages() -> BTreeSet<String> {
    std::fs::read_dir(guide())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .collect()
}

/// The ids mdBook gives a page's headings: lowercase, spaces as `-`, only letters, digits, `-`
/// and `_` kept; a repeated id gets `-1`, `-2`, ….
fn anchors(text: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let mut heading: Option<String> = None;
    for ev in Parser::new(text) {
        match ev {
            Event::Start(Tag::Heading { level, .. }) if level >= HeadingLevel::H1 => {
                heading = Some(String::new())
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let h = heading.take().unwrap_or_default();
                let base: String = h
                    .trim()
                    .to_lowercase()
                    .chars()
                    .filter_map(|c| match c {
                        ' ' => Some('-'),
                        c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                        _ => None,
                    })
                    .collect();
                let mut id = base.clone();
                let mut n = 1;
                while !ids.insert(id.clone()) {
                    id = format!("{base}-{n}");
                    n += 1;
                }
            }
            _ => {}
        }
    }
    ids
}

/// Every link target of a Markdown text with the line it is on (code never holds a link).
fn links(text: &str) -> Vec<(usize, String)> {
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    Parser::new(text)
        .into_offset_iter()
        .filter_map(|(ev, range)| match ev {
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => {
                Some((line_of(range.start), dest_url.to_string()))
            }
            _ => None,
        })
        .collect()
}

/// The broken relative links of one Markdown file: a file that does not exist, or an anchor no
/// heading of a guide page has.
fn broken_links(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut broken = Vec::new();
    for (line, dest) in links(&text) {
        if dest.contains("://") || dest.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = dest.split_once('#').unwrap_or((&dest, ""));
        let target = if path.is_empty() {
            file.to_path_buf()
        } else {
            file.parent().unwrap().join(path)
        };
        let name = format!("{}:{line}: {dest}", file.display());
        if !target.exists() {
            broken.push(format!("{name} (no such file)"));
        } else if !anchor.is_empty() && target.extension().is_some_and(|e| e == "md") {
            let ids = anchors(&std::fs::read_to_string(&target).unwrap());
            if !ids.contains(anchor) {
                broken.push(format!("{name} (no heading has this id; it has {ids:?})"));
            }
        }
    }
    broken
}

#[test]
fn every_page_is_in_the_summary_and_no_link_is_broken() {
    let summary = std::fs::read_to_string(guide().join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary).into_iter().map(|(_, d)| d).collect();
    let mut unlisted: Vec<String> = pages()
        .into_iter()
        .filter(|p| p != "SUMMARY.md" && !listed.contains(p))
        .collect();
    unlisted.sort();
    assert!(
        unlisted.is_empty(),
        "pages of docs/src that SUMMARY.md does not list (mdBook would leave them out): {unlisted:?}"
    );
    let mut broken = broken_links(&repo().join("README.md"));
    for page in pages() {
        broken.extend(broken_links(&guide().join(page)));
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_check_finds_a_missing_page_and_a_missing_anchor() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("b.md"), "# Real heading\n\ntext\n").unwrap();
    let a = tmp.path().join("a.md");
    std::fs::write(
        &a,
        "[ok](b.md#real-heading) [gone](c.md) [bad](b.md#nope) `[code](x.md)`\n",
    )
    .unwrap();
    let broken = broken_links(&a);
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(broken[0].contains("c.md (no such file)"), "{broken:?}");
    assert!(broken[1].contains("b.md#nope (no heading"), "{broken:?}");
}

#[test]
fn the_architecture_page_names_every_module() {
    let page = std::fs::read_to_string(guide().join("architecture.md")).unwrap();
    let mut missing = Vec::new();
    for e in std::fs::read_dir(repo().join("src")).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let shown = if path.is_dir() {
            format!("`{name}/`")
        } else if ["lib", "main", "config"].contains(&name.as_str()) {
            continue; // the crate's roots, and config/'s own file
        } else {
            format!("`{name}`")
        };
        if !page.contains(&shown) {
            missing.push(shown);
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "docs/src/architecture.md does not say what these modules own: {missing:?}"
    );
}

/// mdBook, when installed (`scripts/fetch-mdbook.sh`).
fn mdbook() -> Option<PathBuf> {
    let local = repo().join("tools/mdbook/bin/mdbook");
    local.is_file().then_some(local)
}

#[test]
fn mdbook_builds_the_guide() {
    let Some(mdbook) = mdbook() else {
        skip("mdBook (run scripts/fetch-mdbook.sh)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(mdbook)
        .args(["build", "docs", "--dest-dir"])
        .arg(tmp.path().join("book"))
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "mdbook build docs failed:\n{}",
        stderr(&o)
    );
    // A warning (an unreadable include, a summary entry without a file) fails it too.
    assert!(!stderr(&o).contains("WARN"), "{}", stderr(&o));
    for page in pages().iter().filter(|p| *p != "SUMMARY.md") {
        let html = tmp.path().join("book").join(page.replace(".md", ".html"));
        assert!(html.is_file(), "mdBook made no {}", html.display());
    }
}

/// The guide and the repository's config in a folder of their own, with the committed output.
fn docs_repo_copy(dir: &Path) {
    std::fs::copy(repo().join("c2s.toml"), dir.join("c2s.toml")).unwrap();
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    std::fs::copy(repo().join("docs/book.toml"), dir.join("docs/book.toml")).unwrap();
    copy_dir(&guide(), &dir.join("docs/src"));
    copy_dir(&repo().join("docs-skills"), &dir.join("docs-skills"));
}

#[test]
fn the_committed_guide_output_is_fresh_and_an_unrebuilt_edit_fails_check() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    docs_repo_copy(dir);
    let fresh = c2s(dir, &["check"]);
    assert_eq!(
        fresh.status.code(),
        Some(0),
        "docs-skills/ is stale: run `cargo run -- build` in the repository and commit \
         it\n{}",
        stderr(&fresh)
    );
    let page = dir.join("docs/src/gpu.md");
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&page, text + "\nOne more sentence about shaders.\n").unwrap();
    let stale = c2s(dir, &["check"]);
    assert_eq!(stale.status.code(), Some(1), "{}", stderr(&stale));
    let said = stderr(&stale);
    assert!(said.contains("modified source: docs/src/gpu.md"), "{said}");
    assert!(said.contains("c2s build"), "{said}");
    let built = c2s(dir, &["build", "-q"]);
    assert!(built.status.success(), "{}", stderr(&built));
    assert_eq!(c2s(dir, &["check"]).status.code(), Some(0));
}

#[test]
fn the_guide_output_passes_the_reference_validator() {
    let Some(validator) = crate::skill_pack::skills_ref() else {
        skip("the Agent Skills validator (run scripts/fetch-skills-ref.sh; needs Node.js)");
        return;
    };
    let n = crate::skill_pack::validate_all(&validator, &repo().join("docs-skills"));
    assert!(n >= 4, "{n} skills");
}
