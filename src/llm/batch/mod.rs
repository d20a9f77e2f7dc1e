//! Batch inference: LLM requests of batch-mode stages are queued instead of sent, submitted as
//! provider batches (or exported as files for an external runner), and their answers read back
//! into the memo, where the next build round finds them. A request already answered, or in a
//! batch still running, is never sent again.

mod collect;
mod lines;
mod provider;
mod store;
mod submit;

pub use submit::clear_exports;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

pub use lines::{LineResult, Queued, parse_result};
use provider::{Api, Status};
pub use store::{BatchRecord, live_keys};

use super::wire::{self, ChatAnswer};
use super::{LlmError, Usage};
use crate::config::{LlmBackendKind, LlmConfig, LlmMode};
use crate::db::cache::{CacheError, Key, Memo};
use crate::http::{Client, HttpError};
use crate::progress::Progress;

/// Why batch inference failed.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error(transparent)]
    Http(#[from] HttpError),
    #[error(
        "{what}: {source}\n  help: batches already submitted are kept in the memo; run `c2s build` again to resume (nothing is submitted twice)"
    )]
    Provider {
        what: String,
        source: provider::ProviderError,
    },
    #[error(transparent)]
    Setup(#[from] crate::llm::SetupError),
    /// Requests wait for a batch, yet none is outstanding and none was submitted: the batcher
    /// lost track of a request (a bug).
    #[error(
        "internal error: requests wait for a batch, but none is outstanding\n  help: please report this with the command that failed; `c2s build --finish-interactive` finishes without batches"
    )]
    NothingOutstanding,
    #[error(
        "--batch-export: the requests of this step wait for batches already submitted to the provider\n  help: collect them first with `c2s build` (or `c2s build --batch`), then export again"
    )]
    ExportWhileSubmitted,
    #[error("{context} {path}: {source}")]
    Io {
        context: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "--batch-export writes the OpenAI batch format, but llm.backend is \"{backend}\"\n  help: set llm.backend = \"openai\" (vLLM and other runners of that format speak it), or submit to Anthropic with `c2s build --batch`"
    )]
    ExportFormat { backend: String },
}

/// Figures of a batched build, for the summary and `--json`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BatchSummary {
    /// Build rounds run (each ends with a complete build or a new batch).
    pub rounds: usize,
    pub batches_submitted: usize,
    pub requests_submitted: usize,
    /// Requests per submitted batch, in submission order.
    pub batch_sizes: Vec<usize>,
    pub answers_collected: usize,
    pub requests_failed: usize,
    /// Polling and downloading excluded: reading result lines and committing them.
    pub seconds_collecting: f64,
    /// Between polls, waiting for the provider.
    pub seconds_waiting: f64,
    /// Still running at the provider when this command ended.
    pub outstanding: usize,
    /// Files written by `--batch-export`.
    pub exported_files: Vec<String>,
}

/// Shared by the LLM backend (which asks it for answers) and the batched build (which submits
/// and collects).
pub struct Batcher {
    memo: Memo,
    kind: LlmBackendKind,
    cfg: LlmConfig,
    api: Option<Api>,
    /// Requests not answered yet are sent interactively (`--finish-interactive`).
    finish_interactive: bool,
    outstanding: Mutex<HashSet<Key>>,
    queue: Mutex<BTreeMap<Key, Queued>>,
    failures: Mutex<BTreeMap<String, store::Failure>>,
    usage: Mutex<BTreeMap<String, Usage>>,
    summary: Mutex<BatchSummary>,
}

/// How the batched build runs the batcher.
#[derive(Debug, Clone, Default)]
pub struct BatchFlags {
    pub finish_interactive: bool,
    /// Export instead of submitting.
    pub export: bool,
}

/// Requests per batch for a config: `[llm.batch] max_requests`, at most the provider's limit.
pub fn max_requests(cfg: &LlmConfig) -> usize {
    let limit = provider::limits(cfg.backend).0;
    match cfg.batch.max_requests {
        0 => limit,
        n => n.min(limit),
    }
}

/// The memo key of a request: what it asks of which API.
pub fn request_key(kind: LlmBackendKind, body: &Value) -> Key {
    let bytes = serde_json::to_vec(&json!([kind.name(), body])).expect("bodies serialize");
    *blake3::hash(&bytes).as_bytes()
}

impl Batcher {
    /// Opens the memo at `memo_path`; `api` is only needed to submit or poll.
    pub fn open(
        memo_path: &Path,
        cfg: &LlmConfig,
        flags: &BatchFlags,
    ) -> Result<Batcher, BatchError> {
        let memo = Memo::open(memo_path)?;
        let api = if flags.export {
            None
        } else {
            let base = wire::base_url(cfg.backend, cfg.base_url.as_deref())?;
            let client = Client::new(&cfg.limits, cfg.api_key_env.as_deref())?;
            Some(Api::new(cfg.backend, &base, client))
        };
        let b = Batcher {
            memo,
            kind: cfg.backend,
            cfg: LlmConfig {
                // `--batch-export` queues every stage that has no mode of its own.
                mode: if flags.export {
                    LlmMode::Batch
                } else {
                    cfg.mode
                },
                ..cfg.clone()
            },
            api,
            finish_interactive: flags.finish_interactive,
            outstanding: Mutex::default(),
            queue: Mutex::default(),
            failures: Mutex::default(),
            usage: Mutex::default(),
            summary: Mutex::default(),
        };
        b.reload()?;
        Ok(b)
    }

    /// Whether the memo holds batches submitted and not yet collected.
    pub fn has_outstanding(memo_path: &Path) -> bool {
        memo_path.is_file()
            && Memo::open(memo_path)
                .and_then(|m| store::all(&m))
                .is_ok_and(|rs| rs.iter().any(BatchRecord::outstanding))
    }

    /// The answer to a request if the memo has one; `Ok(None)` to send it interactively now;
    /// `Err(Pending)` when it waits for a batch (queued now, or in one already submitted).
    pub fn lookup(&self, stage: &str, body: &Value) -> Result<Option<ChatAnswer>, LlmError> {
        let key = request_key(self.kind, body);
        if let Some(a) =
            store::answer(&self.memo, &key).map_err(|e| LlmError::Backend(e.to_string()))?
        {
            return Ok(Some(a));
        }
        if self.finish_interactive {
            return Ok(None);
        }
        if lock(&self.outstanding).contains(&key) {
            return Err(LlmError::Pending);
        }
        if self.cfg.stage(stage).mode != LlmMode::Batch {
            return Ok(None);
        }
        let id = store::custom_id(&key);
        if let Some(f) = lock(&self.failures).get(&id)
            && f.attempts >= self.cfg.batch.max_attempts
        {
            return Err(LlmError::Backend(format!(
                "a {stage} request failed in {} batches (last: {})\n  help: run `c2s build --finish-interactive` to send what is left as ordinary calls",
                f.attempts, f.last
            )));
        }
        lock(&self.queue).entry(key).or_insert_with(|| Queued {
            custom_id: id,
            stage: stage.to_string(),
            body: body.clone(),
        });
        Err(LlmError::Pending)
    }

    /// Re-reads which requests are in running batches, and the failure counts.
    /// Returns how many batches are outstanding.
    pub fn reload(&self) -> Result<usize, BatchError> {
        let running: Vec<BatchRecord> = self.outstanding()?;
        let keys: HashSet<Key> = running
            .iter()
            .flat_map(|r| r.requests.iter().filter_map(|(id, _)| store::key_of(id)))
            .collect();
        *lock(&self.outstanding) = keys;
        *lock(&self.failures) = store::failures(&self.memo)?;
        Ok(running.len())
    }

    /// Batches submitted and not collected.
    pub fn outstanding(&self) -> Result<Vec<BatchRecord>, BatchError> {
        Ok(store::all(&self.memo)?
            .into_iter()
            .filter(BatchRecord::outstanding)
            .collect())
    }

    /// Tokens and cost of the answers collected by this command, per stage, at the batch price.
    pub fn usage(&self) -> BTreeMap<String, Usage> {
        lock(&self.usage).clone()
    }

    pub fn summary(&self) -> BatchSummary {
        lock(&self.summary).clone()
    }

    pub fn count_round(&self) {
        lock(&self.summary).rounds += 1;
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn now_millis() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}
