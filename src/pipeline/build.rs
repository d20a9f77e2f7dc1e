//! `c2s build`: ingest → card → embed → tree (warm start or level loop) → enrich → render → write,
//! every expensive step through the SQLite memo.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use crate::config::Loaded;
use crate::db::cache::Memo;
use crate::db::exec::{Executor, Miss, Slots, StageCount};
use crate::db::statindex::OnDisk;
use crate::diag::{Diagnostics, Warning};
use crate::error::BuildError;
use crate::format::Layout;
use crate::format::limits::PlatformReport;
use crate::ingest::graph::Graph;
use crate::ingest::{self, Document, IngestOptions};
use crate::pipeline::output::{BuildLock, Known, WriteStats, write_output};
use crate::pipeline::records::{read_record, record_name};
use crate::pipeline::shortcut::Shortcut;
use crate::progress::Progress;
use crate::stage::incremental::WarmStats;
use crate::stage::{card, embed, enrich, render};

use crate::pipeline::backends::Backends;

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

/// Flagged sentences and the documents that hold them.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Planted {
    pub sentences: usize,
    pub documents: usize,
}

impl Planted {
    pub(crate) fn of(docs: &[Document]) -> Planted {
        Planted {
            sentences: docs.iter().map(|d| d.flags.len()).sum(),
            documents: docs.iter().filter(|d| !d.flags.is_empty()).count(),
        }
    }
}

/// How the tree was obtained.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TreeMode {
    /// Nothing changed since the last build: no stage ran.
    UpToDate,
    /// The previous tree, updated in place.
    Warm(WarmStats),
    /// Clustered from scratch, and why; the seconds K-Means took (every level, with the
    /// merging and splitting of clusters), and the documents' clusters' inertia (the sum over
    /// documents of 1 − the cosine to their cluster's mean, before merges).
    Full {
        reason: String,
        kmeans_secs: f64,
        leaf_inertia: f64,
    },
    /// Made from the authors' structure (`tree.structure`): what it followed, how many groups
    /// kept their authors' titles and how many were made by clustering, and the seconds it took
    /// (summaries included).
    Structured {
        from: String,
        titled: usize,
        made: usize,
        secs: f64,
        /// The navigation and category files it was read from (inputs of the build).
        #[serde(skip)]
        inputs: Vec<std::path::PathBuf>,
    },
}

/// The end-of-build figures (`--json` prints this).
#[derive(Debug, Clone, Serialize)]
pub struct BuildReport {
    pub output: String,
    pub documents: usize,
    pub sources: usize,
    /// Source files read and parsed (the others came from the record of parsed sources, their
    /// stat unchanged).
    pub sources_read: usize,
    /// Leaf groups whose summarizer input was made from their members (the others' were
    /// recalled by recipe).
    pub group_inputs_made: usize,
    /// Documents whose texts to embed were made and hashed (the others' hashes were recalled by
    /// recipe).
    pub embed_texts_made: usize,
    /// Entries of `documents.json` that were made (the others were copied from the previous
    /// file, their recipe and bytes unchanged).
    pub doc_entries_made: usize,
    pub levels: usize,
    pub skills: usize,
    pub navigation_files: usize,
    pub warnings: usize,
    pub seconds: f64,
    pub kmeans_device: String,
    /// What ran the embedder (`cpu`, `cuda`, an endpoint URL).
    pub embed_device: String,
    /// Tokens and cost per LLM stage (remote backends).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub llm_usage: BTreeMap<String, crate::llm::Usage>,
    pub tree: TreeMode,
    /// Per stage: results computed now and reused from the memo.
    pub stages: BTreeMap<&'static str, StageCount>,
    /// Wall seconds per step.
    pub timings: BTreeMap<&'static str, f64>,
    pub files: WriteStats,
    /// What hosted skill platforms cap: skills, and files and bytes per skill.
    pub platform: PlatformReport,
    pub warning_list: Vec<Warning>,
    /// Sentences planted for AI models, flagged at ingest and left out of navigation text.
    pub planted: Planted,
    /// Results taken from the output's state file because the memo lacked them (a fresh clone
    /// continuing a committed output).
    pub seeded: usize,
    /// A batched build: batches submitted and collected, and the time spent on them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch: Option<crate::llm::batch::BatchSummary>,
    /// With `--dry-run`: every result that would be computed, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<Vec<Miss>>,
    /// Results of the committed state that failed their checks (computed again instead).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<crate::db::exec::Rejected>,
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

    /// Where the output's files go (the skills folder resolved against the config's folder).
    pub fn layout(&self) -> Layout {
        let skills = self.loaded.config.output.skills_dir.as_ref();
        Layout::new(&self.out_dir, skills.map(|d| self.loaded.resolve(d)))
    }
}

/// Lap timer for the report.
struct Laps {
    clock: Instant,
    timings: BTreeMap<&'static str, f64>,
}

impl Laps {
    fn lap(&mut self, name: &'static str) {
        self.timings
            .insert(name, self.clock.elapsed().as_secs_f64());
        self.clock = Instant::now();
    }
}

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
    if !opts.dry_run {
        return build_on(opts, progress, graph, &Backends::from_config(&opts.loaded)?);
    }
    // A dry run sends nothing: it estimates without the API keys, and says which are missing.
    let mut loaded = opts.loaded.clone();
    for (slot, what) in [
        (&mut loaded.config.llm.api_key_env, "llm.api_key_env"),
        (
            &mut loaded.config.embed.openai.api_key_env,
            "embed.openai.api_key_env",
        ),
    ] {
        let unset = |v: &String| std::env::var(v).ok().is_none_or(|k| k.is_empty());
        if let Some(var) = slot.clone().filter(unset) {
            progress.status(
                "Note",
                &format!(
                    "{what}: {var} is not set; the dry run estimates without it (a real build needs it)"
                ),
            );
            *slot = None;
        }
    }
    let mut backends = Backends::from_config(&loaded)?;
    backends.stand_in();
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
    let cfg = &opts.loaded.config;
    let ingest_opts = IngestOptions::from_config(&opts.loaded, &opts.out_dir, &opts.display_base);
    let layout = opts.layout();
    crate::pipeline::output::check_overlap(&layout, &ingest_opts.paths)?;
    crate::pipeline::output::check_replaceable(&opts.out_dir)?;
    let memo_path = opts.loaded.resolve(&cfg.cache.path);
    let _lock = if opts.dry_run {
        None
    } else {
        Some(BuildLock::acquire(&opts.out_dir, &memo_path, |lock| {
            progress.status(
                "Blocking",
                &format!(
                    "waiting for another c2s build of this output ({})",
                    lock.display()
                ),
            );
        })?)
    };
    // What the examination learnt of the files saves reading them again: the writer compares
    // the output files it knows, ingest takes the sources it knows from their parsed record.
    let examined = if opts.full || opts.dry_run {
        None
    } else {
        match crate::pipeline::shortcut::up_to_date(opts, backends, start)? {
            Shortcut::Fresh(report) => return Ok(*report),
            Shortcut::Stale(examined) => Some(*examined),
        }
    };
    let mut laps = Laps {
        clock: Instant::now(),
        timings: BTreeMap::new(),
    };
    let mut diags = Diagnostics::default();
    let (on_disk, stat_taken, mut corpus) = match examined {
        None => {
            let taken = crate::db::statindex::now_ns();
            let corpus = ingest::ingest(&ingest_opts, graph, &mut diags)?;
            (OnDisk::default(), taken, corpus)
        }
        Some(e) => {
            for line in crate::pipeline::freshness::rename_lines(&e.renamed) {
                progress.status("Renamed", &line);
            }
            let parsed = ingest::parsed::path_for(&opts.out_dir, &memo_path);
            let prior = ingest::Prior {
                walk: e.walk,
                sources: &e.sources,
                parsed: ingest::ParsedCache::open(parsed, true),
            };
            let corpus = ingest::ingest_with(&ingest_opts, graph, &mut diags, Some(prior))?;
            (e.on_disk, e.taken, corpus)
        }
    };
    for w in &diags.warnings {
        progress.warning(&w.to_string());
    }
    report_unsupported(&corpus.unsupported, progress);
    report_not_pages(&corpus.not_pages, progress);
    let docs = &corpus.documents;
    let bytes = docs.iter().map(|d| d.text.len() as u64).sum();
    crate::format::limits::fits_the_host(docs.len(), bytes, &cfg.output)?;
    progress.status(
        "Ingested",
        &format!(
            "{} documents from {} files",
            docs.len(),
            corpus.sources.len()
        ),
    );
    laps.lap("ingest");

    let memo = if opts.dry_run && (opts.verify_state || !memo_path.exists()) {
        Memo::in_memory()
    } else {
        Memo::open(&memo_path)
    }?;
    // Only a dry run explains its misses against the previous build's keys.
    let mut exec = if opts.dry_run {
        let previous: Slots =
            read_record(&memo, &record_name("slots", &opts.out_dir)).unwrap_or_default();
        Executor::dry_run(&memo, previous)
    } else {
        Executor::new(&memo)
    };
    let next = crate::pipeline::records::NextBuild::of(&opts.out_dir, &memo_path);
    if !opts.verify_state {
        next.read_into(&mut exec);
    }
    exec.io_threads = backends.io_threads();
    exec.progress = Some(*progress);
    let (previous_lock, prior) = crate::pipeline::state::read_state(
        opts,
        &memo,
        (&mut exec, &on_disk),
        docs,
        &mut diags,
        progress,
    )?;

    let cards = card::cards(docs, backends.llm.as_ref(), &mut exec)?;
    laps.lap("card");
    let cut = crate::stage::embed_input::Cut {
        max_doc_chars: cfg.tree.max_doc_chars,
        limit: cfg.embed.chunk_tokens,
        max: cfg.embed.max_chunks,
    };
    let vectors = embed::embed_documents(docs, &cards, cut, backends.embedder.as_ref(), &mut exec)?;
    let doc_vectors = &vectors.docs;
    for &d in &vectors.truncated {
        diags.warn(
            docs[d].source.clone(),
            None,
            format!(
                "document `{}` is longer than embed.max_chunks = {} passages; the rest of its text is kept but not embedded (raise embed.max_chunks to embed all of it)",
                docs[d].id, cfg.embed.max_chunks
            ),
        );
        progress.warning(&diags.warnings.last().expect("just pushed").to_string());
    }
    progress.status(
        "Embedded",
        &format!(
            "{} documents, {} passages of long ones ({})",
            docs.len(),
            vectors.chunks.rows,
            backends.embedder.model_id()
        ),
    );
    laps.lap("embed");

    let prev_tree = if opts.full {
        Err("--full".to_string())
    } else {
        prior
    };
    let (mut tree, mode) = crate::pipeline::tree::make_tree(
        opts,
        backends,
        docs,
        &cards,
        doc_vectors,
        prev_tree,
        &mut exec,
        progress,
    )?;
    laps.lap("tree");
    if let TreeMode::Structured { inputs, .. } = &mode {
        crate::pipeline::tree::add_structure_sources(
            &mut corpus.sources,
            inputs,
            &opts.display_base,
        );
    }

    enrich::exemplars(&mut tree, doc_vectors, cfg.tree.exemplars);
    enrich::related(&mut tree, cfg.tree.related_skills);
    // The extractive labels avoid the words their level shares when they are made.
    render::assign_paths(&mut tree, !backends.llm.reads_marks());
    let fallbacks: Vec<Warning> =
        std::mem::take(&mut *exec.warnings.lock().unwrap_or_else(|e| e.into_inner()));
    for w in &fallbacks {
        progress.warning(&w.to_string());
    }
    let mut ctx = render::Ctx::new(
        &tree,
        docs,
        &cards,
        cfg.output.limits(),
        cfg.output.documents,
    );
    super::links::resolve(&mut ctx, opts, progress, &mut diags);
    for note in ctx.place.notes(&tree) {
        progress.status("Packed", &note);
    }
    let old_docs = opts.out_dir.join("documents.json");
    let previous = render::splice::Previous {
        file: &old_docs,
        hash: on_disk.hash("documents.json", &old_docs),
    };
    let entries = render::splice::entries_path(&opts.out_dir, &memo_path);
    let splice = render::splice::Splice::plan(&ctx, previous, &entries);
    let kept = std::mem::take(&mut exec.kept);
    let state = crate::pipeline::state::render(&cfg.tree_hash(), docs, &kept, &mut exec.recipes);
    let group_inputs_made = exec.recipes.missed_of(crate::stage::node_input::GROUP);
    let embed_texts_made = exec.recipes.missed_of(crate::stage::embed_input::KIND);
    let keep = (&mut exec, kept.as_slice(), !opts.dry_run);
    if let Some((path, msg)) = crate::pipeline::records::keep_for_next(&next, keep) {
        let file = crate::paths::display(&path, &opts.display_base);
        progress.warning(&format!("{file}: {msg}"));
        diags.warn(file, None, msg);
    }
    if !opts.dry_run {
        // A killed build's spilled files; what cannot be removed is written over.
        let _ = crate::pipeline::output::remove_spill(&opts.out_dir);
    }
    let (files, lock, platform, navigation_files) = crate::pipeline::emit::render_files(
        &ctx,
        &vectors,
        opts,
        backends,
        &corpus.sources,
        (fallbacks.len(), state, &splice),
    );
    let doc_entries_made = splice.made();
    diags.warnings.extend(fallbacks);
    for note in backends.llm.notes() {
        let file = opts.loaded.path.as_ref().map_or_else(
            || "[llm]".to_string(),
            |p| crate::paths::display(p, &opts.display_base),
        );
        progress.warning(&format!("{file}: {note}"));
        diags.warn(file, None, note);
    }
    for w in &platform.warnings {
        progress.warning(w);
    }
    laps.lap("render");
    let written = if opts.dry_run {
        drop(files);
        drop(splice);
        WriteStats::default()
    } else {
        let known = Known {
            on_disk: Some(&on_disk),
            fresh: Some(&lock.outputs),
        };
        let w = write_output(&layout, &files, previous_lock.as_ref(), known)?;
        for rel in &w.replaced_edits {
            let file = crate::paths::display(&layout.path(rel), &opts.display_base);
            diags.warn(
                file,
                None,
                "was edited by hand since the last build; the build replaced it (the output is rebuilt from the sources: put lasting changes there, or in c2s.toml)",
            );
            progress.warning(&diags.warnings.last().expect("just pushed").to_string());
        }
        // The rendered files (navigation, indexes, the lock) are large at a million documents:
        // freed before the records are serialized.
        drop(files);
        let wrote = (lock, corpus.sources.as_slice(), stat_taken);
        let keep = (&memo, &mut exec, &next, splice);
        crate::pipeline::records::after_write(opts, wrote, keep, (&mut diags, progress))?;
        w
    };
    laps.lap("write");

    let report = BuildReport {
        output: crate::paths::display(&opts.out_dir, &opts.display_base),
        documents: docs.len(),
        sources: corpus.sources.len(),
        sources_read: corpus.read,
        group_inputs_made,
        embed_texts_made,
        doc_entries_made,
        levels: tree.levels,
        skills: tree.roots.len(),
        navigation_files,
        warnings: diags.warnings.len(),
        seconds: start.elapsed().as_secs_f64(),
        kmeans_device: backends.kmeans_used(),
        embed_device: backends.embedder.device(),
        llm_usage: backends.llm.usage(),
        tree: mode,
        stages: exec.counts.clone(),
        timings: laps.timings,
        files: written,
        platform,
        warning_list: diags.warnings,
        planted: Planted::of(docs),
        seeded: exec.counts.values().map(|c| c.seeded).sum(),
        batch: None,
        dry_run: opts.dry_run.then(|| exec.misses().to_vec()),
        rejected: std::mem::take(&mut exec.rejected),
    };
    drop(ctx);
    let plans = std::mem::take(&mut exec.plans);
    crate::pipeline::drop_later((plans, corpus, tree, cards, vectors, kept));
    Ok(report)
}

/// One line for the files left out as not pages of the site, naming the first few.
fn report_not_pages(not_pages: &[String], progress: &Progress) {
    if not_pages.is_empty() {
        return;
    }
    let mut named = not_pages
        .iter()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if not_pages.len() > 3 {
        named.push_str(&format!(" and {} more", not_pages.len() - 3));
    }
    progress.status(
        "Skipped",
        &format!(
            "{} files that are not pages: {named} (an `include` glob that names one brings it back)",
            not_pages.len()
        ),
    );
}

fn report_unsupported(unsupported: &std::collections::HashMap<String, usize>, progress: &Progress) {
    if unsupported.is_empty() {
        return;
    }
    let mut v: Vec<(&String, &usize)> = unsupported.iter().collect();
    v.sort();
    let list: Vec<String> = v
        .iter()
        .map(|(e, n)| {
            if e.is_empty() {
                format!("{n} without extension")
            } else {
                format!("{n} .{e}")
            }
        })
        .collect();
    progress.status(
        "Skipped",
        &format!("files of unsupported types: {}", list.join(", ")),
    );
}
