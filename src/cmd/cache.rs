//! `c2s cache stats` and `c2s cache gc`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::memo_path;
use crate::cmd::EXIT_OK;
use crate::cmd::Error;
use crate::cmd::cli::CacheAction;
use crate::db::cache::Memo;
use crate::progress::Progress;

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
            let removed = crate::pipeline::gc::collect(&memo).map_err(cache_err)?;
            progress.status(
                "Pruned",
                &format!("{removed} unreachable entries from {}", path.display()),
            );
            Ok(EXIT_OK)
        }
    }
}

fn cache_err(e: crate::db::cache::CacheError) -> Error {
    Error::Build(crate::error::BuildError::Cache(e))
}
