//! VitePress' sidebar (`themeConfig.sidebar` in `.vitepress/config.{ts,mts,js,mjs}`) read as
//! plain data, without running JavaScript: the value after `sidebar:` must be literals only
//! (objects, arrays, strings, numbers, booleans); anything else (a variable, a call, a template
//! with `${}`) makes it unreadable, and the folders are followed instead, with a note.

use std::path::{Path, PathBuf};

use super::js::{Js, Parser, find_key, get};
use super::navitems::{Nav, NavItem};

/// The config files VitePress reads, in its order.
pub const CONFIGS: [&str; 4] = ["config.ts", "config.mts", "config.js", "config.mjs"];

/// The VitePress config in `dir/.vitepress/`, if there is one.
pub fn config_in(dir: &Path) -> Option<PathBuf> {
    CONFIGS
        .iter()
        .map(|c| dir.join(".vitepress").join(c))
        .find(|p| p.is_file())
}

/// The sidebar of the VitePress config `file` (whose site's pages are under `docs_dir`), or
/// None when it has none.
pub fn read(file: &Path, docs_dir: &Path) -> Result<Option<Nav>, (PathBuf, String)> {
    let text = std::fs::read_to_string(file).map_err(|e| (file.to_path_buf(), e.to_string()))?;
    let Some(at) = find_key(&text, "sidebar") else {
        return Ok(None);
    };
    let mut p = Parser {
        s: text.as_bytes(),
        i: at,
    };
    let value = p.value().map_err(|(i, why)| {
        let line = text[..i.min(text.len())].matches('\n').count() + 1;
        (
            file.to_path_buf(),
            format!(
                "its sidebar is not plain data at line {line} ({why}: reading it needs JavaScript to run); the folders are followed"
            ),
        )
    })?;
    let items = match value {
        // One sidebar for the whole site.
        Js::Arr(list) => items(&list, ""),
        // A sidebar per path prefix: a section each, in the file's order.
        Js::Obj(fields) => fields
            .iter()
            .filter_map(|(prefix, v)| {
                let (list, base) = match v {
                    Js::Arr(l) => (l.as_slice(), ""),
                    Js::Obj(o) => (
                        get(o, "items").and_then(Js::arr)?,
                        get(o, "base").and_then(Js::str).unwrap_or(""),
                    ),
                    _ => return None,
                };
                let inner = items(list, base);
                let title = prefix.trim_matches('/').rsplit('/').next().unwrap_or("");
                (!inner.is_empty()).then(|| NavItem::Section {
                    title: crate::text::capitalize(&title.replace(['-', '_'], " ")),
                    items: inner,
                })
            })
            .collect(),
        _ => {
            let line = text[..at].matches('\n').count() + 1;
            return Err((
                file.to_path_buf(),
                format!(
                    "its sidebar (line {line}) is not plain data: reading it needs JavaScript to run; the folders are followed"
                ),
            ));
        }
    };
    Ok((!items.is_empty()).then(|| Nav {
        file: file.to_path_buf(),
        docs_dir: docs_dir.to_path_buf(),
        items,
    }))
}

/// Sidebar items: `{text, link}` a page, `{text, items}` a section (its own `link` its first
/// page); links to other sites are left out.
fn items(list: &[Js], base: &str) -> Vec<NavItem> {
    let mut out = Vec::new();
    for item in list {
        let Js::Obj(o) = item else { continue };
        let text = get(o, "text").and_then(Js::str).map(str::to_string);
        let base = get(o, "base").and_then(Js::str).unwrap_or(base);
        let page = get(o, "link")
            .and_then(Js::str)
            .and_then(|l| page_path(base, l))
            .map(|path| NavItem::Page {
                title: text.clone(),
                path,
            });
        match get(o, "items").and_then(Js::arr) {
            Some(kids) => {
                let mut inner: Vec<NavItem> = page.into_iter().collect();
                inner.extend(items(kids, base));
                if !inner.is_empty() {
                    out.push(NavItem::Section {
                        title: text.unwrap_or_default(),
                        items: inner,
                    });
                }
            }
            None => out.extend(page),
        }
    }
    out
}

/// A sidebar link as a page path below the docs folder: `/guide/features` is
/// `guide/features.md`, `/guide/` is `guide/index.md`; None for another site's address.
fn page_path(base: &str, link: &str) -> Option<String> {
    if link.contains("://") || link.starts_with("mailto:") {
        return None;
    }
    let link = link.split(['#', '?']).next().unwrap_or("");
    let full = if link.starts_with('/') {
        link.to_string()
    } else {
        format!("{base}{link}")
    };
    let p = full.trim_start_matches('/');
    let p = p.strip_suffix(".html").unwrap_or(p);
    Some(if p.is_empty() || p.ends_with('/') {
        format!("{p}index.md")
    } else if p.ends_with(".md") {
        p.to_string()
    } else {
        format!("{p}.md")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sidebar_per_prefix_gives_sections_of_pages() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = tmp.path().join("config.ts");
        std::fs::write(
            &cfg,
            "import x from 'y'\nexport default defineConfig({\n  themeConfig: {\n    nav: [{ text: 'Guide', link: '/guide/' }],\n    // the sidebar\n    sidebar: {\n      '/guide/': [\n        {\n          text: 'Introduction',\n          items: [\n            { text: 'Getting Started', link: '/guide/' },\n            { text: \"Why\", link: '/guide/why' },\n            { text: 'Discord', link: 'https://chat.example' },\n          ],\n        },\n      ],\n      '/config/': { base: '/config/', items: [{ text: 'Shared', link: 'shared-options' }] },\n    },\n  },\n})\n",
        )
        .unwrap();
        let nav = read(&cfg, tmp.path()).unwrap().unwrap();
        let page = |t: &str, p: &str| NavItem::Page {
            title: Some(t.into()),
            path: p.into(),
        };
        assert_eq!(
            nav.items,
            vec![
                NavItem::Section {
                    title: "Guide".into(),
                    items: vec![NavItem::Section {
                        title: "Introduction".into(),
                        items: vec![
                            page("Getting Started", "guide/index.md"),
                            page("Why", "guide/why.md")
                        ],
                    }],
                },
                NavItem::Section {
                    title: "Config".into(),
                    items: vec![page("Shared", "config/shared-options.md")],
                },
            ]
        );
    }

    #[test]
    fn what_needs_javascript_is_left_out_and_a_computed_sidebar_named() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = tmp.path().join("config.mts");
        std::fs::write(
            &cfg,
            "export default {\n  themeConfig: {\n    sidebar: makeSidebar(pages),\n  },\n}\n",
        )
        .unwrap();
        let (file, why) = read(&cfg, tmp.path()).unwrap_err();
        assert_eq!(file, cfg);
        assert!(
            why.contains("line 3") && why.contains("folders are followed"),
            "{why}"
        );
        // A computed entry is left out of a sidebar that is otherwise data: a computed title
        // leaves the page its own title, a computed list its section.
        std::fs::write(
            &cfg,
            "export default { themeConfig: { sidebar: [{ text: `From v${v - 1}`, link: '/migration' }, { text: 'More', items: more() }, { text: 'B', link: '/b' }] } }",
        )
        .unwrap();
        let nav = read(&cfg, tmp.path()).unwrap().unwrap();
        assert_eq!(
            nav.items,
            vec![
                NavItem::Page {
                    title: None,
                    path: "migration.md".into()
                },
                NavItem::Page {
                    title: Some("B".into()),
                    path: "b.md".into()
                },
            ]
        );
    }
}
