//! What a build emits after the tree: the rendered files and the lock that describes them
//! (sources, outputs, config, the models and prompts of each stage), written over the output,
//! and what the next build needs handed to the journal (`remember`).

use std::collections::BTreeMap;

use super::backends::Backends;
use super::options::BuildOptions;
use super::report::Laps;
use super::steps::{Known, shown, warn};
use crate::db::cache::Memo;
use crate::db::exec::Executor;
use crate::db::journal::{Journal, Record};
use crate::diag::{Diagnostics, Warning};
use crate::error::BuildError;
use crate::format::limits::{self, PlatformReport};
use crate::format::lock::Lock;
use crate::format::{Files, LOCK_FILE};
use crate::hash::short_hash;
use crate::ingest;
use crate::pipeline::output::{WriteStats, write_output};
use crate::progress::Progress;
use crate::stage::embed;
use crate::stage::render::splice::Splice;
use crate::stage::{enrich, render};

/// Prompt identity per LLM stage (the extractive backend's algorithm version).
fn prompt_versions(b: &Backends) -> BTreeMap<String, String> {
    if !b.llm.reviews_partitions() {
        return BTreeMap::from([(
            "extractive".to_string(),
            crate::llm::EXTRACTIVE_VERSION.to_string(),
        )]);
    }
    crate::config::LLM_STAGES
        .iter()
        .map(|s| (s.to_string(), b.llm.prompt_version(s)))
        .collect()
}

/// What rendering reads: the tree with its documents and cards, where each goes for the host's
/// limits (said on the terminal when documents were packed), and their links resolved.
pub(crate) fn context<'a>(
    (tree, docs, cards): (
        &'a crate::tree::Tree,
        &'a [ingest::Document],
        &'a [crate::llm::Card],
    ),
    opts: &BuildOptions,
    (diags, progress): (&mut Diagnostics, &Progress),
) -> render::Ctx<'a> {
    let output = &opts.loaded.config.output;
    let mut ctx = render::Ctx::new(tree, docs, cards, output.limits(), output.documents);
    super::links::resolve(&mut ctx, opts, progress, diags);
    for note in ctx.place.notes(tree) {
        progress.status("Packed", &note);
    }
    ctx
}

/// What the build had: its output's journal and memo, what ingest knew of the files on disk,
/// the lock of the output before this build, and the corpus's sources.
pub(crate) struct Had<'a> {
    pub journal: Journal,
    pub memo: &'a Memo,
    pub known: Known,
    pub previous_lock: Option<crate::format::lock::Lock>,
    pub sources: &'a [ingest::SourceFile],
    /// The tree was the previous build's, updated in place (no stage re-embedded clusters).
    pub warm: bool,
}

impl<'a> Had<'a> {
    pub(crate) fn new(
        (journal, memo): (Journal, &'a Memo),
        (known, previous_lock): (Known, Option<crate::format::lock::Lock>),
        (sources, warm): (&'a [ingest::SourceFile], bool),
    ) -> Had<'a> {
        Had {
            journal,
            memo,
            known,
            previous_lock,
            sources,
            warm,
        }
    }

    /// The previous output's shards of the cluster re-embeddings (`state/reembed*.jsonl`), as
    /// they are, when this build updated its tree in place and so ran no re-embedding: a warm
    /// build keeps what the tree was clustered with instead of deleting it (and a later full
    /// build or a fresh clone's still finds it). A shard whose bytes are not what the lock
    /// says is not carried.
    fn carried_reembeds(
        &self,
        out: &std::path::Path,
        kept: &[crate::db::exec::Entry],
    ) -> Vec<(String, crate::format::Content<'static>)> {
        let (true, Some(lock)) = (self.warm, &self.previous_lock) else {
            return Vec::new();
        };
        if kept.iter().any(|e| e.stage == "reembed") {
            return Vec::new();
        }
        let prefix = format!("{}/reembed", crate::format::state::STATE_DIR);
        lock.outputs
            .range(prefix.clone()..)
            .take_while(|(name, _)| name.starts_with(&prefix))
            .filter_map(|(name, hash)| {
                let bytes = std::fs::read(out.join(name)).ok()?;
                (crate::format::lock::file_hash(&bytes) == *hash)
                    .then(|| (name.clone(), crate::format::Content::from(bytes)))
            })
            .collect()
    }
}

/// What emitting gave the report.
pub(crate) struct Emitted {
    pub files: WriteStats,
    pub platform: PlatformReport,
    pub navigation_files: usize,
    pub doc_entries_made: usize,
    pub group_inputs_made: usize,
    pub embed_texts_made: usize,
    /// The results a dry run used (a real build hands them to the journal), to be freed later.
    pub spent: Vec<crate::db::exec::Entry>,
}

/// Renders every file of the output from `ctx` and, unless a dry run, writes them over the
/// output and commits the journal. Laps "render" and "write".
pub(crate) fn emit(
    (opts, backends): (&BuildOptions, &Backends),
    (ctx, vectors): (&render::Ctx, &embed::DocVectors),
    had: Had,
    (exec, fallbacks): (&mut Executor, Vec<Warning>),
    (laps, diags, progress): (&mut Laps, &mut Diagnostics, &Progress),
) -> Result<Emitted, BuildError> {
    let old_docs = opts.out_dir.join("documents.json");
    let previous = render::splice::Previous {
        file: &old_docs,
        hash: had.known.on_disk.hash("documents.json", &old_docs),
    };
    let splice = Splice::plan(ctx, previous, &had.journal.path(Record::Entries));
    let kept = std::mem::take(&mut exec.kept);
    let tree_hash = opts.loaded.config.tree_hash();
    let mut state = super::state::render(&tree_hash, ctx.docs, &kept, &mut exec.recipes);
    state.extend(had.carried_reembeds(&opts.out_dir, &kept));
    let group_inputs_made = exec.recipes.missed_of(crate::stage::node_input::GROUP);
    let embed_texts_made = exec.recipes.missed_of(crate::stage::embed_input::KIND);
    if !opts.dry_run {
        // A killed build's spilled files; what cannot be removed is written over.
        let _ = crate::pipeline::output::remove_spill(&opts.out_dir);
    }
    let fallen = (fallbacks.len(), state, &splice);
    let (files, lock, platform, navigation_files) =
        render_files(ctx, vectors, opts, backends, had.sources, fallen);
    let doc_entries_made = splice.made();
    diags.warnings.extend(fallbacks);
    let config = opts.loaded.path.as_ref();
    for note in backends.llm.notes() {
        let file = config.map_or_else(|| "[llm]".to_string(), |p| shown(p, opts));
        warn(diags, progress, file, note);
    }
    for w in &platform.warnings {
        progress.warning(w);
    }
    laps.lap("render");
    let mut emitted = Emitted {
        files: WriteStats::default(),
        platform,
        navigation_files,
        doc_entries_made,
        group_inputs_made,
        embed_texts_made,
        spent: Vec::new(),
    };
    if opts.dry_run {
        drop(files);
        emitted.spent = kept;
        laps.lap("write");
        return Ok(emitted);
    }
    let layout = opts.layout();
    let saved = had.journal.saved_edits();
    let known = crate::pipeline::output::Known {
        on_disk: Some(&had.known.on_disk),
        fresh: Some(&lock.outputs),
        save_edits: Some(&saved),
    };
    let written = write_output(&layout, &files, had.previous_lock.as_ref(), known)?;
    for rel in &written.replaced_edits {
        let copy = saved.join(rel);
        let kept = match copy.is_file() {
            true => format!("your version is saved as {}", shown(&copy, opts)),
            false => "your version could not be saved".to_string(),
        };
        let msg = format!(
            "was edited by hand since the last build; the build replaced it ({kept}; the output is rebuilt from the sources: put lasting changes there, or in c2s.toml)"
        );
        warn(diags, progress, shown(&layout.path(rel), opts), msg);
    }
    // The rendered files (navigation, indexes, the lock) are large at a million documents:
    // freed before the records are serialized.
    drop(files);
    let made = super::remember::Produce {
        lock: &lock,
        sources: had.sources,
        taken: had.known.taken,
        kept,
        splice,
    };
    super::remember::commit(opts, had.journal, (had.memo, exec), made, (diags, progress))?;
    emitted.files = written;
    laps.lap("write");
    Ok(emitted)
}

/// Every output file (navigation and document files, documents.json, the serving data, the
/// entity indexes, the state file, c2s.lock), the lock itself, their sizes against the platform's
/// limits, and the number of navigation files.
pub(crate) fn render_files<'a>(
    ctx: &'a render::Ctx,
    vectors: &'a embed::DocVectors,
    opts: &BuildOptions,
    backends: &Backends,
    sources: &[ingest::SourceFile],
    (fallbacks, state, splice): (usize, Vec<(String, crate::format::Content<'a>)>, &'a Splice),
) -> (Files<'a>, Lock, PlatformReport, usize) {
    use rayon::prelude::*;
    let cfg = &opts.loaded.config;
    let index = enrich::entity_index(ctx.tree, ctx.docs, ctx.cards);
    // A dry run writes nothing, not even spilled files.
    let spill = (!opts.dry_run).then(|| crate::pipeline::output::spill_dir(&opts.out_dir));
    let (mut files, navigation_files) =
        render::all_files(ctx, vectors, &index, (splice, spill.as_deref()));
    files.extend(state);
    // Hashed (and measured) in parallel; lazy files are made here once and dropped.
    let measured: Vec<(String, u64)> = files
        .par_iter()
        .map(|(_, v)| {
            let (hash, len) = v.hash_and_len();
            (short_hash(&hash), len)
        })
        .collect();
    // Paths are long (about 200 bytes at five levels): each is held once more, in the lock.
    let mut sizes: Vec<u64> = Vec::with_capacity(files.len());
    let mut outputs = BTreeMap::new();
    for (k, (hash, size)) in files.keys().zip(measured) {
        sizes.push(size);
        outputs.insert(k.clone(), hash);
    }
    let planted = super::report::Planted::of(ctx.docs);
    let lock = Lock {
        c2s_version: env!("CARGO_PKG_VERSION").to_string(),
        config_hash: cfg.hash(&opts.loaded.base_dir),
        prompt_versions: prompt_versions(backends),
        models: backends.lock_models(),
        embed: Some(crate::pipeline::backends::serve_embed(
            &opts.loaded,
            &opts.out_dir,
        )),
        skills_dir: opts.layout().skills_dir.map(|d| {
            crate::format::lock::relative_path(&opts.out_dir, &d)
                .to_string_lossy()
                .replace('\\', "/")
        }),
        built_from: Some(crate::format::lock::BuiltFrom::of(
            &opts.loaded,
            &opts.out_dir,
        )),
        documents: ctx.docs.len(),
        levels: ctx.tree.levels,
        fallbacks,
        planted_sentences: planted.sentences,
        planted_documents: planted.documents,
        sources: sources
            .iter()
            .map(|s| (s.path.clone(), s.hash.clone()))
            .collect(),
        includes: sources
            .iter()
            .filter(|s| s.included)
            .map(|s| s.path.clone())
            .collect(),
        outputs,
    };
    let platform = limits::measure(
        files.keys().map(String::as_str).zip(sizes),
        cfg.output.host,
        cfg.output.limits(),
        cfg.output.documents,
    );
    files.insert(LOCK_FILE.into(), lock.to_json().into_bytes().into());
    // The publish manifest belongs to `c2s publish`: a build keeps it as it is.
    if let Ok(m) = std::fs::read(opts.out_dir.join(crate::format::PUBLISH_FILE)) {
        files.insert(crate::format::PUBLISH_FILE.into(), m.into());
    }
    (files, lock, platform, navigation_files)
}
