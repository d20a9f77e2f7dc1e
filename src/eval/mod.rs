//! `c2s eval`: build (or reuse through the memo) the tree of a benchmark corpus, run the navigator,
//! the flat baselines and the answering methods (`rag`, `agentic-search`, `agent`, `guided`, one
//! model for all) on every query, and report retrieval, answer and citation metrics with bootstrap
//! intervals. Every model answer is memoized, so a stopped evaluation continues where it stopped.

pub mod answer;
pub mod bootstrap;
pub mod judge;
pub mod metrics;
mod offline;
mod report;
mod table;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::Loaded;
use crate::db::cache::Memo;
use crate::error::BuildError;
use crate::llm::chat::Chat;
use crate::pipeline::backends::Backends;
use crate::pipeline::build::build_using;
use crate::pipeline::options::BuildOptions;
use crate::progress::Progress;
use crate::serve::agent::Agent;
use crate::serve::compiled::Compiled;
use crate::serve::guided::Guided;
use crate::serve::navigator::NavParams;
use answer::{ANSWERING, Answered, RAG_DOCS};
use bootstrap::Comparison;
use offline::Context;
pub use table::render_table;

/// Every method `c2s eval` runs by default (no model needed).
pub const METHODS: &[&str] = &["navigator", "navigator+fallback", "bm25", "dense", "hybrid"];
/// Every method `--methods` accepts: the defaults plus the answering methods, which need an
/// `[llm]` (or `[agent]`) backend.
pub const ALL_METHODS: &[&str] = &[
    "navigator",
    "navigator+fallback",
    "bm25",
    "dense",
    "hybrid",
    "rag",
    "agentic-search",
    "agent",
    "guided",
];
const FLAT: &[&str] = &["bm25", "dense", "hybrid"];
/// The retrieval metrics, in table order.
pub const METRICS: &[&str] = &["recall@5", "hit@5", "mrr@10", "ndcg@10"];

/// One benchmark query.
#[derive(Debug, Clone, Deserialize)]
pub struct Query {
    pub id: String,
    pub question: String,
    #[serde(default)]
    pub answer: Option<String>,
    #[serde(default)]
    pub gold_ids: Vec<String>,
}

/// What one method did for one query.
#[derive(Debug, Clone, Serialize)]
pub struct QueryResult {
    pub query: String,
    pub method: String,
    pub ids: Vec<String>,
    pub metrics: BTreeMap<String, f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Documents an answering method's answer cites.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cited: Vec<String>,
    /// How an answering method stopped (`answered`, `ungrounded`, `budget`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    pub bytes_read: usize,
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routed: Option<bool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<String>,
}

impl QueryResult {
    /// A result with its retrieval and answer metrics.
    fn scored(
        q: &Query,
        method: &str,
        ids: Vec<String>,
        answer: Option<String>,
        gold: &[String],
    ) -> QueryResult {
        QueryResult {
            query: q.id.clone(),
            method: method.to_string(),
            metrics: offline::scores(&ids, answer.as_deref(), q, gold),
            ids,
            answer,
            cited: Vec::new(),
            stopped: None,
            bytes_read: 0,
            seconds: 0.0,
            routed: None,
            path: Vec::new(),
        }
    }

    fn answered(q: &Query, method: &str, a: Answered, gold: &[String]) -> QueryResult {
        let mut r = QueryResult::scored(q, method, a.ids(), Some(a.answer.clone()), gold);
        r.metrics.extend(a.metrics(gold));
        r.cited = a.cited;
        r.stopped = Some(a.stopped);
        r.bytes_read = a.bytes_read;
        r.seconds = a.seconds;
        r.path = a.path;
        r
    }
}

/// Per-method means.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub queries: usize,
    pub means: BTreeMap<String, f64>,
    /// 95% bootstrap intervals of the means (10,000 resamples, seed 42).
    pub intervals: BTreeMap<String, (f64, f64)>,
    pub bytes_per_query: f64,
    pub ms_per_query: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routing_accuracy: Option<f64>,
}

/// The whole evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub dataset: String,
    pub documents: usize,
    pub summaries: BTreeMap<String, Summary>,
    /// Per metric: the navigator against the best flat baseline.
    pub comparisons: BTreeMap<String, (String, Comparison)>,
    /// The same for `navigator+fallback`.
    pub fallback_comparisons: BTreeMap<String, (String, Comparison)>,
    /// `agent` against each other answering method, per answer metric.
    pub answer_comparisons: BTreeMap<String, (String, Comparison)>,
    /// The flat retriever whose top documents `rag` was given (the best by Recall@5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rag_retriever: Option<String>,
    /// What the tree's build asked its model, per stage (what it computed; memoized results
    /// cost nothing), as `c2s build --json` reports it.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub build_llm_usage: BTreeMap<String, crate::llm::Usage>,
    /// The model that answered, and the judge's, when they ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    pub results: Vec<QueryResult>,
}

/// Eval settings from the command line.
pub struct EvalOptions {
    pub data: PathBuf,
    /// The corpus built: a JSONL file or a folder of documents.
    pub corpus: PathBuf,
    pub loaded: Loaded,
    pub out_dir: PathBuf,
    pub display_base: PathBuf,
    pub limit: Option<usize>,
    pub methods: Vec<String>,
    pub nav: NavParams,
    /// Grade the answering methods with the `[judge]` model.
    pub judge: bool,
    /// Stop starting questions after this many minutes (the answers so far are memoized, so
    /// the same command goes on where it stopped).
    pub max_minutes: Option<f64>,
}

fn load_queries(path: &Path, limit: Option<usize>) -> Result<Vec<Query>, BuildError> {
    let text = std::fs::read_to_string(path).map_err(|e| BuildError::io("cannot read", path, e))?;
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let q: Query = serde_json::from_str(line).map_err(|e| {
            BuildError::io(
                "invalid query in",
                path,
                std::io::Error::other(format!("line {}: {e}", i + 1)),
            )
        })?;
        out.push(q);
    }
    out.truncate(limit.unwrap_or(usize::MAX));
    Ok(out)
}

/// Why an evaluation stopped: its build, or opening the built output.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error(transparent)]
    Serve(#[from] crate::serve::ServeError),
}

/// Runs the evaluation.
pub fn run(
    opts: &EvalOptions,
    backends: &Backends,
    progress: &Progress,
) -> Result<Report, EvalError> {
    let embedder = backends.embedder.as_ref();
    let queries = load_queries(&opts.data.join("queries.jsonl"), opts.limit)?;
    let mut loaded = opts.loaded.clone();
    loaded.config.corpus.paths = vec![opts.corpus.clone()];
    // A folder's documents are named by their paths in it, as gold ids may name them.
    let shown_from = if opts.corpus.is_dir() {
        opts.corpus.clone()
    } else {
        opts.display_base.clone()
    };
    let bo = BuildOptions::new(loaded, opts.out_dir.clone(), shown_from);
    let built = build_using(&bo, progress, backends)?;
    // What is evaluated is what the build shipped: the output, opened as `c2s ask` opens it.
    let a = Compiled::open(&opts.out_dir)?;
    progress.status(
        "Evaluating",
        &format!("{} queries × {} methods", queries.len(), opts.methods.len()),
    );
    let ctx = Context::new(&a, opts.nav);
    let texts: Vec<&str> = queries.iter().map(|q| q.question.as_str()).collect();
    let qvs = embedder.embed(&texts).map_err(BuildError::from)?;
    let golds: Vec<Vec<String>> = queries
        .iter()
        .map(|q| ctx.canonical_gold(&q.gold_ids))
        .collect();
    let mut results = Vec::new();
    for (i, q) in queries.iter().enumerate() {
        for m in opts
            .methods
            .iter()
            .filter(|m| !ANSWERING.contains(&m.as_str()))
        {
            results.push(ctx.run(m, q, &qvs[i], &golds[i]));
        }
    }
    let answering: Vec<&str> = ANSWERING
        .iter()
        .copied()
        .filter(|m| opts.methods.iter().any(|x| x == m))
        .collect();
    let mut report_extra = (None, None, None);
    if !answering.is_empty() {
        let memo = Arc::new(Memo::open(&opts.loaded.memo_path()).map_err(BuildError::from)?);
        let retriever = best_flat(&ctx, &queries, &qvs, &golds);
        let run = Answering::open(opts, memo.clone(), &a)?;
        let deadline = opts
            .max_minutes
            .map(|m| std::time::Instant::now() + std::time::Duration::from_secs_f64(m * 60.0));
        // Question by question, every method on each: a stop at the time budget leaves every
        // method with the same questions.
        let meter = progress.meter("Answering", queries.len());
        let answers: Vec<Option<Vec<Answered>>> = in_parallel(queries.len(), run.workers, |i| {
            let late = deadline.is_some_and(|d| std::time::Instant::now() >= d);
            let got = (!late).then(|| {
                let q = &queries[i];
                answering
                    .iter()
                    .map(|m| run.answer(m, &ctx, &a, q, &qvs[i], &retriever))
                    .collect()
            });
            meter.inc(1);
            got
        });
        meter.finish();
        let asked = answers.iter().filter(|x| x.is_some()).count();
        if asked < queries.len() {
            progress.status(
                "Stopped",
                &format!(
                    "at --max-minutes: {asked} of {} questions answered by every method; run the same command again to go on (answers so far are memoized)",
                    queries.len()
                ),
            );
        }
        for (mi, m) in answering.iter().enumerate() {
            for (i, got) in answers.iter().enumerate() {
                if let Some(got) = got {
                    results.push(QueryResult::answered(
                        &queries[i],
                        m,
                        got[mi].clone(),
                        &golds[i],
                    ));
                }
            }
        }
        if opts.judge {
            judge_all(opts, memo, &a, &queries, &mut results, progress)?;
        }
        report_extra = (
            answering.contains(&"rag").then_some(retriever),
            Some(run.model),
            opts.judge.then(|| judge_model(opts)),
        );
    }
    let summaries = report::summarize(&results, &opts.methods);
    let dataset = opts
        .data
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Report {
        dataset,
        documents: a.docs.len(),
        comparisons: report::compare(&results, &summaries, &opts.methods, "navigator"),
        fallback_comparisons: report::compare(
            &results,
            &summaries,
            &opts.methods,
            "navigator+fallback",
        ),
        answer_comparisons: report::compare_answers(&results, &opts.methods),
        summaries,
        build_llm_usage: built.llm_usage,
        rag_retriever: report_extra.0,
        model: report_extra.1,
        judge: report_extra.2,
        results,
    })
}

/// The flat retriever with the best mean Recall@5 on these queries (`rag` gets its top 5).
fn best_flat(ctx: &Context, queries: &[Query], qvs: &[Vec<f32>], golds: &[Vec<String>]) -> String {
    let mean = |m: &str| {
        let total: f64 = queries
            .iter()
            .enumerate()
            .filter_map(|(i, q)| {
                let ids = ctx.ids(&ctx.flat(m, &q.question, &qvs[i]));
                metrics::recall_at(&ids, &golds[i], 5)
            })
            .sum();
        total / queries.len().max(1) as f64
    };
    let mut best = ("hybrid", f64::MIN);
    for m in FLAT {
        let r = mean(m);
        if r > best.1 {
            best = (m, r);
        }
    }
    best.0.to_string()
}

/// `f(0..n)` on up to `workers` threads, results in index order: questions are answered as
/// many at a time as the model's endpoint takes (`[llm.limits] concurrency`), each on its own.
fn in_parallel<T: Send>(n: usize, workers: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<T>>> = (0..n).map(|_| Default::default()).collect();
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, n.max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let value = f(i);
                    *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(value);
                }
            });
        }
    });
    slots
        .into_iter()
        .filter_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

/// The model endpoints of the answering methods, all the agent's (`[llm]` with `[agent]`).
struct Answering<'a> {
    rag: Chat,
    rag_chars: usize,
    agent: Agent,
    search_agent: Agent,
    guided: Guided<'a>,
    model: String,
    /// Questions answered at once.
    workers: usize,
}

impl<'a> Answering<'a> {
    fn open(
        opts: &EvalOptions,
        memo: Arc<Memo>,
        a: &'a Compiled,
    ) -> Result<Answering<'a>, EvalError> {
        let cfg = &opts.loaded.config;
        let llm = cfg.agent.llm(&cfg.llm);
        let serve = |e: crate::serve::agent::AgentError| crate::serve::ServeError::from(e);
        let agent = Agent::new(&llm, &cfg.agent, &opts.out_dir)
            .map_err(serve)?
            .with_memo(memo.clone());
        let mut search = cfg.agent.clone();
        search.tools = vec!["search".into(), "get_document".into()];
        let search_agent = Agent::new(&llm, &search, &opts.out_dir)
            .map_err(serve)?
            .with_memo(memo.clone());
        let guided = Guided::new(&llm, &cfg.agent, a)
            .map_err(serve)?
            .with_memo(memo.clone());
        let rag = Chat::new(&llm, "agent")
            .map_err(|e| serve(e.into()))?
            .with_memo(memo);
        // Five documents share the context with the prompt and the answer.
        let rag_chars = crate::serve::agent::compose::doc_chars(
            cfg.agent.context_tokens,
            rag.settings.max_output_tokens,
            RAG_DOCS,
        );
        Ok(Answering {
            workers: llm.limits.concurrency,
            model: format!("{}:{}", llm.backend.name(), rag.settings.model),
            rag,
            rag_chars,
            agent,
            search_agent,
            guided,
        })
    }

    /// One question by one answering method.
    fn answer(
        &self,
        method: &str,
        ctx: &Context,
        a: &Compiled,
        q: &Query,
        qv: &[f32],
        retriever: &str,
    ) -> Answered {
        match method {
            "rag" => {
                let top = ctx.flat(retriever, &q.question, qv);
                let docs: Vec<usize> = top.into_iter().take(RAG_DOCS).collect();
                answer::rag(&self.rag, a, &q.question, &docs, self.rag_chars)
            }
            "agentic-search" => answer::ask_agent(&self.search_agent, &q.question),
            "guided" => answer::ask_guided(&self.guided, &q.question, qv),
            _ => answer::ask_agent(&self.agent, &q.question),
        }
    }
}

fn judge_model(opts: &EvalOptions) -> String {
    let cfg = &opts.loaded.config;
    let j = cfg.judge.llm(&cfg.agent, &cfg.llm);
    format!("{}:{}", j.backend.name(), j.stage("judge").model)
}

/// Grades every answering method's answers (memoized like the answers).
fn judge_all(
    opts: &EvalOptions,
    memo: Arc<Memo>,
    a: &Compiled,
    queries: &[Query],
    results: &mut [QueryResult],
    progress: &Progress,
) -> Result<(), EvalError> {
    let cfg = &opts.loaded.config;
    let chat = Chat::new(&cfg.judge.llm(&cfg.agent, &cfg.llm), "judge")
        .map_err(|e| crate::serve::ServeError::from(crate::serve::agent::AgentError::from(e)))?
        .with_memo(memo);
    let todo: Vec<usize> = (0..results.len())
        .filter(|&i| ANSWERING.contains(&results[i].method.as_str()))
        .collect();
    let meter = progress.meter("Judging", todo.len());
    for i in todo {
        let r = &results[i];
        let Some(q) = queries.iter().find(|q| q.id == r.query) else {
            continue;
        };
        let answered = Answered {
            answer: r.answer.clone().unwrap_or_default(),
            opened: r.ids.clone(),
            ..Answered::default()
        };
        let reference = q.answer.as_deref().unwrap_or("");
        let grades = judge::grade(&chat, a, &q.question, reference, &answered);
        let given = r.stopped.as_deref() == Some("answered");
        let m = &mut results[i].metrics;
        match grades {
            Ok(g) => m.extend(g.metrics(given)),
            Err(e) => {
                progress.warning(&format!("judge, query {}: {e}", q.id));
                m.insert("judge_error".into(), 1.0);
            }
        }
        meter.inc(1);
    }
    meter.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::in_parallel;

    #[test]
    fn in_parallel_keeps_the_order_at_any_worker_count() {
        for workers in [0, 1, 3, 50] {
            let got = in_parallel(7, workers, |i| i * 10);
            assert_eq!(got, vec![0, 10, 20, 30, 40, 50, 60], "{workers} workers");
        }
        assert!(in_parallel(0, 4, |i| i).is_empty());
    }
}
