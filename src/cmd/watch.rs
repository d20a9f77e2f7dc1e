//! `c2s watch`: a debounced file watcher that runs one incremental build per burst of changes,
//! reloads the config when it changes, logs failed builds and goes on, and stops on Ctrl-C.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use notify_debouncer_full::notify::event::ModifyKind;
use notify_debouncer_full::notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, new_debouncer};

use crate::cmd::Error;
use crate::cmd::cli::{Target, WatchArgs};
use crate::ingest::graph::Graph;
use crate::paths::abs;
use crate::pipeline::build::build_with;
use crate::pipeline::options::BuildOptions;
use crate::progress::Progress;

enum Msg {
    Fs(DebounceEventResult),
    Stop,
}

/// Paths that never trigger a rebuild: the output, the memo and the records beside it, our
/// temporary folders, editor files.
pub fn is_ignored(path: &Path, out: &Path, cache: &Path) -> bool {
    if path.starts_with(out) || is_memo_file(path, cache) {
        return true;
    }
    if path
        .components()
        .any(|c| c.as_os_str().to_string_lossy().contains(".c2s-"))
    {
        return true;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.ends_with('~')
        || name.ends_with(".swp")
        || name.ends_with(".swx")
        || name.ends_with(".tmp")
        || name.starts_with(".#")
        || (name.starts_with('#') && name.ends_with('#'))
        || name == "4913"
}

/// Whether `path` is the memo at `cache` (or its `-wal`, `-shm`), or a record the journal keeps
/// beside it (`<kind>-<16 hex>.<ext>`, `edits-<16 hex>/…`). Only those: a memo kept in the
/// project's root (`[cache] path = "memo.sqlite"`) must not hide the sources beside it.
fn is_memo_file(path: &Path, cache: &Path) -> bool {
    let (Some(dir), Some(memo)) = (cache.parent(), cache.file_name()) else {
        return false;
    };
    let Some(first) = path
        .strip_prefix(dir)
        .ok()
        .and_then(|rel| rel.components().next())
    else {
        return false;
    };
    let name = first.as_os_str().to_string_lossy();
    if name.starts_with(&*memo.to_string_lossy()) {
        return true;
    }
    let stem = name.split('.').next().unwrap_or("");
    stem.rsplit_once('-').is_some_and(|(kind, id)| {
        !kind.is_empty() && id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// What to watch for one target: corpus paths (recursive) and the config file's folder.
fn watch_list(target: &Target) -> Vec<(PathBuf, RecursiveMode)> {
    let cfg = &target.loaded.config;
    let mut list: Vec<(PathBuf, RecursiveMode)> = cfg
        .corpus
        .paths
        .iter()
        .map(|p| (abs(&target.loaded.resolve(p)), RecursiveMode::Recursive))
        .collect();
    if let Some(dir) = target.loaded.path.as_ref().and_then(|p| p.parent()) {
        list.push((abs(dir), RecursiveMode::NonRecursive));
    }
    list
}

fn run_build(target: &Target, progress: &Progress, graph: &mut Graph) {
    let opts = BuildOptions::new(
        target.loaded.clone(),
        target.out_dir.clone(),
        target.display_base.clone(),
    );
    match build_with(&opts, progress, graph) {
        Ok(r) => progress.status(
            "Built",
            &format!(
                "{} documents → {} skills in {:.2}s ({} files written)",
                r.documents, r.skills, r.seconds, r.files.written
            ),
        ),
        Err(e) => eprintln!("error: {e}\n  (watching goes on; fix the problem and save again)"),
    }
}

pub fn watch_cmd(args: &WatchArgs, progress: &Progress) -> Result<u8, Error> {
    let mut target = args.target.resolve()?;
    let (tx, rx) = mpsc::channel::<Msg>();
    let stop = tx.clone();
    ctrlc::set_handler(move || {
        let _ = stop.send(Msg::Stop);
    })
    .map_err(|e| watch_err(&target.display_base, e.to_string()))?;
    let fs_tx = tx.clone();
    let mut debouncer = new_debouncer(Duration::from_millis(args.debounce_ms), None, move |res| {
        let _ = fs_tx.send(Msg::Fs(res));
    })
    .map_err(|e| watch_err(&target.display_base, e.to_string()))?;
    let mut watched = watch_list(&target);
    for (p, mode) in &watched {
        debouncer
            .watch(p, *mode)
            .map_err(|e| watch_err(p, e.to_string()))?;
    }
    let mut graph = Graph::default();
    run_build(&target, progress, &mut graph);
    // The server follows the output on its own; it needs a first build to serve.
    let server = match &args.serve {
        Some(addr) => Some(crate::serve::http::start(
            &target.out_dir,
            addr,
            &target.loaded.config.serve,
        )?),
        None => None,
    };
    progress.status(
        "Watching",
        &format!("{} (Ctrl-C to stop)", describe(&watched)),
    );
    while let Ok(msg) = rx.recv() {
        let events = match msg {
            Msg::Stop => break,
            Msg::Fs(Err(errors)) => {
                for e in errors {
                    progress.warning(&format!("file watcher: {e}"));
                }
                continue;
            }
            Msg::Fs(Ok(events)) => events,
        };
        let out = abs(&target.out_dir);
        let cache = abs(&target.loaded.memo_path());
        let config_file = target.loaded.path.as_ref().map(|p| abs(p));
        let relevant: Vec<PathBuf> = events
            .iter()
            .filter(|e| changes_content(&e.event.kind))
            .flat_map(|e| e.paths.iter().cloned())
            .filter(|p| !is_ignored(p, &out, &cache))
            .collect();
        if relevant.is_empty() {
            continue;
        }
        if config_file.as_ref().is_some_and(|c| relevant.contains(c)) {
            match args.target.resolve() {
                Ok(t) => {
                    progress.status("Reloaded", "configuration");
                    target = t;
                    for (p, _) in &watched {
                        let _ = debouncer.unwatch(p);
                    }
                    watched = watch_list(&target);
                    for (p, mode) in &watched {
                        if let Err(e) = debouncer.watch(p, *mode) {
                            progress.warning(&format!("cannot watch {}: {e}", p.display()));
                        }
                    }
                }
                Err(e) => {
                    progress.error(&format!("{e}\n  (keeping the previous configuration)"));
                    continue;
                }
            }
        } else if !relevant.iter().any(|p| {
            watched
                .iter()
                .any(|(w, m)| *m == RecursiveMode::Recursive && p.starts_with(w))
        }) {
            continue;
        }
        let base = abs(&target.display_base);
        progress.status("Changed", &changed_line(&relevant, &base));
        run_build(&target, progress, &mut graph);
    }
    if let Some(server) = server {
        server.stop();
    }
    progress.status("Stopped", "watching");
    Ok(crate::cmd::EXIT_OK)
}

/// Creations, removals, renames and writes; not reads (a build reads every source, and
/// reacting to that would rebuild forever) nor access-time updates.
fn changes_content(kind: &EventKind) -> bool {
    match kind {
        EventKind::Create(_) | EventKind::Remove(_) => true,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        EventKind::Access(_) | EventKind::Any | EventKind::Other => false,
    }
}

/// The files a burst of changes touched, each once, relative to the project root as a build
/// names them: `docs/a.md, docs/b.md`, or the first three `and N more`.
fn changed_line(paths: &[PathBuf], base: &Path) -> String {
    let mut seen = std::collections::HashSet::new();
    let shown: Vec<String> = paths
        .iter()
        .filter(|p| seen.insert(*p))
        .map(|p| p.strip_prefix(base).unwrap_or(p).display().to_string())
        .collect();
    const SHOWN: usize = 3;
    let mut line = shown
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if shown.len() > SHOWN {
        line.push_str(&format!(" and {} more", shown.len() - SHOWN));
    }
    line
}

fn describe(list: &[(PathBuf, RecursiveMode)]) -> String {
    list.iter()
        .map(|(p, _)| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn watch_err(path: &Path, message: String) -> Error {
    Error::Io {
        context: "cannot watch",
        path: path.to_path_buf(),
        source: std::io::Error::other(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignores_output_cache_and_editor_files() {
        let out = Path::new("/p/out");
        let cache = Path::new("/p/cache/c2s.sqlite");
        assert!(is_ignored(Path::new("/p/out/skills/x.md"), out, cache));
        assert!(is_ignored(Path::new("/p/cache/c2s.sqlite-wal"), out, cache));
        assert!(is_ignored(Path::new("/p/docs/a.md~"), out, cache));
        assert!(is_ignored(Path::new("/p/docs/.a.md.swp"), out, cache));
        assert!(is_ignored(Path::new("/p/docs/4913"), out, cache));
        assert!(is_ignored(Path::new("/p/.out.c2s-tmp/x"), out, cache));
        assert!(!is_ignored(Path::new("/p/docs/a.md"), out, cache));
        assert!(is_ignored(
            Path::new("/p/cache/stat-0123456789abcdef.bin"),
            out,
            cache
        ));
        assert!(is_ignored(
            Path::new("/p/cache/edits-0123456789abcdef/a.md"),
            out,
            cache
        ));
        // A memo in the project's root hides only itself and its records.
        let cache = Path::new("/p/memo.sqlite");
        assert!(is_ignored(Path::new("/p/memo.sqlite-wal"), out, cache));
        assert!(is_ignored(
            Path::new("/p/build-0123456789abcdef.lock"),
            out,
            cache
        ));
        assert!(!is_ignored(Path::new("/p/docs/a.md"), out, cache));
        assert!(!is_ignored(Path::new("/p/README.md"), out, cache));
    }

    #[test]
    fn a_burst_names_each_changed_file_once_relative_to_the_root() {
        let base = Path::new("/p");
        let paths: Vec<PathBuf> = ["/p/docs/a.md", "/p/docs/b.md", "/p/docs/a.md"]
            .into_iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(changed_line(&paths, base), "docs/a.md, docs/b.md");
        let many: Vec<PathBuf> = (0..5)
            .map(|i| PathBuf::from(format!("/p/{i}.md")))
            .collect();
        assert_eq!(changed_line(&many, base), "0.md, 1.md, 2.md and 2 more");
        assert_eq!(changed_line(&[PathBuf::from("/q/x.md")], base), "/q/x.md");
    }
}
