//! What a navigation file declares, whichever site generator wrote it: its pages and titled
//! sections (`NavItem`), and the folder its page paths are relative to (`Nav`).

use std::path::PathBuf;

/// One entry of a navigation file: a page (a path relative to the navigation's docs folder) or
/// a titled section of entries.
#[derive(Debug, Clone, PartialEq)]
pub enum NavItem {
    Page { title: Option<String>, path: String },
    Section { title: String, items: Vec<NavItem> },
}

/// A navigation file and the folder its page paths are relative to.
#[derive(Debug, Clone, PartialEq)]
pub struct Nav {
    /// The file it was read from.
    pub file: PathBuf,
    /// The folder page paths are relative to (MkDocs' `docs_dir`, mdBook's `src`).
    pub docs_dir: PathBuf,
    pub items: Vec<NavItem>,
}
