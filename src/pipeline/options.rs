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
    /// Ask the model again for the results whose answers an earlier build rejected (their
    /// stand-ins are otherwise reused).
    pub retry_rejected: bool,
    /// With `dry_run`: an item a model (or a neural embedder) would compute again is taken to
    /// get its last answer for the same item, so that what is built on it stays; without,
    /// every new answer is taken to differ (the dry run's upper bound).
    pub same_answers: bool,
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
            retry_rejected: false,
            same_answers: false,
        }
    }

    /// The stages whose dry-run stand-ins guess (their real backend is a model, or an embedder
    /// other than `hashed`): a dry run takes their last answers with `same_answers`.
    pub fn guessed_stages(&self) -> Vec<&'static str> {
        let cfg = &self.loaded.config;
        let mut stages = Vec::new();
        if cfg.llm.backend != crate::config::LlmBackendKind::Extractive {
            stages.extend(crate::config::LLM_STAGES);
        }
        if cfg.embed.backend != crate::config::EmbedBackendKind::Hashed {
            stages.extend(["embed", "chunk", "reembed"]);
        }
        stages
    }

    /// Whether a dry run of this build guesses anything (see [`BuildOptions::guessed_stages`]).
    pub fn dry_run_guesses(&self) -> bool {
        !self.guessed_stages().is_empty()
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
