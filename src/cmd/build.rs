//! `c2s build`: the build (batched or not), its summary lines, and the dry run's estimate.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::cmd::Error;
use crate::cmd::cli::BuildArgs;
use crate::cmd::{EXIT_ERROR, EXIT_OK};
use crate::db::exec::Miss;
use crate::pipeline::build::build;
use crate::pipeline::options::BuildOptions;
use crate::pipeline::report::{BuildReport, TreeMode};
use crate::progress::Progress;

use crate::config::LLM_STAGES;
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

pub fn build_cmd(args: &BuildArgs, progress: &Progress) -> Result<u8, Error> {
    let mut target = args.target.resolve()?;
    if args.batch {
        target.loaded.config.llm.mode = crate::config::LlmMode::Batch;
        target.loaded.config.validate().map_err(|e| match e {
            crate::config::ConfigError::Invalid { message, .. } => {
                crate::config::ConfigError::Invalid {
                    field: "--batch".into(),
                    message,
                }
            }
            e => e,
        })?;
    }
    let opts = BuildOptions {
        full: args.full,
        dry_run: args.dry_run,
        ..BuildOptions::new(target.loaded, target.out_dir, target.display_base)
    };
    if !args.dry_run && batched(args, &opts) {
        return batched_build_cmd(args, &opts, progress);
    }
    let report = build(&opts, progress)?;
    if args.dry_run {
        let estimate = Estimate::of(
            report.dry_run.as_deref().unwrap_or_default(),
            &opts.loaded.config,
        );
        if args.json {
            println!(
                "{}",
                serde_json::to_string(&DryRunJson {
                    report: &report,
                    estimate: &estimate
                })?
            );
        } else {
            print!("{}", render_dry_run(&report, &estimate, args.explain));
        }
        return Ok(EXIT_OK);
    }
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    }
    progress.status("Finished", &summary_line(&report));
    Ok(EXIT_OK)
}

/// Whether this build goes through batches: a batch-mode stage, a batch flag, or batches of an
/// earlier run still outstanding (collected, never sent again).
fn batched(args: &BuildArgs, opts: &BuildOptions) -> bool {
    let llm = &opts.loaded.config.llm;
    if llm.backend == crate::config::LlmBackendKind::Extractive {
        return false;
    }
    llm.any_batch()
        || args.batch_export.is_some()
        || !args.batch_import.is_empty()
        || args.finish_interactive
        || crate::llm::batch::Batcher::has_outstanding(&opts.loaded.memo_path())
}

fn batched_build_cmd(
    args: &BuildArgs,
    opts: &BuildOptions,
    progress: &Progress,
) -> Result<u8, Error> {
    let mut rerun = args.target.build_command();
    if args.batch {
        rerun.push_str(" --batch");
    }
    let run = crate::pipeline::batched::BatchRun {
        no_wait: args.no_wait,
        finish_interactive: args.finish_interactive,
        export: args.batch_export.clone(),
        import: args.batch_import.clone(),
        rerun,
        on_wait: stop_waiting_on_ctrl_c,
    };
    match crate::pipeline::batched::build_batched(opts, &run, progress)? {
        crate::pipeline::batched::Outcome::Built(report) => {
            if args.json {
                println!("{}", serde_json::to_string(&report)?);
            }
            progress.status("Finished", &summary_line(&report));
        }
        crate::pipeline::batched::Outcome::Incomplete(inc) => {
            if args.json {
                println!("{}", serde_json::to_string(&inc)?);
            }
            progress.status(
                "Incomplete",
                &format!(
                    "{}
  next: {}",
                    inc.message, inc.next
                ),
            );
        }
    }
    Ok(EXIT_OK)
}

fn summary_line(r: &BuildReport) -> String {
    let fresh = if matches!(r.tree, TreeMode::UpToDate) {
        "up to date: "
    } else {
        ""
    };
    let computed: usize = r.stages.values().map(|s| s.computed).sum();
    let reused: usize = r.stages.values().map(|s| s.reused).sum();
    format!(
        "{fresh}{} → {}, {}, {} in {:.2}s ({} computed, {} reused, {} warnings, {} files written) → {}",
        plural(r.documents, "document"),
        plural(r.skills, "skill"),
        plural(r.levels, "level"),
        plural(r.navigation_files, "navigation file"),
        r.seconds,
        computed,
        reused,
        r.warnings,
        r.files.written,
        r.output
    ) + &platform_line(r)
        + &planted_line(r)
        + &seeded_line(r)
        + &usage_line(r)
}

/// `seeded: N results from OUT/state/ …` when a build continued a committed output.
fn seeded_line(r: &BuildReport) -> String {
    if r.seeded == 0 {
        return String::new();
    }
    format!(
        "\n         seeded: {} from {}/{}/ (this memo had not built the output; nothing was recomputed for them)",
        plural(r.seeded, "result"),
        r.output,
        crate::format::state::STATE_DIR
    )
}

/// `planted: 3 sentences in 2 documents …` when ingest flagged any.
fn planted_line(r: &BuildReport) -> String {
    let p = r.planted;
    if p.sentences == 0 {
        return String::new();
    }
    let see = if matches!(r.tree, TreeMode::UpToDate) {
        "the build that read them warned about each; `c2s build --full` lists them again"
    } else {
        "see the warnings"
    };
    format!(
        "\n         planted: {} addressing AI models or asking for secrets, in {}, left out of navigation text ({see})",
        plural(p.sentences, "sentence"),
        plural(p.documents, "document")
    )
}

/// `; largest skill: N files, B bytes` (what hosted skill platforms cap).
fn platform_line(r: &BuildReport) -> String {
    match r.platform.per_skill.iter().max_by_key(|s| s.bytes) {
        Some(s) => format!(
            "\n         largest skill {} ({}, {} KiB)",
            s.name,
            plural(s.files, "file"),
            s.bytes.div_ceil(1024)
        ),
        None => String::new(),
    }
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// `; LLM: N calls, X in / Y out tokens, cost C` when a remote LLM ran.
fn usage_line(r: &BuildReport) -> String {
    llm_lines(&r.llm_usage)
}

/// `LLM N calls, …` and `answers: …` for a build's per-stage usage (empty when no model ran).
pub(crate) fn llm_lines(usage: &BTreeMap<String, crate::llm::Usage>) -> String {
    if usage.is_empty() {
        return String::new();
    }
    let calls: u64 = usage.values().map(|u| u.calls).sum();
    let input: u64 = usage.values().map(|u| u.input_tokens).sum();
    let output: u64 = usage.values().map(|u| u.output_tokens).sum();
    let costs: Vec<f64> = usage.values().filter_map(|u| u.cost).collect();
    let cost = if costs.is_empty() {
        String::new()
    } else {
        format!(", cost {:.4}", costs.iter().sum::<f64>())
    };
    let batched: u64 = usage.values().map(|u| u.batch_calls).sum();
    let via = if batched > 0 {
        format!(" ({batched} through batches)")
    } else {
        String::new()
    };
    format!("\n         LLM {calls} calls{via}, {input} input + {output} output tokens{cost}")
        + &answers_line(usage)
}

/// `answers: card 29 parsed, summary 8 parsed + 2 repaired, …`: how each stage's computed items
/// got their result.
fn answers_line(usage: &BTreeMap<String, crate::llm::Usage>) -> String {
    let parts: Vec<String> = usage
        .iter()
        .filter(|(_, u)| u.answers.total() > 0)
        .map(|(stage, u)| {
            let a = &u.answers;
            let counts: Vec<String> = [
                (a.parsed, "parsed"),
                (a.repaired, "repaired"),
                (a.retried, "retried"),
                (a.fallback, "fallback"),
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
            let rejected = if a.rejected > 0 {
                format!(" ({} rejected)", a.rejected)
            } else {
                String::new()
            };
            format!("{stage} {}{rejected}", counts.join(" + "))
        })
        .collect();
    if parts.is_empty() {
        return String::new();
    }
    format!("\n         answers: {}", parts.join(", "))
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

#[derive(Serialize)]
struct DryRunJson<'a> {
    #[serde(flatten)]
    report: &'a BuildReport,
    estimate: &'a Estimate,
}

fn render_dry_run(r: &BuildReport, e: &Estimate, explain: bool) -> String {
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
    if e.results.is_empty() {
        s.push_str("  nothing to recompute\n");
    }
    for (stage, n) in &e.results {
        let reused = r.stages.get(stage).map_or(0, |c| c.reused);
        s.push_str(&format!("  {stage}: {n} to compute, {reused} reused\n"));
    }
    s.push_str(&format!(
        "  LLM calls: {}, estimated tokens: {} in, {} out",
        e.llm_calls, e.input_tokens, e.output_tokens
    ));
    if let Some(b) = e.batches {
        s.push_str(&format!(", batches to submit: at least {b}"));
    }
    match e.cost {
        Some(c) => s.push_str(&format!(", estimated cost: {c:.4}\n")),
        None => s.push_str(
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

/// Ctrl-C while waiting: the batches keep running at the provider and are on record in the memo,
/// so say how to collect them and stop (exit 2).
fn stop_waiting_on_ctrl_c(rerun: &str) {
    let rerun = rerun.to_string();
    let _ = ctrlc::set_handler(move || {
        eprintln!(
            "\nstopped waiting: the batches keep running at the provider and are on record in the cache\n  help: run `{rerun}` to collect them (nothing is submitted twice)"
        );
        std::process::exit(EXIT_ERROR as i32);
    });
}
