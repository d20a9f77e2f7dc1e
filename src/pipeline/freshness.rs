//! `c2s check`: is the committed output fresh? Answered from `c2s.lock` alone: no cache, no
//! network, no LLM; sources and outputs are hashed and compared with the manifest.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::config::Loaded;
use crate::error::BuildError;
use crate::format::lock::{Lock, file_hash};
use crate::format::{LOCK_FILE, Layout, skill_names};
use crate::ingest::{IngestOptions, scan_sources};

/// Everything that makes the output stale.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Staleness {
    /// There is no `c2s.lock` (never built, or the output is gone).
    pub no_lock: bool,
    pub sources_added: Vec<String>,
    pub sources_modified: Vec<String>,
    pub sources_deleted: Vec<String>,
    /// Output files whose contents differ from the manifest (edited by hand).
    pub outputs_modified: Vec<String>,
    pub outputs_missing: Vec<String>,
    /// Files in the output that the build did not write.
    pub outputs_unexpected: Vec<String>,
    pub config_changed: bool,
    /// The skills folder of the config differs from the one the output was written to.
    pub skills_dir_changed: bool,
    /// (built by, running) when the c2s versions differ.
    pub version_changed: Option<(String, String)>,
}

impl Staleness {
    pub fn is_fresh(&self) -> bool {
        *self == Staleness::default()
    }
}

/// Reads the manifest of `out`, if any.
pub fn read_lock(out: &Path) -> Result<Option<Lock>, BuildError> {
    let path = out.join(LOCK_FILE);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            BuildError::io(
                "cannot parse",
                &path,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{e}; rebuild to replace it"),
                ),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(BuildError::io("cannot read", &path, e)),
    }
}

/// Compares the current sources, config and output files with the manifest.
pub fn staleness(
    loaded: &Loaded,
    out: &Path,
    display_base: &Path,
) -> Result<Staleness, BuildError> {
    let cfg = &loaded.config;
    let opts = IngestOptions::from_config(loaded, out, display_base);
    let mut st = Staleness::default();
    let now: BTreeMap<String, String> = scan_sources(&opts)?
        .into_iter()
        .map(|s| (s.path, s.hash))
        .collect();
    let Some(lock) = read_lock(out)? else {
        return Ok(Staleness {
            no_lock: true,
            ..Staleness::default()
        });
    };
    diff(
        &lock.sources,
        &now,
        &mut st.sources_added,
        &mut st.sources_modified,
        &mut st.sources_deleted,
    );
    let layout = Layout::of_lock(out, &lock);
    let on_disk: BTreeSet<String> = layout
        .files_on_disk(&skill_names(lock.outputs.keys()))?
        .into_iter()
        .filter(|f| f != LOCK_FILE && f != crate::format::PUBLISH_FILE)
        .collect();
    for (path, hash) in &lock.outputs {
        match std::fs::read(layout.path(path)) {
            Ok(bytes) if &file_hash(&bytes) == hash => {}
            Ok(_) => st.outputs_modified.push(path.clone()),
            Err(_) => st.outputs_missing.push(path.clone()),
        }
    }
    st.outputs_unexpected = on_disk
        .into_iter()
        .filter(|f| !lock.outputs.contains_key(f))
        .collect();
    st.config_changed = lock.config_hash != cfg.hash(&loaded.base_dir);
    let wanted = cfg.output.skills_dir.as_ref().map(|d| loaded.resolve(d));
    st.skills_dir_changed = Layout::new(out, wanted) != layout;
    let running = env!("CARGO_PKG_VERSION");
    if lock.c2s_version != running {
        st.version_changed = Some((lock.c2s_version.clone(), running.to_string()));
    }
    Ok(st)
}

fn diff(
    old: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
    added: &mut Vec<String>,
    modified: &mut Vec<String>,
    deleted: &mut Vec<String>,
) {
    for (p, h) in new {
        match old.get(p) {
            None => added.push(p.clone()),
            Some(o) if o != h => modified.push(p.clone()),
            _ => {}
        }
    }
    deleted.extend(old.keys().filter(|p| !new.contains_key(*p)).cloned());
}

/// The human-readable report: one line per finding, then the fix.
pub fn render(st: &Staleness, out: &str, fix: &str) -> String {
    if st.is_fresh() {
        return format!("{out} is up to date\n");
    }
    let mut s = format!("{out} is stale:\n");
    if st.no_lock {
        s.push_str(&format!(
            "  no {LOCK_FILE} in {out}: it was never built (or was removed)\n"
        ));
    }
    let groups: [(&str, &Vec<String>); 6] = [
        ("added source", &st.sources_added),
        ("modified source", &st.sources_modified),
        ("deleted source", &st.sources_deleted),
        ("hand-edited output", &st.outputs_modified),
        ("missing output", &st.outputs_missing),
        ("unexpected output", &st.outputs_unexpected),
    ];
    for (what, list) in groups {
        for p in list {
            s.push_str(&format!("  {what}: {p}\n"));
        }
    }
    if st.config_changed {
        s.push_str("  configuration changed since the last build\n");
    }
    if st.skills_dir_changed {
        s.push_str("  the skills folder (output.skills_dir) changed since the last build\n");
    }
    if let Some((built, running)) = &st.version_changed {
        s.push_str(&format!("  built by c2s {built}, this is c2s {running}\n"));
    }
    s.push_str(&format!("help: run `{fix}` and commit the result\n"));
    s
}

/// The platform limits report of a built output, from its files on disk.
pub fn platform(out: &Path, lock: &Lock) -> crate::format::limits::PlatformReport {
    let layout = Layout::of_lock(out, lock);
    let sizes: Vec<(&str, u64)> = lock
        .outputs
        .keys()
        .map(|k| {
            let len = std::fs::metadata(layout.path(k)).map_or(0, |m| m.len());
            (k.as_str(), len)
        })
        .collect();
    crate::format::limits::measure(sizes)
}
