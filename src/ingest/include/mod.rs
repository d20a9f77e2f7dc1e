//! Include directives, resolved as the site generator resolves them: MkDocs snippets
//! (`--8<-- "file"`, their block form, line ranges and `[start:name]` sections), FastAPI's
//! `{* path ln[..] hl[..] *}` (the file as a fenced code block), and mdBook's `{{#include}}`,
//! `{{#rustdoc_include}}` and `{{#playground}}` (line ranges and anchors, inside code fences
//! too; `\{{#include}}` is shown as text), and MDX's imported snippets and Mintlify's OpenAPI
//! endpoint pages (`mdx`). A file is read only inside the project root; every
//! file read is an input of the pages that include it.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::records::Scan;
use super::walk::Candidate;
use super::{IngestOptions, RawRecord, SourceFile};
use crate::db::statindex::Stat;
use crate::diag::Diagnostics;

mod mdx;
mod openapi;
pub mod project;
mod select;
pub use project::Project;
use project::canonical;
use select::{
    fenced, push_indented, select_mdbook, select_ranges, select_snippet, split_selector, unquote,
};

/// A file an include read: its stat (taken before the read) and the hash of its bytes.
#[derive(Debug, Clone)]
pub struct Input {
    pub stat: Option<Stat>,
    pub hash: String,
}

/// Where a directive sits, for warnings: the page as shown and the line in it.
struct At<'a> {
    page: &'a str,
    line: usize,
}

/// Expands the include directives of pages; keeps each file it read once per build.
pub struct Includer {
    project: Project,
    max_bytes: u64,
    files: HashMap<PathBuf, Result<String, String>>,
    /// OpenAPI specs, parsed once; the specs each site names, read once per site.
    specs: HashMap<PathBuf, Result<std::sync::Arc<serde_json::Value>, String>>,
    site_specs: HashMap<PathBuf, Vec<String>>,
    /// Every file read, by canonical path.
    pub used: BTreeMap<PathBuf, Input>,
}

/// Nested includes deeper than this are left out (mdBook's own limit).
const MAX_DEPTH: usize = 10;

impl Includer {
    pub fn new(project: Project, max_bytes: u64) -> Self {
        Includer {
            project,
            max_bytes,
            files: HashMap::new(),
            specs: HashMap::new(),
            site_specs: HashMap::new(),
            used: BTreeMap::new(),
        }
    }

    /// The text of the page at `page` (shown as `shown`; its text starts on file line
    /// `first_line`) with its includes expanded; None when it has no directive. The files it
    /// read are in `used`; what could not be resolved is warned about and left out.
    pub fn expand(
        &mut self,
        text: &str,
        page: &Path,
        (shown, first_line): (&str, usize),
        diags: &mut Diagnostics,
    ) -> Option<String> {
        if !has_directive(text) {
            return None;
        }
        let dir = page.parent().unwrap_or(Path::new("."));
        let at = At {
            page: shown,
            line: first_line.max(1),
        };
        Some(self.expand_in(text, &canonical(dir), &at, 0, diags))
    }

    fn expand_in(
        &mut self,
        text: &str,
        dir: &Path,
        at: &At,
        depth: usize,
        diags: &mut Diagnostics,
    ) -> String {
        let mut out = String::with_capacity(text.len());
        let mut fence: Option<(char, usize)> = None;
        let lines: Vec<&str> = text.split('\n').collect();
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i];
            // Warnings name the page's own line; a nested include's, the page's directive.
            let here = At {
                page: at.page,
                line: if depth == 0 { at.line + i } else { at.line },
            };
            let trimmed = line.trim_start();
            let indent = &line[..line.len() - trimmed.len()];
            let eol = if i + 1 < lines.len() { "\n" } else { "" };
            i += 1;
            let in_fence = fence.is_some();
            match fence {
                Some((c, n)) if crate::markdown::is_fence_close(trimmed, c, n) => fence = None,
                None => fence = crate::markdown::fence_open(trimmed).map(|(c, n, _)| (c, n)),
                _ => {}
            }
            if !in_fence && let Some(request) = crate::markdown::mdx::marked(trimmed) {
                let got = self.marked(request, dir, &here, depth, diags);
                push_indented(&mut out, indent, got.as_deref().unwrap_or(""));
                out.push_str(eol);
                continue;
            }
            if self.project.mkdocs() {
                if let Some(rest) = trimmed.strip_prefix(";--8<--") {
                    out.push_str(&format!("{indent}--8<--{rest}{eol}"));
                    continue;
                }
                if let Some(rest) = trimmed.strip_prefix("--8<--") {
                    let rest = rest.trim();
                    let mut specs = Vec::new();
                    if rest.is_empty() {
                        // Block form: one file per line up to the closing `--8<--`.
                        while i < lines.len() && lines[i].trim() != "--8<--" {
                            let s = lines[i].trim();
                            if !s.is_empty() && !s.starts_with(';') {
                                specs.push(s.to_string());
                            }
                            i += 1;
                        }
                        i += 1;
                    } else if rest.starts_with('[') {
                        // A section marker of the page itself.
                        out.push_str(eol);
                        continue;
                    } else {
                        specs.push(unquote(rest).to_string());
                    }
                    for spec in specs {
                        let got = self.snippet(&spec, &here, depth, diags);
                        push_indented(&mut out, indent, got.as_deref().unwrap_or(""));
                    }
                    out.push_str(eol);
                    continue;
                }
                if !in_fence
                    && let Some(inner) = trimmed
                        .trim_end()
                        .strip_prefix("{*")
                        .and_then(|s| s.strip_suffix("*}"))
                {
                    let got = self.code_include(inner.trim(), dir, &here, diags);
                    push_indented(&mut out, indent, got.as_deref().unwrap_or(""));
                    out.push_str(eol);
                    continue;
                }
            }
            if self.project.mdbook() && line.contains("{{#") {
                let l = self.mdbook_line(line, dir, (&here, in_fence), depth, diags);
                out.push_str(&l);
                out.push_str(eol);
                continue;
            }
            out.push_str(line);
            out.push_str(eol);
        }
        out
    }

    /// A MkDocs snippet (`path`, `path:start:end` or `path:section`), read from the bases.
    fn snippet(
        &mut self,
        spec: &str,
        at: &At,
        depth: usize,
        diags: &mut Diagnostics,
    ) -> Option<String> {
        if spec.starts_with("http://") || spec.starts_with("https://") {
            diags.warn(
                at.page,
                Some(at.line),
                format!("snippet {spec}: c2s does not download snippets; left out"),
            );
            return None;
        }
        let (path, sel) = split_selector(spec);
        let bases = self.project.bases.clone();
        let bases = if bases.is_empty() {
            vec![self.project.root.clone()]
        } else {
            bases
        };
        let (file, text) = self.read_first(path, &bases, at, diags)?;
        let text = select_snippet(&text, sel).or_else(|| {
            diags.warn(
                at.page,
                Some(at.line),
                format!("snippet {spec}: no such lines or section in {path}; left out"),
            );
            None
        })?;
        let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
        Some(self.nested(&text, &file, &dir, at, depth, diags))
    }

    /// FastAPI's `{* path ln[..] hl[..] *}`: the file (or the `ln` lines) as a fenced code block.
    fn code_include(
        &mut self,
        inner: &str,
        dir: &Path,
        at: &At,
        diags: &mut Diagnostics,
    ) -> Option<String> {
        let mut parts = inner.split_whitespace();
        let path = parts.next()?;
        let mut bases = self.project.bases.clone();
        bases.push(dir.to_path_buf());
        let (file, text) = self.read_first(path, &bases, at, diags)?;
        let lines = parts
            .find_map(|p| p.strip_prefix("ln[").and_then(|r| r.strip_suffix(']')))
            .map(|r| select_ranges(&text, r))
            .unwrap_or(text);
        Some(fenced(&file, &lines))
    }

    /// A line with mdBook helpers: each replaced by what it includes; escaped ones lose the `\`.
    fn mdbook_line(
        &mut self,
        line: &str,
        dir: &Path,
        (at, in_fence): (&At, bool),
        depth: usize,
        diags: &mut Diagnostics,
    ) -> String {
        let mut out = String::with_capacity(line.len());
        let mut rest = line;
        while let Some(start) = rest.find("{{#") {
            let Some(len) = rest[start..].find("}}") else {
                break;
            };
            let body = &rest[start + 3..start + len];
            let (name, arg) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
            // As mdBook's own pattern: a helper takes a file; without one it is text.
            let known = matches!(name, "include" | "rustdoc_include" | "playground")
                && !arg.trim().is_empty();
            if start > 0 && rest.as_bytes()[start - 1] == b'\\' && known {
                out.push_str(&rest[..start - 1]);
                out.push_str(&rest[start..start + len + 2]);
                rest = &rest[start + len + 2..];
                continue;
            }
            out.push_str(&rest[..start]);
            rest = &rest[start + len + 2..];
            if !known {
                out.push_str(&format!("{{{{#{body}}}}}"));
                continue;
            }
            let spec = arg.split_whitespace().next().unwrap_or("");
            let (path, sel) = split_selector(spec);
            let Some((file, text)) = self.read_first(path, &[dir.to_path_buf()], at, diags) else {
                continue;
            };
            let Some(text) = select_mdbook(&text, sel) else {
                diags.warn(
                    at.page,
                    Some(at.line),
                    format!("{{{{#{name} {spec}}}}}: no such lines or anchor in {path}; left out"),
                );
                continue;
            };
            let fdir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
            // A reST page's `.. include::` of reST: read as the including page is.
            let text = if !in_fence && is_rst(&file) {
                crate::rst::to_markdown(&text).markdown
            } else {
                text
            };
            let text = self.nested(&text, &file, &fdir, at, depth, diags);
            if name == "playground" && !in_fence {
                out.push_str(&fenced(&file, &text));
            } else {
                out.push_str(text.trim_end_matches('\n'));
            }
        }
        out.push_str(rest);
        out
    }

    /// Included text with its own includes expanded (Markdown is read in its dialect too).
    fn nested(
        &mut self,
        text: &str,
        file: &Path,
        dir: &Path,
        at: &At,
        depth: usize,
        diags: &mut Diagnostics,
    ) -> String {
        if depth + 1 >= MAX_DEPTH {
            diags.warn(
                at.page,
                Some(at.line),
                format!(
                    "includes nested more than {MAX_DEPTH} deep at {}; the rest left out",
                    file.display()
                ),
            );
            return text.to_string();
        }
        let text = if has_directive(text) {
            self.expand_in(text, dir, at, depth + 1, diags)
        } else {
            text.to_string()
        };
        if is_markdown(file) {
            let text = match crate::rst::myst::is_myst(&text) {
                true => crate::rst::myst::to_commonmark(&text),
                false => text,
            };
            let text = crate::markdown::dialect::to_commonmark(&text);
            // Its own imported snippets, known once its dialect is read.
            match text.contains(crate::markdown::mdx::MARK) {
                true => self.expand_in(&text, dir, at, depth + 1, diags),
                false => text,
            }
        } else {
            text
        }
    }

    /// The first of `path` under `bases` that exists, inside the project root; warns when none.
    fn read_first(
        &mut self,
        path: &str,
        bases: &[PathBuf],
        at: &At,
        diags: &mut Diagnostics,
    ) -> Option<(PathBuf, String)> {
        if path.is_empty() {
            diags.warn(at.page, Some(at.line), "include without a file; left out");
            return None;
        }
        let found = bases
            .iter()
            .map(|b| b.join(path))
            .find_map(|p| std::fs::canonicalize(&p).ok().filter(|c| c.is_file()));
        let Some(file) = found else {
            diags.warn(
                at.page,
                Some(at.line),
                format!(
                    "cannot include {path}: no such file (looked in {}); left out",
                    shown_dirs(bases)
                ),
            );
            return None;
        };
        if !file.starts_with(&self.project.root) {
            diags.warn(
                at.page,
                Some(at.line),
                format!(
                    "include {path} refused: it is outside the project root {} (includes read only inside the folder of c2s.toml or the repository)",
                    self.project.root.display()
                ),
            );
            return None;
        }
        match self.read(&file) {
            Ok(text) => Some((file, text)),
            Err(e) => {
                diags.warn(
                    at.page,
                    Some(at.line),
                    format!("cannot include {path}: {e}; left out"),
                );
                None
            }
        }
    }

    /// The text of `file`, read once; its stat and hash are recorded as an input.
    fn read(&mut self, file: &Path) -> Result<String, String> {
        if let Some(r) = self.files.get(file) {
            return r.clone();
        }
        let stat = std::fs::metadata(file).ok().map(|m| Stat::of(&m));
        let got = match stat {
            Some(s) if s.size > self.max_bytes => {
                Err(format!("{} bytes is over corpus.max_file_bytes", s.size))
            }
            _ => std::fs::read(file)
                .map_err(|e| e.to_string())
                .and_then(|b| {
                    self.used.insert(
                        file.to_path_buf(),
                        Input {
                            stat,
                            hash: crate::hash::content_hash(&b),
                        },
                    );
                    if b.contains(&0) {
                        return Err("a binary file".into());
                    }
                    Ok(String::from_utf8_lossy(&b).replace("\r\n", "\n"))
                }),
        };
        self.files.insert(file.to_path_buf(), got.clone());
        got
    }
}

/// One [`Includer`] per corpus root, made when a page of that root first has a
/// directive.
pub(super) struct Includers<'o> {
    opts: &'o IngestOptions<'o>,
    by_root: HashMap<usize, Includer>,
}

impl<'o> Includers<'o> {
    pub(super) fn new(opts: &'o IngestOptions<'o>) -> Self {
        Includers {
            opts,
            by_root: HashMap::new(),
        }
    }

    /// The record with its includes expanded (its scan made again when it changed).
    pub(super) fn expand(
        &mut self,
        c: &Candidate,
        (rec, scan): (RawRecord, Scan),
        diags: &mut Diagnostics,
    ) -> (RawRecord, Scan) {
        if !has_directive(&rec.text) {
            return (rec, scan);
        }
        let opts = self.opts;
        let inc = self.by_root.entry(c.root).or_insert_with(|| {
            let project = Project::find(&opts.paths[c.root], opts.top.as_deref());
            Includer::new(project, opts.max_file_bytes)
        });
        match inc.expand(&rec.text, &c.path, (&c.display, rec.body_line), diags) {
            Some(text) if text != rec.text => {
                let scan = Scan::of(&text);
                (RawRecord { text, ..rec }, scan)
            }
            _ => (rec, scan),
        }
    }

    /// Every file an include read, as a source of the build (a page already listed is not
    /// listed again), shown relative to `base`.
    pub(super) fn add_inputs(self, sources: &mut Vec<SourceFile>, base: &Path) {
        let base = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
        let mut seen: std::collections::HashSet<String> =
            sources.iter().map(|s| s.path.clone()).collect();
        let mut used: Vec<_> = self.by_root.into_values().flat_map(|i| i.used).collect();
        used.sort_by(|a, b| a.0.cmp(&b.0));
        for (file, input) in used {
            let path = crate::format::lock::relative_path(&base, &file)
                .to_string_lossy()
                .replace('\\', "/");
            if seen.insert(path.clone()) {
                sources.push(SourceFile {
                    path,
                    hash: input.hash,
                    stat: input.stat,
                    included: true,
                });
            }
        }
    }
}

/// Whether a text may hold a directive of any dialect (a quick test before the line scan).
pub fn has_directive(text: &str) -> bool {
    text.contains("--8<--")
        || text.contains("{*")
        || text.contains("{{#")
        || text.contains(crate::markdown::mdx::MARK)
}

fn is_markdown(file: &Path) -> bool {
    file.extension().is_some_and(|e| {
        ["md", "markdown", "mdx"]
            .iter()
            .any(|m| e.eq_ignore_ascii_case(m))
    })
}

fn is_rst(file: &Path) -> bool {
    file.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("rst") || e.eq_ignore_ascii_case("rest"))
}

fn shown_dirs(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
