//! A Sphinx project's navigation: its source folder (the folder of `conf.py`), its root
//! document (`root_doc`/`master_doc`, default `index`) and the toctrees that lead from it,
//! page by page (reST and MyST Markdown), as Sphinx's sidebar shows them: a toctree's caption,
//! or the root page's section it sits in, titles a section; a page whose own toctrees list
//! pages is a section of them.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::navitems::{Nav, NavItem};
use crate::rst::toctree::{Toctree, in_myst, in_rst};

/// Page extensions Sphinx reads as sources (reST, and Markdown through MyST).
const SOURCES: &[&str] = &["rst", "md", "rest"];

/// The `conf.py` of a Sphinx project whose source folder is `dir`.
pub fn conf_in(dir: &Path) -> Option<PathBuf> {
    let conf = dir.join("conf.py");
    conf.is_file().then_some(conf)
}

/// Reads the navigation of the Sphinx project whose `conf.py` is `conf`. `None` when its root
/// document is missing or lists no page (then the folders are followed).
pub fn read(conf: &Path) -> Result<Option<Nav>, (PathBuf, String)> {
    let text = std::fs::read_to_string(conf).map_err(|e| (conf.to_path_buf(), e.to_string()))?;
    let src = conf.parent().unwrap_or(Path::new(".")).to_path_buf();
    let names = match root_doc(&text) {
        Some(n) => vec![n],
        None => vec!["index".to_string(), "contents".to_string()],
    };
    let Some(root) = names.iter().find_map(|n| source_of(&src, n)) else {
        return Ok(None);
    };
    let mut seen = HashSet::from([root.clone()]);
    let items = root_items(&src, &root, &mut seen);
    if items.is_empty() {
        return Ok(None);
    }
    Ok(Some(Nav {
        file: conf.to_path_buf(),
        docs_dir: src,
        items,
    }))
}

/// `root_doc = "…"` or `master_doc = "…"` in `conf.py`.
fn root_doc(conf: &str) -> Option<String> {
    conf.lines().find_map(|l| {
        let (key, value) = l.split_once('=')?;
        let key = key.trim();
        if key != "root_doc" && key != "master_doc" {
            return None;
        }
        let v = value.trim().trim_matches(['"', '\'']).trim();
        (!v.is_empty() && !v.contains(['"', '\'', ' '])).then(|| v.to_string())
    })
}

/// The page file a document name (`user/install`, no extension) names under `src`, as a path
/// relative to `src`.
fn source_of(src: &Path, name: &str) -> Option<String> {
    let name = name.trim_start_matches('/');
    if src.join(name).is_file() && SOURCES.iter().any(|e| name.ends_with(&format!(".{e}"))) {
        return Some(name.to_string());
    }
    SOURCES
        .iter()
        .map(|e| format!("{name}.{e}"))
        .find(|p| src.join(p).is_file())
}

/// The toctrees of a page (relative to `src`).
fn toctrees(src: &Path, page: &str) -> Vec<Toctree> {
    let Ok(text) = std::fs::read_to_string(src.join(page)) else {
        return Vec::new();
    };
    if page.ends_with(".md") {
        in_myst(&text)
    } else {
        in_rst(&text)
    }
}

/// The root page's toctrees: each captioned one, and the uncaptioned ones in one section of
/// the page, a titled section; the others' entries at the top.
fn root_items(src: &Path, root: &str, seen: &mut HashSet<String>) -> Vec<NavItem> {
    let mut out: Vec<NavItem> = Vec::new();
    let mut last_title: Option<String> = None;
    for tree in toctrees(src, root) {
        let entries = entries(src, root, &tree, seen);
        let title = tree.caption.clone().or(tree.section.clone());
        match title {
            Some(t) => {
                // Toctrees in one section (or with one caption) make one section.
                if last_title.as_deref() == Some(t.as_str())
                    && let Some(NavItem::Section { items, .. }) = out.last_mut()
                {
                    items.extend(entries);
                } else if !entries.is_empty() {
                    out.push(NavItem::Section {
                        title: t.clone(),
                        items: entries,
                    });
                }
                last_title = Some(t);
            }
            None => {
                out.extend(entries);
                last_title = None;
            }
        }
    }
    out
}

/// The entries of one toctree of `page`: pages, and pages with toctrees of their own as
/// sections (each page once: a page listed again, or a cycle, is left out).
fn entries(src: &Path, page: &str, tree: &Toctree, seen: &mut HashSet<String>) -> Vec<NavItem> {
    let dir = page.rsplit_once('/').map_or("", |(d, _)| d);
    let mut out = Vec::new();
    for e in &tree.entries {
        let target = e.target.as_str();
        if target == "self" || target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let name = resolve(dir, target);
        let found: Vec<String> = if tree.glob && target.contains(['*', '?', '[']) {
            glob(src, &name, page)
        } else {
            source_of(src, &name).into_iter().collect()
        };
        for path in found {
            if !seen.insert(path.clone()) {
                continue;
            }
            let children: Vec<NavItem> = toctrees(src, &path)
                .iter()
                .flat_map(|t| {
                    let items = entries(src, &path, t, seen);
                    match &t.caption {
                        Some(c) if !items.is_empty() => vec![NavItem::Section {
                            title: c.clone(),
                            items,
                        }],
                        _ => items,
                    }
                })
                .collect();
            let item = NavItem::Page {
                title: e.title.clone(),
                path: path.clone(),
            };
            if children.is_empty() {
                out.push(item);
            } else {
                let title = e.title.clone().unwrap_or_else(|| page_title(src, &path));
                let mut items = vec![item];
                items.extend(children);
                out.push(NavItem::Section { title, items });
            }
        }
    }
    out
}

/// A toctree target read from a page in `dir`: relative to it, or to the source folder when it
/// starts with `/`; `..` folded.
fn resolve(dir: &str, target: &str) -> String {
    let mut parts: Vec<&str> = if target.starts_with('/') || dir.is_empty() {
        Vec::new()
    } else {
        dir.split('/').collect()
    };
    for c in target.trim_start_matches('/').split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    parts.join("/")
}

/// The source pages a `:glob:` pattern matches, in name order (as Sphinx sorts them), without
/// the listing page itself.
fn glob(src: &Path, pattern: &str, page: &str) -> Vec<String> {
    let Ok(g) = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
    else {
        return Vec::new();
    };
    let mut found: Vec<String> = ignore::WalkBuilder::new(src)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            let rel = e
                .path()
                .strip_prefix(src)
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            let (stem, ext) = rel.rsplit_once('.')?;
            (SOURCES.contains(&ext) && g.is_match(stem) && rel != page).then_some(rel)
        })
        .collect();
    found.sort();
    found
}

/// A page's title for a section named after it: its first heading, else its name.
fn page_title(src: &Path, page: &str) -> String {
    let text = std::fs::read_to_string(src.join(page)).unwrap_or_default();
    let title = if page.ends_with(".md") {
        text.lines()
            .find_map(|l| l.strip_prefix("# ").map(|t| t.trim().to_string()))
    } else {
        crate::rst::to_markdown(&text).title
    };
    title.unwrap_or_else(|| {
        page.rsplit('/')
            .next()
            .unwrap_or(page)
            .trim_end_matches(".rst")
            .to_string()
    })
}

#[cfg(test)]
#[path = "sphinx_tests.rs"]
mod tests;
