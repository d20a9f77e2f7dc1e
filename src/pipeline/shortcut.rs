//! The make-like shortcut of `c2s build`: when `c2s check` would say "fresh" (and the models
//! are those of the lock, with no fallback to ask again), nothing runs and nothing is written.

use std::collections::BTreeMap;
use std::time::Instant;

use super::backends::Backends;
use super::options::BuildOptions;
use super::report::{BuildReport, Planted, TreeMode};
use crate::db::statindex::OnDisk;
use crate::error::BuildError;
use crate::pipeline::output::WriteStats;

/// What the shortcut found: nothing to do, or what a build can use of the examination.
pub(crate) enum Shortcut {
    /// `c2s check` would say "fresh": the report of a build that did nothing.
    Fresh(Box<BuildReport>),
    /// Something must be built: with what the examination learnt, or without one (`--full`
    /// and dry runs do not examine).
    Stale(Option<Box<Examination>>),
}

/// What a build uses of the examination.
pub(crate) struct Examination {
    /// The output files whose bytes are known by their stat.
    pub on_disk: OnDisk,
    /// The source files whose bytes are known by their stat.
    pub sources: OnDisk,
    /// Sources moved without a change (shown by the build as `Renamed`).
    pub renamed: Vec<crate::pipeline::freshness::Renamed>,
    /// The corpus as the examination walked it, and when it began.
    pub walk: crate::ingest::Walk,
    pub taken: i64,
    /// The sources the examination read whole (ingest does not read them again).
    pub read: crate::ingest::ReadAhead,
}

/// The make-like shortcut: when `c2s check` would say "fresh", nothing runs at all.
pub(crate) fn up_to_date(
    opts: &BuildOptions,
    backends: &Backends,
    start: Instant,
) -> Result<Shortcut, BuildError> {
    if opts.full || opts.dry_run || opts.retry_rejected {
        return Ok(Shortcut::Stale(None));
    }
    let seen =
        crate::pipeline::freshness::examine(&opts.loaded, &opts.out_dir, &opts.display_base, true)?;
    let models = backends.lock_models();
    // Stand-ins for rejected answers stay until `--retry-rejected` (which never gets here).
    let usable = |l: &crate::format::lock::Lock| l.models == models;
    let lock = match &seen.lock {
        Some(lock) if seen.staleness.is_fresh() && usable(lock) => lock,
        _ => {
            return Ok(Shortcut::Stale(Some(Box::new(Examination {
                on_disk: seen.on_disk,
                sources: OnDisk::of(seen.source_index),
                renamed: seen.staleness.sources_renamed.clone(),
                walk: seen.walk,
                taken: seen.taken,
                read: seen.read,
            }))));
        }
    };
    let platform = seen.platform(&opts.loaded.config.output);
    // Fresh: the output files on disk are the lock's.
    let outputs = || seen.outputs.iter().map(|(k, _)| k);
    let nav = outputs()
        .filter(|k| k.ends_with("/SKILL.md") || k.ends_with("/INDEX.md"))
        .filter(|k| !k.contains("/docs/"))
        .count();
    let skills = outputs().filter(|k| k.ends_with("/SKILL.md")).count();
    Ok(Shortcut::Fresh(Box::new(BuildReport {
        output: crate::paths::display(&opts.out_dir, &opts.display_base),
        documents: lock.documents,
        sources: seen.sources,
        sources_read: 0,
        group_inputs_made: 0,
        embed_texts_made: 0,
        doc_entries_made: 0,
        levels: lock.levels,
        skills,
        navigation_files: nav,
        warnings: 0,
        seconds: start.elapsed().as_secs_f64(),
        kmeans_device: backends.kmeans_used(),
        embed_device: "not used".into(),
        llm_usage: BTreeMap::new(),
        tree: TreeMode::UpToDate,
        stages: BTreeMap::new(),
        timings: BTreeMap::new(),
        files: WriteStats {
            written: 0,
            unchanged: seen.outputs.len() + 1,
            removed: 0,
            replaced_edits: Vec::new(),
        },
        platform: platform.unwrap_or_default(),
        warning_list: Vec::new(),
        planted: Planted {
            sentences: lock.planted_sentences,
            documents: lock.planted_documents,
        },
        seeded: 0,
        rejected: Vec::new(),
        batch: None,
        dry_run: None,
    })))
}
