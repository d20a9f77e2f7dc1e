//! `c2s build`, in DESIGN's order: ingest → card → embed → tree (warm start, the authors'
//! structure, or the level loop) → enrich → render → write. Every expensive step goes through
//! the memo; what the next build of the output can use is kept by its journal (`db::journal`).

use std::time::Instant;

use crate::db::exec::Executor;
use crate::diag::Diagnostics;
use crate::error::BuildError;
use crate::ingest::Corpus;
use crate::ingest::graph::Graph;
use crate::pipeline::backends::Backends;
use crate::pipeline::emit::{Emitted, Had};
use crate::pipeline::options::BuildOptions;
use crate::pipeline::report::{BuildReport, Laps, Planted, TreeMode};
use crate::pipeline::shortcut::Shortcut;
use crate::pipeline::tree::{add_structure_sources, make_tree};
use crate::pipeline::{emit, state, steps};
use crate::progress::Progress;
use crate::stage::card;

/// Runs the pipeline and writes the output (or, with `dry_run`, only works out what it would do).
pub fn build(opts: &BuildOptions, progress: &Progress) -> Result<BuildReport, BuildError> {
    build_with(opts, progress, &mut Graph::one_shot())
}

/// `build` with a query graph that outlives it (`c2s watch` keeps one across rebuilds).
pub fn build_with(
    opts: &BuildOptions,
    progress: &Progress,
    graph: &mut Graph,
) -> Result<BuildReport, BuildError> {
    let backends = if opts.dry_run {
        Backends::for_dry_run(&opts.loaded, progress)?
    } else {
        Backends::from_config(&opts.loaded)?
    };
    build_on(opts, progress, graph, &backends)
}

/// `build` with backends the caller keeps (`c2s eval` embeds its queries with the same
/// embedder, so a model is opened once). Not for dry runs, which need stand-ins.
pub fn build_using(
    opts: &BuildOptions,
    progress: &Progress,
    backends: &Backends,
) -> Result<BuildReport, BuildError> {
    debug_assert!(!opts.dry_run, "dry runs build with stand-in backends");
    build_on(opts, progress, &mut Graph::one_shot(), backends)
}

fn build_on(
    opts: &BuildOptions,
    progress: &Progress,
    graph: &mut Graph,
    backends: &Backends,
) -> Result<BuildReport, BuildError> {
    let start = Instant::now();
    let journal = opts.journal();
    let _lock = steps::prepare(opts, &journal, progress)?;
    let examined = match crate::pipeline::shortcut::up_to_date(opts, backends, start)? {
        Shortcut::Fresh(report) => return Ok(*report),
        Shortcut::Stale(examined) => examined.map(|e| *e),
    };
    let (mut laps, mut diags) = (Laps::start(), Diagnostics::default());
    let said = (&mut diags, progress);
    let (mut corpus, known) = steps::ingest(opts, graph, examined, &journal, said)?;
    laps.lap("ingest");
    let memo = steps::open_memo(opts)?;
    let mut exec = steps::executor(opts, &memo, &journal, backends, progress);
    let docs = corpus.documents.as_slice();
    let from = (&mut exec, &known.on_disk, &journal);
    let (previous_lock, prior) = state::read_state(opts, &memo, from, docs, &mut diags, progress)?;
    let cards = card::cards(docs, backends.llm.as_ref(), &mut exec)?;
    laps.lap("card");
    let said = (&mut diags, progress);
    let vectors = steps::embed(opts, (docs, &cards), backends, &mut exec, said)?;
    laps.lap("embed");
    let input = (docs, cards.as_slice(), &vectors.docs, prior);
    let (mut tree, mode) = make_tree(opts, backends, input, &mut exec, progress)?;
    laps.lap("tree");
    add_structure_sources(&mode, &mut corpus.sources, &opts.display_base);
    let fallbacks = steps::enrich(&mut tree, &vectors, opts, (backends, &mut exec), progress);
    let ctx = emit::context((&tree, docs, &cards), opts, (&mut diags, progress));
    let warm = matches!(mode, TreeMode::Warm(_));
    let had = Had::new(
        (journal, &memo),
        (known, previous_lock),
        (&corpus.sources, warm),
    );
    let (ran, said) = ((&mut exec, fallbacks), (&mut laps, &mut diags, progress));
    let mut emitted = emit::emit((opts, backends), (&ctx, &vectors), had, ran, said)?;
    drop(ctx);
    let report = report(
        opts,
        (backends, start),
        (&corpus, &tree),
        mode,
        (&mut exec, laps, diags),
        &mut emitted,
    );
    let plans = std::mem::take(&mut exec.plans);
    crate::pipeline::drop_later((plans, corpus, tree, cards, vectors, emitted.spent));
    Ok(report)
}

/// The end-of-build figures.
fn report(
    opts: &BuildOptions,
    (backends, start): (&Backends, Instant),
    (corpus, tree): (&Corpus, &crate::tree::Tree),
    mode: TreeMode,
    (exec, laps, diags): (&mut Executor, Laps, Diagnostics),
    emitted: &mut Emitted,
) -> BuildReport {
    BuildReport {
        output: crate::paths::display(&opts.out_dir, &opts.display_base),
        documents: corpus.documents.len(),
        sources: corpus.sources.len(),
        sources_read: corpus.read,
        group_inputs_made: emitted.group_inputs_made,
        embed_texts_made: emitted.embed_texts_made,
        doc_entries_made: emitted.doc_entries_made,
        levels: tree.levels,
        skills: tree.roots.len(),
        navigation_files: emitted.navigation_files,
        warnings: diags.warnings.len(),
        seconds: start.elapsed().as_secs_f64(),
        kmeans_device: backends.kmeans_used(),
        embed_device: backends.embedder.device(),
        llm_usage: backends.llm.usage(),
        tree: mode,
        stages: exec.counts.clone(),
        timings: laps.timings,
        files: std::mem::take(&mut emitted.files),
        platform: std::mem::take(&mut emitted.platform),
        warning_list: diags.warnings,
        planted: Planted::of(&corpus.documents),
        seeded: exec.counts.values().map(|c| c.seeded).sum(),
        batch: None,
        dry_run: opts.dry_run.then(|| exec.misses().to_vec()),
        rejected: std::mem::take(&mut exec.rejected),
    }
}
