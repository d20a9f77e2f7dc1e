//! Links between documents in the output. Each relative link of a page (`../advanced/x.md#a`,
//! mdBook's `cargo-build.html`, VitePress' `/guide/features`, a folder's `index`) is resolved
//! against the corpus once per build: to a document, to a file that is not a document, or to
//! nothing (a warning naming the page and line). Rendering then writes a document link as the
//! target's file relative to the linking file (anchor kept) when both are in one skill, and as
//! the target's id for `get_document` when not, so that a skill uploaded alone carries no dead
//! link; a link to another file points into `[output] source_url`, or becomes its text. A link
//! that names no path but one of Sphinx's labels (`labels`) goes to the page that defines it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::diag::Diagnostics;
use crate::ingest::Document;
use crate::markdown::links::{Link, line_of, links, may_link};

/// Where a link goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A document of the corpus, and the anchor the link names in it.
    Doc { doc: usize, anchor: Option<String> },
    /// A file that is not a document, at this address under `[output] source_url`.
    Source(String),
    /// Nowhere an agent can follow: the link's text stays.
    Text,
}

/// How a link is written: a new destination (the rest of the link kept), or new text for the
/// whole link.
pub enum Written {
    Dest(String),
    Whole(String),
}

/// One link to rewrite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub link: Link,
    pub target: Target,
}

/// Every document's links to rewrite, and its reference definitions to drop (their uses are
/// written inline).
#[derive(Debug, Default)]
pub struct Links {
    edits: Vec<Vec<Edit>>,
    defs: Vec<Vec<Range<usize>>>,
    /// Links resolved to documents, and links that point to nothing.
    pub to_documents: usize,
    pub broken: usize,
}

/// What resolving reads.
pub struct Inputs<'a> {
    pub docs: &'a [Document],
    /// The corpus folders, as `Origin::root` numbers them.
    pub roots: &'a [PathBuf],
    /// `[output] source_url`, and the folder its paths are relative to.
    pub source: Option<(&'a str, &'a Path)>,
    /// How a page is shown in warnings (its source path).
    pub shown: &'a dyn Fn(usize) -> String,
    /// How each corpus folder's site is served (its base path, which links from the site's
    /// root may start with, and its public folder); as `roots` numbers them.
    pub served: &'a [crate::structure::nav::Served],
}

/// A link whose destination is a path (no scheme, not an anchor in the page, not `//host`).
fn is_relative(dest: &str) -> bool {
    let scheme = dest.find(':').is_some_and(|i| {
        dest[..i]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
            && i > 0
    });
    !(dest.is_empty() || dest.starts_with('#') || dest.starts_with("//") || scheme)
}

impl Links {
    /// Resolves the relative links of every page; warns about those that point to nothing.
    pub fn resolve(inp: &Inputs, diags: &mut Diagnostics) -> Links {
        let mut by_path: HashMap<(usize, &str), usize> = HashMap::new();
        for (d, doc) in inp.docs.iter().enumerate() {
            if let Some(o) = doc.origin.as_ref().filter(|o| !o.multi) {
                by_path.insert((o.root, o.rel.as_str()), d);
            }
        }
        let mut out = Links {
            edits: vec![Vec::new(); inp.docs.len()],
            defs: vec![Vec::new(); inp.docs.len()],
            ..Links::default()
        };
        // Sphinx's labels, read when a link first names something that is not a path.
        let mut labels: Option<HashMap<String, super::labels::Place>> = None;
        for (d, doc) in inp.docs.iter().enumerate() {
            let Some(o) = doc.origin.as_ref().filter(|o| !o.multi) else {
                continue;
            };
            if !may_link(&doc.text) {
                continue;
            }
            let (found, defs) = links(&doc.text);
            out.defs[d] = defs
                .into_iter()
                .filter(|def| is_relative(&def.dest))
                .map(|def| def.span)
                .collect();
            for link in found.into_iter().filter(|l| is_relative(&l.dest)) {
                let (path, anchor) = split_dest(&link.dest);
                let served = inp.served.get(o.root);
                let base = served.and_then(|s| s.base.as_deref());
                let path = without_base(path, base);
                let plain = anchor.is_none();
                let label = |labels: &mut Option<HashMap<_, _>>| {
                    if !plain || path.trim().is_empty() {
                        return None;
                    }
                    labels
                        .get_or_insert_with(|| super::labels::read(inp.docs, inp.roots))
                        .get(&super::labels::normalized(&path))
                        .cloned()
                };
                // A path on disk goes first: only what is not one may be a label.
                let mut file = None;
                // A page the site moved (a root link its redirects name).
                let moved = || {
                    let to = served.filter(|_| path.starts_with('/'))?.redirect(&path)?;
                    find_doc(&by_path, o.root, &o.rel, &to)
                };
                let found = match find_doc(&by_path, o.root, &o.rel, &path).or_else(moved) {
                    Some(t) => Some((t, anchor)),
                    None => {
                        file = on_disk(&inp.roots[o.root], &o.rel, &path).or_else(|| {
                            let public = served.and_then(|s| s.public.as_deref())?;
                            on_disk(public, "", path.strip_prefix('/')?)
                        });
                        file.is_none().then(|| label(&mut labels)).flatten()
                    }
                };
                let target = match found {
                    Some((t, anchor)) => {
                        out.to_documents += 1;
                        Target::Doc { doc: t, anchor }
                    }
                    None => match file {
                        Some(file) => inp
                            .source
                            .and_then(|(url, base)| source_url(url, base, &file))
                            .map_or(Target::Text, Target::Source),
                        None if super::labels::is_generated_page(&path) => Target::Text,
                        // A reST label the corpus does not define: another project's, which
                        // the site reaches through intersphinx (`tut-files`: Python's docs).
                        None if o.rel.ends_with(".rst") && super::labels::may_be_label(&path) => {
                            Target::Text
                        }
                        None => {
                            out.broken += 1;
                            let line = (o.line > 0)
                                .then(|| o.line + line_of(&doc.text, link.whole.start) - 1);
                            diags.warn(
                                (inp.shown)(d),
                                line,
                                format!(
                                    "link to {} points to no page or file of the corpus; its text is kept without the link",
                                    link.dest
                                ),
                            );
                            Target::Text
                        }
                    },
                };
                out.edits[d].push(Edit { link, target });
            }
        }
        out
    }

    /// Whether document `d` has links to rewrite.
    pub fn has(&self, d: usize) -> bool {
        self.edits.get(d).is_some_and(|e| !e.is_empty())
            || self.defs.get(d).is_some_and(|e| !e.is_empty())
    }

    /// The part `range` of document `d`'s text with its links rewritten; `doc_link` writes a
    /// link to a document (given the edit and the link's text, empty when the link has none:
    /// then the target's title is shown).
    pub fn apply<'t>(
        &self,
        d: usize,
        text: &'t str,
        range: Range<usize>,
        doc_link: impl Fn(usize, Option<&str>, &str, bool) -> Written,
    ) -> Cow<'t, str> {
        let slice = &text[range.clone()];
        if !self.has(d) {
            return Cow::Borrowed(slice);
        }
        let inside = |r: &Range<usize>| r.start >= range.start && r.end <= range.end;
        let mut changes: Vec<(Range<usize>, String)> = Vec::new();
        for e in self.edits[d].iter().filter(|e| inside(&e.link.whole)) {
            let label = &text[e.link.label.clone()];
            let written = match &e.target {
                Target::Text if label.trim().is_empty() => Written::Whole(shown_dest(&e.link.dest)),
                Target::Text => Written::Whole(plain_label(label)),
                Target::Source(url) => Written::Dest(url.clone()),
                // A link without text (MyST's `[](page.md)`, Sphinx's `:doc:`page``) shows
                // the target's title, as the site does: `doc_link` is given no label.
                Target::Doc { doc, anchor } => {
                    let shown = if label.trim().is_empty() { "" } else { label };
                    doc_link(*doc, anchor.as_deref(), shown, e.link.image)
                }
            };
            changes.push(match (written, &e.link.dest_at) {
                (Written::Whole(s), _) => (e.link.whole.clone(), s),
                // A destination in angle brackets (`<a label>`) loses them when it has no
                // space any more.
                (Written::Dest(dest), Some(at)) => (bracketed(text, at, &dest), dest),
                (Written::Dest(dest), None) => {
                    let bang = if e.link.image { "!" } else { "" };
                    (e.link.whole.clone(), format!("{bang}[{label}]({dest})"))
                }
            });
        }
        for def in self.defs[d].iter().filter(|r| inside(r)) {
            changes.push((def.clone(), String::new()));
        }
        changes.sort_by_key(|(r, _)| r.start);
        let mut s = String::with_capacity(slice.len());
        let mut at = range.start;
        for (r, with) in changes {
            if r.start < at {
                continue; // inside a link already written whole
            }
            s.push_str(&text[at..r.start]);
            s.push_str(&with);
            at = r.end;
        }
        s.push_str(&text[at..range.end]);
        Cow::Owned(s)
    }
}

/// The range a new destination replaces: `at`, widened to its angle brackets when the new one
/// needs none.
fn bracketed(text: &str, at: &Range<usize>, dest: &str) -> Range<usize> {
    let b = text.as_bytes();
    let inside = at.start > 0 && b[at.start - 1] == b'<' && b.get(at.end) == Some(&b'>');
    if inside && !dest.contains([' ', '<', '>']) {
        at.start - 1..at.end + 1
    } else {
        at.clone()
    }
}

/// What a link without text (MyST's `[](page.md)`, Sphinx's `:doc:`page``) shows when its
/// target is no document: its destination.
fn shown_dest(dest: &str) -> String {
    let path = dest.split(['#', '?']).next().unwrap_or(dest);
    path.strip_prefix("./").unwrap_or(path).to_string()
}

/// A link's text without its markup of links and images (an image inside it gives its alt).
fn plain_label(label: &str) -> String {
    if label.contains("](") {
        crate::markdown::plain_text(label).trim().to_string()
    } else {
        label.to_string()
    }
}

/// `path#anchor?query` → the percent-decoded path and the anchor.
fn split_dest(dest: &str) -> (String, Option<String>) {
    let (rest, anchor) = match dest.split_once('#') {
        Some((p, a)) => (p, Some(a.to_string()).filter(|a| !a.is_empty())),
        None => (dest, None),
    };
    let path = rest.split('?').next().unwrap_or("");
    (percent_decode(path), anchor)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) =
                u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("x"), 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A root link without the site's base path (`/agent-squad/guide/` is `/guide/` on a site
/// served at `/agent-squad/`).
fn without_base(path: String, base: Option<&str>) -> String {
    match base.and_then(|b| path.strip_prefix(b.trim_end_matches('/'))) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            format!("/{}", rest.trim_start_matches('/'))
        }
        _ => path,
    }
}

/// `path` read from the page at `rel` (`/x` from the corpus folder), folded: None when it
/// leaves the corpus folder.
fn joined(rel: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = if path.starts_with('/') {
        Vec::new()
    } else {
        rel.split('/')
            .collect::<Vec<_>>()
            .split_last()
            .map_or(Vec::new(), |(_, dir)| dir.to_vec())
    };
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(parts.join("/"))
}

/// The document a path names, as the site generators name pages: the file itself, `.html` for
/// `.md` (mdBook), no extension (VitePress, Docusaurus: `.md` or `.mdx`; Sphinx: `.rst`), a
/// folder for its index page.
fn find_doc(
    by_path: &HashMap<(usize, &str), usize>,
    root: usize,
    rel: &str,
    path: &str,
) -> Option<usize> {
    let p = joined(rel, path)?;
    let stem = p.strip_suffix(".html").or_else(|| p.strip_suffix(".htm"));
    let mut tries: Vec<String> = vec![p.clone()];
    let base = stem.unwrap_or(&p).trim_end_matches('/');
    if stem.is_some() || !p.rsplit('/').next().unwrap_or("").contains('.') {
        tries.push(format!("{base}.md"));
        tries.push(format!("{base}.mdx"));
        // Sphinx names a page without its extension (`:doc:` targets, its `.html` pages).
        tries.push(format!("{base}.rst"));
        if let Some(dir) = base
            .strip_suffix("/index")
            .or(base.strip_suffix("index").filter(|b| b.is_empty()))
        {
            tries.push(format!(
                "{dir}{}README.md",
                if dir.is_empty() { "" } else { "/" }
            ));
        }
        for index in ["index.md", "README.md", "_index.md", "index.mdx"] {
            tries.push(if base.is_empty() {
                index.to_string()
            } else {
                format!("{base}/{index}")
            });
        }
    }
    tries
        .iter()
        .find_map(|t| by_path.get(&(root, t.as_str())).copied())
}

/// The file a path names on disk, when it exists (inside the corpus folder or beside it).
fn on_disk(root: &Path, rel: &str, path: &str) -> Option<PathBuf> {
    let file = match joined(rel, path) {
        Some(p) => root.join(p),
        None => {
            let dir = Path::new(rel).parent().unwrap_or(Path::new(""));
            crate::paths::abs(&root.join(dir).join(path.trim_start_matches('/')))
        }
    };
    file.exists()
        .then(|| std::fs::canonicalize(&file).unwrap_or(file))
}

/// The address of `file` under `url`, when the file is inside `base` (the project root).
fn source_url(url: &str, base: &Path, file: &Path) -> Option<String> {
    let base = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    let rel = file.strip_prefix(&base).ok()?;
    let rel = rel.to_string_lossy().replace('\\', "/");
    Some(format!("{}/{rel}", url.trim_end_matches('/')))
}

#[cfg(test)]
#[path = "links_tests.rs"]
mod tests;
