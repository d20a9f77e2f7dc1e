//! `c2s build --dry-run`: what the next build would compute and what it would cost, without a
//! model call. A model's new answers cannot be known, so with a model the dry run says both
//! bounds: the results the build computes if each new answer is the model's last one for the
//! same item (a small edit usually gives the same card and summaries), and, when more, how many
//! it computes if every new answer differs and so changes what is built on it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::cmd::cli::BuildArgs;
use crate::cmd::{EXIT_OK, Error};
use crate::config::LLM_STAGES;
use crate::db::exec::Miss;
use crate::pipeline::build::build;
use crate::pipeline::options::BuildOptions;
use crate::pipeline::report::{BuildReport, TreeMode};
use crate::progress::Progress;

/// Rough output tokens per LLM call, by stage, for estimates.
fn output_tokens(stage: &str) -> usize {
    match stage {
        "card" => 80,
        "summary" => 160,
        "label" => 10,
        "repartition" => 40,
        _ => 60,
    }
}
/// Instruction tokens around each call's input, for estimates.
const PROMPT_OVERHEAD_TOKENS: usize = 250;

pub fn dry_run_cmd(args: &BuildArgs, opts: BuildOptions, progress: &Progress) -> Result<u8, Error> {
    let guesses = opts.dry_run_guesses();
    let likely = BuildOptions {
        same_answers: true,
        ..opts
    };
    let report = build(&likely, progress)?;
    let config = &likely.loaded.config;
    let estimate = Estimate::of(report.dry_run.as_deref().unwrap_or_default(), config);
    // The other bound, only where a stand-in guessed (a model or a neural embedder).
    let upper = if guesses {
        let opts = BuildOptions {
            same_answers: false,
            ..likely
        };
        let r = build(&opts, &Progress::silent())?;
        Some((
            Estimate::of(
                r.dry_run.as_deref().unwrap_or_default(),
                &opts.loaded.config,
            ),
            r.stages,
        ))
    } else {
        None
    };
    if args.json {
        let json = DryRunJson {
            report: &report,
            estimate: &estimate,
            if_answers_differ: upper.as_ref().map(|(e, stages)| Upper {
                stages,
                estimate: e,
            }),
        };
        println!("{}", serde_json::to_string(&json)?);
    } else {
        let upper = upper.as_ref().map(|(e, _)| e);
        print!("{}", render(&report, &estimate, upper, args.explain));
    }
    Ok(EXIT_OK)
}

#[derive(Serialize)]
struct DryRunJson<'a> {
    #[serde(flatten)]
    report: &'a BuildReport,
    estimate: &'a Estimate,
    /// With a model: the stages and estimate if every new answer differs from the last one.
    #[serde(skip_serializing_if = "Option::is_none")]
    if_answers_differ: Option<Upper<'a>>,
}

#[derive(Serialize)]
struct Upper<'a> {
    stages: &'a BTreeMap<&'static str, crate::db::exec::StageCount>,
    estimate: &'a Estimate,
}

/// What a dry run would cost.
#[derive(Debug, Default, Serialize)]
pub struct Estimate {
    pub results: BTreeMap<&'static str, usize>,
    pub llm_calls: usize,
    pub input_tokens: usize,
    pub output_tokens: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Batches a batched build would submit (at least: a strict second ask adds a step).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batches: Option<usize>,
}

impl Estimate {
    pub fn of(misses: &[Miss], config: &crate::config::Config) -> Estimate {
        let mut e = Estimate::default();
        let batch_mode =
            |stage: &str| config.llm.stage(stage).mode == crate::config::LlmMode::Batch;
        if config.llm.backend != crate::config::LlmBackendKind::Extractive && config.llm.any_batch()
        {
            e.batches = Some(batches(misses, config, batch_mode));
        }
        for m in misses {
            *e.results.entry(m.stage).or_insert(0) += 1;
            if LLM_STAGES.contains(&m.stage) {
                let (input, output) = (
                    m.input_chars.div_ceil(4) + PROMPT_OVERHEAD_TOKENS,
                    output_tokens(m.stage),
                );
                e.llm_calls += 1;
                e.input_tokens += input;
                e.output_tokens += output;
                if let Some(c) = config.llm.stage(m.stage).cost(input as u64, output as u64) {
                    let price = if batch_mode(m.stage) && e.batches.is_some() {
                        1.0 - config.llm.batch.discount
                    } else {
                        1.0
                    };
                    e.cost = Some(e.cost.unwrap_or(0.0) + c * price);
                }
            }
        }
        e
    }
}

/// Batches of the batch-mode misses: one step per stage call (summaries and tags of a level share
/// one), each split by the per-batch request limit.
fn batches(
    misses: &[Miss],
    config: &crate::config::Config,
    batch_mode: impl Fn(&str) -> bool,
) -> usize {
    let mut steps: Vec<(usize, &str, usize)> = Vec::new();
    for m in misses
        .iter()
        .filter(|m| LLM_STAGES.contains(&m.stage) && batch_mode(m.stage))
    {
        match steps.last_mut() {
            Some((step, _, n)) if *step == m.step => *n += 1,
            Some((step, "summary", n)) if m.stage == "tags" && *step + 1 == m.step => {
                *step = m.step;
                *n += 1;
            }
            _ => steps.push((m.step, m.stage, 1)),
        }
    }
    let max = crate::llm::batch::max_requests(&config.llm);
    steps.iter().map(|(_, _, n)| n.div_ceil(max)).sum()
}

/// The dry run as text: what it would compute per stage, and with a model, how many more if the
/// model's new answers differ from its last ones.
fn render(r: &BuildReport, e: &Estimate, upper: Option<&Estimate>, explain: bool) -> String {
    let mut s = String::new();
    let tree = match &r.tree {
        TreeMode::UpToDate => "up to date".to_string(),
        TreeMode::Warm(w) => format!(
            "updated in place ({} added, {} deleted, {} split, {} merged)",
            w.added, w.deleted, w.split, w.merged
        ),
        TreeMode::Full { reason, .. } => format!("clustered from scratch ({reason})"),
        TreeMode::Structured { from, .. } => format!("made from {from}"),
    };
    s.push_str(&format!(
        "dry run for {}: nothing was written\n  tree: {tree}\n",
        r.output
    ));
    let more = |stage: &str, n: usize| -> String {
        match upper.and_then(|u| u.results.get(stage)) {
            Some(&m) if m > n => {
                format!(" (up to {m} if the model's new answers differ from its last ones)")
            }
            _ => String::new(),
        }
    };
    if e.results.is_empty() && upper.is_none_or(|u| u.results.is_empty()) {
        s.push_str("  nothing to recompute\n");
    }
    let stages: std::collections::BTreeSet<&str> = e
        .results
        .keys()
        .chain(upper.iter().flat_map(|u| u.results.keys()))
        .copied()
        .collect();
    for stage in stages {
        let n = e.results.get(stage).copied().unwrap_or(0);
        let reused = r.stages.get(stage).map_or(0, |c| c.reused);
        s.push_str(&format!(
            "  {stage}: {n} to compute, {reused} reused{}\n",
            more(stage, n)
        ));
    }
    let calls = match upper {
        Some(u) if u.llm_calls > e.llm_calls => format!("{} (up to {})", e.llm_calls, u.llm_calls),
        _ => e.llm_calls.to_string(),
    };
    s.push_str(&format!(
        "  LLM calls: {calls}, estimated tokens: {} in, {} out",
        e.input_tokens, e.output_tokens
    ));
    if let Some(b) = e.batches {
        s.push_str(&format!(", batches to submit: at least {b}"));
    }
    match (e.cost, upper.and_then(|u| u.cost)) {
        (Some(c), Some(u)) if u > c => {
            s.push_str(&format!(", estimated cost: {c:.4} (up to {u:.4})\n"))
        }
        (Some(c), _) => s.push_str(&format!(", estimated cost: {c:.4}\n")),
        (None, _) => s.push_str(
            " (set llm.price_input_per_mtok / price_output_per_mtok for a cost estimate)\n",
        ),
    }
    if explain {
        for m in r.dry_run.iter().flatten() {
            s.push_str(&format!("  {} {}: {}\n", m.stage, m.subject, m.reason));
        }
    }
    s
}
