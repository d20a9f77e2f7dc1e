//! What a build hands the journal once its output is written, for the next build of the same
//! output: the stat index of the files it wrote, the results it used, its recipes, the recipes
//! of `documents.json`'s entries and its key slots. The journal (`db::journal`) writes them all
//! in one place. (The parsed sources, keyed by content alone, are kept as soon as ingest has
//! them: `steps::ingest`.)

use crate::db::cache::Memo;
use crate::db::exec::{Entry, Executor};
use crate::db::journal::{Journal, Record};
use crate::diag::Diagnostics;
use crate::error::BuildError;
use crate::format::lock::Lock;
use crate::ingest::SourceFile;
use crate::pipeline::options::BuildOptions;
use crate::pipeline::steps::{shown, warn};
use crate::progress::Progress;
use crate::stage::render::splice::Splice;

/// What the build produced that the next build can use.
pub(crate) struct Produce<'a> {
    pub lock: &'a Lock,
    pub sources: &'a [SourceFile],
    /// When the sources' stats were taken.
    pub taken: i64,
    /// The results the build used, in stage order.
    pub kept: Vec<Entry>,
    pub splice: Splice,
}

/// Hands the journal what the build produced and commits it (the spill folder of the write is
/// removed first). A record that cannot be written is a warning (the next build does more
/// work); the key slots, in the memo, are an error.
///
/// The stat index is made on its own thread while the other records and the key slots are
/// written: it waits (up to 100 ms) for the stats of the files just written to settle, and a
/// fresh clone's records and slots (every result of the build) fill that wait.
pub(crate) fn commit(
    opts: &BuildOptions,
    mut journal: Journal,
    (memo, exec): (&Memo, &mut Executor),
    made: Produce,
    (diags, progress): (&mut Diagnostics, &Progress),
) -> Result<(), BuildError> {
    if let Err(e) = crate::pipeline::output::remove_spill(&opts.out_dir) {
        let dir = crate::pipeline::output::spill_dir(&opts.out_dir);
        let msg = format!("cannot remove ({e}); the next build removes it");
        warn(diags, progress, shown(&dir, opts), msg);
    }
    let Produce {
        lock,
        sources,
        taken,
        kept,
        splice,
    } = made;
    let (index, failed) = std::thread::scope(|scope| {
        let index = scope.spawn(|| {
            crate::pipeline::statscan::index_after_build(&opts.out_dir, lock, sources, taken)
        });
        let failed = commit_records(&mut journal, (memo, exec), lock, kept, splice);
        (
            index
                .join()
                .expect("the stat index's thread does not panic"),
            failed,
        )
    });
    for (path, msg) in failed? {
        warn(diags, progress, shown(&path, opts), msg);
    }
    // Made or written, a stat index that is not kept costs the next build the same.
    let kept = index.map_err(|e| e.to_string()).and_then(|mut index| {
        journal
            .keep_now(&mut index)
            .map_err(|e| format!("cannot write ({e})"))
    });
    if let Err(e) = kept {
        let file = shown(&journal.path(Record::Stat), opts);
        warn(
            diags,
            progress,
            file,
            format!("{e}; {}", Record::Stat.lost()),
        );
    }
    Ok(())
}

/// Every record but the stat index (the results the build used, its recipes, the recipes of
/// `documents.json`'s entries), then the key slots when they are to be written. Returns the
/// records that could not be written.
fn commit_records(
    journal: &mut Journal,
    (memo, exec): (&Memo, &mut Executor),
    lock: &Lock,
    kept: Vec<Entry>,
    splice: Splice,
) -> Result<Vec<(std::path::PathBuf, String)>, BuildError> {
    journal.take(crate::db::used::Kept {
        read: std::mem::take(&mut exec.used),
        fresh: std::mem::take(&mut exec.used_fresh),
        entries: kept,
    });
    journal.take(std::mem::take(&mut exec.recipes));
    if let Some(hash) = lock.outputs.get("documents.json") {
        journal.take(splice.kept(hash));
    }
    let slots = journal.wants_slots(memo, slots_moved(exec.used_missed, exec.looked_up))?;
    Ok(journal.commit(memo, || slots.then(|| exec.slots()))?)
}

/// Whether more than about 1% of the `looked_up` keys moved (the key slots are then rewritten;
/// see `Journal::wants_slots`).
fn slots_moved(missed: usize, looked_up: usize) -> bool {
    missed * 100 > looked_up
}
