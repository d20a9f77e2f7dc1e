//! `c2s pack`: the top-level skills of an output as upload zips and a static discovery site.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::cmd::EXIT_OK;
use crate::cmd::Error;
use crate::cmd::cli::PackArgs;
use crate::progress::Progress;
use crate::publish::pack::{PackOptions, UPLOAD, WELL_KNOWN, pack};

pub fn pack_cmd(args: &PackArgs, progress: &Progress) -> Result<u8, Error> {
    let target = crate::cmd::serve::serve_target(&args.target)?;
    let dir = args.dir.clone().unwrap_or_else(|| default_dir(&target.out));
    let opts = PackOptions {
        dir: dir.clone(),
        base_url: args.base_url.clone(),
    };
    let packed = pack(&target.out, &opts, progress)?;
    if args.json {
        let skills: Vec<serde_json::Value> = packed
            .iter()
            .map(|p| {
                json!({
                    "name": p.name,
                    "files": p.files,
                    "bytes": p.bytes,
                    "upload": dir.join(UPLOAD).join(format!("{}.zip", p.name)),
                    "archive": dir.join(WELL_KNOWN).join(format!("{}.zip", p.name)),
                    "archive_bytes": p.archive_bytes,
                    "digest": p.digest,
                })
            })
            .collect();
        let index = dir.join(WELL_KNOWN).join("index.json");
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"index": index, "skills": skills}))?
        );
        return Ok(EXIT_OK);
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let shown = dir.strip_prefix(&cwd).unwrap_or(&dir).to_path_buf();
    for p in &packed {
        progress.status(
            "Packed",
            &format!(
                "{} ({} files, {} bytes; {} bytes zipped)",
                p.name, p.files, p.bytes, p.archive_bytes
            ),
        );
    }
    progress.status(
        "Wrote",
        &format!(
            "{} upload zips in {} (upload each to claude.ai, or unzip into .claude/skills for Claude Code)",
            packed.len(),
            shown.join(UPLOAD).display()
        ),
    );
    progress.status(
        "Wrote",
        &format!(
            "{} (serve {} as a static site; each archive's digest is in the index)",
            shown.join(WELL_KNOWN).join("index.json").display(),
            shown.display()
        ),
    );
    Ok(EXIT_OK)
}

/// `OUT-pack` next to the output folder `out` (never inside it, even when `out` is `.`).
fn default_dir(out: &Path) -> PathBuf {
    let out = std::fs::canonicalize(out).unwrap_or_else(|_| out.to_path_buf());
    let name = out
        .file_name()
        .map_or_else(|| "c2s-out".into(), |n| n.to_string_lossy().into_owned());
    out.with_file_name(format!("{name}-pack"))
}
