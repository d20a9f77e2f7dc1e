//! Replacing a folder's whole content atomically: the new tree is assembled beside it
//! (`.<name>.c2s-tmp`), written files new, unchanged files hard-linked, and every folder whose
//! content is unchanged moved over whole (one rename instead of a link per file); then the two
//! folders are swapped. A journal (`.<name>.c2s-moves`) lists the moved folders, so a process
//! killed at any point is repaired by `recover`: before the swap the moves are undone and the
//! previous output is intact; after it the new output is kept.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::BuildError;

pub use crate::format::sibling;

/// How the new tree is assembled from the old one.
/// Paths are borrowed from the caller's map (a million of them would be 250 MB more).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan<'a> {
    /// Folders whose whole content is unchanged: moved from the old tree.
    pub moves: Vec<&'a str>,
    /// Unchanged files in changed folders: hard-linked.
    pub links: Vec<&'a str>,
    /// New or changed files: written.
    pub writes: Vec<&'a str>,
}

/// The folders above a relative path, outermost first (`a/b/c.md` → `a`, `a/b`).
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

/// Plans the new tree: `wanted` paths with whether each is unchanged on disk, and the paths
/// that exist now. A folder is clean when nothing under it is written or removed.
pub fn plan<'a>(wanted: &BTreeMap<&'a str, bool>, existing: &[String]) -> Plan<'a> {
    let mut dirty: BTreeSet<&str> = BTreeSet::new();
    for (&path, &same) in wanted {
        if !same {
            dirty.extend(ancestors(path));
        }
    }
    for path in existing.iter().filter(|p| !wanted.contains_key(p.as_str())) {
        dirty.extend(ancestors(path));
    }
    let mut plan = Plan::default();
    let mut moved: BTreeSet<&str> = BTreeSet::new();
    for (&path, &same) in wanted {
        if !same {
            plan.writes.push(path);
            continue;
        }
        match ancestors(path).find(|d| !dirty.contains(d)) {
            Some(dir) => {
                if moved.insert(dir) {
                    plan.moves.push(dir);
                }
            }
            None => plan.links.push(path),
        }
    }
    plan
}

/// Assembles `files` in the temporary folder per `plan` and swaps it in for `out`.
pub fn replace(out: &Path, files: &super::FileRefs, plan: &Plan) -> Result<(), BuildError> {
    let tmp = sibling(out, "tmp");
    let create =
        |p: &Path| fs::create_dir_all(p).map_err(|e| BuildError::io("cannot create", p, e));
    create(&tmp)?;
    // In parallel: the large files are made as they are written (documents.json, vectors.bin)
    // while others are written beside them.
    use rayon::prelude::*;
    plan.writes.par_iter().try_for_each(|rel| {
        let dest = tmp.join(rel);
        if let Some(p) = dest.parent() {
            create(p)?;
        }
        files[*rel]
            .write_file(&dest)
            .map_err(|e| BuildError::io("cannot write", &dest, e))
    })?;
    for rel in &plan.links {
        let dest = tmp.join(rel);
        if let Some(p) = dest.parent() {
            create(p)?;
        }
        if fs::hard_link(out.join(rel), &dest).is_err() {
            files[*rel]
                .write_file(&dest)
                .map_err(|e| BuildError::io("cannot write", &dest, e))?;
        }
    }
    for rel in &plan.moves {
        if let Some(p) = tmp.join(rel).parent() {
            create(p)?;
        }
    }
    if !plan.moves.is_empty() {
        let journal = sibling(out, "moves");
        fs::write(&journal, plan.moves.join("\n"))
            .map_err(|e| BuildError::io("cannot write", &journal, e))?;
        for rel in &plan.moves {
            let from = out.join(rel);
            fs::rename(&from, tmp.join(rel))
                .map_err(|e| BuildError::io("cannot move", &from, e))?;
        }
    }
    let old = sibling(out, "old");
    if out.exists() {
        fs::rename(out, &old).map_err(|e| BuildError::io("cannot move aside", out, e))?;
    }
    fs::rename(&tmp, out).map_err(|e| BuildError::io("cannot move into place", out, e))?;
    if old.exists() {
        fs::remove_dir_all(&old).map_err(|e| BuildError::io("cannot remove", &old, e))?;
    }
    remove_journal(out)
}

fn remove_journal(out: &Path) -> Result<(), BuildError> {
    let journal = sibling(out, "moves");
    match fs::remove_file(&journal) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(BuildError::io("cannot remove", &journal, e))
        }
        _ => Ok(()),
    }
}

/// Repairs what a killed `replace` left: rolls back moves made before the swap (the old output
/// comes back whole), keeps a finished swap, and removes the temporary folders.
pub fn recover(out: &Path) -> Result<(), BuildError> {
    let (tmp, old, journal) = (
        sibling(out, "tmp"),
        sibling(out, "old"),
        sibling(out, "moves"),
    );
    if journal.exists() && tmp.exists() {
        if out.exists() {
            // Killed while moving folders over: move them back.
            let moves = fs::read_to_string(&journal)
                .map_err(|e| BuildError::io("cannot read", &journal, e))?;
            for rel in moves.lines().filter(|l| !l.is_empty()) {
                let (from, to) = (tmp.join(rel), out.join(rel));
                if from.exists() && !to.exists() {
                    if let Some(p) = to.parent() {
                        fs::create_dir_all(p).map_err(|e| BuildError::io("cannot create", p, e))?;
                    }
                    fs::rename(&from, &to)
                        .map_err(|e| BuildError::io("cannot restore", &from, e))?;
                }
            }
        } else {
            // Killed between the two renames of the swap: the new tree is complete.
            fs::rename(&tmp, out).map_err(|e| BuildError::io("cannot move into place", out, e))?;
        }
    }
    if old.exists() {
        if out.exists() {
            fs::remove_dir_all(&old).map_err(|e| BuildError::io("cannot remove", &old, e))?;
        } else {
            fs::rename(&old, out).map_err(|e| BuildError::io("cannot restore", &old, e))?;
        }
    }
    if tmp.exists() {
        fs::remove_dir_all(&tmp).map_err(|e| BuildError::io("cannot remove", &tmp, e))?;
    }
    remove_journal(out)
}

/// The folder beside the output where large files are written while they are hashed (see
/// [`crate::format::Content::spilled`]); on the same file system, so they are moved into place.
pub fn spill_dir(out: &Path) -> PathBuf {
    sibling(out, "spill")
}

/// Removes the spill folder: what a build spilled and did not move into place (an unchanged
/// file, a failed or killed build). Builds call it before they render and after they write.
/// Anything else in its place is left alone (nothing then spills: each file is made twice).
pub fn remove_spill(out: &Path) -> std::io::Result<()> {
    let dir = spill_dir(out);
    match fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(&dir),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        list.iter()
            .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn clean_folders_move_whole() {
        let wanted: BTreeMap<&str, bool> = [
            ("a/x.md", true),
            ("a/b/y.md", true),
            ("c/z.md", true),
            ("c/d/w.md", false),
            ("lock", false),
        ]
        .into_iter()
        .collect();
        let existing: Vec<String> = [
            "a/x.md",
            "a/b/y.md",
            "c/z.md",
            "c/d/w.md",
            "c/gone.md",
            "lock",
        ]
        .map(String::from)
        .to_vec();
        let p = plan(&wanted, &existing);
        assert_eq!(p.moves, ["a"]);
        assert_eq!(p.links, ["c/z.md"]);
        assert_eq!(p.writes, ["c/d/w.md", "lock"]);
    }

    #[test]
    fn a_kill_at_any_step_keeps_one_whole_tree() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let old = files(&[
            ("a/x.md", "1"),
            ("a/b/y.md", "2"),
            ("c/z.md", "3"),
            ("lock", "old"),
        ]);
        for (p, b) in &old {
            fs::create_dir_all(out.join(p).parent().unwrap()).unwrap();
            fs::write(out.join(p), b).unwrap();
        }
        // Killed after moving `a` into the new tree, before the swap: rolled back.
        let tmp = sibling(&out, "tmp");
        fs::create_dir_all(&tmp).unwrap();
        fs::write(sibling(&out, "moves"), "a").unwrap();
        fs::rename(out.join("a"), tmp.join("a")).unwrap();
        fs::write(tmp.join("lock"), "new").unwrap();
        recover(&out).unwrap();
        let read = |p: &str| fs::read_to_string(out.join(p)).unwrap();
        assert_eq!(
            (read("a/x.md"), read("a/b/y.md"), read("lock")),
            ("1".into(), "2".into(), "old".into())
        );
        assert!(!tmp.exists() && !sibling(&out, "moves").exists());
        // Killed between the two renames of the swap: the complete new tree is kept.
        fs::create_dir_all(&tmp).unwrap();
        fs::write(sibling(&out, "moves"), "a").unwrap();
        fs::rename(out.join("a"), tmp.join("a")).unwrap();
        fs::create_dir_all(tmp.join("c")).unwrap();
        fs::write(tmp.join("c/z.md"), "3").unwrap();
        fs::write(tmp.join("lock"), "new").unwrap();
        fs::rename(&out, sibling(&out, "old")).unwrap();
        recover(&out).unwrap();
        assert_eq!((read("a/x.md"), read("lock")), ("1".into(), "new".into()));
        assert!(!sibling(&out, "old").exists());
    }
}
