//! `c2s eval`: build a benchmark set's tree and score every method on its queries.

use super::nav_params;
use crate::cmd::EXIT_OK;
use crate::cmd::Error;
use crate::progress::Progress;

pub fn eval_cmd(args: &crate::cmd::cli::EvalArgs, progress: &Progress) -> Result<u8, Error> {
    let cwd = std::env::current_dir().map_err(|source| Error::Io {
        context: "cannot read",
        path: ".".into(),
        source,
    })?;
    let mut loaded = match &args.config {
        Some(f) => crate::config::Loaded::from_file(&cwd.join(f))?,
        None => crate::config::Loaded::defaults(cwd.clone()),
    };
    loaded.config.apply_sets(&args.set)?;
    let data = cwd.join(&args.data);
    let corpus = match &args.corpus {
        Some(c) => cwd.join(c),
        None if data.join("corpus").is_dir() => data.join("corpus"),
        None => data.join("corpus.jsonl"),
    };
    for path in [corpus.clone(), data.join("queries.jsonl")] {
        if !path.exists() {
            return Err(Error::Build(crate::error::BuildError::MissingSource {
                path,
            }));
        }
    }
    let name = data
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "data".into());
    let out_dir = match &args.out {
        Some(o) => cwd.join(o),
        None => loaded.memo_path().with_file_name("eval").join(&name),
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
        return Err(Error::Config(crate::config::ConfigError::Invalid {
            field: "--methods".into(),
            message: format!(
                "unknown method `{bad}`; choose from {}",
                crate::eval::ALL_METHODS.join(", ")
            ),
        }));
    }
    if let Some(m) = args.max_minutes.filter(|m| !(m.is_finite() && *m > 0.0)) {
        return Err(Error::Config(crate::config::ConfigError::Invalid {
            field: "--max-minutes".into(),
            message: format!("{m} is not a number of minutes above 0 (e.g. --max-minutes 45)"),
        }));
    }
    let backends = crate::pipeline::backends::Backends::from_config(&loaded)?;
    let opts = crate::eval::EvalOptions {
        data,
        corpus,
        loaded,
        out_dir,
        display_base: cwd,
        limit: args.limit,
        methods,
        nav: nav_params(&args.nav, false),
        judge: args.judge,
        max_minutes: args.max_minutes,
    };
    let report = crate::eval::run(&opts, &backends, progress)?;
    let llm = super::build::llm_lines(&report.build_llm_usage);
    if !llm.is_empty() {
        progress.status("Built", llm.trim_start());
    }
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
