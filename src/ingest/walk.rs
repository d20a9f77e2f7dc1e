//! The corpus walk: folders recursively (respecting .gitignore and hidden files), include and
//! exclude globs, and clear warnings for symlink loops, broken links and special files.

use crate::paths::display;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::{Format, IngestOptions};
use crate::db::statindex::Stat;
use crate::diag::Diagnostics;
use crate::error::BuildError;
use crate::format::LOCK_FILE;

pub(super) struct Globs {
    by_name: GlobSet,
    by_path: GlobSet,
    empty: bool,
}

impl Globs {
    pub fn new(field: &'static str, globs: &[String]) -> Result<Globs, BuildError> {
        let mut by_name = GlobSetBuilder::new();
        let mut by_path = GlobSetBuilder::new();
        for g in globs {
            let glob = Glob::new(g).map_err(|e| BuildError::Glob {
                field,
                glob: g.clone(),
                message: e.kind().to_string(),
            })?;
            if g.contains('/') {
                by_path.add(glob);
            } else {
                by_name.add(glob);
            }
        }
        let build = |b: GlobSetBuilder| b.build().expect("globs already validated");
        Ok(Globs {
            by_name: build(by_name),
            by_path: build(by_path),
            empty: globs.is_empty(),
        })
    }

    /// Patterns without `/` match the file name anywhere, like .gitignore.
    fn matches(&self, rel: &Path) -> bool {
        rel.file_name().is_some_and(|n| self.by_name.is_match(n)) || self.by_path.is_match(rel)
    }
}

/// A file found by the walk.
pub(super) struct Candidate {
    pub path: PathBuf,
    pub display: String,
    /// Path relative to its corpus root: the basis of path-hash ids, independent of the working dir.
    pub rel: String,
    /// Its corpus root, as an index into the corpus paths.
    pub root: usize,
    pub ext: String,
    pub format: Option<Format>,
    /// Its stat (following links), or why there is none; None for a file of a type c2s does
    /// not read (never stat'ed).
    pub stat: Option<Result<Stat, String>>,
}

/// What the walk met at one path: a file, or something to warn about (the file as shown, the
/// message).
enum Met {
    File(Candidate),
    Warning(PathBuf, String, String),
    /// A page that is not a document (a navigation file, a partial), as shown, and why.
    NotAPage(PathBuf, String, &'static str),
}

impl Met {
    /// Where it was met: what the walk's results are sorted by.
    fn at(&self) -> &Path {
        match self {
            Met::File(c) => &c.path,
            Met::Warning(at, ..) | Met::NotAPage(at, ..) => at,
        }
    }
}

/// The files of every corpus path, in path order (each root in turn), folders read in parallel;
/// each file of a supported type is stat'ed by the thread that found it.
pub(super) fn collect_files(
    opts: &IngestOptions,
    include: &Globs,
    exclude: &Globs,
    diags: &mut Diagnostics,
    not_pages: &mut Vec<String>,
) -> Result<Vec<Candidate>, BuildError> {
    let skip = Skip::new(&opts.skip_dirs);
    let mut out = Vec::new();
    for (r, root) in opts.paths.iter().enumerate() {
        if !root.exists() && root.symlink_metadata().is_err() {
            return Err(BuildError::MissingSource { path: root.clone() });
        }
        let mut walker = ignore::WalkBuilder::new(root);
        // Mintlify's `.mintignore` (gitignore syntax) keeps files out of the site.
        walker
            .follow_links(true)
            .require_git(false)
            .add_custom_ignore_filename(".mintignore");
        let skip = skip.clone();
        let found = std::sync::Arc::new(std::sync::Mutex::new(Vec::<PathBuf>::new()));
        let outputs = found.clone();
        walker.filter_entry(move |e| {
            if !e.file_type().is_some_and(|t| t.is_dir()) {
                return true;
            }
            if skip.is(e.path()) {
                return false;
            }
            // Another c2s output is never read back as input.
            let output = e.depth() > 0 && e.path().join(LOCK_FILE).is_file();
            if output {
                found
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(e.path().to_path_buf());
            }
            !output
        });
        let met = std::sync::Mutex::new(Vec::<Met>::new());
        let visit = |entry: Result<ignore::DirEntry, ignore::Error>| {
            if let Some(m) = meet(entry, (r, root), opts, include, exclude) {
                met.lock().unwrap_or_else(|p| p.into_inner()).push(m);
            }
            ignore::WalkState::Continue
        };
        walker.build_parallel().run(|| Box::new(visit));
        let mut met = met.into_inner().unwrap_or_else(|p| p.into_inner());
        if include.empty {
            unlisted_chapters(&mut met, root, opts);
            sphinx_non_sources(&mut met, root, opts);
            site_non_pages(&mut met, root, opts);
        }
        met.sort_unstable_by(|a, b| path_order(a.at(), b.at()));
        for m in met {
            match m {
                Met::File(c) => out.push(c),
                Met::Warning(_, file, msg) => diags.warn(file, None, msg),
                Met::NotAPage(_, file, why) => not_pages.push(format!("{file} ({why})")),
            }
        }
        let mut outputs = std::mem::take(&mut *outputs.lock().unwrap_or_else(|p| p.into_inner()));
        outputs.sort();
        for dir in outputs {
            diags.warn(
                display(&dir, &opts.display_base),
                None,
                format!("holds a {LOCK_FILE}: a c2s output, not a source; skipped"),
            );
        }
    }
    Ok(out)
}

/// The order of a sorted walk (`Path`'s, component by component), as a byte comparison in which
/// the separator sorts first: no path is split into components.
fn path_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let key = |c: u8| if c == b'/' { 0 } else { c };
        let (a, b) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
        a.iter().map(|&c| key(c)).cmp(b.iter().map(|&c| key(c)))
    }
    #[cfg(not(unix))]
    {
        a.cmp(b)
    }
}

/// The folders a walk never enters (the output, the cache), known by device and inode.
#[derive(Clone)]
struct Skip(std::sync::Arc<Vec<PathBuf>>);

impl Skip {
    fn new(dirs: &[PathBuf]) -> Skip {
        Skip(std::sync::Arc::new(
            dirs.iter()
                .filter_map(|d| std::fs::canonicalize(d).ok())
                .collect(),
        ))
    }

    fn is(&self, dir: &Path) -> bool {
        if self.0.is_empty() {
            return false;
        }
        // A folder of another name is not the output: the common case costs no system call.
        let name = dir.file_name();
        if !self.0.iter().any(|s| s.file_name() == name) {
            return false;
        }
        std::fs::canonicalize(dir).is_ok_and(|c| self.0.contains(&c))
    }
}

/// What one walk entry is.
fn meet(
    entry: Result<ignore::DirEntry, ignore::Error>,
    (root_index, root): (usize, &Path),
    opts: &IngestOptions,
    include: &Globs,
    exclude: &Globs,
) -> Option<Met> {
    let entry = match entry {
        Ok(e) => e,
        Err(e) => {
            let (file, msg) = walk_error(&e, &opts.display_base);
            return Some(Met::Warning(PathBuf::from(&file), file, msg));
        }
    };
    let path = entry.path();
    let kind = entry.file_type();
    if kind.is_some_and(|t| t.is_dir()) {
        return None;
    }
    if !kind.is_some_and(|t| t.is_file()) {
        let msg = match kind {
            Some(_) => "not a regular file (socket, FIFO or device); skipped",
            None if entry.depth() > 0 => "unreadable entry; skipped",
            None => return None,
        };
        let file = display(path, &opts.display_base);
        return Some(Met::Warning(path.to_path_buf(), file, msg.into()));
    }
    let rel = path.strip_prefix(root).unwrap_or(path);
    let rel = if rel.as_os_str().is_empty() {
        Path::new(path.file_name().unwrap_or_default())
    } else {
        rel
    };
    if entry.depth() > 0
        && ((!include.empty && !include.matches(rel)) || (!exclude.empty && exclude.matches(rel)))
    {
        return None;
    }
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let format = Format::from_extension(&ext);
    // Below a corpus path, a file that got here matched the `include` globs when there are any:
    // one they name is read whatever its name.
    if entry.depth() > 0
        && include.empty
        && format.is_some()
        && let Some(why) = not_a_page(path)
    {
        let file = display(path, &opts.display_base);
        return Some(Met::NotAPage(path.to_path_buf(), file, why));
    }
    let c = Candidate {
        path: path.to_path_buf(),
        display: display(path, &opts.display_base),
        rel: rel.to_string_lossy().replace('\\', "/"),
        root: root_index,
        stat: format.map(|_| {
            std::fs::metadata(path)
                .map(|m| Stat::of(&m))
                .map_err(|e| e.to_string())
        }),
        format,
        ext,
    };
    Some(Met::File(c))
}

/// The Markdown files of an mdBook's `src` that its `SUMMARY.md` does not list, marked as not
/// pages: mdBook does not build them (they are files that chapters include).
fn unlisted_chapters(met: &mut [Met], root: &Path, opts: &IngestOptions) {
    let Some((src, listed)) = crate::structure::nav::book_chapters(root, opts.top.as_deref())
    else {
        return;
    };
    for m in met.iter_mut() {
        let Met::File(c) = m else { continue };
        if c.format != Some(Format::Markdown) {
            continue;
        }
        let abs = crate::paths::abs(&c.path);
        let Ok(rel) = abs.strip_prefix(&src) else {
            continue;
        };
        if !listed.contains(&rel.to_string_lossy().replace('\\', "/")) {
            let why = "not a chapter: the book's SUMMARY.md does not list it";
            *m = Met::NotAPage(c.path.clone(), c.display.clone(), why);
        }
    }
}

/// The files of a Sphinx project's source folder that are not pages: Sphinx builds only its
/// reST and MyST Markdown sources (an HTML template in `_templates/`, a `requirements.txt` for
/// the docs' build are not pages).
fn sphinx_non_sources(met: &mut [Met], root: &Path, opts: &IngestOptions) {
    let Some(src) = crate::structure::nav::sphinx_source(root, opts.top.as_deref()) else {
        return;
    };
    for m in met.iter_mut() {
        let Met::File(c) = m else { continue };
        if matches!(c.format, None | Some(Format::Markdown | Format::Rst)) {
            continue;
        }
        if crate::paths::abs(&c.path).starts_with(&src) {
            let why = "not a page: Sphinx builds only its .rst and .md sources";
            *m = Met::NotAPage(c.path.clone(), c.display.clone(), why);
        }
    }
}

/// The files of a Mintlify or Starlight site that are not pages of its default language:
/// its configuration, specs and other non-Markdown files in its pages' folder, the snippets
/// that pages import (Mintlify's `snippets/`), and the other languages' or versions' pages.
fn site_non_pages(met: &mut [Met], root: &Path, opts: &IngestOptions) {
    let Some(site) = crate::structure::nav::site_pages(root, opts.top.as_deref()) else {
        return;
    };
    for m in met.iter_mut() {
        let Met::File(c) = m else { continue };
        let abs = crate::paths::abs(&c.path);
        let Ok(rel) = abs.strip_prefix(&site.docs_dir) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        let why = if c.format.is_some() && c.format != Some(Format::Markdown) {
            site.why_format
        } else if site.partials.iter().any(|p| rel.starts_with(p)) {
            site.why_partial
        } else if site.not_pages.contains(&rel)
            || site
                .other_folders
                .iter()
                .any(|f| rel.starts_with(f.as_str()))
        {
            "another language's or version's page: the site's default one is followed"
        } else {
            continue;
        };
        *m = Met::NotAPage(c.path.clone(), c.display.clone(), why);
    }
}

/// Why a file is not a page of the site, though its type is read: mdBook's `SUMMARY.md` (the
/// navigation itself), and partials, whose names start with `_` (FastAPI's `_llm-test.md`,
/// Docusaurus' `_category_.json`), except Hugo's `_index.md` (a section's page). An `include`
/// glob that names the file brings it back.
fn not_a_page(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_string_lossy();
    if crate::structure::nav::is_book_summary(path) {
        return Some("mdBook's navigation file");
    }
    let stem = name.rsplit_once('.').map_or(&*name, |(s, _)| s);
    (name.starts_with('_') && stem != "_index").then_some("a partial: its name starts with `_`")
}

/// Describes a walk error (symlink loop, permission denied, broken link) with its path.
fn walk_error(e: &ignore::Error, base: &Path) -> (String, String) {
    fn inner<'a>(e: &'a ignore::Error, path: &mut Option<PathBuf>) -> &'a ignore::Error {
        match e {
            ignore::Error::WithPath { path: p, err } => {
                *path = Some(p.clone());
                inner(err, path)
            }
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                inner(err, path)
            }
            other => other,
        }
    }
    let mut path = None;
    let root = inner(e, &mut path);
    match root {
        ignore::Error::Loop { child, ancestor } => (
            display(child, base),
            format!(
                "symlink loop (points back to {}); skipped",
                display(ancestor, base)
            ),
        ),
        other => (
            path.map(|p| display(&p, base))
                .unwrap_or_else(|| "<corpus>".into()),
            format!("unreadable ({}); skipped", io_reason(other)),
        ),
    }
}

/// The OS reason of a walk error, without the absolute path the walker puts in front of it.
fn io_reason(e: &ignore::Error) -> String {
    match e.io_error() {
        Some(io) => match io.kind() {
            std::io::ErrorKind::NotFound => "the file or its link target does not exist".into(),
            std::io::ErrorKind::PermissionDenied => "permission denied".into(),
            kind => kind.to_string(),
        },
        None => e.to_string(),
    }
}
