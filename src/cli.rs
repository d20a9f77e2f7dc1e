//! Command-line interface (clap): commands, flags, and how they pick the config and the output folder.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::{Config, Loaded};
use crate::error::ConfigError;

/// Compile a folder of documents into a navigable tree of agent skills.
#[derive(Debug, Parser)]
#[command(name = "c2s", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Print only warnings and errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile the corpus into a skill tree (reads ./c2s.toml, or builds PATH directly).
    Build(BuildArgs),
    /// Remove the output folder.
    Clean(TargetArgs),
}

/// Which corpus, config and output a command works on.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// A folder or a single .jsonl/.json file to build without a config file.
    pub path: Option<PathBuf>,
    /// Output folder (default: output.dir from the config, else ./c2s-out).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Config file (default: ./c2s.toml).
    #[arg(long)]
    pub config: Option<PathBuf>,
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
}

/// A resolved target: the configuration, the output folder, and the folder paths are shown relative to.
pub struct Target {
    pub loaded: Loaded,
    pub out_dir: PathBuf,
    pub display_base: PathBuf,
}

impl TargetArgs {
    /// Finds the config (explicit, ./c2s.toml, or none when PATH is given) and applies PATH, --out and --set.
    pub fn resolve(&self) -> Result<Target, ConfigError> {
        let cwd = std::env::current_dir().map_err(|source| ConfigError::Read {
            path: PathBuf::from("."),
            source,
        })?;
        let mut loaded = match (&self.config, &self.path) {
            (Some(file), _) => load(&cwd.join(file))?,
            (None, Some(_)) => Loaded {
                config: Config::default(),
                base_dir: cwd.clone(),
                path: None,
            },
            (None, None) => {
                let file = cwd.join("c2s.toml");
                if !file.is_file() {
                    return Err(ConfigError::NotFound { dir: cwd });
                }
                load(&file)?
            }
        };
        if let Some(p) = &self.path {
            loaded.config.corpus.paths = vec![cwd.join(p)];
        }
        for s in &self.set {
            loaded.config.apply_set(s)?;
        }
        let out_dir = match &self.out {
            Some(o) => cwd.join(o),
            None => loaded.resolve(&loaded.config.output.dir),
        };
        Ok(Target {
            loaded,
            out_dir,
            display_base: cwd,
        })
    }
}

fn load(file: &std::path::Path) -> Result<Loaded, ConfigError> {
    let config = Config::load(file)?;
    let base_dir = file
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    Ok(Loaded {
        config,
        base_dir,
        path: Some(file.to_path_buf()),
    })
}
