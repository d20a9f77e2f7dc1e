//! The commands behind the CLI: build (and its dry run), check, clean, cache.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::build::{BuildOptions, BuildReport, TreeMode, build};
use crate::cli::{BuildArgs, CacheAction, CheckArgs, CleanArgs, TargetArgs};
use crate::db::cache::Memo;
use crate::db::exec::Miss;
use crate::error::Error;
use crate::progress::Progress;
use crate::{EXIT_ERROR, EXIT_OK, EXIT_STALE};

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
            crate::error::ConfigError::Invalid { message, .. } => {
                crate::error::ConfigError::Invalid {
                    field: "--batch".into(),
                    message,
                }
            }
            e => e,
        })?;
    }
    let opts = BuildOptions {
        loaded: target.loaded,
        out_dir: target.out_dir,
        display_base: target.display_base,
        full: args.full,
        dry_run: args.dry_run,
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
        || crate::llm::batch::Batcher::has_outstanding(
            &opts.loaded.resolve(&opts.loaded.config.cache.path),
        )
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
    let run = crate::batched::BatchRun {
        no_wait: args.no_wait,
        finish_interactive: args.finish_interactive,
        export: args.batch_export.clone(),
        import: args.batch_import.clone(),
        rerun,
    };
    match crate::batched::build_batched(opts, &run, progress)? {
        crate::batched::Outcome::Built(report) => {
            if args.json {
                println!("{}", serde_json::to_string(&report)?);
            }
            progress.status("Finished", &summary_line(&report));
        }
        crate::batched::Outcome::Incomplete(inc) => {
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
        + &usage_line(r)
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
    if r.llm_usage.is_empty() {
        return String::new();
    }
    let calls: u64 = r.llm_usage.values().map(|u| u.calls).sum();
    let input: u64 = r.llm_usage.values().map(|u| u.input_tokens).sum();
    let output: u64 = r.llm_usage.values().map(|u| u.output_tokens).sum();
    let costs: Vec<f64> = r.llm_usage.values().filter_map(|u| u.cost).collect();
    let cost = if costs.is_empty() {
        String::new()
    } else {
        format!(", cost {:.4}", costs.iter().sum::<f64>())
    };
    let batched: u64 = r.llm_usage.values().map(|u| u.batch_calls).sum();
    let via = if batched > 0 {
        format!(" ({batched} through batches)")
    } else {
        String::new()
    };
    format!("\n         LLM {calls} calls{via}, {input} input + {output} output tokens{cost}")
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
        TreeMode::Full { reason } => format!("clustered from scratch ({reason})"),
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

pub fn check_cmd(args: &CheckArgs) -> Result<u8, Error> {
    let target = args.target.resolve()?;
    let st = crate::check::staleness(&target.loaded, &target.out_dir, &target.display_base)?;
    let out = crate::ingest::display(&target.out_dir, &target.display_base);
    let fix = args.target.build_command();
    let platform = crate::check::read_lock(&target.out_dir)?
        .map(|lock| crate::check::platform(&target.out_dir, &lock));
    if args.json {
        #[derive(Serialize)]
        struct Json<'a> {
            fresh: bool,
            output: &'a str,
            #[serde(flatten)]
            findings: &'a crate::check::Staleness,
            fix: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            platform: Option<&'a crate::limits::PlatformReport>,
        }
        let fresh = st.is_fresh();
        let j = Json {
            fresh,
            output: &out,
            findings: &st,
            fix: (!fresh).then_some(fix.as_str()),
            platform: platform.as_ref(),
        };
        println!("{}", serde_json::to_string(&j)?);
    } else {
        if st.is_fresh() {
            print!("{}", crate::check::render(&st, &out, &fix));
        } else {
            eprint!("{}", crate::check::render(&st, &out, &fix));
        }
        for w in platform.iter().flat_map(|p| &p.warnings) {
            eprintln!("warning: {w}");
        }
    }
    Ok(if st.is_fresh() { EXIT_OK } else { EXIT_STALE })
}

fn memo_path(target: &TargetArgs) -> Result<std::path::PathBuf, Error> {
    let t = target.resolve()?;
    Ok(t.loaded.resolve(&t.loaded.config.cache.path))
}

pub fn clean_cmd(args: &CleanArgs, progress: &Progress) -> Result<u8, Error> {
    let target = args.target.resolve()?;
    remove_output(&target.out_dir, progress)?;
    if args.cache {
        let path = memo_path(&args.target)?;
        let mut removed = false;
        for suffix in ["", "-wal", "-shm"] {
            let p = std::path::PathBuf::from(format!("{}{suffix}", path.display()));
            if p.exists() {
                std::fs::remove_file(&p).map_err(|source| Error::Io {
                    context: "cannot remove",
                    path: p.clone(),
                    source,
                })?;
                removed = true;
            }
        }
        let what = if removed { "Removed" } else { "Clean" };
        progress.status(what, &format!("cache {}", path.display()));
    }
    Ok(EXIT_OK)
}

fn remove_output(out: &Path, progress: &Progress) -> Result<(), Error> {
    if !out.exists() {
        progress.status("Clean", &format!("nothing to remove at {}", out.display()));
        return Ok(());
    }
    crate::output::check_replaceable(out)?;
    // Skill folders written into a shared skills folder go too: only those the lock lists.
    if let Some(lock) = crate::check::read_lock(out)? {
        let layout = crate::output::Layout::of_lock(out, &lock);
        if let Some(dir) = &layout.skills_dir {
            for name in crate::output::skill_names(lock.outputs.keys()) {
                let folder = dir.join(&name);
                if folder.is_dir() {
                    std::fs::remove_dir_all(&folder).map_err(|source| Error::Io {
                        context: "cannot remove",
                        path: folder.clone(),
                        source,
                    })?;
                    progress.status("Removed", &folder.display().to_string());
                }
            }
        }
    }
    std::fs::remove_dir_all(out).map_err(|source| Error::Io {
        context: "cannot remove",
        path: out.to_path_buf(),
        source,
    })?;
    progress.status("Removed", &out.display().to_string());
    Ok(())
}

pub fn cache_cmd(action: &CacheAction, progress: &Progress) -> Result<u8, Error> {
    match action {
        CacheAction::Stats { target, json } => {
            let path = memo_path(target)?;
            if !path.exists() {
                progress.status("Cache", &format!("{} does not exist yet", path.display()));
                if *json {
                    println!(
                        "{{\"path\":{},\"stages\":{{}},\"file_bytes\":0}}",
                        serde_json::to_string(&path.display().to_string())?
                    );
                }
                return Ok(EXIT_OK);
            }
            let memo = Memo::open(&path).map_err(cache_err)?;
            let stats = memo.stats().map_err(cache_err)?;
            let file_bytes: u64 = ["", "-wal"]
                .iter()
                .filter_map(|s| std::fs::metadata(format!("{}{s}", path.display())).ok())
                .map(|m| m.len())
                .sum();
            if *json {
                #[derive(Serialize)]
                struct Json<'a> {
                    path: String,
                    stages: &'a BTreeMap<String, crate::db::cache::StageStats>,
                    file_bytes: u64,
                }
                println!(
                    "{}",
                    serde_json::to_string(&Json {
                        path: path.display().to_string(),
                        stages: &stats,
                        file_bytes
                    })?
                );
            } else {
                println!("{} ({} bytes on disk)", path.display(), file_bytes);
                for (stage, s) in &stats {
                    println!(
                        "  {stage:<10} {:>8} entries {:>12} bytes",
                        s.entries, s.bytes
                    );
                }
            }
            Ok(EXIT_OK)
        }
        CacheAction::Gc { target } => {
            let path = memo_path(target)?;
            if !path.exists() {
                progress.status("Cache", &format!("{} does not exist yet", path.display()));
                return Ok(EXIT_OK);
            }
            let memo = Memo::open(&path).map_err(cache_err)?;
            let removed = crate::db::gc::collect(&memo).map_err(cache_err)?;
            progress.status(
                "Pruned",
                &format!("{removed} unreachable entries from {}", path.display()),
            );
            Ok(EXIT_OK)
        }
    }
}

fn cache_err(e: crate::db::cache::CacheError) -> Error {
    Error::Build(crate::error::BuildError::Cache(e.to_string()))
}

/// Maps an error to the exit code for it.
pub fn exit_code(_e: &Error) -> u8 {
    EXIT_ERROR
}

pub(crate) fn nav_params(
    nav: &crate::cli::NavArgs,
    fallback: bool,
) -> crate::serve::navigator::NavParams {
    crate::serve::navigator::NavParams {
        beam: nav.beam.max(1),
        k: nav.k.max(1),
        fallback,
        fetch: 3,
        row_weight: nav.row_weight.max(0.0),
    }
}

pub fn eval_cmd(args: &crate::cli::EvalArgs, progress: &Progress) -> Result<u8, Error> {
    let cwd = std::env::current_dir().map_err(|source| Error::Io {
        context: "cannot read",
        path: ".".into(),
        source,
    })?;
    let mut loaded = match &args.config {
        Some(f) => {
            let file = cwd.join(f);
            crate::config::Loaded {
                config: crate::config::Config::load(&file)?,
                base_dir: file
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| cwd.clone()),
                path: Some(file),
            }
        }
        None => crate::config::Loaded {
            config: crate::config::Config::default(),
            base_dir: cwd.clone(),
            path: None,
        },
    };
    loaded.config.apply_sets(&args.set)?;
    let data = cwd.join(&args.data);
    for f in ["corpus.jsonl", "queries.jsonl"] {
        if !data.join(f).is_file() {
            return Err(Error::Build(crate::error::BuildError::MissingSource {
                path: data.join(f),
            }));
        }
    }
    let name = data
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "data".into());
    let out_dir = match &args.out {
        Some(o) => cwd.join(o),
        None => loaded
            .resolve(&loaded.config.cache.path)
            .with_file_name("eval")
            .join(&name),
    };
    let methods: Vec<String> = if args.methods.is_empty() {
        crate::eval::METHODS.iter().map(|m| m.to_string()).collect()
    } else {
        args.methods.clone()
    };
    if let Some(bad) = methods
        .iter()
        .find(|m| !crate::eval::ALL_METHODS.contains(&m.as_str()))
    {
        return Err(Error::Config(crate::error::ConfigError::Invalid {
            field: "--methods".into(),
            message: format!(
                "unknown method `{bad}`; choose from {}",
                crate::eval::ALL_METHODS.join(", ")
            ),
        }));
    }
    let backends = crate::build::Backends::from_config(&loaded)?;
    let opts = crate::eval::EvalOptions {
        data,
        loaded,
        out_dir,
        display_base: cwd,
        limit: args.limit,
        methods,
        nav: nav_params(&args.nav, false),
    };
    let report = crate::eval::run(&opts, &backends, progress)?;
    print!("{}", crate::eval::render_table(&report));
    if let Some(path) = &args.json {
        let bytes = serde_json::to_vec_pretty(&report)?;
        std::fs::write(path, bytes).map_err(|source| Error::Io {
            context: "cannot write",
            path: path.clone(),
            source,
        })?;
    }
    Ok(EXIT_OK)
}
