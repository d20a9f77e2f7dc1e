//! A served output's private copy: every file its `c2s.lock` lists, read, checked against the
//! lock's hash and written into a folder beside the output. A request in flight reads the build
//! it started on whatever happens to the output meanwhile (a rebuild's swap, a file edited in
//! place), and an output caught mid-swap or edited by hand fails the check and is not served.
//! (Hard links would be cheaper, but a file edited in place would change under them.) The
//! folder is removed when the last request holding it ends.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rayon::prelude::*;

use crate::format::LOCK_FILE;
use crate::format::lock::Lock;
use crate::serve::ServeError;

/// Why an output cannot be served as it stands.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("{path}: {why}")]
    Unreadable { path: PathBuf, why: String },
    #[error(
        "{rel} is not the file {lock} lists (the output is being rebuilt, or was edited by hand)"
    )]
    Mismatch { rel: String, lock: String },
}

impl From<SnapshotError> for ServeError {
    fn from(e: SnapshotError) -> ServeError {
        match e {
            SnapshotError::Unreadable { path, why } => ServeError::NotOutput { path, why },
            SnapshotError::Mismatch { rel, lock } => ServeError::Corrupt {
                path: PathBuf::from(lock),
                message: format!("{rel} differs from what the build wrote"),
            },
        }
    }
}

/// One build of the output, held still.
#[derive(Debug)]
pub struct Snapshot {
    /// The private copy (removed on drop).
    pub dir: PathBuf,
    /// blake3 of the lock's bytes: which build this is.
    pub lock_hash: String,
    /// When the lock was written (the build's end).
    pub built: SystemTime,
    pub documents: usize,
}

impl Snapshot {
    /// Copies the output at `out` into `.<name>.c2s-serve-<pid>-<generation>` beside it and checks
    /// every file against the lock. The build's state (`state/`) is left out: no tool reads it.
    pub fn take(out: &Path, generation: u64) -> Result<Snapshot, SnapshotError> {
        let unreadable = |path: &Path, why: String| SnapshotError::Unreadable {
            path: path.to_path_buf(),
            why,
        };
        let lock_path = out.join(LOCK_FILE);
        let bytes = std::fs::read(&lock_path)
            .map_err(|e| unreadable(out, format!("cannot read its {LOCK_FILE}: {e}")))?;
        let built = std::fs::metadata(&lock_path)
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let mut lock: Lock = serde_json::from_slice(&bytes)
            .map_err(|e| unreadable(&lock_path, format!("not a c2s lock: {e}")))?;
        let layout = crate::format::Layout::of_lock(out, &lock);
        let dir =
            crate::format::sibling(out, &format!("serve-{}-{generation}", std::process::id()));
        let snap = Snapshot {
            dir,
            lock_hash: crate::hash::content_hash(&bytes),
            built,
            documents: lock.documents,
        };
        // A folder of the same name is left from this process's earlier try: start afresh.
        let _ = std::fs::remove_dir_all(&snap.dir);
        let files: Vec<(&String, &String)> = lock
            .outputs
            .iter()
            .filter(|(rel, _)| !crate::format::state::is_state(rel))
            .collect();
        files.par_iter().try_for_each(|(rel, want)| {
            let dest = snap.dir.join(rel);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(|e| unreadable(parent, e.to_string()))?;
            }
            let mismatch = || SnapshotError::Mismatch {
                rel: rel.to_string(),
                lock: lock_path.display().to_string(),
            };
            let got = std::fs::read(layout.path(rel)).map_err(|_| mismatch())?;
            if crate::format::lock::file_hash(&got) != **want {
                return Err(mismatch());
            }
            std::fs::write(&dest, got).map_err(|e| unreadable(&dest, e.to_string()))
        })?;
        // The copy holds its skills inside it, wherever the build wrote them.
        lock.skills_dir = None;
        let json = serde_json::to_vec_pretty(&lock).expect("a lock serializes");
        std::fs::write(snap.dir.join(LOCK_FILE), json)
            .map_err(|e| unreadable(&snap.dir, e.to_string()))?;
        Ok(snap)
    }

    /// Removes copies that servers of this output left when they were killed (their process is
    /// gone).
    pub fn remove_stale(out: &Path) {
        let prefix = crate::format::sibling(out, "serve-");
        let (Some(parent), Some(prefix)) = (prefix.parent(), prefix.file_name()) else {
            return;
        };
        let prefix = prefix.to_string_lossy().into_owned();
        let Ok(entries) = std::fs::read_dir(parent) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix(&prefix)
                .and_then(|rest| rest.split('-').next())
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            if !alive(pid) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether a process with this id runs (another user's counts as running).
fn alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    #[cfg(unix)]
    {
        let Ok(pid) = i32::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks that the process exists; nothing is sent.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_servers_copy_is_removed_and_a_live_ones_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let dead = tmp.path().join(".out.c2s-serve-999999999-1");
        let live = tmp
            .path()
            .join(format!(".out.c2s-serve-{}-1", std::process::id()));
        std::fs::create_dir_all(&dead).unwrap();
        std::fs::create_dir_all(&live).unwrap();
        Snapshot::remove_stale(&out);
        assert!(!dead.exists() && live.exists());
    }

    #[test]
    fn an_output_without_a_lock_is_not_served() {
        let tmp = tempfile::tempdir().unwrap();
        let err = Snapshot::take(tmp.path(), 1).unwrap_err();
        assert!(err.to_string().contains("c2s.lock"), "{err}");
    }
}
