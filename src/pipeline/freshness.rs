//! `c2s check`: is the committed output fresh? Answered from `c2s.lock` alone: no memo, no
//! network, no LLM; sources and outputs are compared with the manifest, stat first (a file whose
//! stat the cache folder's stat index knows is not read again; `statscan`).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::statscan;
pub use super::statscan::read_lock;
use crate::config::Loaded;
use crate::db::journal::{Journal, Record};
use crate::db::statindex::{OnDisk, Stat, StatIndex, now_ns};
use crate::error::BuildError;
use crate::format::lock::Lock;
use crate::format::{LOCK_FILE, Layout};
use crate::ingest::{Found, IngestOptions, Walk};

/// Everything that makes the output stale.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Staleness {
    /// There is no `c2s.lock` (never built, or the output is gone).
    pub no_lock: bool,
    pub sources_added: Vec<String>,
    pub sources_modified: Vec<String>,
    pub sources_deleted: Vec<String>,
    /// Sources moved without a change to their bytes (a deleted path whose bytes are at an
    /// added one); neither added nor deleted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources_renamed: Vec<Renamed>,
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

/// A source found at a new path with the bytes of one that is gone.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Renamed {
    pub from: String,
    pub to: String,
}

/// Pairs each added path with a deleted one of the same bytes (by name first, so that a moved
/// folder pairs file for file); the pairs leave `added` and `deleted`.
fn pair_renames(
    added: &mut Vec<String>,
    deleted: &mut Vec<String>,
    table: &[crate::db::statindex::Entry],
) -> Vec<Renamed> {
    if added.is_empty() || deleted.is_empty() {
        return Vec::new();
    }
    let entry = |p: &str| {
        table
            .binary_search_by(|e| e.path.as_str().cmp(p))
            .ok()
            .map(|i| &table[i])
    };
    let mut by_hash: std::collections::HashMap<&str, Vec<&String>> = Default::default();
    for d in deleted.iter() {
        if let Some(h) = entry(d).and_then(|e| e.locked.as_deref()) {
            by_hash.entry(h).or_default().push(d);
        }
    }
    let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let mut pairs = Vec::new();
    for a in added.iter() {
        let Some(list) = entry(a)
            .and_then(|e| e.hash.as_deref())
            .and_then(|h| by_hash.get_mut(h))
        else {
            continue;
        };
        let at = list.iter().position(|d| name(d) == name(a)).unwrap_or(0);
        if !list.is_empty() {
            pairs.push(Renamed {
                from: list.remove(at).clone(),
                to: a.clone(),
            });
        }
    }
    let (to, from): (
        std::collections::HashSet<&str>,
        std::collections::HashSet<&str>,
    ) = pairs
        .iter()
        .map(|r| (r.to.as_str(), r.from.as_str()))
        .unzip();
    added.retain(|a| !to.contains(a.as_str()));
    deleted.retain(|d| !from.contains(d.as_str()));
    pairs
}

/// Renames as they are shown: a folder whose files all moved to one new folder is one line
/// (`docs/security → docs/auth (5 files)`), any other rename its own.
pub fn rename_lines(renamed: &[Renamed]) -> Vec<String> {
    let dir = |p: &str| {
        p.rsplit_once('/')
            .map_or(String::new(), |(d, _)| d.to_string())
    };
    let mut folders: std::collections::BTreeMap<(String, String), usize> = Default::default();
    for r in renamed {
        let (a, b) = (dir(&r.from), dir(&r.to));
        let same_name = r.from.rsplit('/').next() == r.to.rsplit('/').next();
        if same_name && a != b {
            *folders.entry((a, b)).or_default() += 1;
        }
    }
    let mut lines = Vec::new();
    let mut shown = std::collections::BTreeSet::new();
    for r in renamed {
        let key = (dir(&r.from), dir(&r.to));
        match folders.get(&key) {
            Some(&n) if n >= 2 => {
                if shown.insert(key.clone()) {
                    lines.push(format!(
                        "{} → {} ({})",
                        key.0,
                        key.1,
                        crate::text::plural(n, "file")
                    ));
                }
            }
            _ => lines.push(format!("{} → {}", r.from, r.to)),
        }
    }
    lines
}

impl Staleness {
    pub fn is_fresh(&self) -> bool {
        *self == Staleness::default()
    }
}

/// What `check` and the up-to-date shortcut learn about an output.
#[derive(Debug)]
pub struct Examined {
    pub staleness: Staleness,
    /// The output's manifest without its `sources` and `outputs`, if it has one.
    pub lock: Option<Lock>,
    /// The output files of the lock that are on disk, with their sizes.
    pub outputs: Vec<(String, u64)>,
    /// How many sources the lock lists.
    pub sources: usize,
    /// Source and output files whose bytes were read (the rest were known by their stat).
    pub hashed: usize,
    /// The output files whose bytes are known now, by their trusted stat (the build's writer
    /// does not read them again).
    pub on_disk: OnDisk,
    /// The stat index's sources as of now: those with a trusted stat are known by it (a build
    /// neither reads nor parses those its parsed-source record holds).
    pub source_index: Vec<crate::db::statindex::Entry>,
    /// The walk of the corpus (the build reuses it), and when it began.
    pub walk: Walk,
    pub taken: i64,
    /// The sources read whole to be hashed, when asked to keep them (a build does not read
    /// them again).
    pub read: crate::ingest::ReadAhead,
}

impl Examined {
    /// The report of the output on disk against the host's limits of `output` (None without a
    /// lock).
    pub fn platform(
        &self,
        output: &crate::config::OutputConfig,
    ) -> Option<crate::format::limits::PlatformReport> {
        self.lock.as_ref()?;
        Some(crate::format::limits::measure(
            self.outputs.iter().map(|(k, n)| (k.as_str(), *n)),
            output.host,
            output.limits(),
            output.documents,
        ))
    }
}

/// Compares the current sources, config and output files with the manifest, stat first: a
/// source or output whose stat the index in the cache folder knows is not read (its recorded
/// hash is compared); the rest are hashed, and the index learns them. With `keep`, the bytes
/// of the sources read whole are kept in [`Examined::read`] (for a build, which parses them).
pub fn examine(
    loaded: &Loaded,
    out: &Path,
    display_base: &Path,
    keep: bool,
) -> Result<Examined, BuildError> {
    let cfg = &loaded.config;
    let opts = IngestOptions::from_config(loaded, out, display_base);
    let taken = now_ns();
    let journal = Journal::open(out, &loaded.memo_path());
    let mut index = StatIndex::read(&journal.path(Record::Stat));
    let lock_before = index.lock.clone();
    // Walked first: a corpus path that does not exist is an error, built or not.
    let walk = crate::ingest::walk(&opts)?;
    let mut found = walk.found();
    found.sort_unstable_by(|a, b| a.display.cmp(b.display));
    let Some(lock) = statscan::lock_header(out, &mut index, taken)? else {
        return Ok(Examined {
            staleness: Staleness {
                no_lock: true,
                ..Staleness::default()
            },
            lock: None,
            outputs: Vec::new(),
            sources: 0,
            hashed: 0,
            on_disk: OnDisk::default(),
            source_index: Vec::new(),
            walk,
            taken,
            read: Default::default(),
        });
    };
    // The files includes read: stat'ed beside the walk's (one that is gone is a deleted source).
    let included: Vec<(&str, PathBuf, Stat)> = lock
        .includes
        .iter()
        .filter(|p| found.binary_search_by(|f| f.display.cmp(p)).is_err())
        .filter_map(|p| {
            let path = display_base.join(p);
            let stat = Stat::of(&std::fs::metadata(&path).ok()?);
            Some((p.as_str(), path, stat))
        })
        .collect();
    found.extend(
        included
            .iter()
            .map(|(p, path, stat)| Found::included(p, path, Ok(*stat))),
    );
    found.sort_unstable_by(|a, b| a.display.cmp(b.display));
    let walked = found
        .iter()
        .map(|f| statscan::Walked {
            path: f.display.to_string(),
            stat: f.stat.as_ref().ok().copied(),
        })
        .collect();
    let ahead = std::sync::Mutex::new(crate::ingest::ReadAhead::default());
    let by_path = |p: &str| {
        let i = found.binary_search_by(|f| f.display.cmp(p)).ok()?;
        Some(found[i].hash(&opts, keep.then_some(&ahead)))
    };
    let mut sources = statscan::refresh(&mut index.sources, walked, by_path, true, taken);
    let outputs = statscan::compare_outputs(out, &lock, &mut index, taken)?;
    let st = Staleness {
        no_lock: false,
        config_changed: lock.config_hash != cfg.hash(&loaded.base_dir),
        skills_dir_changed: {
            let wanted = cfg.output.skills_dir.as_ref().map(|d| loaded.resolve(d));
            Layout::new(out, wanted) != Layout::of_lock(out, &lock)
        },
        version_changed: (lock.c2s_version != env!("CARGO_PKG_VERSION")).then(|| {
            (
                lock.c2s_version.clone(),
                env!("CARGO_PKG_VERSION").to_string(),
            )
        }),
        sources_renamed: pair_renames(&mut sources.added, &mut sources.gone, &index.sources),
        sources_added: sources.added,
        sources_modified: sources.modified,
        sources_deleted: sources.gone,
        outputs_modified: outputs.modified,
        outputs_missing: outputs.gone,
        outputs_unexpected: outputs.added,
    };
    // A lock read again (its stat moved) is recorded too, so the next run does not parse it.
    if sources.changed || outputs.changed || index.lock != lock_before {
        // Only a shortcut for the next run: a cache folder that cannot be written costs time.
        let _ = journal.keep_now(&mut index);
    }
    Ok(Examined {
        staleness: st,
        lock: Some(lock),
        outputs: outputs.sizes,
        sources: sources.locked,
        hashed: sources.hashed + outputs.hashed,
        on_disk: OnDisk::of(index.outputs),
        source_index: index.sources,
        walk,
        taken,
        read: ahead.into_inner().unwrap_or_else(|e| e.into_inner()),
    })
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
    for line in rename_lines(&st.sources_renamed) {
        s.push_str(&format!("  renamed: {line}\n"));
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
