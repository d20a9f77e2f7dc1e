//! Path helpers shared by every layer: how a path is shown to the user, and an absolute form
//! that never fails.

use std::path::{Path, PathBuf};

/// Shows a path relative to `base` when it lies below it (`.` for `base` itself), else relative
/// to the working folder when it lies below that, with `/` separators.
pub fn display(path: &Path, base: &Path) -> String {
    let cwd;
    let rel = match path.strip_prefix(base) {
        Ok(rel) => rel,
        Err(_) => {
            cwd = std::env::current_dir().unwrap_or_default();
            path.strip_prefix(&cwd).unwrap_or(path)
        }
    };
    let s = rel.to_string_lossy().replace('\\', "/");
    let s = s.strip_prefix("./").unwrap_or(&s);
    if s.is_empty() {
        ".".into()
    } else {
        s.to_string()
    }
}

/// `path` made absolute against the working directory (as it is, if that cannot be read).
pub fn abs(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
