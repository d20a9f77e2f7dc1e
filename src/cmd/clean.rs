//! `c2s clean`: remove the output (only a c2s output) and, with `--cache`, the memo and the
//! output's records beside it (its journal's files, `db::journal`).

use std::path::Path;

use crate::cmd::EXIT_OK;
use crate::cmd::Error;
use crate::cmd::cli::CleanArgs;
use crate::progress::Progress;

pub fn clean_cmd(args: &CleanArgs, progress: &Progress) -> Result<u8, Error> {
    // Resolved first: with `--out DIR` alone, the output's lock says where the memo is.
    let (out_dir, path) = match args.target.resolve() {
        Ok(target) => (target.out_dir.clone(), target.loaded.memo_path()),
        Err(e) => match gone_output(args, &e) {
            Some(found) => found,
            None => return Err(e.into()),
        },
    };
    let journal = crate::db::journal::Journal::open(&out_dir, &path);
    remove_output(&out_dir, progress)?;
    if args.cache {
        let mut removed = false;
        let memo = ["", "-wal", "-shm"]
            .map(|suffix| std::path::PathBuf::from(format!("{}{suffix}", path.display())));
        for p in memo {
            if p.exists() {
                std::fs::remove_file(&p).map_err(|source| Error::Io {
                    context: "cannot remove",
                    path: p.clone(),
                    source,
                })?;
                removed = true;
            }
        }
        removed |= journal.remove_files().map_err(|(path, source)| Error::Io {
            context: "cannot remove",
            path,
            source,
        })?;
        let what = if removed { "Removed" } else { "Clean" };
        progress.status(what, &format!("cache {}", path.display()));
    }
    Ok(EXIT_OK)
}

/// With `--out DIR --cache` naming a folder that is gone (an earlier `c2s clean --out DIR`) and
/// no config: the output and the memo where a build without a config keeps it, beside the
/// output (`DIR/../cache/`), when it is there, so that `--cache` still removes it.
fn gone_output(
    args: &CleanArgs,
    e: &crate::config::ConfigError,
) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let crate::config::ConfigError::NoOutput { dir, .. } = e else {
        return None;
    };
    let out = dir.join(args.target.out.as_ref()?);
    if out.exists() {
        return None;
    }
    let beside = out.parent().map(Path::to_path_buf).unwrap_or_default();
    let memo = crate::config::Loaded::defaults(beside).memo_path();
    // Nothing there either: a mistyped folder, which the error names.
    (args.cache && memo.exists()).then_some((out, memo))
}

fn remove_output(out: &Path, progress: &Progress) -> Result<(), Error> {
    if !out.exists() {
        progress.status("Clean", &format!("nothing to remove at {}", out.display()));
        return Ok(());
    }
    crate::pipeline::output::check_replaceable(out)?;
    // Skill folders written into a shared skills folder go too: only those the lock lists.
    if let Some(lock) = crate::pipeline::freshness::read_lock(out)? {
        let layout = crate::format::Layout::of_lock(out, &lock);
        if let Some(dir) = &layout.skills_dir {
            for name in crate::format::skill_names(lock.outputs.keys()) {
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
