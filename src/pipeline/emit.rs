//! What a build emits after the tree: the rendered files and the lock that describes them
//! (sources, outputs, config, the models and prompts of each stage).

use std::collections::BTreeMap;

use super::backends::Backends;
use super::build::BuildOptions;
use crate::format::limits::{self, PlatformReport};
use crate::format::lock::Lock;
use crate::format::{Files, LOCK_FILE};
use crate::hash::short_hash;
use crate::ingest;
use crate::stage::embed;
use crate::stage::render::splice::Splice;
use crate::stage::{enrich, render};

/// Model ids per role; a stage whose model differs from `[llm]`'s gets its own `llm.STAGE` entry.
pub(crate) fn lock_models(b: &Backends) -> BTreeMap<String, String> {
    let mut m = BTreeMap::from([
        ("llm".to_string(), b.llm.model_id()),
        ("embed".to_string(), b.embedder.model_id()),
    ]);
    if b.llm.reviews_partitions() {
        for stage in crate::config::LLM_STAGES {
            m.insert(format!("llm.{stage}"), b.llm.stage_model(stage));
        }
    }
    m
}

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
    let planted = super::build::Planted::of(ctx.docs);
    let lock = Lock {
        c2s_version: env!("CARGO_PKG_VERSION").to_string(),
        config_hash: cfg.hash(&opts.loaded.base_dir),
        prompt_versions: prompt_versions(backends),
        models: lock_models(backends),
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
