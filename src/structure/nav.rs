//! Navigation files as their site generators read them: `mkdocs.yml`'s `nav:`, mdBook's
//! `SUMMARY.md` (parsed by `mdbook-summary`, mdBook's own parser), VitePress' sidebar and
//! Docusaurus' sidebars (read as plain data by `sidebar` and `docusaurus`), Sphinx's toctrees
//! (`sphinx`), Mintlify's `docs.json` (`mintlify`), Starlight's sidebar (`starlight`), found at or above a corpus folder, up to the project root.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_yaml_ng::Value;

use super::mintlify::Mintlify;
pub use super::navitems::{Nav, NavItem};
use super::starlight::Starlight;

/// The navigation that covers `root`: the nearest `mkdocs.yml`/`mkdocs.yaml`, VitePress config,
/// Docusaurus `sidebars.js` or `book.toml` at
/// or above it whose docs folder holds `root` or lies inside it. The search stops at `top` (the
/// project root: the folder of `c2s.toml`) or, without one, at the repository's root (the first
/// folder holding `.git`). A file that cannot be read or parsed is a warning (`Err`), and the
/// folders alone are followed.
pub fn find(root: &Path, top: Option<&Path>) -> Result<Option<Nav>, (PathBuf, String)> {
    for d in searched(root, top) {
        for name in ["mkdocs.yml", "mkdocs.yaml"] {
            let file = d.join(name);
            if file.is_file() {
                let nav = read_mkdocs(&file)?;
                if let Some(nav) = nav.filter(|n| covers(&n.docs_dir, root)) {
                    return Ok(Some(nav));
                }
            }
        }
        if let Some(config) = super::sidebar::config_in(d)
            && covers(d, root)
            && let Some(nav) = super::sidebar::read(&config, d)?
        {
            return Ok(Some(nav));
        }
        if let Some(sidebars) = super::docusaurus::sidebars_in(d) {
            let docs = d.join("docs");
            if covers(&docs, root)
                && let Some(nav) = super::docusaurus::read(&sidebars, &docs)?
            {
                return Ok(Some(nav));
            }
        }
        if let Some(nav) = book_at(d, root)? {
            return Ok(Some(nav));
        }
        if let Some(nav) = sphinx_at(d, root)? {
            return Ok(Some(nav));
        }
        if let Some(site) = mintlify_at(d, root)? {
            return Ok(Some(site.nav));
        }
        if let Some(nav) = starlight_at(d, root).map(|s| s.nav).transpose()?.flatten() {
            return Ok(Some(nav));
        }
    }
    Ok(None)
}

/// The Starlight site whose Astro config is in `dir`, when its pages' folder covers `root`.
fn starlight_at(dir: &Path, root: &Path) -> Option<Starlight> {
    let config = super::starlight::config_in(dir)?;
    if !covers(&dir.join(super::starlight::CONTENT), root) {
        return None;
    }
    super::starlight::read(&config).ok()
}

/// What the site generator covering `root` builds of its pages' folder (see [`SitePages`]), for
/// the sites whose folders hold more than their pages: Mintlify's and Starlight's.
pub fn site_pages(root: &Path, top: Option<&Path>) -> Option<SitePages> {
    searched(root, top).find_map(|d| {
        if let Some(m) = mintlify_at(d, root).ok().flatten() {
            return Some(SitePages {
                docs_dir: crate::paths::abs(&m.nav.docs_dir),
                not_pages: m.others,
                other_folders: m.other_folders,
                partials: vec!["snippets/"],
                why_format: "not a page: Mintlify builds only its .mdx and .md pages",
                why_partial: "a snippet: Mintlify builds files in snippets/ into the pages that import them",
            });
        }
        let s = starlight_at(d, root)?;
        Some(SitePages {
            docs_dir: crate::paths::abs(&s.docs_dir),
            not_pages: HashSet::new(),
            other_folders: s.other_folders,
            partials: Vec::new(),
            why_format: "not a page: Starlight builds only its .md and .mdx pages",
            why_partial: "",
        })
    })
}

/// How the site whose pages `root` holds is served, for links from its root.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Served {
    /// The base path when it is served below its host's root: Astro's `base` (Starlight),
    /// Docusaurus' `baseUrl`; `/docs/`, never `/`.
    pub base: Option<String>,
    /// The folder served at its root beside the pages (Astro's and VitePress' `public/`,
    /// Docusaurus' `static/`): `/logo.png` is `public/logo.png`.
    pub public: Option<PathBuf>,
    /// Moved pages (Mintlify's `redirects`): a root path, or a prefix ending in `/*`, and
    /// where it now is.
    pub redirects: Vec<(String, String)>,
}

impl Served {
    /// Where a root link (`/editor/drafts`) now points, when the site redirects it.
    pub fn redirect(&self, path: &str) -> Option<String> {
        let path = path.trim_end_matches('/');
        self.redirects.iter().find_map(|(from, to)| {
            if from.trim_end_matches('/') == path {
                return Some(to.clone());
            }
            let rest = path.strip_prefix(from.strip_suffix('*')?)?;
            Some(match to.strip_suffix('*') {
                Some(base) => format!("{base}{rest}"),
                None => to.clone(),
            })
        })
    }
}

/// How the site whose pages `root` holds is served (see [`Served`]); the default for a folder
/// of no such site.
pub fn served(root: &Path, top: Option<&Path>) -> Served {
    let mintlify = searched(root, top).find_map(|d| {
        let config = super::mintlify::config_in(d).filter(|_| covers(d, root))?;
        Some(super::mintlify::redirects(&config))
    });
    if let Some(redirects) = mintlify {
        return Served {
            redirects,
            ..Served::default()
        };
    }
    let found = searched(root, top).find_map(|d| {
        if let Some(c) = super::starlight::config_in(d)
            && covers(&d.join(super::starlight::CONTENT), root)
        {
            return Some((Some((c, "base")), d.join("public")));
        }
        if let Some(c) = super::docusaurus::config_in(d)
            && covers(&d.join("docs"), root)
        {
            return Some((Some((c, "baseUrl")), d.join("static")));
        }
        (super::sidebar::config_in(d).is_some() && covers(d, root))
            .then(|| (None, d.join("public")))
    });
    let Some((config, public)) = found else {
        return Served::default();
    };
    let base = config.and_then(|(file, key)| {
        let text = std::fs::read_to_string(file).ok()?;
        let base = super::js::string_at(&text, key)?;
        let base = base.trim_matches('/');
        (!base.is_empty() && !base.contains(['$', '{'])).then(|| format!("/{base}/"))
    });
    Served {
        base,
        public: public.is_dir().then_some(public),
        redirects: Vec::new(),
    }
}

/// What a site builds of its pages' folder: the files the walk marks as not pages.
#[derive(Debug, Clone, PartialEq)]
pub struct SitePages {
    pub docs_dir: PathBuf,
    /// Pages (relative to `docs_dir`) that only another language or version lists.
    pub not_pages: HashSet<String>,
    /// Folders (relative, ending in `/`) of the other languages' pages.
    pub other_folders: Vec<String>,
    /// Folders of files that pages include, not pages themselves (`snippets/`).
    pub partials: Vec<&'static str>,
    /// Why a file that is not Markdown is not a page, and why a partial is not.
    pub why_format: &'static str,
    pub why_partial: &'static str,
}

/// The Mintlify site whose configuration is in `dir`, when its folder covers `root`.
fn mintlify_at(dir: &Path, root: &Path) -> Result<Option<Mintlify>, (PathBuf, String)> {
    match super::mintlify::config_in(dir) {
        Some(config) if covers(dir, root) => super::mintlify::read(&config),
        _ => Ok(None),
    }
}

/// The toctrees of the Sphinx project whose `conf.py` is in `dir` (or, for the corpus folder
/// itself, in its `source/`), when its source folder covers `root`.
fn sphinx_at(dir: &Path, root: &Path) -> Result<Option<Nav>, (PathBuf, String)> {
    let conf = super::sphinx::conf_in(dir).or_else(|| {
        (crate::paths::abs(dir) == crate::paths::abs(root))
            .then(|| super::sphinx::conf_in(&dir.join("source")))
            .flatten()
    });
    match conf {
        Some(conf) if covers(conf.parent().unwrap_or(dir), root) => super::sphinx::read(&conf),
        _ => Ok(None),
    }
}

/// The source folder of the Sphinx project that covers `root`, if one does (see [`find`]).
pub fn sphinx_source(root: &Path, top: Option<&Path>) -> Option<PathBuf> {
    searched(root, top).find_map(|d| {
        let conf = super::sphinx::conf_in(d).or_else(|| {
            (d == root)
                .then(|| super::sphinx::conf_in(&d.join("source")))
                .flatten()
        })?;
        let src = conf.parent()?.to_path_buf();
        covers(&src, root).then(|| crate::paths::abs(&src))
    })
}

/// The folders a navigation file is looked for in: `root` and those above it, up to `top` or,
/// without one, the repository's root.
fn searched<'a>(root: &'a Path, top: Option<&'a Path>) -> impl Iterator<Item = &'a Path> {
    let mut next = Some(root);
    std::iter::from_fn(move || {
        let d = next?;
        let last = Some(d) == top || (top.is_none() && d.join(".git").exists());
        next = if last { None } else { d.parent() };
        Some(d)
    })
}

/// The summary of the mdBook whose `book.toml` is in `dir`, when its `src` covers `root`.
fn book_at(dir: &Path, root: &Path) -> Result<Option<Nav>, (PathBuf, String)> {
    let book = dir.join("book.toml");
    if !book.is_file() {
        return Ok(None);
    }
    let src = book_src(&book)?;
    let summary = src.join("SUMMARY.md");
    if covers(&src, root) && summary.is_file() {
        return read_summary(&summary, src).map(Some);
    }
    Ok(None)
}

/// The chapters of the mdBook that covers `root`, if one does: its `src` folder and the paths
/// below it that its `SUMMARY.md` lists. mdBook builds those alone; another Markdown file in
/// `src` is a file chapters include, not a page.
pub fn book_chapters(root: &Path, top: Option<&Path>) -> Option<(PathBuf, HashSet<String>)> {
    // Only `book.toml` is looked for: the walk reads no other navigation file (the tree step
    // reads them), and most repos have no book.
    let nav = searched(root, top)
        .find_map(|d| book_at(d, root).transpose())?
        .ok()?;
    fn add(items: &[NavItem], out: &mut HashSet<String>) {
        for item in items {
            match item {
                NavItem::Page { path, .. } => {
                    out.insert(path.trim_start_matches("./").to_string());
                }
                NavItem::Section { items, .. } => add(items, out),
            }
        }
    }
    let mut listed = HashSet::new();
    add(&nav.items, &mut listed);
    Some((crate::paths::abs(&nav.docs_dir), listed))
}

/// Whether a corpus folder and a docs folder overlap (one holds the other).
fn covers(docs_dir: &Path, root: &Path) -> bool {
    let (a, b) = (crate::paths::abs(docs_dir), crate::paths::abs(root));
    b.starts_with(&a) || a.starts_with(&b)
}

fn has_book_toml_near(dir: &Path) -> bool {
    dir.join("book.toml").is_file() || dir.parent().is_some_and(|p| p.join("book.toml").is_file())
}

/// Whether `file` is mdBook's `SUMMARY.md` (the navigation itself, not a page): named so, with a
/// `book.toml` beside it or in the folder above.
pub fn is_book_summary(file: &Path) -> bool {
    file.file_name().is_some_and(|n| n == "SUMMARY.md")
        && file.parent().is_some_and(has_book_toml_near)
}

/// The `src` folder of a book (`[book] src`, default `src`).
pub(super) fn book_src(book: &Path) -> Result<PathBuf, (PathBuf, String)> {
    let text = std::fs::read_to_string(book).map_err(|e| (book.to_path_buf(), e.to_string()))?;
    let value: toml::Value = toml::from_str(&text).map_err(|e| {
        (
            book.to_path_buf(),
            format!(
                "not valid TOML ({}); its SUMMARY.md is not followed",
                e.message()
            ),
        )
    })?;
    let src = value
        .get("book")
        .and_then(|b| b.get("src"))
        .and_then(|s| s.as_str())
        .unwrap_or("src");
    Ok(book.parent().unwrap_or(Path::new(".")).join(src))
}

/// Reads mdBook's `SUMMARY.md`: prefix chapters, part titles (each a section of the chapters that
/// follow it), nested chapters, suffix chapters. Draft chapters (no file) are left out.
fn read_summary(file: &Path, docs_dir: PathBuf) -> Result<Nav, (PathBuf, String)> {
    use mdbook_summary::SummaryItem;
    let text = std::fs::read_to_string(file).map_err(|e| (file.to_path_buf(), e.to_string()))?;
    let summary = mdbook_summary::parse_summary(&text).map_err(|e| {
        (
            file.to_path_buf(),
            format!("mdBook cannot parse it ({e:#}); the folders alone are followed"),
        )
    })?;
    fn chapters(items: &[SummaryItem]) -> Vec<NavItem> {
        let mut out: Vec<NavItem> = Vec::new();
        let mut part: Option<(String, Vec<NavItem>)> = None;
        for item in items {
            let entry = match item {
                SummaryItem::PartTitle(t) => {
                    if let Some((title, items)) = part.take() {
                        out.push(NavItem::Section { title, items });
                    }
                    part = Some((t.clone(), Vec::new()));
                    continue;
                }
                SummaryItem::Separator => continue,
                SummaryItem::Link(link) => {
                    let nested = chapters(&link.nested_items);
                    let page = link.location.as_ref().filter(|p| !p.as_os_str().is_empty());
                    match (page, nested.is_empty()) {
                        (Some(p), true) => NavItem::Page {
                            title: Some(link.name.clone()),
                            path: p.to_string_lossy().replace('\\', "/"),
                        },
                        (page, false) => {
                            let mut items = Vec::with_capacity(nested.len() + 1);
                            if let Some(p) = page {
                                items.push(NavItem::Page {
                                    title: Some(link.name.clone()),
                                    path: p.to_string_lossy().replace('\\', "/"),
                                });
                            }
                            items.extend(nested);
                            NavItem::Section {
                                title: link.name.clone(),
                                items,
                            }
                        }
                        (None, true) => continue,
                    }
                }
                _ => continue,
            };
            match &mut part {
                Some((_, items)) => items.push(entry),
                None => out.push(entry),
            }
        }
        if let Some((title, items)) = part {
            out.push(NavItem::Section { title, items });
        }
        out
    }
    let mut items = chapters(&summary.prefix_chapters);
    items.extend(chapters(&summary.numbered_chapters));
    items.extend(chapters(&summary.suffix_chapters));
    Ok(Nav {
        file: file.to_path_buf(),
        docs_dir,
        items,
    })
}

/// Reads `mkdocs.yml`: its `docs_dir` (default `docs`) and `nav:`. Without a `nav:`, `None`:
/// MkDocs then lists the folders, as c2s does.
fn read_mkdocs(file: &Path) -> Result<Option<Nav>, (PathBuf, String)> {
    let text = std::fs::read_to_string(file).map_err(|e| (file.to_path_buf(), e.to_string()))?;
    let value: Value = serde_yaml_ng::from_str(&text).map_err(|e| {
        let at = e
            .location()
            .map(|l| format!(" at line {}", l.line()))
            .unwrap_or_default();
        (
            file.to_path_buf(),
            format!("not valid YAML{at} ({e}); its nav is not followed"),
        )
    })?;
    let dir = file.parent().unwrap_or(Path::new("."));
    let docs_dir = value
        .get("docs_dir")
        .and_then(Value::as_str)
        .unwrap_or("docs");
    let Some(Value::Sequence(nav)) = value.get("nav") else {
        return Ok(None);
    };
    Ok(Some(Nav {
        file: file.to_path_buf(),
        docs_dir: dir.join(docs_dir),
        items: mkdocs_items(nav),
    }))
}

/// The entries of a `nav:` list: `path`, `Title: path`, `Title: [entries]`; links to other
/// sites are left out.
fn mkdocs_items(list: &[Value]) -> Vec<NavItem> {
    let mut out = Vec::new();
    for v in list {
        match untag(v) {
            Value::String(path) => out.extend(page(None, path)),
            Value::Mapping(map) => {
                for (k, v) in map {
                    let title = match untag(k) {
                        Value::String(s) => s.clone(),
                        _ => continue,
                    };
                    match untag(v) {
                        Value::String(path) => out.extend(page(Some(title), path)),
                        Value::Sequence(items) => out.push(NavItem::Section {
                            title,
                            items: mkdocs_items(items),
                        }),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn untag(v: &Value) -> &Value {
    match v {
        Value::Tagged(t) => &t.value,
        v => v,
    }
}

fn page(title: Option<String>, path: &str) -> Option<NavItem> {
    let external = path.contains("://") || path.starts_with("mailto:");
    (!external).then(|| NavItem::Page {
        title,
        path: path.trim_start_matches("./").to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mkdocs_nav_entries() {
        let yaml: Value = serde_yaml_ng::from_str(
            "- index.md\n- Guides:\n    - guides/index.md\n    - Tools: guides/tools.md\n- Site: https://example.com\n",
        )
        .unwrap();
        let items = mkdocs_items(yaml.as_sequence().unwrap());
        assert_eq!(
            items,
            vec![
                NavItem::Page {
                    title: None,
                    path: "index.md".into()
                },
                NavItem::Section {
                    title: "Guides".into(),
                    items: vec![
                        NavItem::Page {
                            title: None,
                            path: "guides/index.md".into()
                        },
                        NavItem::Page {
                            title: Some("Tools".into()),
                            path: "guides/tools.md".into()
                        },
                    ]
                },
            ]
        );
    }
}
