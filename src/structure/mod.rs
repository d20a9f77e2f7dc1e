//! The authors' structure of a corpus: sections from its folders and from its navigation file
//! (`mkdocs.yml`'s `nav:`, mdBook's `SUMMARY.md`), in their order, with their titles; the tree
//! step (`stage::sections`) makes the skill tree from it.

pub mod docusaurus;
mod js;
pub mod mintlify;
pub mod nav;
pub mod navitems;
pub mod sidebar;
pub mod site;
pub mod sphinx;
pub mod starlight;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::diag::Diagnostics;
use nav::{Nav, NavItem};

/// One section: a folder, a navigation section, or a file of many records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Section {
    /// The title the authors gave it (a navigation title); `None` for a folder, whose title
    /// comes from its index page or its name.
    pub title: Option<String>,
    /// The folder or file name, for a title when nothing better is known.
    pub name: String,
    /// Where it is, stable across builds: its folder path, or its titles' path in the navigation.
    pub key: String,
    /// Its own pages (document indices), in the authors' order; its index page first.
    pub pages: Vec<usize>,
    /// The page that introduces it (`index.md`, `README.md`, `_index.md`, a nav section's page).
    pub index: Option<usize>,
    pub children: Vec<Section>,
}

impl Section {
    /// Documents in it and below it.
    pub fn total(&self) -> usize {
        self.pages.len() + self.children.iter().map(Section::total).sum::<usize>()
    }

    /// Every document in it and below it, in the authors' order.
    pub fn all_pages(&self) -> Vec<usize> {
        let mut out = self.pages.clone();
        for c in &self.children {
            out.extend(c.all_pages());
        }
        out
    }

    fn child(&mut self, name: &str, key: String) -> &mut Section {
        let at = match self.children.iter().position(|c| c.key == key) {
            Some(at) => at,
            None => {
                self.children.push(Section {
                    name: name.to_string(),
                    key,
                    ..Section::default()
                });
                self.children.len() - 1
            }
        };
        &mut self.children[at]
    }

    /// Drops sections without documents.
    pub fn prune(&mut self) {
        for c in &mut self.children {
            c.prune();
        }
        self.children.retain(|c| c.total() > 0);
    }
}

/// The corpus as its authors arranged it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outline {
    pub root: Section,
    /// The navigation files followed, as shown to the user.
    pub navs: Vec<String>,
    /// Every file the structure was read from (navigation and category files): inputs of the
    /// build, as pages are.
    pub inputs: Vec<PathBuf>,
}

/// What reading the structure met besides sections: files that could not be read as what
/// their names say (with why), and every file read.
#[derive(Default)]
struct Reading {
    bad: Vec<(PathBuf, String)>,
    files: Vec<PathBuf>,
}

impl Outline {
    /// Whether the authors gave the corpus a shape to follow: a navigation file, or documents in
    /// at least two folders below a corpus root (a flat folder or one JSONL file has none).
    pub fn has_shape(&self) -> bool {
        fn folders(s: &Section) -> usize {
            s.children
                .iter()
                .map(|c| usize::from(!c.key.contains(':')) + folders(c))
                .sum()
        }
        !self.navs.is_empty() || folders(&self.root) >= 2
    }
}

/// A document as the walk found it: its corpus folder (an index into the corpus paths), its path
/// below it (`/`-separated), and whether its file holds many records.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Page<'a> {
    pub root: usize,
    pub rel: &'a str,
    pub multi: bool,
    /// Its place among its folder's pages, from its frontmatter (`sidebar_position`, `weight`).
    pub position: Option<f64>,
}

/// Where a document's file is, relative to the folder it was found under.
struct Place {
    root: usize,
    /// Folder names from the corpus root down.
    folders: Vec<String>,
    file: String,
    /// A file of many records (JSONL): its records form a section of their own.
    multi: bool,
    abs: PathBuf,
    position: Option<f64>,
}

/// Reads the structure of the documents found under `roots` (the corpus folders) at `pages`
/// (`None` for a document that no walk found). Navigation files are shown relative to
/// `display_base`. Navigation
/// files are looked for at each root and above it, up to `top` (the project root; see
/// [`nav::find`]). A navigation file that cannot be read is a warning, and the folders are
/// followed instead.
pub fn outline(
    pages: &[Option<Page>],
    roots: &[PathBuf],
    top: Option<&Path>,
    display_base: &Path,
    diags: &mut Diagnostics,
) -> Outline {
    let roots: Vec<PathBuf> = roots.iter().map(|r| crate::paths::abs(r)).collect();
    // A corpus path may be a file: its documents are the root's own pages.
    let file_roots: Vec<bool> = roots.iter().map(|r| r.is_file()).collect();
    let places: Vec<Option<Place>> = pages
        .iter()
        .map(|p| p.as_ref().and_then(|p| place(p, &roots, &file_roots)))
        .collect();
    let top = top.map(crate::paths::abs);
    let mut root = Section::default();
    let mut navs = Vec::new();
    let mut inputs = Vec::new();
    for (r, dir) in roots.iter().enumerate() {
        let mine: Vec<usize> = (0..pages.len())
            .filter(|&i| places[i].as_ref().is_some_and(|p| p.root == r))
            .collect();
        let mut read = Reading::default();
        let nav = match nav::find(dir, top.as_deref()) {
            Ok(nav) => nav,
            Err((file, msg)) => {
                diags.warn(crate::paths::display(&file, display_base), None, msg);
                // Fixed, it shapes the tree: an edit to it makes the output stale.
                inputs.push(file);
                None
            }
        };
        let mut section = match nav {
            Some(nav) => {
                navs.push(crate::paths::display(&nav.file, display_base));
                inputs.push(nav.file.clone());
                from_nav(&nav, &mine, &places, &mut read)
            }
            None => from_folders(&mine, &places, &mut read),
        };
        for (file, msg) in read.bad {
            diags.warn(crate::paths::display(&file, display_base), None, msg);
        }
        inputs.extend(read.files);
        section.name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if roots.len() == 1 {
            root = section;
        } else {
            section.key = format!("{r}:{}", section.name);
            root.children.push(section);
        }
    }
    // Documents outside every root (a corpus path that is a file).
    for (i, p) in places.iter().enumerate() {
        if p.is_none() {
            root.pages.push(i);
        }
    }
    root.prune();
    inputs.sort();
    inputs.dedup();
    Outline { root, navs, inputs }
}

fn place(page: &Page, roots: &[PathBuf], file_roots: &[bool]) -> Option<Place> {
    let dir = roots.get(page.root).filter(|_| !file_roots[page.root])?;
    let mut folders: Vec<String> = page.rel.split('/').map(str::to_string).collect();
    let file = folders.pop()?;
    Some(Place {
        root: page.root,
        folders,
        file,
        multi: page.multi,
        abs: dir.join(page.rel),
        position: page.position,
    })
}

/// Whether a file name is a folder's index page.
fn is_index(file: &str) -> bool {
    let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
    ["index", "readme", "_index"].contains(&stem.to_ascii_lowercase().as_str())
}

/// The folders' sections: one per folder, one per file of many records; pages in path order,
/// each folder's index page first.
fn from_folders(docs: &[usize], places: &[Option<Place>], read: &mut Reading) -> Section {
    let mut root = Section::default();
    // Each folder section's folder on disk, for its Docusaurus category file.
    let mut dirs: HashMap<String, PathBuf> = HashMap::new();
    for &i in docs {
        let p = places[i].as_ref().expect("placed");
        let mut s = &mut root;
        let mut key = String::new();
        for (depth, f) in p.folders.iter().enumerate() {
            key = if key.is_empty() {
                f.clone()
            } else {
                format!("{key}/{f}")
            };
            if !dirs.contains_key(&key)
                && let Some(dir) = p.abs.ancestors().nth(p.folders.len() - depth)
            {
                dirs.insert(key.clone(), dir.to_path_buf());
            }
            s = s.child(f, key.clone());
        }
        if p.multi {
            let file_key = format!("{key}:{}", p.file);
            s = s.child(&p.file, file_key);
        } else if is_index(&p.file) && s.index.is_none() {
            s.index = Some(i);
            s.pages.insert(0, i);
            continue;
        }
        s.pages.push(i);
    }
    categories(&mut root, &dirs, read);
    order_pages(&mut root, places);
    root
}

/// A folder's pages in the order their frontmatter gives (`sidebar_position`, `weight`): those
/// with a position first, by it; the others after them, in path order. The index page stays first.
fn order_pages(s: &mut Section, places: &[Option<Place>]) {
    let position = |i: &usize| places[*i].as_ref().and_then(|p| p.position);
    let from = usize::from(s.index.is_some());
    if s.pages[from..].iter().any(|i| position(i).is_some()) {
        s.pages[from..].sort_by(|a, b| by_position(position(a), position(b)));
    }
    for c in &mut s.children {
        order_pages(c, places);
    }
}

/// Docusaurus' `_category_.json` (or `.yml`) of a folder: its `label` titles the folder's
/// section, its `position` orders it among its siblings (those without one keep their order,
/// after them).
fn categories(s: &mut Section, dirs: &HashMap<String, PathBuf>, read: &mut Reading) {
    let mut positions: HashMap<String, f64> = HashMap::new();
    for c in &mut s.children {
        categories(c, dirs, read);
        let Some(cat) = dirs.get(&c.key).and_then(|d| category(d, read)) else {
            continue;
        };
        if let Some(label) = cat.label.filter(|l| !l.trim().is_empty()) {
            c.title.get_or_insert(label);
        }
        if let Some(p) = cat.position {
            positions.insert(c.key.clone(), p);
        }
    }
    if !positions.is_empty() {
        s.children.sort_by(|a, b| {
            by_position(
                positions.get(&a.key).copied(),
                positions.get(&b.key).copied(),
            )
        });
    }
}

/// Positioned items first, by position; the others after them, in their order (a stable sort).
fn by_position(a: Option<f64>, b: Option<f64>) -> std::cmp::Ordering {
    match (a, b) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    }
}

/// What a Docusaurus category file says of its folder.
#[derive(Debug, Default, serde::Deserialize)]
struct Category {
    label: Option<String>,
    position: Option<f64>,
}

/// The category file of `dir`, if any (noted as read); one that cannot be read as one is noted
/// as bad.
fn category(dir: &Path, read: &mut Reading) -> Option<Category> {
    let json = dir.join("_category_.json");
    let (file, parsed) = if let Ok(text) = std::fs::read_to_string(&json) {
        (json, serde_json::from_str(&text).map_err(|e| e.to_string()))
    } else {
        let (file, text) = ["_category_.yml", "_category_.yaml"]
            .iter()
            .map(|f| dir.join(f))
            .find_map(|f| std::fs::read_to_string(&f).ok().map(|t| (f, t)))?;
        (
            file,
            serde_yaml_ng::from_str(&text).map_err(|e| e.to_string()),
        )
    };
    read.files.push(file.clone());
    parsed
        .map_err(|e| {
            read.bad.push((
                file,
                format!(
                    "not a Docusaurus category ({e}); the folder keeps its own title and order"
                ),
            ))
        })
        .ok()
}

/// The navigation's sections, in its order; documents it does not list join the section that
/// lists most pages of their folder (or a folder above it, short of the docs root), else their
/// folders' sections.
fn from_nav(nav: &Nav, docs: &[usize], places: &[Option<Place>], read: &mut Reading) -> Section {
    let docs_dir = crate::paths::abs(&nav.docs_dir);
    let mut by_path: HashMap<String, usize> = HashMap::new();
    for &i in docs {
        let p = places[i].as_ref().expect("placed");
        if let Ok(rel) = p.abs.strip_prefix(&docs_dir) {
            by_path
                .entry(rel.to_string_lossy().replace('\\', "/"))
                .or_insert(i);
        }
    }
    let mut placed: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut root = Section::default();
    fill(
        &mut root,
        &nav.items,
        &by_path,
        &mut placed,
        &mut Vec::new(),
    );
    // Which section holds most listed pages of each folder.
    let mut folder_home: HashMap<Vec<String>, HashMap<Vec<usize>, usize>> = HashMap::new();
    for (&i, at) in &placed {
        let p = places[i].as_ref().expect("placed");
        // Its folder and the folders above it, short of the docs root (which holds every
        // folder: a folder the navigation never lists is a section of its own).
        let mut folders = p.folders.clone();
        loop {
            *folder_home
                .entry(folders.clone())
                .or_default()
                .entry(at.clone())
                .or_insert(0) += 1;
            if folders.len() <= 1 {
                break;
            }
            folders.pop();
        }
    }
    let mut rest = Vec::new();
    for &i in docs {
        if placed.contains_key(&i) {
            continue;
        }
        let p = places[i].as_ref().expect("placed");
        let mut folders = p.folders.clone();
        let home = loop {
            if let Some(counts) = folder_home.get(&folders) {
                let best = counts
                    .iter()
                    .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                    .map(|(at, _)| at.clone());
                break best;
            }
            if folders.len() <= 1 {
                break None;
            }
            folders.pop();
        };
        match home {
            Some(at) if !p.multi => section_at(&mut root, &at).pages.push(i),
            _ => rest.push(i),
        }
    }
    if !rest.is_empty() {
        let extra = from_folders(&rest, places, read);
        root.pages.extend(extra.pages);
        root.children.extend(extra.children);
    }
    root
}

fn section_at<'a>(mut s: &'a mut Section, at: &[usize]) -> &'a mut Section {
    for &c in at {
        s = &mut s.children[c];
    }
    s
}

/// Fills a section from navigation entries; `placed` records where each document went (the
/// child positions from the root), `at` is this section's position.
fn fill(
    s: &mut Section,
    items: &[NavItem],
    by_path: &HashMap<String, usize>,
    placed: &mut HashMap<usize, Vec<usize>>,
    at: &mut Vec<usize>,
) {
    for item in items {
        match item {
            NavItem::Page { path, .. } => {
                let path = path.split('#').next().unwrap_or(path);
                let Some(&i) = by_path.get(path) else {
                    continue;
                };
                if placed.contains_key(&i) {
                    continue;
                }
                placed.insert(i, at.clone());
                let file = path.rsplit('/').next().unwrap_or(path);
                if s.pages.is_empty() && s.index.is_none() && (is_index(file) || !at.is_empty()) {
                    s.index = Some(i);
                }
                s.pages.push(i);
            }
            NavItem::Section { title, items } => {
                let key = if s.key.is_empty() {
                    crate::tree::slugify(title)
                } else {
                    format!("{}/{}", s.key, crate::tree::slugify(title))
                };
                let mut child = Section {
                    title: Some(title.clone()),
                    name: title.clone(),
                    key,
                    ..Section::default()
                };
                at.push(s.children.len());
                fill(&mut child, items, by_path, placed, at);
                at.pop();
                s.children.push(child);
            }
        }
    }
}
