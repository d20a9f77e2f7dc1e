//! What a build keeps for the next build of the same output: the key slots in the memo
//! (`--explain`, and whether this memo has built the output before), and the
//! records beside the memo of the results it used (`db::used`) and of the values it derived to
//! compute keys (`db::recipes`). The tree for warm starts is read from the output itself
//! (`pipeline::state`).

use std::path::{Path, PathBuf};

use crate::db::cache::Memo;
use crate::db::exec::{Entry, Executor};
use crate::db::recipes::Recipes;
use crate::diag::Diagnostics;
use crate::error::BuildError;
use crate::format::lock::Lock;
use crate::ingest::SourceFile;
use crate::pipeline::build::BuildOptions;
use crate::progress::Progress;
use crate::stage::render::splice::Splice;

/// Names the memo records of one output folder.
pub fn record_name(kind: &str, out: &Path) -> String {
    let abs = crate::paths::abs(out);
    format!("{kind}:{}", abs.display())
}

pub fn read_record<T: serde::de::DeserializeOwned>(memo: &Memo, name: &str) -> Option<T> {
    memo.record(name)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

/// Keeps the key slots for the next build: what `--explain` compares against, and the mark that
/// this memo has built the output. They are written when the memo has none for the output, and
/// otherwise only when more than about 1% of the keys moved (were not in the record of used
/// results): at 100,000 documents the record is 37 MB of JSON, and rewriting it cost an edit
/// build 0.3 s. A kept older record still explains a change right (a key that moved since it
/// was written differs from it too); `cache gc` keeps the results of the output's state file
/// as well, so it never drops what a later build used.
pub fn save_records(memo: &Memo, out: &Path, exec: &Executor) -> Result<(), BuildError> {
    let name = record_name("slots", out);
    if !slots_moved(exec.used_missed, exec.looked_up) && memo.has_record(&name)? {
        return Ok(());
    }
    let slots = serde_json::to_vec(&exec.slots()).expect("slots serialize");
    memo.set_record(&name, &slots).map_err(BuildError::from)
}

/// Whether more than about 1% of the `looked_up` keys moved.
fn slots_moved(missed: usize, looked_up: usize) -> bool {
    missed * 100 > looked_up
}

/// Where a build keeps its records for the next build of the same output.
pub struct NextBuild {
    pub used: PathBuf,
    pub recipes: PathBuf,
}

impl NextBuild {
    /// The records of the output `out`, beside the memo at `memo`.
    pub fn of(out: &Path, memo: &Path) -> NextBuild {
        NextBuild {
            used: crate::db::used::path_for(out, memo),
            recipes: crate::db::recipes::path_for(out, memo),
        }
    }

    /// Hands `exec` what the last build recorded (nothing of a missing or damaged record).
    pub fn read_into(&self, exec: &mut Executor) {
        exec.used = crate::db::used::read(&self.used);
        exec.recipes = crate::db::recipes::Recipes::open(&self.recipes);
    }
}

/// Writes the record of used results (when `write` and worth rewriting; see [`keep_used`]):
/// `kept` are the results the build used. Only a shortcut for the next build: a failure is
/// returned for a warning (the file, what went wrong and what the next build does instead),
/// never a failed build.
pub fn keep_for_next(
    paths: &NextBuild,
    (exec, kept, write): (&mut Executor, &[Entry], bool),
) -> Option<(PathBuf, String)> {
    keep_used(&paths.used, exec, kept, write).err().map(|e| {
        (
            paths.used.clone(),
            format!("cannot write ({e}); the next build looks every result up in the memo"),
        )
    })
}

/// Writes the recipes (when worth rewriting). A failure is returned for a warning, as with
/// [`keep_for_next`].
fn keep_recipes(paths: &NextBuild, recipes: &mut Recipes) -> Option<(PathBuf, String)> {
    recipes.save(&paths.recipes).err().map(|e| {
        (
            paths.recipes.clone(),
            format!("cannot write ({e}); the next build makes the inputs of every group and document again"),
        )
    })
}

/// What a build keeps once its output is written: the stat index of the files it wrote (the
/// lock, the sources, when their stat was taken), the recipes of `documents.json`'s entries
/// (`splice`), the other recipes and the key slots. The spill folder is removed. Failures of the
/// first three are warnings (the next build does more work); of the slots, an error.
pub(crate) fn after_write(
    opts: &BuildOptions,
    (lock, sources, stat_taken): (Lock, &[SourceFile], i64),
    (memo, exec, next, splice): (&Memo, &mut Executor, &NextBuild, Splice),
    (diags, progress): (&mut Diagnostics, &Progress),
) -> Result<(), BuildError> {
    let mut warn = |path: &Path, msg: String| {
        let file = crate::paths::display(path, &opts.display_base);
        progress.warning(&format!("{file}: {msg}"));
        diags.warn(file, None, msg);
    };
    if let Err(e) = crate::pipeline::output::remove_spill(&opts.out_dir) {
        let dir = crate::pipeline::output::spill_dir(&opts.out_dir);
        warn(
            &dir,
            format!("cannot remove ({e}); the next build removes it"),
        );
    }
    let recorded = crate::pipeline::statscan::record_build(
        &opts.loaded,
        &opts.out_dir,
        &lock,
        sources,
        stat_taken,
    );
    if let Err(e) = recorded {
        warn(
            memo.path(),
            format!("{e}; the next build hashes every file again"),
        );
    }
    if let Some(hash) = lock.outputs.get("documents.json") {
        let entries = crate::stage::render::splice::entries_path(&opts.out_dir, memo.path());
        if let Err(e) = splice.keep(&entries, hash) {
            let msg = "the next build makes every entry of documents.json again";
            warn(&entries, format!("cannot write ({e}); {msg}"));
        }
    }
    drop(lock);
    if let Some((path, msg)) = keep_recipes(next, &mut exec.recipes) {
        warn(&path, msg);
    }
    save_records(memo, &opts.out_dir, exec)
}

/// Drops the record of used results the build read, and keeps the results this build used in
/// its place (when `write`; the record itself or its overlay, see `db::keyed::Layered`).
fn keep_used(path: &Path, exec: &mut Executor, kept: &[Entry], write: bool) -> std::io::Result<()> {
    let read = std::mem::take(&mut exec.used);
    let fresh = std::mem::take(&mut exec.used_fresh);
    if !write {
        return Ok(());
    }
    // Without a record every key is new; the set is filled only when one was read.
    let all_fresh = read.is_empty();
    let entries = kept.iter().map(|e| crate::db::keyed::Row {
        key: &e.key,
        value: &e.value,
        fresh: all_fresh || fresh.contains(&e.key),
    });
    crate::db::used::save(&read, path, entries)
}
