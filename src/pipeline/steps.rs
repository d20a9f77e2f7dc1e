//! The build's steps before the tree and around it, each one call from `build`: taking the
//! output (`prepare`), ingest with what the examination learnt, the memo and its executor with
//! what the journal recalls, the embed step with its warnings, and enrichment.

use std::path::Path;

use crate::db::cache::Memo;
use crate::db::exec::Executor;
use crate::db::journal::{Journal, Record};
use crate::db::statindex::OnDisk;
use crate::diag::{Diagnostics, Warning};
use crate::error::BuildError;
use crate::ingest::graph::Graph;
use crate::ingest::{self, Corpus, IngestOptions};
use crate::llm::Card;
use crate::pipeline::backends::Backends;
use crate::pipeline::options::BuildOptions;
use crate::pipeline::output::BuildLock;
use crate::pipeline::shortcut::Examination;
use crate::progress::Progress;
use crate::stage::embed::{self, DocVectors};
use crate::stage::{enrich, render};
use crate::text::plural;
use crate::tree::Tree;

/// Warns on the terminal and in the report: `file` (as shown), `message`.
pub(crate) fn warn(diags: &mut Diagnostics, progress: &Progress, file: String, message: String) {
    diags.warn(file, None, message);
    progress.warning(&diags.warnings.last().expect("just pushed").to_string());
}

/// Checks that the output may be written where it is asked for, and takes the output's build
/// lock (waiting for another build of it, and saying so). A dry run writes nothing and takes
/// no lock.
pub(crate) fn prepare(
    opts: &BuildOptions,
    journal: &Journal,
    progress: &Progress,
) -> Result<Option<BuildLock>, BuildError> {
    let paths = IngestOptions::from_config(&opts.loaded, &opts.out_dir, &opts.display_base).paths;
    crate::pipeline::output::check_overlap(&opts.layout(), &paths)?;
    crate::pipeline::output::check_replaceable(&opts.out_dir)?;
    if opts.dry_run {
        return Ok(None);
    }
    let lock = BuildLock::acquire(&journal.build_lock(), |lock| {
        progress.status(
            "Blocking",
            &format!(
                "waiting for another c2s build of this output ({})",
                lock.display()
            ),
        );
    })?;
    Ok(Some(lock))
}

/// What ingest learnt of the files on disk: the output files whose bytes are known by their
/// stat, and when the sources' stats were taken.
pub(crate) struct Known {
    pub on_disk: OnDisk,
    pub taken: i64,
}

/// Reads the corpus, with what the examination learnt when there was one (the sources it
/// knows by stat are taken from the parsed-source record), and reports what it found.
pub(crate) fn ingest(
    opts: &BuildOptions,
    graph: &mut Graph,
    examined: Option<Examination>,
    journal: &Journal,
    (diags, progress): (&mut Diagnostics, &Progress),
) -> Result<(Corpus, Known), BuildError> {
    let ingest_opts = IngestOptions::from_config(&opts.loaded, &opts.out_dir, &opts.display_base);
    let (corpus, known) = match examined {
        None => {
            let taken = crate::db::statindex::now_ns();
            let corpus = ingest::ingest(&ingest_opts, graph, diags)?;
            let on_disk = OnDisk::default();
            (corpus, Known { on_disk, taken })
        }
        Some(e) => {
            for line in crate::pipeline::freshness::rename_lines(&e.renamed) {
                progress.status("Renamed", &line);
            }
            let prior = ingest::Prior {
                walk: e.walk,
                sources: &e.sources,
                parsed: ingest::ParsedCache::open(&journal.path(Record::Parsed)),
                read: e.read,
            };
            let mut corpus = ingest::ingest_with(&ingest_opts, graph, diags, Some(prior))?;
            keep_parsed(opts, journal, &mut corpus, diags);
            let (on_disk, taken) = (e.on_disk, e.taken);
            (corpus, Known { on_disk, taken })
        }
    };
    for w in &diags.warnings {
        progress.warning(&w.to_string());
    }
    report_unsupported(&corpus.unsupported, progress);
    report_not_pages(&corpus.not_pages, progress);
    let docs = &corpus.documents;
    let bytes = docs.iter().map(|d| d.text.len() as u64).sum();
    crate::format::limits::fits_the_host(docs.len(), bytes, &opts.loaded.config.output)?;
    let (n, files) = (docs.len(), corpus.sources.len());
    let line = format!("{} from {}", plural(n, "document"), plural(files, "file"));
    progress.status("Ingested", &line);
    Ok((corpus, known))
}

/// Keeps the parsed sources for the next build as soon as ingest has them (not on a dry run);
/// a record that cannot be written is a warning in `diags`.
/// Their entries are keyed by the sources' content and hold for any build, so they need not
/// wait for the commit; held until then, they are as large as the corpus's text (16% more peak
/// memory for a cold build of 100,000 documents).
fn keep_parsed(
    opts: &BuildOptions,
    journal: &Journal,
    corpus: &mut Corpus,
    diags: &mut Diagnostics,
) {
    let Some(mut parsed) = corpus.parsed.take() else {
        return;
    };
    if opts.dry_run {
        return;
    }
    if let Err(e) = journal.keep_now(&mut parsed) {
        let path = journal.path(Record::Parsed);
        let msg = format!("cannot write ({e}); {}", Record::Parsed.lost());
        // Shown with ingest's other warnings, by `ingest`.
        diags.warn(shown(&path, opts), None, msg);
    }
}

/// The memo: the one on disk, or an empty one in memory for a dry run that must not read it
/// (`--verify-state`) or has none to read (a dry run creates nothing).
pub(crate) fn open_memo(opts: &BuildOptions) -> Result<Memo, BuildError> {
    let path = opts.memo_path();
    let memo = if opts.dry_run && (opts.verify_state || !path.exists()) {
        Memo::in_memory()
    } else {
        Memo::open(&path)
    }?;
    Ok(memo)
}

/// The executor of the build's stages, with what the journal recalls of the last build: the
/// results it used and its recipes (not when the state is verified: every result then comes
/// from the state), and, for a dry run, its keys to explain each miss against.
pub(crate) fn executor<'m>(
    opts: &BuildOptions,
    memo: &'m Memo,
    journal: &Journal,
    backends: &Backends,
    progress: &Progress,
) -> Executor<'m> {
    let mut exec = if opts.dry_run {
        Executor::dry_run(memo, journal.slots(memo))
    } else {
        Executor::new(memo)
    };
    if !opts.verify_state {
        exec.used = crate::db::used::read(&journal.path(Record::Used));
        exec.recipes = crate::db::recipes::Recipes::open(&journal.path(Record::Recipes));
    }
    exec.io_threads = backends.io_threads();
    exec.progress = Some(*progress);
    // Stand-ins for rejected answers are reused unless asked again (a memo that cannot say
    // which they are treats none as one).
    exec.earlier.by_key = memo.rejected().unwrap_or_default();
    exec.earlier.retry = opts.retry_rejected;
    if opts.dry_run && opts.same_answers {
        exec.guess_last_answers(&opts.guessed_stages());
    }
    exec
}

/// Embeds the documents (and the passages of long ones), warning of documents cut short.
pub(crate) fn embed(
    opts: &BuildOptions,
    (docs, cards): (&[ingest::Document], &[Card]),
    backends: &Backends,
    exec: &mut Executor,
    (diags, progress): (&mut Diagnostics, &Progress),
) -> Result<DocVectors, BuildError> {
    let cfg = &opts.loaded.config;
    let cut = crate::stage::embed_input::Cut {
        max_doc_chars: cfg.tree.max_doc_chars,
        limit: cfg.embed.chunk_tokens,
        max: cfg.embed.max_chunks,
    };
    let vectors = embed::embed_documents(docs, cards, cut, backends.embedder.as_ref(), exec)?;
    let max = cfg.embed.max_chunks;
    let first = diags.warnings.len();
    for &d in &vectors.truncated {
        let msg = format!(
            "document `{}` is longer than embed.max_chunks = {max} passages; the rest of its text is kept but not embedded (raise embed.max_chunks to embed all of it)",
            docs[d].id
        );
        diags.warn(docs[d].source.clone(), None, msg);
    }
    let texts: Vec<String> = diags.warnings[first..]
        .iter()
        .map(ToString::to_string)
        .collect();
    progress.warnings(&texts, |n| {
        let (more, are) = (
            plural(n, "more document"),
            if n == 1 { "is" } else { "are" },
        );
        format!("{more} {are} longer than embed.max_chunks = {max} passages")
    });
    let (n, passages) = (docs.len(), vectors.chunks.rows);
    let model = backends.embedder.model_id();
    let line = format!(
        "{}, {} of long ones ({model})",
        plural(n, "document"),
        plural(passages, "passage")
    );
    progress.status("Embedded", &line);
    Ok(vectors)
}

/// Adds to the tree what navigation shows beside it (exemplars, related skills) and gives
/// every node its path; returns the stages' fallback warnings, shown now.
pub(crate) fn enrich(
    tree: &mut Tree,
    vectors: &DocVectors,
    opts: &BuildOptions,
    (backends, exec): (&Backends, &mut Executor),
    progress: &Progress,
) -> Vec<Warning> {
    let cfg = &opts.loaded.config;
    enrich::exemplars(tree, &vectors.docs, cfg.tree.exemplars);
    enrich::related(tree, cfg.tree.related_skills);
    // The extractive labels avoid the words their level shares when they are made.
    render::assign_paths(tree, !backends.llm.reads_marks());
    let mut fallbacks =
        std::mem::take(&mut *exec.warnings.lock().unwrap_or_else(|e| e.into_inner()));
    fallbacks.append(&mut exec.earlier.reused);
    for w in &fallbacks {
        progress.warning(&w.to_string());
    }
    fallbacks
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

/// The file name `path` as shown to the user.
pub(crate) fn shown(path: &Path, opts: &BuildOptions) -> String {
    crate::paths::display(path, &opts.display_base)
}
