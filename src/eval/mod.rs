//! `c2s eval`: build (or reuse through the memo) the tree of a benchmark corpus, run the navigator
//! and flat baselines on every query, and report retrieval and answer metrics with a paired bootstrap.

pub mod bootstrap;
pub mod metrics;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::config::Loaded;
use crate::embed::Embedder;
use crate::error::BuildError;
use crate::pipeline::backends::Backends;
use crate::pipeline::build::{BuildOptions, build_using};
use crate::progress::Progress;
use crate::retrieval::{rrf, top_k};
use crate::serve::agent::Agent;
use crate::serve::compiled::Compiled;
use crate::serve::navigator::{NavParams, Navigator, extractive_answer};
use bootstrap::{Comparison, paired_bootstrap};
use metrics::{exact_match, hit_at, mrr_at, ndcg_at, recall_at, token_f1};

/// Every method `c2s eval` knows.
pub const METHODS: &[&str] = &["navigator", "navigator+fallback", "bm25", "dense", "hybrid"];
/// Every method `--methods` accepts: the defaults plus `agent` (the LLM agent; needs `[llm]`).
pub const ALL_METHODS: &[&str] = &[
    "navigator",
    "navigator+fallback",
    "bm25",
    "dense",
    "hybrid",
    "agent",
];
const FLAT: &[&str] = &["bm25", "dense", "hybrid"];
/// The metrics, in table order.
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
    pub bytes_read: usize,
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routed: Option<bool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<String>,
}

/// Per-method means.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub queries: usize,
    pub means: BTreeMap<String, f64>,
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
    pub results: Vec<QueryResult>,
}

/// Eval settings from the command line.
pub struct EvalOptions {
    pub data: PathBuf,
    pub loaded: Loaded,
    pub out_dir: PathBuf,
    pub display_base: PathBuf,
    pub limit: Option<usize>,
    pub methods: Vec<String>,
    pub nav: NavParams,
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
    let corpus = opts.data.join("corpus.jsonl");
    let queries = load_queries(&opts.data.join("queries.jsonl"), opts.limit)?;
    let mut loaded = opts.loaded.clone();
    loaded.config.corpus.paths = vec![corpus];
    let bo = BuildOptions::new(loaded, opts.out_dir.clone(), opts.display_base.clone());
    build_using(&bo, progress, backends)?;
    // What is evaluated is what the build shipped: the output, opened as `c2s ask` opens it.
    let a = Compiled::open(&opts.out_dir)?;
    progress.status(
        "Evaluating",
        &format!("{} queries × {} methods", queries.len(), opts.methods.len()),
    );
    let agent = match opts.methods.iter().any(|m| m == "agent") {
        true => Some(
            Agent::new(
                &opts.loaded.config.agent.llm(&opts.loaded.config.llm),
                &opts.out_dir,
                opts.loaded.config.agent.max_turns,
            )
            .map_err(crate::serve::ServeError::from)?,
        ),
        false => None,
    };
    let mut ctx = Context::new(&a, embedder, opts.nav);
    ctx.agent = agent.as_ref();
    let mut results = Vec::new();
    for q in &queries {
        let gold = ctx.canonical_gold(&q.gold_ids);
        let qv = embedder
            .embed(&[q.question.as_str()])
            .map_err(BuildError::from)?
            .remove(0);
        for m in &opts.methods {
            results.push(ctx.run_method(m, q, &qv, &gold)?);
        }
    }
    let summaries = summarize(&results, &opts.methods);
    let comparisons = compare(&results, &summaries, &opts.methods, "navigator");
    let fallback_comparisons = compare(&results, &summaries, &opts.methods, "navigator+fallback");
    let dataset = opts
        .data
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Report {
        dataset,
        documents: a.docs.len(),
        summaries,
        comparisons,
        fallback_comparisons,
        results,
    })
}

/// Indexes built once per evaluation.
struct Context<'a> {
    a: &'a Compiled,
    nav: Navigator<'a>,
    params: NavParams,
    alias: HashMap<String, String>,
    top_skill: HashMap<String, String>,
    agent: Option<&'a Agent>,
}

impl<'a> Context<'a> {
    fn new(a: &'a Compiled, _embedder: &dyn Embedder, params: NavParams) -> Context<'a> {
        let mut alias = HashMap::new();
        for d in &a.docs {
            for x in &d.aliases {
                alias.insert(x.clone(), d.id.clone());
            }
        }
        let mut top_skill = HashMap::new();
        for &r in &a.tree.roots {
            for d in a.tree.descendant_docs(r) {
                top_skill.insert(a.docs[d].id.clone(), a.tree.nodes[r].path.clone());
            }
        }
        Context {
            a,
            nav: Navigator::new(a),
            params,
            alias,
            top_skill,
            agent: None,
        }
    }

    /// Gold ids mapped onto the documents they were folded into.
    fn canonical_gold(&self, gold: &[String]) -> Vec<String> {
        let mut out: Vec<String> = gold
            .iter()
            .map(|g| self.alias.get(g).unwrap_or(g).clone())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn ids(&self, idx: &[usize]) -> Vec<String> {
        idx.iter().map(|&d| self.a.docs[d].id.clone()).collect()
    }

    fn run_method(
        &self,
        method: &str,
        q: &Query,
        qv: &[f32],
        gold: &[String],
    ) -> Result<QueryResult, BuildError> {
        let clock = Instant::now();
        let mut extra = BTreeMap::new();
        let (ids, answer, bytes, routed, path) = match method {
            "agent" => {
                let agent = self.agent.expect("the agent is opened when asked for");
                // One failed question (a refused request, a context overflow) is recorded,
                // not fatal to the whole evaluation.
                let r = match agent.ask(&q.question) {
                    Ok(r) => r,
                    Err(e) => {
                        extra.insert("agent_error".to_string(), 1.0);
                        crate::serve::agent::AgentAnswer {
                            stopped: format!("error: {e}"),
                            ..Default::default()
                        }
                    }
                };
                extra.entry("agent_error".to_string()).or_insert(0.0);
                extra.insert("turns".to_string(), r.turns as f64);
                extra.insert("input_tokens".to_string(), r.input_tokens as f64);
                extra.insert("output_tokens".to_string(), r.output_tokens as f64);
                extra.insert("docs_fetched".to_string(), r.fetched.len() as f64);
                let searches = r
                    .trace
                    .iter()
                    .filter(|t| t.tool.as_deref() == Some("search"));
                extra.insert("searches".to_string(), searches.count() as f64);
                let mut ids = r.cited.clone();
                ids.extend(r.fetched.iter().filter(|f| !r.cited.contains(f)).cloned());
                let path = r
                    .trace
                    .iter()
                    .filter_map(|t| Some(format!("{}({})", t.tool.as_ref()?, t.args.as_ref()?)))
                    .collect();
                (ids, Some(r.answer), r.bytes_read, None, path)
            }
            "navigator" | "navigator+fallback" => {
                let p = NavParams {
                    fallback: method.ends_with("fallback"),
                    ..self.params
                };
                let r = self.nav.navigate(&q.question, qv, &p);
                if p.fallback {
                    extra.insert("fell_back".to_string(), f64::from(u8::from(r.fell_back)));
                }
                let routed = gold.iter().any(|g| {
                    self.top_skill
                        .get(g)
                        .is_some_and(|s| r.root_beam.contains(s))
                });
                (
                    r.ids,
                    Some(r.answer),
                    r.nav_bytes + r.doc_bytes,
                    Some(routed),
                    r.path,
                )
            }
            flat => {
                let ranking = self.flat(flat, &q.question, qv);
                let fetched: Vec<usize> = ranking.iter().take(self.params.fetch).copied().collect();
                let answer = extractive_answer(
                    &q.question,
                    fetched.iter().map(|&d| self.a.docs[d].text.as_str()),
                );
                let bytes = fetched.iter().map(|&d| self.a.docs[d].text.len()).sum();
                (self.ids(&ranking), Some(answer), bytes, None, Vec::new())
            }
        };
        let mut m = BTreeMap::new();
        for (name, v) in [
            ("recall@5", recall_at(&ids, gold, 5)),
            ("hit@5", hit_at(&ids, gold, 5)),
            ("mrr@10", mrr_at(&ids, gold, 10)),
            ("ndcg@10", ndcg_at(&ids, gold, 10)),
        ] {
            if let Some(v) = v {
                m.insert(name.to_string(), v);
            }
        }
        if let (Some(pred), Some(gold_answer)) = (&answer, &q.answer) {
            m.insert("token_f1".into(), token_f1(pred, gold_answer));
            m.insert("exact_match".into(), exact_match(pred, gold_answer));
        }
        m.extend(extra);
        Ok(QueryResult {
            query: q.id.clone(),
            method: method.to_string(),
            ids,
            metrics: m,
            answer,
            bytes_read: bytes,
            seconds: clock.elapsed().as_secs_f64(),
            routed,
            path,
        })
    }

    fn flat(&self, method: &str, question: &str, qv: &[f32]) -> Vec<usize> {
        let k = self.params.k;
        let s = self.nav.doc_scores(question, qv);
        let bm25 = || top_k(&s.text, 100);
        let dense = || top_k(&s.dense, 100);
        let mut r = match method {
            "bm25" => bm25(),
            "dense" => dense(),
            _ => rrf(&[bm25(), dense()], 60.0)
                .into_iter()
                .map(|x| x.0)
                .collect(),
        };
        r.truncate(k);
        r
    }
}

fn summarize(results: &[QueryResult], methods: &[String]) -> BTreeMap<String, Summary> {
    let mut out = BTreeMap::new();
    for m in methods {
        let rs: Vec<&QueryResult> = results.iter().filter(|r| &r.method == m).collect();
        let mut s = Summary {
            queries: rs.len(),
            ..Summary::default()
        };
        let mut names: Vec<&String> = rs.iter().flat_map(|r| r.metrics.keys()).collect();
        names.sort();
        names.dedup();
        for name in names {
            let vals: Vec<f64> = rs
                .iter()
                .filter_map(|r| r.metrics.get(name).copied())
                .collect();
            s.means.insert(
                name.clone(),
                vals.iter().sum::<f64>() / vals.len().max(1) as f64,
            );
        }
        let n = rs.len().max(1) as f64;
        s.bytes_per_query = rs.iter().map(|r| r.bytes_read as f64).sum::<f64>() / n;
        s.ms_per_query = rs.iter().map(|r| r.seconds * 1000.0).sum::<f64>() / n;
        let routed: Vec<bool> = rs.iter().filter_map(|r| r.routed).collect();
        if !routed.is_empty() {
            s.routing_accuracy =
                Some(routed.iter().filter(|&&x| x).count() as f64 / routed.len() as f64);
        }
        out.insert(m.clone(), s);
    }
    out
}

/// `method` against the best flat baseline, per metric (10,000 resamples, seed 42).
fn compare(
    results: &[QueryResult],
    summaries: &BTreeMap<String, Summary>,
    methods: &[String],
    method: &str,
) -> BTreeMap<String, (String, Comparison)> {
    let mut out = BTreeMap::new();
    if !methods.iter().any(|m| m == method) {
        return out;
    }
    let per_query = |method: &str, metric: &str| -> Vec<f64> {
        results
            .iter()
            .filter(|r| r.method == method)
            .map(|r| r.metrics.get(metric).copied().unwrap_or(0.0))
            .collect()
    };
    for metric in METRICS.iter().chain(&["token_f1"]) {
        let best = methods
            .iter()
            .filter(|m| FLAT.contains(&m.as_str()))
            .filter_map(|m| summaries[m].means.get(*metric).map(|v| (m, *v)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((flat, _)) = best {
            let c = paired_bootstrap(
                &per_query(method, metric),
                &per_query(flat, metric),
                10_000,
                42,
            );
            out.insert(metric.to_string(), (flat.clone(), c));
        }
    }
    out
}

/// The markdown table printed by `c2s eval`.
pub fn render_table(r: &Report) -> String {
    let mut s = format!(
        "## {} ({} documents, {} queries)\n\n",
        r.dataset,
        r.documents,
        r.summaries.values().map(|s| s.queries).max().unwrap_or(0)
    );
    s.push_str("| method | Recall@5 | Hit@5 | MRR@10 | nDCG@10 | Token F1 | EM | routing acc. | bytes/query | ms/query |\n");
    s.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    for (m, sum) in &r.summaries {
        let g = |k: &str| {
            sum.means
                .get(k)
                .map_or("–".to_string(), |v| format!("{:.3}", v + 0.0))
        };
        s.push_str(&format!(
            "| {m} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {:.2} |\n",
            g("recall@5"),
            g("hit@5"),
            g("mrr@10"),
            g("ndcg@10"),
            g("token_f1"),
            g("exact_match"),
            sum.routing_accuracy
                .map_or("–".to_string(), |v| format!("{v:.3}")),
            sum.bytes_per_query,
            sum.ms_per_query
        ));
    }
    if let Some(a) = r.summaries.get("agent") {
        let g = |k: &str| a.means.get(k).copied().unwrap_or(0.0);
        s.push_str(&format!(
            "\nagent: {:.1} turns, {:.1} documents fetched, {:.2} searches, {:.0} input + {:.0} output tokens per query\n",
            g("turns"),
            g("docs_fetched"),
            g("searches"),
            g("input_tokens"),
            g("output_tokens")
        ));
    }
    for (method, comparisons) in [
        ("navigator", &r.comparisons),
        ("navigator+fallback", &r.fallback_comparisons),
    ] {
        if comparisons.is_empty() {
            continue;
        }
        s.push_str(&format!("\n{method} vs best flat baseline (paired bootstrap, 10,000 resamples):\n\n| metric | baseline | mean diff | p | verdict |\n|---|---|---|---|---|\n"));
        for (metric, (flat, c)) in comparisons {
            s.push_str(&format!(
                "| {metric} | {flat} | {:+.3} | {:.4} | {} |\n",
                c.mean_diff, c.p_value, c.verdict
            ));
        }
    }
    s
}
