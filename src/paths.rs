//! Path helpers shared by every layer: how a path is shown to the user, and an absolute form
//! that never fails.

use std::path::{Path, PathBuf};

/// Shows a path relative to `base` when it lies below it, with `/` separators.
pub fn display(path: &Path, base: &Path) -> String {
    let rel = path.strip_prefix(base).unwrap_or(path);
    let s = rel.to_string_lossy().replace('\\', "/");
    s.strip_prefix("./").unwrap_or(&s).to_string()
}

/// `path` made absolute against the working directory (as it is, if that cannot be read).
pub fn abs(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
