//! Links in the output (issue 48): every relative link of every Markdown file of a docs repo's
//! output resolves, none leaves its skill's folder, and a packed skill references nothing
//! outside its zip. Links are read with pulldown-cmark, as a CommonMark reader follows them.

use std::path::{Component, Path, PathBuf};

use crate::common::{c2s, copy_dir, data_dir, skip, stderr};

/// The relative link targets of a Markdown text (inline, reference and image links; code is
/// not read), without anchor or query, percent-decoded.
fn relative_targets(md: &str) -> Vec<String> {
    use pulldown_cmark::{Event, Parser, Tag};
    Parser::new(md)
        .filter_map(|e| match e {
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => Some(dest_url.to_string()),
            _ => None,
        })
        .filter(|d| {
            let scheme = d.split_once(':').is_some_and(|(s, _)| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
            });
            !(d.is_empty() || d.starts_with('#') || d.starts_with("//") || scheme)
        })
        .map(|d| {
            let path = d.split(['#', '?']).next().unwrap_or("").to_string();
            path.replace("%20", " ")
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// `to` joined to `dir` and folded (`..` applied), lexically.
fn fold(dir: &Path, to: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for c in dir.join(to).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Every Markdown file under `dir`.
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    crate::common::files(dir)
        .into_iter()
        .filter(|f| f.ends_with(".md"))
        .map(|f| dir.join(f))
        .collect()
}

/// The links of `dir`'s Markdown files that point to nothing, or outside `inside`.
fn bad_links(dir: &Path, inside: impl Fn(&Path) -> PathBuf) -> Vec<String> {
    let mut bad = Vec::new();
    for file in markdown_files(dir) {
        let text = std::fs::read_to_string(&file).unwrap();
        let home = inside(&file);
        for t in relative_targets(&text) {
            let target = fold(file.parent().unwrap(), &t);
            if !target.exists() {
                bad.push(format!("{}: {t} points to nothing", file.display()));
            } else if !target.starts_with(&home) {
                bad.push(format!("{}: {t} leaves {}", file.display(), home.display()));
            }
        }
    }
    bad
}

/// The top-level skill folder that holds `file`, or the output itself for files outside one.
fn skill_folder(out: &Path, file: &Path) -> PathBuf {
    let skills = out.join("skills");
    match file.strip_prefix(&skills) {
        Ok(rel) => skills.join(rel.components().next().unwrap()),
        Err(_) => out.to_path_buf(),
    }
}

/// A copy of a shared docs repo built in its own folder: the copy and its output.
fn built(repo: &str, docs: &str, tmp: &Path) -> Option<(PathBuf, PathBuf)> {
    let src = data_dir().join("docs-repos").join(repo);
    if !src.is_dir() {
        skip(&format!(
            "docs repo {} not found (set C2S_DATA_DIR)",
            src.display()
        ));
        return None;
    }
    let copy = tmp.join(repo);
    copy_dir(&src, &copy);
    let o = c2s(&copy, &["build", docs, "--out", "out", "-q"]);
    assert!(o.status.success(), "{repo}: {}", stderr(&o));
    Some((copy.clone(), copy.join("out")))
}

#[test]
fn every_link_in_the_outputs_of_the_four_docs_repos_resolves_inside_its_skill() {
    let tmp = tempfile::tempdir().unwrap();
    for (repo, docs) in [
        ("uv", "docs"),
        ("mdbook", "guide/src"),
        ("pydantic", "docs"),
        ("vite", "docs"),
    ] {
        let Some((_, out)) = built(repo, docs, tmp.path()) else {
            return;
        };
        let links: usize = markdown_files(&out)
            .iter()
            .map(|f| relative_targets(&std::fs::read_to_string(f).unwrap()).len())
            .sum();
        assert!(
            links > 50,
            "{repo}: only {links} links: the check would prove nothing"
        );
        let bad = bad_links(&out, |f| skill_folder(&out, f));
        assert!(
            bad.is_empty(),
            "{repo}: {} bad links:\n{}",
            bad.len(),
            bad.join("\n")
        );
    }
}

#[test]
fn a_packed_skill_references_nothing_outside_its_zip() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((copy, _)) = built("uv", "docs", tmp.path()) else {
        return;
    };
    let o = c2s(&copy, &["pack", "--out", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let upload = copy.join("out-pack/upload");
    let mut zips = 0;
    for e in std::fs::read_dir(&upload).unwrap() {
        let zip = e.unwrap().path();
        let dir = tmp.path().join("unzipped").join(zip.file_stem().unwrap());
        std::fs::create_dir_all(&dir).unwrap();
        let st = std::process::Command::new("unzip")
            .args(["-q", zip.to_str().unwrap(), "-d", dir.to_str().unwrap()])
            .status()
            .expect("unzip is needed for this test");
        assert!(st.success());
        zips += 1;
        let bad = bad_links(&dir, |_| dir.clone());
        assert!(bad.is_empty(), "{}:\n{}", zip.display(), bad.join("\n"));
        for f in markdown_files(&dir) {
            let text = std::fs::read_to_string(&f).unwrap();
            assert!(
                !text.contains("../../entity_index.md"),
                "{} points the agent outside the zip",
                f.display()
            );
        }
    }
    assert!(zips >= 2, "{zips} zips");
}
