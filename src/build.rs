//! `c2s build`: ingest → card → embed → hierarchy → enrich → render → write, with the build report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::config::{EmbedBackendKind, LlmBackendKind, Loaded};
use crate::diag::{Diagnostics, Warning};
use crate::embed::{Embedder, Hashed};
use crate::error::BuildError;
use crate::ingest::{self, IngestOptions};
use crate::kmeans::{CpuKmeans, KmeansBackend};
use crate::llm::{Extractive, Llm};
use crate::manifest::{Lock, file_hash};
use crate::output::{LOCK_FILE, WriteStats, write_output};
use crate::progress::Progress;
use crate::stage::hierarchy::{HierarchyInput, build_tree};
use crate::stage::{card, embed, enrich, render};

/// What to build and where.
pub struct BuildOptions {
    pub loaded: Loaded,
    /// The output folder, resolved.
    pub out_dir: PathBuf,
    /// Paths in messages are shown relative to this folder.
    pub display_base: PathBuf,
}

/// Per-stage counts of results computed and reused.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StageCount {
    pub computed: usize,
    pub reused: usize,
}

/// The end-of-build figures (`--json` prints this).
#[derive(Debug, Clone, Serialize)]
pub struct BuildReport {
    pub output: String,
    pub documents: usize,
    pub sources: usize,
    pub levels: usize,
    pub skills: usize,
    pub navigation_files: usize,
    pub warnings: usize,
    pub seconds: f64,
    pub kmeans_device: String,
    pub stages: BTreeMap<&'static str, StageCount>,
    /// Wall seconds per step.
    pub timings: BTreeMap<&'static str, f64>,
    pub files: WriteStats,
    pub warning_list: Vec<Warning>,
}

/// Results computed fresh (no memo yet, so nothing is reused).
fn computed(n: usize) -> StageCount {
    StageCount {
        computed: n,
        reused: 0,
    }
}

fn backends(loaded: &Loaded) -> (Box<dyn Llm>, Box<dyn Embedder>, Box<dyn KmeansBackend>) {
    let c = &loaded.config;
    let llm: Box<dyn Llm> = match c.llm.backend {
        LlmBackendKind::Extractive => Box::new(Extractive),
    };
    let embedder: Box<dyn Embedder> = match c.embed.backend {
        EmbedBackendKind::Hashed => Box::new(Hashed { dims: c.embed.dims }),
    };
    (llm, embedder, Box::new(CpuKmeans))
}

/// Refuses an output folder that contains a corpus path (building would replace the sources).
fn check_overlap(out: &Path, sources: &[PathBuf]) -> Result<(), BuildError> {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let out_abs = abs(out);
    for s in sources {
        let s_abs = abs(s);
        if s_abs.starts_with(&out_abs) {
            return Err(BuildError::OutputOverlapsCorpus {
                out: out.to_path_buf(),
                source_path: s.clone(),
            });
        }
    }
    Ok(())
}

/// Runs the whole pipeline and writes the output.
pub fn build(opts: &BuildOptions, progress: &Progress) -> Result<BuildReport, BuildError> {
    let start = Instant::now();
    let cfg = &opts.loaded.config;
    let paths: Vec<PathBuf> = cfg
        .corpus
        .paths
        .iter()
        .map(|p| opts.loaded.resolve(p))
        .collect();
    check_overlap(&opts.out_dir, &paths)?;
    crate::output::check_replaceable(&opts.out_dir)?;
    let mut diags = Diagnostics::default();
    let ingest_opts = IngestOptions {
        paths,
        include: &cfg.corpus.include,
        exclude: &cfg.corpus.exclude,
        max_file_bytes: cfg.corpus.max_file_bytes,
        max_doc_chars: cfg.tree.max_doc_chars,
        display_base: opts.display_base.clone(),
        skip_dirs: vec![opts.out_dir.clone()],
    };
    let mut timings = BTreeMap::new();
    let mut clock = Instant::now();
    let mut lap = |name: &'static str, timings: &mut BTreeMap<&'static str, f64>| {
        timings.insert(name, clock.elapsed().as_secs_f64());
        clock = Instant::now();
    };
    let corpus = ingest::ingest(&ingest_opts, &mut diags)?;
    lap("ingest", &mut timings);
    for w in &diags.warnings {
        progress.warning(&w.to_string());
    }
    report_unsupported(&corpus.unsupported, progress);
    let docs = &corpus.documents;
    progress.status(
        "Ingested",
        &format!(
            "{} documents from {} files",
            docs.len(),
            corpus.sources.len()
        ),
    );

    let (llm, embedder, kmeans) = backends(&opts.loaded);
    let mut stages = BTreeMap::new();
    let bar = progress.bar("Carding", docs.len());
    let (cards, card_calls) = card::cards(docs, llm.as_ref(), &bar)?;
    bar.finish_and_clear();
    stages.insert("card", computed(card_calls));
    lap("card", &mut timings);

    let texts: Vec<String> = docs
        .iter()
        .zip(&cards)
        .map(|(d, c)| embed::document_text(c, d, cfg.tree.max_doc_chars))
        .collect();
    let doc_vectors = embed::embed_texts(&texts, embedder.as_ref())?;
    stages.insert("embed", computed(docs.len()));
    lap("embed", &mut timings);
    progress.status(
        "Embedded",
        &format!("{} documents ({})", docs.len(), embedder.model_id()),
    );

    let input = HierarchyInput {
        docs,
        cards: &cards,
        doc_vectors: &doc_vectors,
        config: cfg,
        llm: llm.as_ref(),
        embedder: embedder.as_ref(),
        kmeans: kmeans.as_ref(),
    };
    let (mut tree, hstats) = build_tree(&input, |level, n| {
        progress.status("Clustered", &format!("level {level}: {n} groups"));
    })?;
    lap("hierarchy", &mut timings);
    timings.insert("hierarchy.cluster", hstats.cluster_secs);
    timings.insert("hierarchy.summarize", hstats.summarize_secs);
    timings.insert("hierarchy.reembed", hstats.reembed_secs);
    stages.insert("cluster", computed(hstats.clusterings));
    stages.insert("summarize", computed(hstats.llm_calls));
    stages.insert("reembed", computed(hstats.reembeds));
    stages.insert("repartition", computed(hstats.merges));

    enrich::exemplars(&mut tree, &doc_vectors, cfg.tree.exemplars);
    enrich::related(&mut tree, cfg.tree.related_skills);
    render::assign_paths(&mut tree);
    let nav = render::nav_files(&tree, docs, &cards);
    let mut files: BTreeMap<String, Vec<u8>> =
        nav.into_iter().map(|(k, v)| (k, v.into_bytes())).collect();
    let navigation_files = files.len();
    files.insert(
        "documents.json".into(),
        render::documents_json(docs, &cards).into_bytes(),
    );
    let index = enrich::entity_index(&tree);
    files.insert(
        "entity_index.json".into(),
        render::entity_index_json(&index).into_bytes(),
    );
    stages.insert("render", computed(files.len()));
    lap("enrich_render", &mut timings);

    let lock = Lock {
        c2s_version: env!("CARGO_PKG_VERSION").to_string(),
        config_hash: cfg.hash(),
        prompt_versions: BTreeMap::from([(
            "extractive".to_string(),
            crate::llm::EXTRACTIVE_VERSION.to_string(),
        )]),
        models: BTreeMap::from([
            ("llm".to_string(), llm.model_id()),
            ("embed".to_string(), embedder.model_id()),
        ]),
        sources: corpus
            .sources
            .iter()
            .map(|s| (s.path.clone(), s.hash.clone()))
            .collect(),
        outputs: files
            .iter()
            .map(|(k, v)| (k.clone(), file_hash(v)))
            .collect(),
    };
    files.insert(LOCK_FILE.into(), lock.to_json().into_bytes());
    let written = write_output(&opts.out_dir, &files)?;
    lap("write", &mut timings);

    Ok(BuildReport {
        output: crate::ingest::display(&opts.out_dir, &opts.display_base),
        documents: docs.len(),
        sources: corpus.sources.len(),
        levels: tree.levels,
        skills: tree.roots.len(),
        navigation_files,
        warnings: diags.warnings.len(),
        seconds: start.elapsed().as_secs_f64(),
        kmeans_device: kmeans.device(),
        stages,
        timings,
        files: written,
        warning_list: diags.warnings,
    })
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
