//! Batch inference: LLM requests of batch-mode stages are queued instead of sent, submitted as
//! provider batches (or exported as files for an external runner), and their answers read back
//! into the memo, where the next build round finds them. A request already answered, or in a
//! batch still running, is never sent again.

mod lines;
mod provider;
mod store;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

pub use lines::{LineResult, Queued, parse_result};
use provider::{Api, Status};
pub use store::{ANSWER_STAGE, BatchRecord, live_keys};

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
        "{what}: {message}\n  help: batches already submitted are kept in the memo; run `c2s build` again to resume (nothing is submitted twice)"
    )]
    Provider { what: String, message: String },
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
    /// Every batch-capable stage queues (`--batch-export`).
    all_batch: bool,
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
            let base = wire::base_url(cfg.backend, cfg.base_url.as_deref()).map_err(|m| {
                BatchError::Provider {
                    what: "llm.base_url".into(),
                    message: m,
                }
            })?;
            let client = Client::new(&cfg.limits, cfg.api_key_env.as_deref())?;
            Some(Api::new(cfg.backend, &base, client))
        };
        let b = Batcher {
            memo,
            kind: cfg.backend,
            cfg: cfg.clone(),
            api,
            finish_interactive: flags.finish_interactive,
            all_batch: flags.export,
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

    fn mode(&self, stage: &str) -> LlmMode {
        let explicit = self.cfg.stages.get(stage).and_then(|o| o.mode);
        match explicit {
            Some(m) => m,
            None if self.all_batch => LlmMode::Batch,
            None => self.cfg.mode,
        }
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
        if self.mode(stage) != LlmMode::Batch {
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
    pub fn reload(&self) -> Result<(), BatchError> {
        let keys: HashSet<Key> = store::all(&self.memo)?
            .iter()
            .filter(|r| r.outstanding())
            .flat_map(|r| r.requests.iter().filter_map(|(id, _)| store::key_of(id)))
            .collect();
        *lock(&self.outstanding) = keys;
        *lock(&self.failures) = store::failures(&self.memo)?;
        Ok(())
    }

    /// Requests queued in this round.
    pub fn queued(&self) -> usize {
        lock(&self.queue).len()
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

    /// Sorted lines of the queue, emptied.
    fn take_lines(&self) -> Vec<(Queued, Vec<u8>)> {
        let queue = std::mem::take(&mut *lock(&self.queue));
        let mut qs: Vec<Queued> = queue.into_values().collect();
        qs.sort_by(|a, b| (&a.stage, &a.custom_id).cmp(&(&b.stage, &b.custom_id)));
        qs.into_iter()
            .map(|q| {
                let line = serde_json::to_vec(&lines::request_line(self.kind, &q))
                    .expect("lines serialize");
                (q, line)
            })
            .collect()
    }

    fn limits(&self) -> (usize, u64) {
        let b = provider::limits(self.kind).1;
        let c = &self.cfg.batch;
        (
            max_requests(&self.cfg),
            if c.max_bytes == 0 {
                b
            } else {
                c.max_bytes.min(b)
            },
        )
    }

    /// Submits the queued requests as provider batches, split by the per-batch limits; each
    /// batch is on record in the memo before it is created.
    pub fn submit(&self, progress: &Progress) -> Result<(), BatchError> {
        let Some(api) = &self.api else {
            return Ok(());
        };
        let (max_requests, max_bytes) = self.limits();
        let chunks = lines::split(self.take_lines(), max_requests, max_bytes);
        let now = unix_now();
        for (i, chunk) in chunks.into_iter().enumerate() {
            let mut rec = BatchRecord {
                provider: self.kind.name().to_string(),
                local: format!("{}-{i:04}", now_millis()),
                submitted: now,
                requests: chunk
                    .iter()
                    .map(|(q, _)| (q.custom_id.clone(), q.stage.clone()))
                    .collect(),
                status: "submitting".into(),
                ..BatchRecord::default()
            };
            store::save(&self.memo, &rec)?;
            let input: Vec<Vec<u8>> = chunk.into_iter().map(|(_, l)| l).collect();
            let save = |r: &BatchRecord| store::save(&self.memo, r).map_err(|e| e.to_string());
            api.submit(&mut rec, &input, &save)
                .map_err(|message| BatchError::Provider {
                    what: format!("submitting a batch of {} requests", input.len()),
                    message,
                })?;
            rec.status = "submitted".into();
            store::save(&self.memo, &rec)?;
            progress.status(
                "Submitted",
                &format!(
                    "batch {} ({} requests: {})",
                    rec.id.as_deref().unwrap_or("?"),
                    input.len(),
                    stage_counts(&rec)
                ),
            );
            let mut s = lock(&self.summary);
            s.batches_submitted += 1;
            s.requests_submitted += input.len();
            s.batch_sizes.push(input.len());
        }
        self.reload()
    }

    /// Writes the queued requests as OpenAI batch input files in `dir` (replacing the files
    /// an earlier export wrote there); returns their paths.
    pub fn export(&self, dir: &Path) -> Result<Vec<PathBuf>, BatchError> {
        if self.kind != LlmBackendKind::Openai {
            return Err(BatchError::ExportFormat {
                backend: self.kind.name().into(),
            });
        }
        let io = |context, path: &Path| {
            let path = path.to_path_buf();
            move |source| BatchError::Io {
                context,
                path,
                source,
            }
        };
        std::fs::create_dir_all(dir).map_err(io("cannot create", dir))?;
        clear_exports(dir)?;
        let (max_requests, max_bytes) = self.limits();
        let mut written = Vec::new();
        let now = unix_now();
        for (i, chunk) in lines::split(self.take_lines(), max_requests, max_bytes)
            .into_iter()
            .enumerate()
        {
            let path = dir.join(format!("c2s-batch-{:03}.jsonl", i + 1));
            let mut bytes = Vec::new();
            for (_, l) in &chunk {
                bytes.extend_from_slice(l);
                bytes.push(b'\n');
            }
            std::fs::write(&path, &bytes).map_err(io("cannot write", &path))?;
            let rec = BatchRecord {
                provider: "export".into(),
                local: format!("{}-{i:04}", now_millis()),
                id: Some(path.display().to_string()),
                submitted: now,
                requests: chunk
                    .iter()
                    .map(|(q, _)| (q.custom_id.clone(), q.stage.clone()))
                    .collect(),
                status: "exported".into(),
                collected: true,
                ..BatchRecord::default()
            };
            store::save(&self.memo, &rec)?;
            let mut s = lock(&self.summary);
            s.batch_sizes.push(chunk.len());
            s.requests_submitted += chunk.len();
            s.exported_files.push(path.display().to_string());
            written.push(path);
        }
        Ok(written)
    }

    /// Polls every outstanding batch once; reads the results of those that finished.
    pub fn collect(&self, progress: &Progress) -> Result<(), BatchError> {
        let records = self.outstanding()?;
        if records.is_empty() {
            return Ok(());
        }
        let Some(api) = &self.api else {
            return Ok(());
        };
        for mut rec in records {
            let Some(id) = rec.id.clone() else {
                self.resume_submission(api, rec, progress)?;
                continue;
            };
            let what = format!("batch {id}");
            let status = api.poll(&id).map_err(|message| BatchError::Provider {
                what: what.clone(),
                message,
            })?;
            if (status.status.as_str(), status.done, status.failed)
                != (rec.status.as_str(), rec.done, rec.failed)
            {
                progress.status(
                    "Batch",
                    &format!(
                        "{id}: {}, {} of {} done, {} failed, submitted {} ago",
                        status.status,
                        status.done,
                        status.total.max(rec.requests.len() as u64),
                        status.failed,
                        ago(rec.submitted)
                    ),
                );
            }
            rec.status = status.status.clone();
            rec.done = status.done;
            rec.failed = status.failed;
            if status.terminal {
                let files = api
                    .results(&id, &status)
                    .map_err(|message| BatchError::Provider { what, message })?;
                self.read_results(&mut rec, &status, &files, progress)?;
                rec.collected = true;
            }
            store::save(&self.memo, &rec)?;
        }
        self.reload()
    }

    /// A batch on record without a provider id: the build stopped while submitting it. An
    /// uploaded OpenAI file is turned into its batch (or the one already made from it is found);
    /// otherwise nothing was created, and its requests are queued again by the next round.
    fn resume_submission(
        &self,
        api: &Api,
        mut rec: BatchRecord,
        progress: &Progress,
    ) -> Result<(), BatchError> {
        if rec.input_file_id.is_some() {
            let save = |r: &BatchRecord| store::save(&self.memo, r).map_err(|e| e.to_string());
            api.submit(&mut rec, &[], &save)
                .map_err(|message| BatchError::Provider {
                    what: format!(
                        "creating the batch of uploaded file {}",
                        rec.input_file_id.as_deref().unwrap_or("?")
                    ),
                    message,
                })?;
            rec.status = "submitted".into();
            progress.status(
                "Resumed",
                &format!(
                    "batch {} (its file was uploaded before the build stopped)",
                    rec.id.as_deref().unwrap_or("?")
                ),
            );
        } else {
            rec.status = "never created".into();
            rec.collected = true;
        }
        store::save(&self.memo, &rec)?;
        Ok(())
    }

    /// Reads result files line by line, committing answers as they are read; requests with no
    /// answer count a failed attempt (and are queued again by the next round).
    fn read_results(
        &self,
        rec: &mut BatchRecord,
        status: &Status,
        files: &[Vec<u8>],
        progress: &Progress,
    ) -> Result<(), BatchError> {
        let started = Instant::now();
        let stages: HashMap<&str, &str> = rec
            .requests
            .iter()
            .map(|(id, s)| (id.as_str(), s.as_str()))
            .collect();
        let mut failed: BTreeMap<String, String> = BTreeMap::new();
        let mut answered: HashSet<String> = HashSet::new();
        let mut buf: Vec<(Key, ChatAnswer)> = Vec::new();
        let id = rec.id.clone().unwrap_or_default();
        for (f, bytes) in files.iter().enumerate() {
            let which = if f == 0 { "results" } else { "error file" };
            for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match parse_result(line) {
                    Ok((cid, result)) => {
                        let (Some(stage), Some(key)) =
                            (stages.get(cid.as_str()), store::key_of(&cid))
                        else {
                            progress.warning(&format!("batch {id} {which}, line {}: custom_id `{cid}` is not one of its requests; ignored", n + 1));
                            continue;
                        };
                        match result {
                            LineResult::Answer(a) => {
                                self.account(stage, &a);
                                answered.insert(cid);
                                buf.push((key, a));
                                if buf.len() >= 512 {
                                    store::put_answers(&self.memo, &std::mem::take(&mut buf))?;
                                }
                            }
                            LineResult::Failed(why) => {
                                failed.insert(cid, why);
                            }
                        }
                    }
                    Err(why) => progress.warning(&format!(
                        "batch {id} {which}, line {}: {why}; its request will be asked again",
                        n + 1
                    )),
                }
            }
        }
        store::put_answers(&self.memo, &buf)?;
        let whole = status.errors.join("; ");
        let mut failures = store::failures(&self.memo)?;
        let mut n_failed = 0;
        for (cid, _) in &rec.requests {
            if answered.contains(cid) {
                continue;
            }
            n_failed += 1;
            let why = failed.get(cid).cloned().unwrap_or_else(|| {
                if whole.is_empty() {
                    format!("no result in batch {id} ({})", status.status)
                } else {
                    format!("batch {id} failed: {whole}")
                }
            });
            let f = failures.entry(cid.clone()).or_default();
            f.attempts += 1;
            f.last = why;
        }
        store::save_failures(&self.memo, &failures)?;
        if n_failed > 0 {
            progress.warning(&format!(
                "batch {id} ({}): {n_failed} of {} requests have no answer; they are submitted again",
                status.status,
                rec.requests.len()
            ));
        }
        let mut s = lock(&self.summary);
        s.answers_collected += answered.len();
        s.requests_failed += n_failed;
        s.seconds_collecting += started.elapsed().as_secs_f64();
        Ok(())
    }

    fn account(&self, stage: &str, a: &ChatAnswer) {
        let s = self.cfg.stage(stage);
        let mut usage = lock(&self.usage);
        let u = usage.entry(stage.to_string()).or_default();
        u.calls += 1;
        u.batch_calls += 1;
        u.input_tokens += a.input_tokens;
        u.output_tokens += a.output_tokens;
        if let Some(c) = s.cost(a.input_tokens, a.output_tokens) {
            u.cost = Some(u.cost.unwrap_or(0.0) + c * (1.0 - self.cfg.batch.discount));
        }
    }

    /// Polls until no batch is outstanding, collecting each as it finishes.
    pub fn wait(&self, progress: &Progress) -> Result<(), BatchError> {
        let poll = Duration::from_secs_f64(self.cfg.batch.poll_s);
        loop {
            self.collect(progress)?;
            if self.outstanding()?.is_empty() {
                return Ok(());
            }
            let t = Instant::now();
            std::thread::sleep(poll);
            lock(&self.summary).seconds_waiting += t.elapsed().as_secs_f64();
        }
    }

    /// Cancels every outstanding batch and collects what it finished (`--finish-interactive`).
    pub fn cancel_outstanding(&self, progress: &Progress) -> Result<(), BatchError> {
        let Some(api) = &self.api else {
            return Ok(());
        };
        for rec in self.outstanding()? {
            if let Some(id) = &rec.id {
                api.cancel(id).map_err(|message| BatchError::Provider {
                    what: format!("cancelling batch {id}"),
                    message,
                })?;
                progress.status(
                    "Cancelling",
                    &format!("batch {id}; what it finished is kept"),
                );
            }
        }
        self.wait(progress)
    }

    /// Reads result files of an external runner (OpenAI batch output format, e.g. vLLM's
    /// `run-batch`), committing answers as they are read; returns how many were read.
    pub fn import(&self, path: &Path, progress: &Progress) -> Result<usize, BatchError> {
        let started = Instant::now();
        let file = std::fs::File::open(path).map_err(|source| BatchError::Io {
            context: "cannot read the batch output",
            path: path.to_path_buf(),
            source,
        })?;
        let stages: HashMap<String, String> = store::all(&self.memo)?
            .into_iter()
            .flat_map(|r| r.requests)
            .collect();
        let mut buf = Vec::new();
        let mut n = 0;
        for (i, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
            let line = line.map_err(|source| BatchError::Io {
                context: "cannot read the batch output",
                path: path.to_path_buf(),
                source,
            })?;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let at = format!("{}, line {}", path.display(), i + 1);
            match parse_result(&line) {
                Ok((cid, LineResult::Answer(a))) => {
                    let Some(key) = store::key_of(&cid) else {
                        progress.warning(&format!(
                            "{at}: custom_id `{cid}` is not a c2s request id; ignored"
                        ));
                        continue;
                    };
                    self.account(stages.get(&cid).map_or("imported", String::as_str), &a);
                    buf.push((key, a));
                    n += 1;
                    if buf.len() >= 512 {
                        store::put_answers(&self.memo, &std::mem::take(&mut buf))?;
                    }
                }
                Ok((_, LineResult::Failed(why))) => progress.warning(&format!(
                    "{at}: the request failed ({why}); it is exported again"
                )),
                Err(why) => progress.warning(&format!("{at}: {why}; ignored")),
            }
        }
        store::put_answers(&self.memo, &buf)?;
        let mut s = lock(&self.summary);
        s.answers_collected += n;
        s.seconds_collecting += started.elapsed().as_secs_f64();
        Ok(n)
    }

    /// After a complete build: forget collected batches and failure counts.
    pub fn finish(&self) -> Result<(), BatchError> {
        store::forget_collected(&self.memo)?;
        Ok(())
    }
}

/// Removes the request files an earlier `--batch-export` wrote in `dir` (only c2s's own).
pub fn clear_exports(dir: &Path) -> Result<(), BatchError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("c2s-batch-") && name.ends_with(".jsonl") {
            std::fs::remove_file(e.path()).map_err(|source| BatchError::Io {
                context: "cannot remove the old request file",
                path: e.path(),
                source,
            })?;
        }
    }
    Ok(())
}

fn stage_counts(rec: &BatchRecord) -> String {
    let mut m: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, s) in &rec.requests {
        *m.entry(s.as_str()).or_default() += 1;
    }
    m.iter()
        .map(|(s, n)| format!("{n} {s}"))
        .collect::<Vec<_>>()
        .join(", ")
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

fn ago(since: u64) -> String {
    let s = unix_now().saturating_sub(since);
    if s < 120 {
        format!("{s}s")
    } else if s < 7200 {
        format!("{}m", s / 60)
    } else {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    }
}
