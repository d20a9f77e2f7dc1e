//! Astro Starlight's sidebar and locales (`starlight({ sidebar, locales })` in
//! `astro.config.{mjs,ts,mts,js}`), read as data without running JavaScript: pages are
//! `src/content/docs/`; a sidebar entry is a page's slug, a `{label, slug}` or internal
//! `{label, link}`, a `{label, items}` group or a `{label, autogenerate: {directory}}` group
//! (the folder's pages by their frontmatter `sidebar.order`, then by name; its subfolders as
//! groups); the `starlight-sidebar-topics` plugin's topics are groups too (a topic's `link`
//! its first page). Of the locales, the root one (or `defaultLocale`) is followed: the others' folders
//! are translations, not pages of the corpus.

use std::path::{Path, PathBuf};

use super::js::{Js, Parser, find_key, get};
use super::navitems::{Nav, NavItem};

/// The config files Astro reads, in its order.
pub const CONFIGS: [&str; 5] = [
    "astro.config.mjs",
    "astro.config.ts",
    "astro.config.mts",
    "astro.config.js",
    "astro.config.cjs",
];

/// The call of the `starlight-sidebar-topics` plugin, whose argument is the sidebar.
const TOPICS: &str = "starlightSidebarTopics(";

/// Where Starlight keeps the pages, relative to the site's folder.
pub const CONTENT: &str = "src/content/docs";

/// A Starlight site: its pages' folder, its sidebar (None when it has none; an error naming
/// the line when it is not data), and the folders of the locales that are not followed (`de/`).
#[derive(Debug, Clone, PartialEq)]
pub struct Starlight {
    pub docs_dir: PathBuf,
    pub nav: Result<Option<Nav>, (PathBuf, String)>,
    pub other_folders: Vec<String>,
}

/// The Astro config in `dir` that sets up Starlight, when `dir` has its pages' folder.
pub fn config_in(dir: &Path) -> Option<PathBuf> {
    if !dir.join(CONTENT).is_dir() {
        return None;
    }
    CONFIGS
        .iter()
        .map(|c| dir.join(c))
        .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("@astrojs/starlight")))
}

/// The Starlight site configured by `file`; a config that cannot be read is an error.
pub fn read(file: &Path) -> Result<Starlight, (PathBuf, String)> {
    let text = std::fs::read_to_string(file).map_err(|e| (file.to_path_buf(), e.to_string()))?;
    let site = file.parent().unwrap_or(Path::new("."));
    let (default, others) = locales(&text);
    let docs_dir = match &default {
        Some(d) => site.join(CONTENT).join(d),
        None => site.join(CONTENT),
    };
    Ok(Starlight {
        docs_dir: site.join(CONTENT),
        nav: sidebar(&text, file, docs_dir),
        other_folders: others.into_iter().map(|o| format!("{o}/")).collect(),
    })
}

/// The sidebar of the config `text` over the pages of `docs_dir` (the followed locale's).
fn sidebar(text: &str, file: &Path, docs_dir: PathBuf) -> Result<Option<Nav>, (PathBuf, String)> {
    // The sidebar, or the topics of the `starlight-sidebar-topics` plugin (`{label, link,
    // items}` each: a section).
    let topics = text.find(TOPICS).map(|i| i + TOPICS.len());
    let Some(at) = find_key(text, "sidebar").or(topics) else {
        return Ok(None);
    };
    let mut p = Parser {
        s: text.as_bytes(),
        i: at,
    };
    let fail = |i: usize, why: &str| {
        let line = text[..i.min(text.len())].matches('\n').count() + 1;
        (
            file.to_path_buf(),
            format!(
                "its sidebar is not plain data at line {line} ({why}: reading it needs JavaScript to run); the folders are followed"
            ),
        )
    };
    let value = p.value().map_err(|(i, why)| fail(i, why))?;
    if value == Js::Unknown {
        return Err(fail(at, "a name or a call"));
    }
    let items = value
        .arr()
        .map(|l| entries(l, &docs_dir))
        .unwrap_or_default();
    Ok((!items.is_empty()).then(|| Nav {
        file: file.to_path_buf(),
        docs_dir,
        items,
    }))
}

/// The folder of the followed locale (None: the root) and the other locales' folders, from
/// the `locales` object (written in the call, or assigned to a `const locales`) and
/// `defaultLocale`.
fn locales(text: &str) -> (Option<String>, Vec<String>) {
    let at = find_key(text, "locales").or_else(|| assigned(text, "locales"));
    let Some(Js::Obj(fields)) = at.and_then(|i| {
        Parser {
            s: text.as_bytes(),
            i,
        }
        .value()
        .ok()
    }) else {
        return (None, Vec::new());
    };
    let keys: Vec<String> = fields.iter().map(|(k, _)| k.clone()).collect();
    let default = if keys.iter().any(|k| k == "root") {
        None
    } else {
        find_key(text, "defaultLocale")
            .and_then(|i| {
                Parser {
                    s: text.as_bytes(),
                    i,
                }
                .value()
                .ok()
            })
            .and_then(|v| v.str().map(str::to_string))
            .or_else(|| keys.first().cloned())
    };
    let others = keys
        .into_iter()
        .filter(|k| k != "root" && Some(k) != default.as_ref())
        .collect();
    (default, others)
}

/// Where the value assigned to `const NAME =` (or `let`, `var`) starts.
fn assigned(text: &str, name: &str) -> Option<usize> {
    ["const", "let", "var"].iter().find_map(|kw| {
        let decl = format!("{kw} {name}");
        let at = text.find(&decl)? + decl.len();
        let rest = &text[at..];
        // A type annotation (`: StarlightUserConfig['locales']`) may come before the `=`.
        let eq = rest.find('=')?;
        (!rest[..eq].contains(['\n', ';']) || rest[..eq].trim_start().starts_with(':'))
            .then_some(at + eq + 1)
    })
}

fn entries(list: &[Js], docs: &Path) -> Vec<NavItem> {
    list.iter().flat_map(|e| entry(e, docs)).collect()
}

fn entry(e: &Js, docs: &Path) -> Vec<NavItem> {
    let o = match e {
        Js::Str(slug) => return page(slug, None, docs).into_iter().collect(),
        Js::Obj(o) => o,
        _ => return Vec::new(),
    };
    let label = get(o, "label").and_then(Js::str).map(str::to_string);
    if let Some(slug) = get(o, "slug").and_then(Js::str) {
        return page(slug, label, docs).into_iter().collect();
    }
    let link = get(o, "link")
        .and_then(Js::str)
        .filter(|l| l.starts_with('/'))
        .and_then(|l| page(l, label.clone(), docs));
    let Some(list) = get(o, "items").or_else(|| get(o, "autogenerate")) else {
        return link.into_iter().collect();
    };
    let mut items: Vec<NavItem> = link.into_iter().collect();
    items.extend(match list {
        Js::Obj(a) => get(a, "directory")
            .and_then(Js::str)
            .map(|d| folder(&docs.join(d.trim_matches('/')), docs))
            .unwrap_or_default(),
        list => list.arr().map(|l| entries(l, docs)).unwrap_or_default(),
    });
    match label {
        Some(title) if !items.is_empty() => vec![NavItem::Section { title, items }],
        _ => items,
    }
}

/// A slug's page (`guides/i18n` is `guides/i18n.md`, `.mdx` or `guides/i18n/index.md`), if it
/// is one.
fn page(slug: &str, title: Option<String>, docs: &Path) -> Option<NavItem> {
    let slug = slug.trim_matches('/');
    let tries: Vec<String> = match slug {
        "" => vec!["index.mdx".into(), "index.md".into()],
        s => ["mdx", "md"]
            .iter()
            .map(|e| format!("{s}.{e}"))
            .chain(["index.mdx", "index.md"].iter().map(|i| format!("{s}/{i}")))
            .collect(),
    };
    let path = tries.into_iter().find(|t| docs.join(t).is_file())?;
    Some(NavItem::Page { title, path })
}

/// An autogenerated group: the folder's pages by `sidebar.order` then name, then its
/// subfolders as groups titled by their names.
fn folder(dir: &Path, docs: &Path) -> Vec<NavItem> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(['.', '_']))
        })
        .collect();
    found.sort();
    let mut pages: Vec<(Option<f64>, NavItem)> = Vec::new();
    let mut groups = Vec::new();
    for p in found {
        let rel = p
            .strip_prefix(docs)
            .unwrap_or(&p)
            .to_string_lossy()
            .replace('\\', "/");
        if p.is_dir() {
            let items = folder(&p, docs);
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .replace(['-', '_'], " ");
            if !items.is_empty() {
                groups.push(NavItem::Section {
                    title: crate::text::capitalize(&name),
                    items,
                });
            }
        } else if rel.ends_with(".md") || rel.ends_with(".mdx") {
            let item = NavItem::Page {
                title: None,
                path: rel,
            };
            pages.push((order(&p), item));
        }
    }
    pages.sort_by(|a, b| super::by_position(a.0, b.0));
    pages.into_iter().map(|(_, i)| i).chain(groups).collect()
}

/// A page's `sidebar.order` frontmatter.
fn order(file: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(file).ok()?;
    let front = text.strip_prefix("---\n")?.split("\n---").next()?;
    let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(front).ok()?;
    value.get("sidebar")?.get("order")?.as_f64()
}

#[cfg(test)]
#[path = "starlight_tests.rs"]
mod tests;
