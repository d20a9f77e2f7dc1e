//! The tree step of a build: the previous tree updated in place (a warm start) when it can be,
//! with the summaries of every level through the memo; otherwise the level loop from scratch.

use super::backends::Backends;
use super::options::BuildOptions;
use super::report::TreeMode;
use crate::config::Structure;
use crate::db::exec::Executor;
use crate::error::BuildError;
use std::collections::HashSet;
use std::path::Path;

use crate::db::statindex::Stat;
use crate::ingest::{Document, IngestOptions, SourceFile};
use crate::llm::Card;
use crate::matrix::Matrix;
use crate::progress::Progress;
use crate::stage::hierarchy::{HierarchyInput, build_tree};
use crate::stage::incremental::{Snapshot, warm_start};
use crate::stage::sections::build_structured;
use crate::stage::summarize::{Corpus, summarize_nodes};
use crate::structure::{Outline, Page};
use crate::tree::Tree;

/// Warm start from the previous tree when possible; otherwise the level loop from scratch.
pub(crate) fn make_tree(
    opts: &BuildOptions,
    backends: &Backends,
    (docs, cards, doc_vectors, prev): (&[Document], &[Card], &Matrix, Result<Snapshot, String>),
    exec: &mut Executor,
    progress: &Progress,
) -> Result<(Tree, TreeMode), BuildError> {
    let cfg = &opts.loaded.config;
    let input = HierarchyInput {
        docs,
        cards,
        doc_vectors,
        config: cfg,
        llm: backends.llm.as_ref(),
        embedder: backends.embedder.as_ref(),
        kmeans: backends.kmeans(),
    };
    if let Some(outline) = structured_outline(opts, docs, progress) {
        return structured(&input, &outline, exec, progress);
    }
    // `--full` clusters from scratch (the memo still serves unchanged results).
    let prev = if opts.full {
        Err("--full".into())
    } else {
        prev
    };
    let reason = match prev.and_then(|s| warm_start(&s, docs, doc_vectors, cfg, backends.kmeans()))
    {
        Ok((mut tree, stats)) => {
            let corpus = Corpus::new(docs, cards);
            let mut order: Vec<usize> = (0..tree.nodes.len()).collect();
            order.sort_by_key(|&i| tree.nodes[i].level);
            for level in 1..=tree.levels {
                let nodes: Vec<usize> = order
                    .iter()
                    .copied()
                    .filter(|&i| tree.nodes[i].level == level)
                    .collect();
                summarize_nodes(
                    &mut tree,
                    &nodes,
                    &nodes,
                    &corpus,
                    backends.llm.as_ref(),
                    exec,
                )?;
            }
            progress.status(
                "Updated",
                &format!(
                    "tree: {} added, {} deleted, {} split, {} merged",
                    stats.added, stats.deleted, stats.split, stats.merged
                ),
            );
            return Ok((tree, TreeMode::Warm(stats)));
        }
        Err(reason) => reason,
    };
    progress.status("Clustering", &format!("from scratch ({reason})"));
    let (tree, stats) = build_tree(&input, exec, |level, n| {
        progress.status(
            "Clustered",
            &format!("level {level}: {}", crate::text::plural(n, "group")),
        );
    })?;
    progress.status(
        "Tree",
        &format!(
            "K-Means {:.2}s, summaries {:.2}s, re-embedding {:.2}s",
            stats.cluster_secs, stats.summarize_secs, stats.reembed_secs
        ),
    );
    progress.status("K-Means", &format!("ran on {}", backends.kmeans_used()));
    Ok((
        tree,
        TreeMode::Full {
            reason,
            kmeans_secs: stats.cluster_secs,
            leaf_inertia: stats.leaf_inertia,
        },
    ))
}

/// The authors' structure to follow, if the build follows one (`tree.structure`): `"folders"`
/// always, `"auto"` when the corpus has a shape (a navigation file, or two folders or more).
fn structured_outline(
    opts: &BuildOptions,
    docs: &[Document],
    progress: &Progress,
) -> Option<Outline> {
    let loaded = &opts.loaded;
    let mode = loaded.config.tree.structure;
    if mode == Structure::Cluster {
        return None;
    }
    // The corpus folders as the walk numbered them (`Document::origin`'s roots).
    let roots = IngestOptions::from_config(loaded, &opts.out_dir, &opts.display_base).paths;
    let top = loaded.path.as_ref().and_then(|p| p.parent());
    let mut diags = crate::diag::Diagnostics::default();
    let pages: Vec<Option<Page>> = docs
        .iter()
        .map(|d| {
            d.origin.as_ref().map(|f| Page {
                root: f.root,
                rel: &f.rel,
                multi: f.multi,
                position: f.position,
            })
        })
        .collect();
    let outline = crate::structure::outline(&pages, &roots, top, &opts.display_base, &mut diags);
    for w in &diags.warnings {
        progress.warning(&w.to_string());
    }
    (mode == Structure::Folders || outline.has_shape()).then_some(outline)
}

/// The tree of the authors' structure, made again at every build: it depends on the paths and
/// the navigation alone (and K-Means inside sections too large for one group), so a cold build
/// of nearly the same repo gives nearly the same tree; summaries come from the memo.
fn structured(
    input: &HierarchyInput,
    outline: &Outline,
    exec: &mut Executor,
    progress: &Progress,
) -> Result<(Tree, TreeMode), BuildError> {
    let clock = std::time::Instant::now();
    let (tree, stats) = build_structured(input, outline, exec)?;
    let from = if outline.navs.is_empty() {
        "the folders".to_string()
    } else {
        outline.navs.join(", ")
    };
    progress.status(
        "Structured",
        &format!(
            "from {from}: {} skills, {} groups titled by their authors, {} made by clustering",
            tree.roots.len(),
            stats.titled,
            stats.made
        ),
    );
    Ok((
        tree,
        TreeMode::Structured {
            from,
            titled: stats.titled,
            made: stats.made,
            secs: clock.elapsed().as_secs_f64(),
            inputs: outline.inputs.clone(),
        },
    ))
}

/// The navigation and category files a structured tree (`mode`) was read from, as sources of the build
/// beside the pages (shown relative to `base`, as include inputs are): `check` then names an
/// edited `mkdocs.yml` or `SUMMARY.md`, and the next build follows it.
pub(crate) fn add_structure_sources(mode: &TreeMode, sources: &mut Vec<SourceFile>, base: &Path) {
    let TreeMode::Structured { inputs: files, .. } = mode else {
        return;
    };
    let base = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    let mut seen: HashSet<String> = sources.iter().map(|s| s.path.clone()).collect();
    for file in files {
        let stat = std::fs::metadata(file).ok().map(|m| Stat::of(&m));
        let Ok(bytes) = std::fs::read(file) else {
            continue;
        };
        let path = crate::format::lock::relative_path(&base, file)
            .to_string_lossy()
            .replace('\\', "/");
        if seen.insert(path.clone()) {
            sources.push(SourceFile {
                path,
                hash: crate::hash::content_hash(&bytes),
                stat,
                included: true,
            });
        }
    }
}
