//! The serve-phase commands: `c2s ask` (the LLM agent, or `--offline` the navigator) and
//! `c2s mcp` (the tools over stdio for any MCP client).

use std::path::Path;

use crate::EXIT_OK;
use crate::build::{BuildOptions, build};
use crate::cli::{AskArgs, McpArgs};
use crate::config::{LlmBackendKind, Loaded};
use crate::error::{BuildError, Error};
use crate::progress::Progress;
use crate::serve::agent::Agent;

pub fn ask_cmd(args: &AskArgs, progress: &Progress) -> Result<u8, Error> {
    let target = args.target.resolve()?;
    let agent_llm = target.loaded.config.agent.llm(&target.loaded.config.llm);
    if !args.offline && agent_llm.backend != LlmBackendKind::Extractive {
        return agent_ask(args, &target.loaded, &target.out_dir, progress);
    }
    let quiet = Progress::new(true);
    let opts = BuildOptions {
        loaded: target.loaded.clone(),
        out_dir: target.out_dir,
        display_base: target.display_base,
        full: false,
        dry_run: true,
        keep_artifacts: true,
    };
    let clock = std::time::Instant::now();
    let report = build(&opts, &quiet)?;
    let a = report.artifacts.expect("artifacts were asked for");
    if !args.offline {
        progress.status(
            "Note",
            "no LLM backend is configured ([llm] backend = \"extractive\"); using the offline navigator",
        );
    }
    let backends = crate::build::Backends::from_config(&target.loaded)?;
    let qv = backends
        .embedder
        .embed(&[args.question.as_str()])
        .map_err(|e| crate::error::BuildError::Embed(e.to_string()))?
        .remove(0);
    let nav = crate::serve::navigator::Navigator::new(&a);
    let r = nav.navigate(
        &args.question,
        &qv,
        &crate::commands::nav_params(&args.nav, args.fallback, target.loaded.config.embed.backend),
    );
    if args.json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        println!(
            "{}",
            if r.answer.is_empty() {
                "(no sentence of the fetched documents matches the question)"
            } else {
                &r.answer
            }
        );
        println!(
            "\nsources: {}",
            r.ids
                .iter()
                .take(3)
                .map(|i| format!("`{i}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        println!("path: {}", r.path.join(" → "));
    }
    progress.status(
        "Read",
        &format!(
            "{} navigation bytes, {} document bytes in {:.2}s",
            r.nav_bytes,
            r.doc_bytes,
            clock.elapsed().as_secs_f64()
        ),
    );
    Ok(EXIT_OK)
}

/// `c2s ask` with the LLM agent over an existing output.
fn agent_ask(
    args: &AskArgs,
    loaded: &Loaded,
    out: &Path,
    progress: &Progress,
) -> Result<u8, Error> {
    require_output(out)?;
    let agent = Agent::new(
        &loaded.config.agent.llm(&loaded.config.llm),
        out,
        loaded.config.agent.max_turns,
    )
    .map_err(BuildError::Llm)?;
    let r = agent.ask(&args.question).map_err(BuildError::Llm)?;
    if let Some(path) = &args.trace {
        let json = serde_json::to_string_pretty(&r)?;
        std::fs::write(path, json).map_err(|e| BuildError::io("cannot write", path, e))?;
    }
    if args.json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        println!(
            "{}",
            if r.answer.is_empty() {
                "(no answer)"
            } else {
                &r.answer
            }
        );
        let ids: Vec<String> = r.cited.iter().map(|i| format!("`{i}`")).collect();
        println!(
            "\nsources: {}",
            if ids.is_empty() {
                "(none fetched)".to_string()
            } else {
                ids.join(", ")
            }
        );
    }
    let cost = r
        .cost
        .map_or_else(String::new, |c| format!(", cost {c:.4}"));
    progress.status(
        "Agent",
        &format!(
            "{} turns ({}), {} input + {} output tokens{cost}, {} documents fetched, {:.2}s",
            r.turns,
            r.stopped,
            r.input_tokens,
            r.output_tokens,
            r.fetched.len(),
            r.seconds
        ),
    );
    Ok(EXIT_OK)
}

fn require_output(out: &Path) -> Result<(), Error> {
    if out.join("documents.json").is_file() {
        return Ok(());
    }
    Err(BuildError::io(
        "no compiled output at",
        out,
        std::io::Error::other("run `c2s build` first (or pass --out DIR)"),
    )
    .into())
}

/// `c2s mcp`: serves the output's tools and skills over stdio until the client disconnects.
pub fn mcp_cmd(args: &McpArgs) -> Result<u8, Error> {
    let target = args.target.resolve()?;
    require_output(&target.out_dir)?;
    let stdin = std::io::stdin();
    crate::serve::mcp::serve(&target.out_dir, stdin.lock(), std::io::stdout())
        .map_err(BuildError::Llm)?;
    Ok(EXIT_OK)
}
