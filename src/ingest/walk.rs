//! The corpus walk: folders recursively (respecting .gitignore and hidden files), include and
//! exclude globs, and clear warnings for symlink loops, broken links and special files.

use crate::paths::display;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::{Format, IngestOptions};
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
    pub ext: String,
    pub format: Option<Format>,
}

pub(super) fn collect_files(
    opts: &IngestOptions,
    include: &Globs,
    exclude: &Globs,
    diags: &mut Diagnostics,
) -> Result<Vec<Candidate>, BuildError> {
    let skip: Vec<PathBuf> = opts
        .skip_dirs
        .iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .collect();
    let mut out = Vec::new();
    for root in &opts.paths {
        if !root.exists() && root.symlink_metadata().is_err() {
            return Err(BuildError::MissingSource { path: root.clone() });
        }
        let mut walker = ignore::WalkBuilder::new(root);
        walker
            .follow_links(true)
            .require_git(false)
            .sort_by_file_path(|a, b| a.cmp(b));
        let skip = skip.clone();
        let outputs = std::sync::Arc::new(std::sync::Mutex::new(Vec::<PathBuf>::new()));
        let found = outputs.clone();
        walker.filter_entry(move |e| {
            if !e.file_type().is_some_and(|t| t.is_dir()) {
                return true;
            }
            let own = !skip.is_empty()
                && std::fs::canonicalize(e.path()).is_ok_and(|c| skip.iter().any(|s| &c == s));
            // Another c2s output is never read back as input.
            let output = !own && e.depth() > 0 && e.path().join(LOCK_FILE).is_file();
            if output {
                found
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(e.path().to_path_buf());
            }
            !own && !output
        });
        for entry in walker.build() {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    let (file, msg) = walk_error(&e, &opts.display_base);
                    diags.warn(file, None, msg);
                    continue;
                }
            };
            let path = entry.path();
            let is_file = entry.file_type().is_some_and(|t| t.is_file());
            if !is_file {
                if entry.file_type().is_some_and(|t| !t.is_dir()) {
                    diags.warn(
                        display(path, &opts.display_base),
                        None,
                        "not a regular file (socket, FIFO or device); skipped",
                    );
                } else if entry.file_type().is_none() && entry.depth() > 0 {
                    diags.warn(
                        display(path, &opts.display_base),
                        None,
                        "unreadable entry; skipped",
                    );
                }
                continue;
            }
            let rel = path.strip_prefix(root).unwrap_or(path);
            let rel = if rel.as_os_str().is_empty() {
                Path::new(path.file_name().unwrap_or_default())
            } else {
                rel
            };
            if entry.depth() > 0 {
                if !include.empty && !include.matches(rel) {
                    continue;
                }
                if !exclude.empty && exclude.matches(rel) {
                    continue;
                }
            }
            let ext = path
                .extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase())
                .unwrap_or_default();
            out.push(Candidate {
                path: path.to_path_buf(),
                display: display(path, &opts.display_base),
                rel: rel.to_string_lossy().replace('\\', "/"),
                format: Format::from_extension(&ext),
                ext,
            });
        }
        for dir in outputs.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            diags.warn(
                display(dir, &opts.display_base),
                None,
                format!("holds a {LOCK_FILE}: a c2s output, not a source; skipped"),
            );
        }
    }
    Ok(out)
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
