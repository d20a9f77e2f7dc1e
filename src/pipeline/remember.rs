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
    let index = crate::pipeline::statscan::index_after_build(
        &opts.out_dir,
        made.lock,
        made.sources,
        made.taken,
    );
    match index {
        Ok(index) => journal.take(index),
        Err(e) => {
            let file = shown(&journal.path(Record::Stat), opts);
            warn(
                diags,
                progress,
                file,
                format!("{e}; {}", Record::Stat.lost()),
            );
        }
    }
    journal.take(crate::db::used::Kept {
        read: std::mem::take(&mut exec.used),
        fresh: std::mem::take(&mut exec.used_fresh),
        entries: made.kept,
    });
    journal.take(std::mem::take(&mut exec.recipes));
    if let Some(hash) = made.lock.outputs.get("documents.json") {
        journal.take(made.splice.kept(hash));
    }
    let slots = journal.wants_slots(memo, slots_moved(exec.used_missed, exec.looked_up))?;
    let failed = journal.commit(memo, || slots.then(|| exec.slots()))?;
    for (path, msg) in failed {
        warn(diags, progress, shown(&path, opts), msg);
    }
    Ok(())
}

/// Whether more than about 1% of the `looked_up` keys moved (the key slots are then rewritten;
/// see `Journal::wants_slots`).
fn slots_moved(missed: usize, looked_up: usize) -> bool {
    missed * 100 > looked_up
}
