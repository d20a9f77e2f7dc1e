//! Command-line interface (clap): commands, flags, and how they pick the config and the output folder.

use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::ConfigError;
use crate::config::Loaded;

/// Compile a folder of documents into a navigable tree of agent skills.
#[derive(Debug, Parser)]
#[command(name = "c2s", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Print only warnings and errors.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more: every warning of a kind (not the first ten) and each step's time.
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Color status lines, warnings and errors: auto (on a terminal, unless NO_COLOR is set),
    /// always, never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
}

/// When to color what c2s prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

impl ColorWhen {
    /// `Some(choice)` when it is forced, `None` for auto.
    pub fn forced(self) -> Option<bool> {
        match self {
            ColorWhen::Auto => None,
            ColorWhen::Always => Some(true),
            ColorWhen::Never => Some(false),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile the corpus into a skill tree (reads ./c2s.toml, or builds PATH directly).
    #[command(
        after_help = "Examples:\n  c2s build                          build what c2s.toml here (or in a parent) says\n  c2s build docs --out skills-out    build a folder without a config\n  c2s build --dry-run --explain      what an edit would recompute, and why"
    )]
    Build(BuildArgs),
    /// Exit 0 when the output is fresh, 1 when stale (and say why), 2 on error. Needs no cache.
    #[command(mut_arg("path", |a| a.help(BUILT_FROM)), mut_arg("skills_dir", |a| a.help(WROTE_SKILLS)))]
    #[command(
        after_help = "Examples:\n  c2s check                          in CI, after checkout: exit 1 when stale\n  c2s check --out skills-out         an output built without a config\n  c2s check --verify-state           also vet the committed build state (pull requests)"
    )]
    Check(CheckArgs),
    /// Rebuild whenever a source or the config changes (Ctrl-C stops).
    #[command(
        after_help = "Example:\n  c2s watch                          rebuild the output of c2s.toml as files change"
    )]
    Watch(WatchArgs),
    /// Remove the output folder (and with --cache the memo).
    #[command(mut_arg("path", |a| a.help(BUILT_FROM)), mut_arg("skills_dir", |a| a.help(WROTE_SKILLS)))]
    #[command(
        after_help = "Examples:\n  c2s clean                          remove the output of c2s.toml\n  c2s clean --out skills-out --cache remove an output and its memo"
    )]
    Clean(CleanArgs),
    /// Answer a question: the LLM agent browses the compiled tree (`--offline`: the navigator).
    #[command(mut_arg("path", |a| a.help(READS_OUTPUT)), mut_arg("skills_dir", |a| a.help(READS_SKILLS)))]
    #[command(
        after_help = "Examples:\n  c2s ask --offline \"How do I rotate a key?\"\n  c2s ask \"How do I rotate a key?\" --out skills-out --trace trace.json"
    )]
    Ask(AskArgs),
    /// Serve the compiled output's tools and skills to MCP clients over stdio, or over HTTP to a
    /// team (`--http ADDR`), following the output as it is rebuilt.
    #[command(mut_arg("path", |a| a.help(READS_OUTPUT)), mut_arg("skills_dir", |a| a.help(READS_SKILLS)))]
    #[command(
        after_help = "Examples:\n  c2s mcp --out skills-out           (the command an MCP client starts)\n  c2s mcp --http 127.0.0.1:8808      one server for a team: http://127.0.0.1:8808/mcp"
    )]
    Mcp(McpArgs),
    /// Measure the navigator against flat retrieval on a benchmark folder (corpus.jsonl + queries.jsonl).
    #[command(
        after_help = "Example:\n  c2s eval --data bench/wixqa-sample --methods navigator,bm25,dense"
    )]
    Eval(EvalArgs),
    /// Upload the top-level skills to the Claude Skills API (only those that changed).
    #[command(mut_arg("path", |a| a.help(READS_OUTPUT)), mut_arg("skills_dir", |a| a.help(READS_SKILLS)))]
    #[command(
        after_help = "Examples:\n  c2s publish --dry-run              what would be sent (no key needed)\n  c2s publish --prune                also delete the skills the output no longer has"
    )]
    Publish(PublishArgs),
    /// Zip each top-level skill for upload (claude.ai, Claude Code) and write a static discovery
    /// site (.well-known/agent-skills/index.json with each archive's sha256 digest).
    #[command(mut_arg("path", |a| a.help(READS_OUTPUT)), mut_arg("skills_dir", |a| a.help(READS_SKILLS)))]
    #[command(
        after_help = "Example:\n  c2s pack --dir site --base-url https://docs.example.com/skills"
    )]
    Pack(PackArgs),
    /// Inspect or prune the memo.
    Cache {
        #[command(subcommand)]
        action: CacheAction,
    },
    /// Write a starter c2s.toml for the docs repo in this folder (finds its site generator).
    #[command(
        after_help = "Examples:\n  c2s init                           in a docs repo's root: finds mkdocs.yml, book.toml, ...\n  c2s init --out docs-skills         name the output folder"
    )]
    Init(InitArgs),
    /// Print a shell completion script to stdout.
    #[command(
        after_help = "Examples:\n  c2s completions bash > ~/.local/share/bash-completion/completions/c2s\n  c2s completions zsh > ~/.zfunc/_c2s\n  c2s completions fish > ~/.config/fish/completions/c2s.fish"
    )]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The docs repo's folder (default: this folder).
    pub dir: Option<PathBuf>,
    /// The output folder the config names (default: c2s-out).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum CacheAction {
    /// Entries and bytes per stage.
    #[command(mut_arg("path", |a| a.help(BUILT_FROM)), mut_arg("skills_dir", |a| a.help(READS_SKILLS)))]
    Stats {
        #[command(flatten)]
        target: TargetArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete entries that no recorded build of an existing output still uses.
    #[command(mut_arg("path", |a| a.help(BUILT_FROM)), mut_arg("skills_dir", |a| a.help(READS_SKILLS)))]
    Gc {
        #[command(flatten)]
        target: TargetArgs,
    },
}

/// Navigator knobs shared by `ask` and `eval`.
#[derive(Debug, Args, Clone, Copy)]
pub struct NavArgs {
    /// Nodes kept per level of the beam search.
    #[arg(long, default_value_t = 4)]
    pub beam: usize,
    /// Documents returned.
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Weight of full-text BM25 against best-passage cosine when ranking documents.
    #[arg(long, value_name = "W", default_value_t = 1.0)]
    pub row_weight: f32,
    /// Weight of cosine similarity against BM25 in routing and ranking [default: 0.25 for the
    /// `hashed` embedder, whose vectors are word counts themselves; 1 for a neural one].
    #[arg(long, value_name = "W")]
    pub dense_weight: Option<f32>,
}

#[derive(Debug, Args)]
pub struct AskArgs {
    /// The question.
    pub question: String,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Use the offline navigator instead of the LLM agent (the default without an LLM backend).
    #[arg(long)]
    pub offline: bool,
    /// Write every turn, tool call, result size and token count as JSON (agent mode; a guided
    /// walk writes each menu and choice).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Fuse a flat search over document rows when routing looks weak.
    #[arg(long)]
    pub fallback: bool,
    #[command(flatten)]
    pub nav: NavArgs,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PublishArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// List what would be created, versioned, left alone or deleted; send nothing (no key needed).
    #[arg(long)]
    pub dry_run: bool,
    /// Delete remote skills that c2s published and the output no longer has.
    #[arg(long)]
    pub prune: bool,
}

#[derive(Debug, Args)]
pub struct PackArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// The pack folder (default: OUT-pack next to the output folder).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Where the archives will be served, for the index's absolute `url`s
    /// (default: relative to the index, e.g. `skill-00-billing.zip`).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Print the packed skills as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Where `--http` and `--serve` listen when given no address: loopback only.
const DEFAULT_HTTP: &str = "127.0.0.1:8808";

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Serve over streamable HTTP at this address (HOST:PORT; alone, 127.0.0.1:8808) instead of
    /// stdio; MCP at /mcp, health at /healthz. Another address than loopback needs
    /// `[serve] token_env`.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = DEFAULT_HTTP)]
    pub http: Option<String>,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Folder with queries.jsonl ({id, question, answer, gold_ids}) and the corpus:
    /// corpus.jsonl, or a folder corpus/ of documents (gold ids may be their paths).
    #[arg(long)]
    pub data: PathBuf,
    /// The corpus to build instead: a folder of documents (a docs repo's docs folder, its
    /// navigation file and includes read as a build reads them) or a JSONL file. Gold ids may
    /// be source paths relative to the folder.
    #[arg(long, value_name = "PATH")]
    pub corpus: Option<PathBuf>,
    /// Config file for the build (default: built-in defaults; corpus.paths is set to DATA).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Override one setting. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Where the tree is built (default: cache/eval/<dataset name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Only the first N queries.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Comma-separated methods: navigator, navigator+fallback, bm25, dense, hybrid (the default set), and the answering methods rag, agentic-search, agent and guided (need an [llm] or [agent] backend).
    #[arg(long, value_delimiter = ',')]
    pub methods: Vec<String>,
    /// Start no question after M minutes; the answers so far are memoized, so the same command
    /// goes on where it stopped. The summary counts the questions each method answered.
    #[arg(long, value_name = "M")]
    pub max_minutes: Option<f64>,
    /// Grade the answering methods with an LLM judge (`[judge]`, else the agent's model):
    /// factuality, context recall and hallucination rate.
    #[arg(long)]
    pub judge: bool,
    #[command(flatten)]
    pub nav: NavArgs,
    /// Write per-query results and the summary as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also vet every result in the committed build state (OUT/state/) as a fresh clone's
    /// build would, without building or calling a model: for CI on pull requests, where the
    /// state and c2s.lock can be changed together.
    #[arg(long)]
    pub verify_state: bool,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Milliseconds of quiet before a burst of changes triggers a rebuild.
    #[arg(long, default_value_t = 300)]
    pub debounce_ms: u64,
    /// Also serve the output over MCP's streamable HTTP at this address (HOST:PORT; alone,
    /// 127.0.0.1:8808), as `c2s mcp --http` does: each rebuild is served as soon as it is written.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = DEFAULT_HTTP)]
    pub serve: Option<String>,
}

#[derive(Debug, Args)]
pub struct CleanArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Also remove the memo (every cached card, embedding and summary).
    #[arg(long)]
    pub cache: bool,
}

// `[PATH]` and `--skills-dir` as the commands that read an output, rather than build one,
// use them.
/// `[PATH]` of a command that works on a built output.
const BUILT_FROM: &str = "The corpus the output was built from, for a build without a config file (default: what the output's c2s.lock says)";
/// `[PATH]` of a command that serves an output.
const READS_OUTPUT: &str = "The corpus, for an output built without a config file (rarely needed: --out DIR alone serves an output)";
/// `--skills-dir` of a command that checks or removes what a build wrote.
const WROTE_SKILLS: &str = "The folder the build wrote the top-level skill folders into, when not OUT/skills (default: output.skills_dir)";
/// `--skills-dir` of a command that reads an output.
const READS_SKILLS: &str =
    "Where the top-level skill folders are, when not in OUT/skills (default: output.skills_dir)";

/// Which corpus, config and output a command works on.
#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// A folder or a single .jsonl/.json file to build without a config file.
    pub path: Option<PathBuf>,
    /// Output folder (default: output.dir from the config, else ./c2s-out).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Config file (default: c2s.toml in this folder or the nearest parent).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Write the top-level skill folders into this folder (shared with other skills, e.g.
    /// `.claude/skills`) instead of OUT/skills (default: output.skills_dir).
    #[arg(long, value_name = "DIR")]
    pub skills_dir: Option<PathBuf>,
    /// Override one setting: `--set tree.p=8`, `--set K=5`. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Print one JSON object with the build figures on stdout.
    #[arg(long)]
    pub json: bool,
    /// Recluster from scratch (unchanged cards, embeddings and summaries still come from the memo).
    #[arg(long)]
    pub full: bool,
    /// Show what would be recomputed, the LLM calls and tokens; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: list every result and which part of its key changed.
    #[arg(long, requires = "dry_run")]
    pub explain: bool,
    /// Ask the model again for the results whose answers an earlier build rejected (their
    /// extractive stand-ins are reused otherwise, with a warning).
    #[arg(long)]
    pub retry_rejected: bool,
    /// Send this build's LLM requests as provider batches (as `[llm] mode = "batch"`).
    #[arg(long)]
    pub batch: bool,
    /// With batches: submit and exit 0 instead of waiting; run `c2s build` again to collect.
    #[arg(long, conflicts_with = "dry_run")]
    pub no_wait: bool,
    /// Write the next step's LLM requests as OpenAI batch files into DIR and stop (for vLLM's
    /// run-batch or another runner of that format).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["dry_run", "finish_interactive"])]
    pub batch_export: Option<PathBuf>,
    /// Read answers from batch output files (OpenAI batch format), then go on.
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with = "dry_run")]
    pub batch_import: Vec<PathBuf>,
    /// Cancel outstanding batches, keep what they finished, and send the rest as ordinary calls.
    #[arg(long, conflicts_with = "dry_run")]
    pub finish_interactive: bool,
}

/// A resolved target: the configuration, the output folder, and the folder paths are shown relative to.
pub struct Target {
    pub loaded: Loaded,
    pub out_dir: PathBuf,
    pub display_base: PathBuf,
}

impl TargetArgs {
    /// The command line that rebuilds this target (for "run this to fix it" hints).
    pub fn build_command(&self) -> String {
        let mut cmd = vec!["c2s build".to_string()];
        if let Some(p) = &self.path {
            cmd.push(p.display().to_string());
        }
        if let Some(o) = &self.out {
            cmd.push(format!("--out {}", o.display()));
        }
        if let Some(d) = &self.skills_dir {
            cmd.push(format!("--skills-dir {}", d.display()));
        }
        if let Some(c) = &self.config {
            cmd.push(format!("--config {}", c.display()));
        }
        for s in &self.set {
            cmd.push(format!("--set {s}"));
        }
        cmd.join(" ")
    }

    /// Finds what to build: `--config FILE`; else no config when PATH is given; else `c2s.toml`
    /// in this folder or the nearest parent that has one (as cargo finds `Cargo.toml`); else,
    /// with `--out DIR`, what that output's lock says it was built from. Then applies PATH,
    /// `--out` and `--set`.
    ///
    /// Recorded paths (sources, ids, the lock) are relative to the project root: the config's
    /// folder, or the corpus folder without a config; so the same build gives the same output
    /// from any working folder.
    /// Why no target is found in `cwd` (which has no c2s.toml): the `--out` given is no
    /// output, or nothing says what to build.
    fn no_output(&self, cwd: PathBuf) -> ConfigError {
        let Some(out) = &self.out else {
            return ConfigError::NotFound { dir: cwd };
        };
        let at = cwd.join(out);
        let why = if !at.exists() {
            "no such folder"
        } else if !at.join(crate::format::LOCK_FILE).exists() {
            "it has no c2s.lock"
        } else {
            "its c2s.lock does not say what it was built from"
        };
        ConfigError::NoOutput {
            out: out.display().to_string(),
            why,
            dir: cwd,
        }
    }

    pub fn resolve(&self) -> Result<Target, ConfigError> {
        let cwd = std::env::current_dir().map_err(|source| ConfigError::Read {
            path: PathBuf::from("."),
            source,
        })?;
        // A PATH that is a built output (it holds a c2s.lock) means that output, as `--out`
        // does: `c2s ask --offline "q" skills-out` reads skills-out, never compiles it.
        if let (Some(p), None) = (&self.path, &self.out)
            && cwd.join(p).join(crate::format::LOCK_FILE).is_file()
        {
            let mut as_out = self.clone();
            as_out.out = as_out.path.take();
            return as_out.resolve();
        }
        let from_lock = || {
            let out = cwd.join(self.out.as_ref()?);
            let lock = crate::pipeline::freshness::read_lock(&out).ok()??;
            Some((out, lock.built_from?))
        };
        let (mut loaded, corpus, mut sets) = match (&self.config, &self.path) {
            (Some(file), _) => (Loaded::from_file(&cwd.join(file))?, None, Vec::new()),
            (None, Some(p)) => (Loaded::defaults(cwd.clone()), Some(cwd.join(p)), Vec::new()),
            // The output's lock is read only when no config is found.
            (None, None) => match find_config(&cwd) {
                Some(file) => (Loaded::from_file(&file)?, None, Vec::new()),
                None => {
                    let Some((out, built)) = from_lock() else {
                        return Err(self.no_output(cwd));
                    };
                    let at = |p: &String| crate::format::lock::normalize_path(&out.join(p));
                    let loaded = match &built.config {
                        Some(c) => Loaded::from_file(&at(c))?,
                        None => Loaded::defaults(cwd.clone()),
                    };
                    (loaded, built.corpus.as_ref().map(at), built.set)
                }
            },
        };
        sets.extend(self.set.iter().cloned());
        loaded.config.apply_sets(&sets)?;
        loaded.args.sets = sets;
        if let Some(d) = &self.skills_dir {
            loaded.config.output.skills_dir = Some(cwd.join(d));
        }
        let out_dir = match (&self.out, &corpus) {
            (Some(o), _) => cwd.join(o),
            (None, Some(_)) => cwd.join(&loaded.config.output.dir),
            (None, None) => loaded.resolve(&loaded.config.output.dir),
        };
        let display_base = match &corpus {
            Some(p) => {
                loaded.config.corpus.paths = vec![p.clone()];
                // Without a config the memo sits beside the output, wherever the command runs.
                if let Some(parent) = out_dir.parent() {
                    loaded.base_dir = parent.to_path_buf();
                }
                loaded.args.corpus = Some(p.clone());
                if p.is_dir() {
                    p.clone()
                } else {
                    p.parent().map_or_else(|| cwd.clone(), Path::to_path_buf)
                }
            }
            None => crate::format::lock::normalize_path(&loaded.base_dir),
        };
        Ok(Target {
            loaded,
            out_dir,
            display_base,
        })
    }
}

/// `c2s.toml` in `dir` or the nearest parent folder that has one.
fn find_config(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|d| d.join("c2s.toml"))
        .find(|f| f.is_file())
}
