//! The serve-phase commands: `c2s ask` (the LLM agent, or `--offline` the navigator) and
//! `c2s mcp` (the tools over stdio for any MCP client).

use std::path::{Path, PathBuf};

use crate::cmd::EXIT_OK;
use crate::cmd::Error;
use crate::cmd::cli::{AskArgs, McpArgs, TargetArgs};
use crate::config::ConfigError;
use crate::config::{Config, LlmBackendKind, Loaded};
use crate::error::BuildError;
use crate::format::LOCK_FILE;
use crate::progress::Progress;
use crate::serve::ServeError;
use crate::serve::agent::Agent;
use crate::serve::compiled::{Compiled, read_lock};

/// What a serve (or publish) command works on: the output folder, and the configuration (a config file when
/// there is one, else the defaults with `--set` applied: the output alone is enough to serve).
pub(crate) struct ServeTarget {
    pub out: PathBuf,
    pub loaded: Loaded,
}

pub(crate) fn serve_target(args: &TargetArgs) -> Result<ServeTarget, Error> {
    match args.resolve() {
        Ok(t) => Ok(ServeTarget {
            out: t.out_dir,
            loaded: t.loaded,
        }),
        // Serving needs only the output: no config, and no corpus its lock names.
        Err(ConfigError::NotFound { dir } | ConfigError::NoOutput { dir, .. }) => {
            let out = match &args.out {
                Some(o) => dir.join(o),
                None if dir.join("c2s-out").join(LOCK_FILE).is_file() => dir.join("c2s-out"),
                None => {
                    return Err(ServeError::NotOutput {
                        path: dir,
                        why: "there is no c2s.toml here and no --out DIR was given".into(),
                    }
                    .into());
                }
            };
            let mut config = Config::default();
            config.apply_sets(&args.set)?;
            Ok(ServeTarget {
                out,
                loaded: Loaded {
                    config,
                    base_dir: dir,
                    path: None,
                    args: Default::default(),
                },
            })
        }
        Err(e) => Err(e.into()),
    }
}

pub fn ask_cmd(args: &AskArgs, progress: &Progress) -> Result<u8, Error> {
    let target = serve_target(&args.target)?;
    let config = &target.loaded.config;
    let agent_llm = config.agent.llm(&config.llm);
    if !args.offline && agent_llm.backend != LlmBackendKind::Extractive {
        return agent_ask(args, &target.loaded, &target.out, progress);
    }
    let clock = std::time::Instant::now();
    let compiled = Compiled::open(&target.out)?;
    if !args.offline {
        progress.status(
            "Note",
            "no LLM backend is configured ([llm] backend = \"extractive\"); using the offline navigator",
        );
    }
    let qv = query_vector(&compiled, &target.loaded, &target.out, &args.question)?;
    let nav = crate::serve::navigator::Navigator::new(&compiled);
    let r = nav.navigate(
        &args.question,
        &qv,
        &crate::cmd::nav_params(&args.nav, args.fallback),
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
        let sources: Vec<String> = r
            .sources
            .iter()
            .map(|s| format!("`{}` {} ({})", s.id, s.title, s.source))
            .collect();
        println!("\nsources:\n  {}", sources.join("\n  "));
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

/// `c2s ask` with the LLM agent over an existing output: the guided walk for a small local
/// model (or `[agent] protocol = "guided"`), else the free-form agent.
fn agent_ask(
    args: &AskArgs,
    loaded: &Loaded,
    out: &Path,
    progress: &Progress,
) -> Result<u8, Error> {
    require_output(out)?;
    let llm = loaded.config.agent.llm(&loaded.config.llm);
    if loaded.config.agent.guided(&llm) {
        let compiled = Compiled::open(out)?;
        let qv = query_vector(&compiled, loaded, out, &args.question)?;
        let guided = crate::serve::guided::Guided::new(&llm, &loaded.config.agent, &compiled)
            .map_err(ServeError::from)?;
        let r = guided.ask(&args.question, &qv).map_err(ServeError::from)?;
        let system = guided.system_prompt().to_string();
        return show_answer(args, &r, &system, &|id| guided.describe(id), progress);
    }
    let agent = Agent::new(&llm, &loaded.config.agent, out).map_err(ServeError::from)?;
    let r = agent.ask(&args.question).map_err(ServeError::from)?;
    let system = agent.system_prompt(&r.protocol);
    show_answer(args, &r, &system, &|id| agent.describe(id), progress)
}

/// The question's vector from the output's embedder.
fn query_vector(
    compiled: &Compiled,
    loaded: &Loaded,
    out: &Path,
    question: &str,
) -> Result<Vec<f32>, Error> {
    let embedder = compiled.query_embedder(Some(loaded))?;
    let v = embedder
        .embed(&[question])
        .map_err(|e| ServeError::Embedder {
            out: out.to_path_buf(),
            message: e.to_string(),
            help: "check the embedder settings recorded in c2s.lock".into(),
        })?
        .remove(0);
    Ok(v)
}

/// Prints an agent's answer (or JSON), writes the trace with the system prompt it was given,
/// and reports what it cost.
fn show_answer(
    args: &AskArgs,
    r: &crate::serve::agent::AgentAnswer,
    system: &str,
    describe: &dyn Fn(&str) -> Option<(String, String)>,
    progress: &Progress,
) -> Result<u8, Error> {
    if let Some(path) = &args.trace {
        // The trace also holds what the model was told: the system prompt with the outline.
        let mut v = serde_json::to_value(r)?;
        v["system"] = serde_json::Value::String(system.to_string());
        let json = serde_json::to_string_pretty(&v)?;
        std::fs::write(path, json).map_err(|e| BuildError::io("cannot write", path, e))?;
    }
    if args.json {
        println!("{}", serde_json::to_string(r)?);
    } else {
        println!("{}", r.shown());
        let ids: Vec<String> = r
            .cited
            .iter()
            .map(|i| match describe(i) {
                Some((title, source)) => format!("`{i}` {title} ({source})"),
                None => format!("`{i}`"),
            })
            .collect();
        if !ids.is_empty() {
            let how = if r.attributed {
                " (the answer cited none; these opened documents hold what it says)"
            } else {
                ""
            };
            println!("\nsources{how}:\n  {}", ids.join("\n  "));
        }
    }
    let cost = r
        .cost
        .map_or_else(String::new, |c| format!(", cost {c:.4}"));
    progress.status(
        "Agent",
        &format!(
            "{} turns ({}, {} protocol), {} input + {} output tokens{cost}, {} documents opened, {:.2}s",
            r.turns,
            r.stopped,
            r.protocol,
            r.input_tokens,
            r.output_tokens,
            r.fetched.len(),
            r.seconds
        ),
    );
    Ok(EXIT_OK)
}

fn require_output(out: &Path) -> Result<(), Error> {
    read_lock(out)?;
    Ok(())
}

/// `c2s mcp`: serves the output's tools and skills over stdio until the client disconnects, or
/// over HTTP (`--http`) until SIGTERM or Ctrl-C.
pub fn mcp_cmd(args: &McpArgs) -> Result<u8, Error> {
    let target = serve_target(&args.target)?;
    require_output(&target.out)?;
    match &args.http {
        Some(addr) => crate::serve::http::serve(&target.out, addr, &target.loaded.config.serve)?,
        None => crate::serve::mcp::serve(&target.out)?,
    }
    Ok(EXIT_OK)
}
