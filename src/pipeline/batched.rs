//! `c2s build` with batch inference: rounds of build → submit (or export) → wait → collect until
//! a round completes. The memo carries answers and batch ids between rounds and between runs, so
//! a rerun (or a build killed while waiting) picks up where the last one stopped.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::error::BuildError;
use crate::llm::batch::{BatchFlags, BatchSummary, Batcher};
use crate::pipeline::backends::Backends;
use crate::pipeline::build::build_using;
use crate::pipeline::options::BuildOptions;
use crate::pipeline::report::BuildReport;
use crate::progress::Progress;

/// Why a batched build stopped: a build round, or the batches.
#[derive(Debug, thiserror::Error)]
pub enum BatchedError {
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error(transparent)]
    Batch(#[from] crate::llm::batch::BatchError),
}

/// The batch flags of one `c2s build`.
#[derive(Debug, Clone)]
pub struct BatchRun {
    /// Submit and return instead of waiting.
    pub no_wait: bool,
    /// Cancel outstanding batches, then send what is missing as ordinary calls.
    pub finish_interactive: bool,
    /// Write the next step's requests here and stop.
    pub export: Option<PathBuf>,
    /// Result files of an external runner to read first.
    pub import: Vec<PathBuf>,
    /// The command that reruns this build (for "run this next").
    pub rerun: String,
    /// Called before each wait for the provider, with `rerun` (the command layer installs its
    /// Ctrl-C message there).
    pub on_wait: fn(&str),
}

/// How a batched build ended.
#[derive(Debug)]
pub enum Outcome {
    /// Complete: the output was written.
    Built(Box<BuildReport>),
    /// Batches are running (`--no-wait`) or requests were exported: nothing was written.
    Incomplete(Incomplete),
}

/// What is outstanding, and the command to run next.
#[derive(Debug, Serialize)]
pub struct Incomplete {
    pub complete: bool,
    pub message: String,
    pub next: String,
    pub batch: BatchSummary,
}

/// Runs build rounds until the build completes, or stops with batches outstanding.
pub fn build_batched(
    opts: &BuildOptions,
    run: &BatchRun,
    progress: &Progress,
) -> Result<Outcome, BatchedError> {
    let memo_path = opts.loaded.memo_path();
    let flags = BatchFlags {
        finish_interactive: run.finish_interactive,
        export: run.export.is_some(),
    };
    let batcher = Arc::new(Batcher::open(&memo_path, &opts.loaded.config.llm, &flags)?);
    for f in &run.import {
        let n = batcher.import(f, progress)?;
        progress.status("Imported", &format!("{n} answers from {}", f.display()));
    }
    if run.finish_interactive {
        batcher.cancel_outstanding(progress)?;
    }
    let backends = Backends::batched(&opts.loaded, Some(batcher.clone()))?;
    loop {
        batcher.collect(progress)?;
        batcher.count_round();
        match build_using(opts, progress, &backends) {
            Ok(mut report) => {
                batcher.finish()?;
                if let Some(dir) = &run.export {
                    // Nothing is left to run: a runner loop over the folder ends here.
                    crate::llm::batch::clear_exports(dir)?;
                }
                report.batch = Some(batcher.summary());
                return Ok(Outcome::Built(Box::new(report)));
            }
            Err(BuildError::Pending) => {}
            Err(e) => return Err(e.into()),
        }
        if let Some(dir) = &run.export {
            return exported(&batcher, dir, run);
        }
        let outstanding = batcher.submit(progress)?;
        if outstanding == 0 {
            return Err(BatchedError::Batch(
                crate::llm::batch::BatchError::NothingOutstanding,
            ));
        }
        if run.no_wait {
            let mut batch = batcher.summary();
            batch.outstanding = outstanding;
            return Ok(Outcome::Incomplete(Incomplete {
                complete: false,
                message: format!(
                    "{outstanding} batch{} running at the provider; nothing was written",
                    if outstanding == 1 { " is" } else { "es are" }
                ),
                next: run.rerun.clone(),
                batch,
            }));
        }
        (run.on_wait)(&run.rerun);
        batcher.wait(progress)?;
    }
}

/// The requests of this step, written for an external runner.
fn exported(
    batcher: &Batcher,
    dir: &std::path::Path,
    run: &BatchRun,
) -> Result<Outcome, BatchedError> {
    let files = batcher.export(dir)?;
    if files.is_empty() {
        return Err(BatchedError::Batch(
            crate::llm::batch::BatchError::ExportWhileSubmitted,
        ));
    }
    let batch = batcher.summary();
    Ok(Outcome::Incomplete(Incomplete {
        complete: false,
        message: format!(
            "wrote {} requests in {} file{} to {}; run them with an OpenAI batch runner (e.g. `vllm run-batch -i IN -o OUT --model MODEL`)",
            batch.requests_submitted,
            files.len(),
            if files.len() == 1 { "" } else { "s" },
            dir.display()
        ),
        next: format!(
            "{} --batch-import <output files> --batch-export {}",
            run.rerun,
            dir.display()
        ),
        batch,
    }))
}
