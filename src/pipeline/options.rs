//! What a build is asked to do: the configuration, the output folder and the kind of run
//! (`BuildOptions`), and where that puts the output's files and records.

use std::path::PathBuf;

use crate::config::Loaded;
use crate::db::journal::Journal;
use crate::format::Layout;

/// What to build and where.
pub struct BuildOptions {
    pub loaded: Loaded,
    /// The output folder, resolved.
    pub out_dir: PathBuf,
    /// Paths in messages are shown relative to this folder.
    pub display_base: PathBuf,
    /// Rebuild the tree from scratch (the memo still serves unchanged results).
    pub full: bool,
    /// Work out what would be recomputed; write nothing.
    pub dry_run: bool,
    /// With `dry_run`: take every result from the committed state, as a fresh clone does,
    /// so that each is vetted (`c2s check --verify-state`); the memo is not read.
    pub verify_state: bool,
}

impl BuildOptions {
    /// A build of `loaded` into `out_dir` (paths in messages relative to `display_base`):
    /// incremental, and for real; set `full` or `dry_run` to change that.
    pub fn new(loaded: Loaded, out_dir: PathBuf, display_base: PathBuf) -> BuildOptions {
        BuildOptions {
            loaded,
            out_dir,
            display_base,
            full: false,
            dry_run: false,
            verify_state: false,
        }
    }

    /// Where the memo is (`cache.path`, resolved against the config's folder).
    pub fn memo_path(&self) -> PathBuf {
        self.loaded.memo_path()
    }

    /// What the last build of this output remembered, beside the memo.
    pub fn journal(&self) -> Journal {
        Journal::open(&self.out_dir, &self.memo_path())
    }

    /// Where the output's files go (the skills folder resolved against the config's folder).
    pub fn layout(&self) -> Layout {
        let skills = self.loaded.config.output.skills_dir.as_ref();
        Layout::new(&self.out_dir, skills.map(|d| self.loaded.resolve(d)))
    }
}
