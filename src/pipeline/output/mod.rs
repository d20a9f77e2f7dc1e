//! Atomic output: the new tree is assembled in a temporary folder beside the output (unchanged files
//! hard-linked, so their mtimes survive) and swapped in; an interrupted build leaves the old output.
//! With a shared skills folder each skill folder is swapped the same way.

mod swap;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::db::statindex::OnDisk;
use crate::error::BuildError;
use crate::format::lock::Lock;
use crate::format::{
    Content, FileRefs, Files, LOCK_FILE, Layout, list_files, skill_names, split_skill,
};
pub use swap::{recover, remove_spill, spill_dir};

/// What the writer did.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WriteStats {
    pub written: usize,
    pub unchanged: usize,
    pub removed: usize,
    /// Output files that had been edited by hand since the last build (their bytes differed from
    /// the lock) and that this build replaced, by output path.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaced_edits: Vec<String>,
}

/// The previous build's hash of each output file, what is known of the files on disk, and
/// where a folder's files sit in the lock.
#[derive(Clone, Copy)]
struct Locked<'a> {
    outputs: Option<&'a BTreeMap<String, String>>,
    known: Known<'a>,
    prefix: &'a str,
}

/// What spares the writer reading a file to compare it: the hashes of the files on disk whose
/// stat has not moved since they were examined, and the hashes of the files it is about to
/// write (the new lock's). A file known on both sides is compared by hash; any other is read.
#[derive(Clone, Copy, Default)]
pub struct Known<'a> {
    pub on_disk: Option<&'a OnDisk>,
    pub fresh: Option<&'a BTreeMap<String, String>>,
    /// Where a file edited by hand is copied before it is replaced (by its path in the output).
    pub save_edits: Option<&'a Path>,
}

/// An exclusive lock on one output folder, held for a whole build (released on drop, and by
/// the OS if the process dies).
pub struct BuildLock {
    _file: fs::File,
    /// The cache folder, when this build created it: a build that fails before it has a memo
    /// leaves no folder behind (see `Drop`).
    created: Option<PathBuf>,
}

impl Drop for BuildLock {
    /// Removes the cache folder this build created when it still holds nothing but its
    /// `.gitignore` and build locks: the build failed before it computed anything (an empty
    /// corpus, an unwritable output), and a failed build leaves no new files. A folder with a
    /// memo in it is never touched.
    fn drop(&mut self) {
        let Some(dir) = &self.created else { return };
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let only_ours = entries.flatten().all(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name == ".gitignore" || (name.starts_with("build-") && name.ends_with(".lock"))
        });
        if only_ours {
            let _ = fs::remove_dir_all(dir);
        }
    }
}

impl BuildLock {
    /// Takes the build lock at `path` (a file in the memo's folder, `db::journal`), so that
    /// nothing is left beside the output; when another build holds it, `on_wait` is told and
    /// this waits.
    pub fn acquire(path: &Path, on_wait: impl FnOnce(&Path)) -> Result<BuildLock, BuildError> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let created = (!dir.as_os_str().is_empty() && !dir.exists()).then(|| dir.to_path_buf());
        crate::db::cache::prepare_dir(dir)
            .map_err(|e| BuildError::io("cannot create the cache folder", dir, e))?;
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| BuildError::io("cannot open lock", path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                on_wait(path);
                file.lock()
                    .map_err(|e| BuildError::io("cannot lock", path, e))?;
            }
            Err(fs::TryLockError::Error(e)) => return Err(BuildError::io("cannot lock", path, e)),
        }
        Ok(BuildLock {
            _file: file,
            created,
        })
    }
}

/// Copies a hand-edited output file into `dir` (at `rel`) before the build replaces it; a copy
/// that fails leaves the file as it is to be replaced, and the warning says so.
fn save_edit(dir: Option<&Path>, file: &Path, rel: &str) {
    if let Some(dir) = dir {
        let to = dir.join(rel);
        let _ = to.parent().map(fs::create_dir_all);
        let _ = fs::copy(file, to);
    }
}

/// Refuses to replace a non-empty folder that is not a c2s output.
pub fn check_replaceable(out: &Path) -> Result<(), BuildError> {
    if !out.exists() {
        return Ok(());
    }
    if !out.is_dir() {
        return Err(BuildError::ForeignOutput {
            path: out.to_path_buf(),
        });
    }
    let empty = fs::read_dir(out)
        .map_err(|e| BuildError::io("cannot read", out, e))?
        .next()
        .is_none();
    if empty || out.join(LOCK_FILE).is_file() {
        Ok(())
    } else {
        Err(BuildError::ForeignOutput {
            path: out.to_path_buf(),
        })
    }
}

/// Writes `files` (output paths → bytes) as the complete content of the output, atomically per
/// folder, and does nothing where it is already identical. `previous` is the lock the output
/// had: with a skills folder, c2s touches only the skill folders that lock lists, and refuses
/// to write over any other folder of the same name.
///
/// Order, so that an interrupted build never orphans a folder nor leaves one that the lock
/// does not own: skill folders that vanished are removed, then the output folder (with the new
/// lock) is swapped in, then each skill folder.
pub fn write_output(
    layout: &Layout,
    files: &Files,
    previous: Option<&Lock>,
    known: Known,
) -> Result<WriteStats, BuildError> {
    let Some(dir) = &layout.skills_dir else {
        let all: FileRefs = files.iter().map(|(k, v)| (k.as_str(), v)).collect();
        let locked = Locked {
            outputs: previous.map(|l| &l.outputs),
            known,
            prefix: "",
        };
        return write_tree(&layout.out, &all, true, locked);
    };
    let mut skills: BTreeMap<&str, FileRefs> = BTreeMap::new();
    let mut rest: FileRefs = BTreeMap::new();
    for (rel, content) in files {
        match split_skill(rel) {
            Some((name, inner)) => {
                skills.entry(name).or_default().insert(inner, content);
            }
            None => {
                rest.insert(rel.as_str(), content);
            }
        }
    }
    let old = previous.map(|l| {
        (
            Layout::of_lock(&layout.out, l),
            skill_names(l.outputs.keys()),
        )
    });
    let owned_here = |name: &str| {
        old.as_ref()
            .is_some_and(|(l, names)| l.skills_root() == *dir && names.contains(name))
    };
    for name in skills.keys() {
        let folder = dir.join(name);
        if folder.exists() && !owned_here(name) {
            return Err(BuildError::SkillsClash { path: folder });
        }
    }
    let mut stats = WriteStats::default();
    if let Some((old_layout, names)) = &old {
        let root = old_layout.skills_root();
        for name in names {
            let same = root == *dir && skills.contains_key(name.as_str());
            let folder = root.join(name);
            if !same && folder.is_dir() {
                fs::remove_dir_all(&folder)
                    .map_err(|e| BuildError::io("cannot remove", &folder, e))?;
                stats.removed += 1;
            }
        }
    }
    fs::create_dir_all(dir).map_err(|e| BuildError::io("cannot create", dir, e))?;
    let outputs = previous.map(|l| &l.outputs);
    stats.add(write_tree(
        &layout.out,
        &rest,
        true,
        Locked {
            outputs,
            known,
            prefix: "",
        },
    )?);
    for (name, folder_files) in &skills {
        let prefix = format!("{}/{name}/", crate::format::SKILLS);
        let locked = Locked {
            outputs,
            known,
            prefix: &prefix,
        };
        stats.add(write_tree(&dir.join(name), folder_files, false, locked)?);
    }
    Ok(stats)
}

impl WriteStats {
    fn add(&mut self, o: WriteStats) {
        self.written += o.written;
        self.unchanged += o.unchanged;
        self.removed += o.removed;
        self.replaced_edits.extend(o.replaced_edits);
    }
}

/// Writes `files` as the complete content of the folder `out`, atomically. With `guard`, a
/// non-empty folder without a `c2s.lock` is refused.
fn write_tree(
    out: &Path,
    files: &FileRefs,
    guard: bool,
    locked: Locked,
) -> Result<WriteStats, BuildError> {
    recover(out)?;
    if guard {
        check_replaceable(out)?;
    }
    let existing = if out.is_dir() {
        list_files(out)?
    } else {
        Vec::new()
    };
    let mut replaced_edits = Vec::new();
    // Lazy content is made only where a file exists to compare with. A file about to change is
    // checked against the lock: bytes the last build did not write are a hand edit.
    let mut same = |rel: &str, c: &Content| {
        let key = format!("{}{rel}", locked.prefix);
        let was = locked.outputs.and_then(|o| o.get(&key));
        let path = out.join(rel);
        let known_now = locked.known.on_disk.and_then(|d| d.hash(&key, &path));
        if let (Some(old), Some(new)) = (known_now, locked.known.fresh.and_then(|f| f.get(&key))) {
            if old == new {
                return true;
            }
            if was.is_some_and(|hash| old != hash) {
                save_edit(locked.known.save_edits, &path, &key);
                replaced_edits.push(key);
            }
            return false;
        }
        let Ok(old) = fs::read(&path) else {
            return false;
        };
        if *old == *c.get() {
            return true;
        }
        if was.is_some_and(|hash| crate::format::lock::file_hash(&old) != *hash) {
            save_edit(locked.known.save_edits, &path, &key);
            replaced_edits.push(key);
        }
        false
    };
    let wanted: BTreeMap<&str, bool> = files.iter().map(|(&rel, c)| (rel, same(rel, c))).collect();
    let mut stats = WriteStats {
        replaced_edits,
        ..WriteStats::default()
    };
    stats.unchanged = wanted.values().filter(|&&u| u).count();
    stats.written = files.len() - stats.unchanged;
    stats.removed = existing
        .iter()
        .filter(|e| !files.contains_key(e.as_str()))
        .count();
    if stats.written == 0 && stats.removed == 0 {
        return Ok(stats);
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| BuildError::io("cannot create", parent, e))?;
    }
    swap::replace(out, files, &swap::plan(&wanted, &existing))?;
    Ok(stats)
}

/// Refuses an output folder (or skills folder) that contains a corpus path (building would
/// replace the sources), and a skills folder inside the output folder.
pub(crate) fn check_overlap(
    layout: &Layout,
    sources: &[std::path::PathBuf],
) -> Result<(), BuildError> {
    let abs = crate::paths::abs;
    let outs = std::iter::once(&layout.out).chain(&layout.skills_dir);
    for out in outs {
        let out_abs = abs(out);
        for s in sources {
            if abs(s).starts_with(&out_abs) {
                return Err(BuildError::OutputOverlapsCorpus {
                    out: out.to_path_buf(),
                    source_path: s.clone(),
                });
            }
        }
    }
    if let Some(dir) = &layout.skills_dir
        && abs(dir).starts_with(abs(&layout.out))
    {
        return Err(BuildError::SkillsInsideOutput {
            out: layout.out.clone(),
            skills: dir.clone(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_then_noop_then_updates() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut files = Files::new();
        files.insert("a/x.md".to_string(), b"one".to_vec().into());
        // Lazy content is written (and compared) like bytes.
        files.insert(LOCK_FILE.to_string(), Content::lazy(|w| w.write_all(b"{}")));
        let layout = Layout::new(&out, None);
        assert_eq!(
            write_output(&layout, &files, None, Known::default())
                .unwrap()
                .written,
            2
        );
        let mtime = fs::metadata(out.join("a/x.md"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(
            write_output(&layout, &files, None, Known::default()).unwrap(),
            WriteStats {
                written: 0,
                unchanged: 2,
                removed: 0,
                replaced_edits: Vec::new(),
            }
        );
        files.insert("b.md".to_string(), b"two".to_vec().into());
        let s = write_output(&layout, &files, None, Known::default()).unwrap();
        assert_eq!((s.written, s.unchanged), (1, 2));
        assert_eq!(
            fs::metadata(out.join("a/x.md"))
                .unwrap()
                .modified()
                .unwrap(),
            mtime
        );
        assert_eq!(list_files(&out).unwrap(), vec!["a/x.md", "b.md", LOCK_FILE]);
    }

    #[test]
    fn refuses_foreign_folders_and_recovers() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("src");
        fs::create_dir_all(&out).unwrap();
        fs::write(out.join("main.rs"), "fn main(){}").unwrap();
        let files = Files::from([(LOCK_FILE.to_string(), b"{}".to_vec().into())]);
        assert!(matches!(
            write_output(&Layout::new(&out, None), &files, None, Known::default()),
            Err(BuildError::ForeignOutput { .. })
        ));
        assert!(out.join("main.rs").exists());
        // A build killed mid-swap left only the old folder aside.
        let out2 = dir.path().join("o2");
        write_output(&Layout::new(&out2, None), &files, None, Known::default()).unwrap();
        fs::rename(&out2, swap::sibling(&out2, "old")).unwrap();
        recover(&out2).unwrap();
        assert!(out2.join(LOCK_FILE).exists());
    }
}
