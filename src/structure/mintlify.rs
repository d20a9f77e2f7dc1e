//! Mintlify's navigation (`docs.json`, or the older `mint.json`) read as the site shows it:
//! its tabs, anchors, dropdowns, products, menus and groups are sections in their order, a
//! group's `root` page first; pages are named by their path without extension. Of its
//! languages and versions the default one is followed: the others' pages are translations or
//! other versions' copies of it, not pages of the corpus (see [`Mintlify::others`]).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::navitems::{Nav, NavItem};

/// The configuration files Mintlify reads, in its order.
pub const FILES: [&str; 2] = ["docs.json", "mint.json"];

/// The keys whose entries are sections, in the order Mintlify nests them.
const SECTIONS: [&str; 6] = ["products", "tabs", "anchors", "dropdowns", "menu", "groups"];

/// The keys that title a section: a product, tab, anchor, dropdown, menu item or group.
const TITLES: [&str; 6] = ["product", "tab", "anchor", "dropdown", "item", "group"];

/// `$ref`s nested deeper than this are left out (a file that refers back to itself).
const MAX_REFS: usize = 8;

/// A Mintlify site's navigation and what it says is not a page of the default language.
#[derive(Debug, Clone, PartialEq)]
pub struct Mintlify {
    pub nav: Nav,
    /// Pages (paths relative to the docs folder, with their extension) that only another
    /// language or version lists.
    pub others: HashSet<String>,
    /// Folders (relative, ending in `/`) of the other languages' or versions' pages (`es/`,
    /// `v1/`), when each of their listed pages is in their folder.
    pub other_folders: Vec<String>,
}

/// The Mintlify configuration in `dir`: a `docs.json` or `mint.json` that holds a
/// `navigation` and a `name` (a `docs.json` of another tool has neither). One that is not JSON
/// but names a `navigation` is one too: reading it then says where it is broken.
pub fn config_in(dir: &Path) -> Option<PathBuf> {
    FILES.iter().map(|f| dir.join(f)).find(|p| {
        let Ok(text) = std::fs::read_to_string(p) else {
            return false;
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(v) => v.get("navigation").is_some() && v.get("name").is_some(),
            Err(_) => text.contains("\"navigation\""),
        }
    })
}

/// The navigation of the Mintlify site configured by `file` (its pages are in the file's
/// folder); None when it lists no page. A file that is not JSON is an error naming its line.
pub fn read(file: &Path) -> Result<Option<Mintlify>, (PathBuf, String)> {
    let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let config = load(file)?;
    let mut reader = Reader {
        dir: dir.clone(),
        listed: HashSet::new(),
        others: Vec::new(),
        refs: 0,
    };
    let nav = config.get("navigation").cloned().unwrap_or(Value::Null);
    let items = if file.file_name().is_some_and(|n| n == "mint.json") {
        reader.legacy(&nav, &config)
    } else {
        reader.node(&nav, file)
    };
    if items.is_empty() {
        return Ok(None);
    }
    let mut others = HashSet::new();
    let mut other_folders = Vec::new();
    for (code, pages) in std::mem::take(&mut reader.others) {
        // The folder named as it is, when it holds every page it lists (or it lists none) and
        // none that the followed navigation lists.
        let folder = code.map(|c| format!("{c}/"));
        let is_its = |f: &String| {
            dir.join(f).is_dir()
                && pages.iter().all(|p| p.starts_with(f.as_str()))
                && !reader.listed.iter().any(|p| p.starts_with(f.as_str()))
        };
        if let Some(f) = folder.filter(is_its) {
            other_folders.push(f);
        }
        others.extend(pages.into_iter().filter(|p| !reader.listed.contains(p)));
    }
    Ok(Some(Mintlify {
        nav: Nav {
            file: file.to_path_buf(),
            docs_dir: dir,
            items,
        },
        others,
        other_folders,
    }))
}

/// The redirects of the Mintlify site configured by `file` (`"redirects"`: a list of
/// `{source, destination}`, or a `$ref` to a file of one), as root paths; none when it has
/// none or they cannot be read.
pub fn redirects(file: &Path) -> Vec<(String, String)> {
    let Ok(config) = load(file) else {
        return Vec::new();
    };
    let mut list = config.get("redirects").cloned().unwrap_or(Value::Null);
    if let Some(r) = list.get("$ref").and_then(Value::as_str) {
        list = load(&file.parent().unwrap_or(Path::new(".")).join(r)).unwrap_or(Value::Null);
    }
    let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    list.as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|r| Some((field(r, "source")?, field(r, "destination")?)))
        .filter(|(from, to)| from.starts_with('/') && to.starts_with('/'))
        .collect()
}

/// The JSON of `file`; an error names the file's line and column.
fn load(file: &Path) -> Result<Value, (PathBuf, String)> {
    let text = std::fs::read_to_string(file).map_err(|e| (file.to_path_buf(), e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| {
        (
            file.to_path_buf(),
            format!(
                "not JSON at line {}, column {} ({e}); the folders are followed",
                e.line(),
                e.column()
            ),
        )
    })
}

struct Reader {
    dir: PathBuf,
    /// The pages the followed navigation lists.
    listed: HashSet<String>,
    /// Each other language (its code) or version (its name), with the pages it lists.
    others: Vec<(Option<String>, Vec<String>)>,
    refs: usize,
}

impl Reader {
    /// The entries of a navigation value: a page, a list, or an object of sections.
    fn node(&mut self, v: &Value, from: &Path) -> Vec<NavItem> {
        match v {
            Value::String(p) => self.page(p).into_iter().collect(),
            Value::Array(list) => list.iter().flat_map(|i| self.node(i, from)).collect(),
            Value::Object(o) => self.object(o, from),
            _ => Vec::new(),
        }
    }

    fn object(&mut self, o: &Map<String, Value>, from: &Path) -> Vec<NavItem> {
        if let Some(r) = o.get("$ref").and_then(Value::as_str) {
            return self.reference(r, from);
        }
        let mut items: Vec<NavItem> = Vec::new();
        if let Some(root) = o.get("root").and_then(Value::as_str) {
            items.extend(self.page(root));
        }
        for key in ["languages", "versions"] {
            if let Some(Value::Array(list)) = o.get(key) {
                items.extend(self.default_of(list, key == "languages", from));
            }
        }
        for key in SECTIONS {
            if let Some(list) = o.get(key) {
                items.extend(self.node(list, from));
            }
        }
        if let Some(pages) = o.get("pages") {
            items.extend(self.node(pages, from));
        }
        let title = TITLES
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_str))
            .map(str::trim)
            .filter(|t| !t.is_empty());
        match title {
            Some(t) if !items.is_empty() => vec![NavItem::Section {
                title: t.to_string(),
                items,
            }],
            _ => items,
        }
    }

    /// `{"$ref": "./es.json"}`: the object in that file, relative to the file that refers to it.
    fn reference(&mut self, r: &str, from: &Path) -> Vec<NavItem> {
        if self.refs >= MAX_REFS {
            return Vec::new();
        }
        let file = from.parent().unwrap_or(Path::new(".")).join(r);
        let Ok(v) = load(&file) else {
            return Vec::new();
        };
        self.refs += 1;
        let items = self.node(&v, &file);
        self.refs -= 1;
        items
    }

    /// The default entry of a language or version switch (`"default": true`, else English for
    /// languages, else the first); the others' pages are noted, not followed.
    fn default_of(&mut self, list: &[Value], languages: bool, from: &Path) -> Vec<NavItem> {
        let resolved: Vec<(Value, PathBuf)> = list
            .iter()
            .map(|v| match v.get("$ref").and_then(Value::as_str) {
                Some(r) => {
                    let file = from.parent().unwrap_or(Path::new(".")).join(r);
                    (load(&file).unwrap_or(Value::Null), file)
                }
                None => (v.clone(), from.to_path_buf()),
            })
            .collect();
        let flag = |v: &Value, k: &str| v.get(k).and_then(Value::as_bool) == Some(true);
        let code = |v: &Value| {
            v.get("language")
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let chosen = resolved
            .iter()
            .position(|(v, _)| flag(v, "default"))
            .or_else(|| {
                languages
                    .then(|| {
                        resolved
                            .iter()
                            .position(|(v, _)| code(v).as_deref() == Some("en"))
                    })
                    .flatten()
            })
            .unwrap_or(0);
        let mut items = Vec::new();
        for (i, (v, file)) in resolved.iter().enumerate() {
            if i == chosen {
                items = self.node(v, file);
                continue;
            }
            // A language's code, or a version's name: a folder of its pages, when all are there.
            let name = v.get(if languages { "language" } else { "version" });
            self.note_other(v, name.and_then(Value::as_str).map(str::to_string), file);
        }
        items
    }

    /// Notes the pages another language or version (`name`: its code, its name) lists in `v`,
    /// not following them.
    fn note_other(&mut self, v: &Value, name: Option<String>, file: &Path) {
        let mut other = Reader {
            dir: self.dir.clone(),
            listed: HashSet::new(),
            others: Vec::new(),
            refs: self.refs + 1,
        };
        other.node(v, file);
        let mut pages: Vec<String> = other.listed.into_iter().collect();
        pages.sort();
        self.others.push((name, pages));
    }

    /// A page entry: its file, relative to the docs folder, when it is one (an OpenAPI
    /// operation such as `GET /users` is not a file).
    fn page(&mut self, p: &str) -> Option<NavItem> {
        let p = p.trim().trim_start_matches('/');
        if p.is_empty() || p.contains(' ') {
            return None;
        }
        let named = (p.ends_with(".md") || p.ends_with(".mdx")).then(|| p.to_string());
        let path = named
            .into_iter()
            .chain([format!("{p}.mdx"), format!("{p}.md")])
            .find(|f| self.dir.join(f).is_file())?;
        self.listed.insert(path.clone());
        Some(NavItem::Page { title: None, path })
    }

    /// `mint.json`: `navigation` is a list of groups; its `tabs` and `anchors` (`name`, `url`)
    /// gather the groups whose pages are under their `url`, after the groups of no tab. Of
    /// `versions`, the first is followed.
    fn legacy(&mut self, nav: &Value, config: &Value) -> Vec<NavItem> {
        let here = self.dir.join("mint.json");
        // The first of `versions` is the default; a group of another version is not followed.
        let default = config
            .get("versions")
            .and_then(Value::as_array)
            .and_then(|v| v.first())
            .and_then(|v| v.as_str().or_else(|| v.get("name").and_then(Value::as_str)));
        let mut groups: Vec<(String, NavItem)> = Vec::new();
        let mut other: Vec<(String, Vec<Value>)> = Vec::new();
        for g in nav.as_array().map(Vec::as_slice).unwrap_or_default() {
            let version = g.get("version").and_then(Value::as_str);
            if let Some(v) = version.filter(|v| default.is_some_and(|d| d != *v)) {
                match other.iter_mut().find(|(name, _)| name == v) {
                    Some((_, pages)) => pages.extend(g.get("pages").cloned()),
                    None => {
                        other.push((v.to_string(), g.get("pages").cloned().into_iter().collect()))
                    }
                }
                continue;
            }
            let title = g.get("group").and_then(Value::as_str).unwrap_or("").trim();
            let items = g
                .get("pages")
                .map_or_else(Vec::new, |p| self.node(p, &here));
            let Some(first) = first_page(&items) else {
                continue;
            };
            let item = NavItem::Section {
                title: title.to_string(),
                items,
            };
            groups.push((first, item));
        }
        let mut tabs: Vec<(String, String)> = Vec::new();
        for key in ["tabs", "anchors"] {
            for t in config
                .get(key)
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                let name = t.get("name").and_then(Value::as_str).unwrap_or("").trim();
                let url = t
                    .get("url")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .trim_matches('/');
                if !name.is_empty() && !url.is_empty() && !url.contains("://") {
                    tabs.push((name.to_string(), format!("{url}/")));
                }
            }
        }
        // Every other version, also one no group names (its folder is still its own).
        let versions = config.get("versions").and_then(Value::as_array);
        for v in versions
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .skip(1)
        {
            let name = v.as_str().or_else(|| v.get("name").and_then(Value::as_str));
            if let Some(name) = name.filter(|n| !other.iter().any(|(o, _)| o == n)) {
                other.push((name.to_string(), Vec::new()));
            }
        }
        for (version, pages) in other {
            self.note_other(&Value::Array(pages), Some(version), &here);
        }
        let tab_of = |first: &str| {
            tabs.iter()
                .position(|(_, url)| first.starts_with(url.as_str()))
        };
        let mut out: Vec<NavItem> = Vec::new();
        let mut by_tab: Vec<Vec<NavItem>> = vec![Vec::new(); tabs.len()];
        for (first, item) in groups {
            match tab_of(&first) {
                Some(t) => by_tab[t].push(item),
                None => out.push(item),
            }
        }
        for ((name, _), items) in tabs.into_iter().zip(by_tab) {
            if !items.is_empty() {
                out.push(NavItem::Section { title: name, items });
            }
        }
        flatten_untitled(out)
    }
}

/// The first page of entries, depth first.
fn first_page(items: &[NavItem]) -> Option<String> {
    items.iter().find_map(|i| match i {
        NavItem::Page { path, .. } => Some(path.clone()),
        NavItem::Section { items, .. } => first_page(items),
    })
}

/// Sections without a title give their entries to the level above.
fn flatten_untitled(items: Vec<NavItem>) -> Vec<NavItem> {
    items
        .into_iter()
        .flat_map(|i| match i {
            NavItem::Section { title, items } if title.is_empty() => flatten_untitled(items),
            NavItem::Section { title, items } => vec![NavItem::Section {
                title,
                items: flatten_untitled(items),
            }],
            page => vec![page],
        })
        .collect()
}

#[cfg(test)]
#[path = "mintlify_tests.rs"]
mod tests;
