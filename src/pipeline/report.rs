//! What a build reports: the end-of-build figures (`BuildReport`, which `--json` prints), how
//! the tree was obtained (`TreeMode`), the planted sentences flagged (`Planted`) and the lap
//! timer of its steps.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::Serialize;

use crate::db::exec::{Miss, StageCount};
use crate::diag::Warning;
use crate::format::limits::PlatformReport;
use crate::ingest::Document;
use crate::pipeline::output::WriteStats;
use crate::stage::incremental::WarmStats;

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

/// Lap timer for the report.
pub(crate) struct Laps {
    clock: Instant,
    pub(crate) timings: BTreeMap<&'static str, f64>,
}

impl Laps {
    pub(crate) fn start() -> Laps {
        Laps {
            clock: Instant::now(),
            timings: BTreeMap::new(),
        }
    }

    pub(crate) fn lap(&mut self, name: &'static str) {
        self.timings
            .insert(name, self.clock.elapsed().as_secs_f64());
        self.clock = Instant::now();
    }
}
