//! Where each file of an output lives: in the output folder, except that with a skills folder
//! (`[output] skills_dir`, recorded in `c2s.lock`) each top-level skill folder `skills/<name>/`
//! lives there instead, beside skills that c2s does not own.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use std::fs;

use crate::db::statindex::Stat;
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

    /// Every file of this output on disk, as output paths (the output folder's, without
    /// `skills/` when the skills live elsewhere, and those of the skill folders in `owned`), with
    /// each file's stat: one walk, folders read in parallel.
    pub fn stat_files_on_disk(
        &self,
        owned: &BTreeSet<String>,
    ) -> Result<Vec<(String, Stat)>, BuildError> {
        let mut files = if self.out.is_dir() {
            walk_dir(&self.out, "", true)?
        } else {
            Vec::new()
        };
        if let Some(dir) = &self.skills_dir {
            files.retain(|(f, _)| split_skill(f).is_none());
            for name in owned {
                let folder = dir.join(name);
                if folder.is_dir() {
                    files.extend(walk_dir(&folder, &format!("{SKILLS}/{name}/"), true)?);
                }
            }
        }
        files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(files
            .into_iter()
            .map(|(f, s)| (f, s.unwrap_or_default()))
            .collect())
    }
}

/// Files as output paths, with their stats when asked for.
type Listing = Vec<(String, Option<Stat>)>;

/// Every file under `dir`, as `prefix` + its `/`-separated path below `dir` (unsorted);
/// subfolders are read in parallel.
fn walk_dir(dir: &Path, prefix: &str, stat: bool) -> Result<Listing, BuildError> {
    use rayon::prelude::*;
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| BuildError::io("cannot read", dir, e))? {
        let entry = entry.map_err(|e| BuildError::io("cannot read", dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry
            .file_type()
            .map_err(|e| BuildError::io("cannot read", entry.path(), e))?;
        if kind.is_dir() {
            dirs.push((entry.path(), format!("{prefix}{name}/")));
        } else {
            let meta = match stat {
                true => {
                    Some(Stat::of(&entry.metadata().map_err(|e| {
                        BuildError::io("cannot read", entry.path(), e)
                    })?))
                }
                false => None,
            };
            files.push((format!("{prefix}{name}"), meta));
        }
    }
    let nested: Vec<Listing> = dirs
        .par_iter()
        .map(|(d, p)| walk_dir(d, p, stat))
        .collect::<Result<_, _>>()?;
    files.extend(nested.into_iter().flatten());
    Ok(files)
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
    let mut out: Vec<String> = walk_dir(dir, "", false)?
        .into_iter()
        .map(|(f, _)| f)
        .collect();
    out.sort_unstable();
    Ok(out)
}

/// `.<name>.c2s-<tag>` beside the output folder `out`: where a build assembles the next output
/// and a server keeps its copy (hidden, and skipped by the corpus walk and by `watch`).
pub fn sibling(out: &Path, tag: &str) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    out.with_file_name(format!(".{name}.c2s-{tag}"))
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
