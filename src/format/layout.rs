//! Where each file of an output lives: in the output folder, except that with a skills folder
//! (`[output] skills_dir`, recorded in `c2s.lock`) each top-level skill folder `skills/<name>/`
//! lives there instead, beside skills that c2s does not own.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use std::fs;

use crate::error::BuildError;
use crate::format::lock::Lock;

/// The folder that holds the top-level skills inside an output.
pub const SKILLS: &str = "skills";

/// The places an output's files live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub out: PathBuf,
    /// Where the top-level skill folders go instead of `<out>/skills`.
    pub skills_dir: Option<PathBuf>,
}

impl Layout {
    /// A layout; the skills folder is kept in normal form (absolute, no `..`), so two layouts
    /// that name the same folder compare equal.
    pub fn new(out: &Path, skills_dir: Option<PathBuf>) -> Layout {
        Layout {
            out: out.to_path_buf(),
            skills_dir: skills_dir.map(|d| crate::format::lock::normalize_path(&d)),
        }
    }

    /// The layout a lock describes (its `skills_dir` is relative to the output folder).
    pub fn of_lock(out: &Path, lock: &Lock) -> Layout {
        Layout::new(out, lock.skills_dir.as_ref().map(|s| out.join(s)))
    }

    /// The folder the top-level skill folders are in.
    pub fn skills_root(&self) -> PathBuf {
        self.skills_dir
            .clone()
            .unwrap_or_else(|| self.out.join(SKILLS))
    }

    /// Where the output file `rel` (`/`-separated, relative to the output) lives on disk.
    pub fn path(&self, rel: &str) -> PathBuf {
        match (split_skill(rel), &self.skills_dir) {
            (Some((name, rest)), Some(dir)) => dir.join(name).join(rest),
            _ => self.out.join(rel),
        }
    }

    /// Every file of this output on disk, as output paths: the output folder's (without
    /// `skills/` when the skills live elsewhere) and those of the skill folders in `owned`.
    pub fn files_on_disk(&self, owned: &BTreeSet<String>) -> Result<Vec<String>, BuildError> {
        let mut files = if self.out.is_dir() {
            list_files(&self.out)?
        } else {
            Vec::new()
        };
        if let Some(dir) = &self.skills_dir {
            files.retain(|f| split_skill(f).is_none());
            for name in owned {
                let folder = dir.join(name);
                if folder.is_dir() {
                    files.extend(
                        list_files(&folder)?
                            .into_iter()
                            .map(|f| format!("{SKILLS}/{name}/{f}")),
                    );
                }
            }
        }
        files.sort();
        Ok(files)
    }
}

/// `skills/<name>/<rest>` → `(name, rest)`.
pub fn split_skill(rel: &str) -> Option<(&str, &str)> {
    let rest = rel.strip_prefix(SKILLS)?.strip_prefix('/')?;
    rest.split_once('/')
}

/// The top-level skill folders among output paths.
pub fn skill_names<'a>(paths: impl IntoIterator<Item = &'a String>) -> BTreeSet<String> {
    paths
        .into_iter()
        .filter_map(|p| split_skill(p).map(|(n, _)| n.to_string()))
        .collect()
}

/// Lists every file below `dir` as relative `/`-separated paths.
pub fn list_files(dir: &Path) -> Result<Vec<String>, BuildError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).map_err(|e| BuildError::io("cannot read", &d, e))? {
            let entry = entry.map_err(|e| BuildError::io("cannot read", &d, e))?;
            let p = entry.path();
            if entry
                .file_type()
                .map_err(|e| BuildError::io("cannot read", &p, e))?
                .is_dir()
            {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap_or(&p)
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push(rel);
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_paths_map_to_the_skills_folder() {
        let plain = Layout::new(Path::new("/o"), None);
        assert_eq!(
            plain.path("skills/a/SKILL.md"),
            PathBuf::from("/o/skills/a/SKILL.md")
        );
        let shared = Layout::new(Path::new("/o"), Some(PathBuf::from("/r/.claude/skills")));
        assert_eq!(
            shared.path("skills/a/g/INDEX.md"),
            PathBuf::from("/r/.claude/skills/a/g/INDEX.md")
        );
        assert_eq!(shared.path("c2s.lock"), PathBuf::from("/o/c2s.lock"));
        assert_eq!(split_skill("skills/a"), None);
        assert_eq!(split_skill("skillsx/a/b"), None);
    }
}
