//! The build's link step: the documents' relative links resolved against the corpus before the
//! files are rendered (see `stage::render::links`), links that point to nothing warned about.

use super::options::BuildOptions;
use crate::diag::Diagnostics;
use crate::ingest::IngestOptions;
use crate::ingest::include::Project;
use crate::progress::Progress;
use crate::stage::render::{Ctx, links};

/// Resolves the links of `ctx`'s documents into `ctx.links`.
pub(crate) fn resolve(
    ctx: &mut Ctx,
    opts: &BuildOptions,
    progress: &Progress,
    diags: &mut Diagnostics,
) {
    let loaded = &opts.loaded;
    let roots = IngestOptions::from_config(loaded, &opts.out_dir, &opts.display_base).paths;
    let top = loaded.path.as_ref().and_then(|p| p.parent());
    let url = loaded.config.output.source_url.as_deref();
    let project = url
        .and_then(|_| roots.first())
        .map(|r| Project::find(r, top).root);
    let served: Vec<crate::structure::nav::Served> = roots
        .iter()
        .map(|r| crate::structure::nav::served(r, top))
        .collect();
    let docs = ctx.docs;
    let shown = |d: usize| docs[d].source.clone();
    let inputs = links::Inputs {
        docs,
        roots: &roots,
        source: url.zip(project.as_deref()),
        shown: &shown,
        served: &served,
    };
    let mut found = Diagnostics::default();
    ctx.links = links::Links::resolve(&inputs, &mut found);
    // Shown one by one up to a count; all of them are in `--json`'s warning list.
    let texts: Vec<String> = found.warnings.iter().map(ToString::to_string).collect();
    progress.warnings(&texts, |n| {
        format!("{n} more links point to no page or file of the corpus")
    });
    diags.warnings.extend(found.warnings);
}
