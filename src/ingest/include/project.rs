//! The project an include may read: its root, the folders MkDocs resolves snippets against,
//! and which generator's rules apply, found from the corpus folder upward.

use std::path::{Path, PathBuf};

/// Which generator's rules decide what is an include.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// MkDocs (snippets and FastAPI's code includes), from a `mkdocs.yml`.
    MkDocs,
    /// mdBook, from a `book.toml`.
    MdBook,
    /// No site configuration found: both.
    Any,
}

/// Where includes may read, and how they are written.
#[derive(Debug, Clone)]
pub struct Project {
    /// No include reads outside this folder.
    pub root: PathBuf,
    /// Folders MkDocs snippets and FastAPI includes are relative to (the folder of `mkdocs.yml`).
    pub bases: Vec<PathBuf>,
    pub dialect: Dialect,
}

impl Project {
    /// The project of a corpus folder: its root is `top` (the folder of `c2s.toml`) when given,
    /// else the git work tree holding the corpus, else the working folder when it holds the
    /// corpus, else the folder of the site configuration, else the corpus folder itself.
    pub fn find(corpus: &Path, top: Option<&Path>) -> Project {
        let corpus = canonical(corpus);
        let mut dialect = Dialect::Any;
        let mut site: Option<PathBuf> = None;
        let mut git: Option<PathBuf> = None;
        let mut dir = Some(corpus.as_path());
        while let Some(d) = dir {
            if site.is_none() {
                if d.join("mkdocs.yml").is_file() || d.join("mkdocs.yaml").is_file() {
                    (dialect, site) = (Dialect::MkDocs, Some(d.to_path_buf()));
                } else if d.join("book.toml").is_file() {
                    (dialect, site) = (Dialect::MdBook, Some(d.to_path_buf()));
                }
            }
            if d.join(".git").exists() {
                git = Some(d.to_path_buf());
            }
            if git.is_some() || top.is_some_and(|t| canonical(t) == d) {
                break;
            }
            dir = d.parent();
        }
        let cwd = std::env::current_dir().ok().map(|c| canonical(&c));
        let root = top
            .map(canonical)
            .or(git)
            .or(cwd.filter(|c| corpus.starts_with(c) && c.parent().is_some()))
            .or_else(|| site.clone())
            .unwrap_or_else(|| corpus.clone());
        let bases = site.into_iter().collect();
        Project {
            root,
            bases,
            dialect,
        }
    }

    pub(super) fn mkdocs(&self) -> bool {
        self.dialect != Dialect::MdBook
    }

    pub(super) fn mdbook(&self) -> bool {
        self.dialect != Dialect::MkDocs
    }
}

pub(super) fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| crate::paths::abs(p))
}
