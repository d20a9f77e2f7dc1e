//! `c2s build`: the build (batched or not) and its summary lines (the dry run: `dry_run`).

use std::collections::BTreeMap;

use crate::cmd::Error;
use crate::cmd::cli::BuildArgs;
use crate::cmd::{EXIT_ERROR, EXIT_OK};
use crate::pipeline::build::build;
use crate::pipeline::options::BuildOptions;
use crate::pipeline::report::{BuildReport, TreeMode};
use crate::progress::Progress;
use crate::text::plural;

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
        retry_rejected: args.retry_rejected,
        ..BuildOptions::new(target.loaded, target.out_dir, target.display_base)
    };
    if !args.dry_run && batched(args, &opts) {
        return batched_build_cmd(args, &opts, progress);
    }
    if args.dry_run {
        return super::dry_run::dry_run_cmd(args, opts, progress);
    }
    let report = build(&opts, progress)?;
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
    let calls = plural(calls as usize, "call");
    format!("\n         LLM {calls}{via}, {input} input + {output} output tokens{cost}")
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
