//! Stat-first change detection over an output: the lock's small fields read from the stat index
//! when the lock file's stat is unchanged (its hashes are in the index's entries), files compared
//! by stat before their bytes, and the index recorded after a build (`db::statindex` keeps it).

use std::collections::BTreeMap;
use std::path::Path;

use rayon::prelude::*;

use crate::db::statindex::{Entry, LockStat, Stat, StatIndex, now_ns};
use crate::error::BuildError;
use crate::format::lock::{Lock, file_hash};
use crate::format::{LOCK_FILE, Layout, PUBLISH_FILE, skill_names};
use crate::ingest::SourceFile;

/// The lock of `out` without its maps (None when there is none): from the index when the lock
/// file's stat is the one recorded, else parsed, and its hashes put into the index's entries.
pub fn lock_header(
    out: &Path,
    index: &mut StatIndex,
    taken: i64,
) -> Result<Option<Lock>, BuildError> {
    let path = out.join(LOCK_FILE);
    let stat = match std::fs::metadata(&path) {
        Ok(m) => Stat::of(&m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(BuildError::io("cannot read", &path, e)),
    };
    if let Some(header) = index
        .lock_fields(&stat)
        .and_then(|f| serde_json::from_str::<Lock>(f).ok())
    {
        return Ok(Some(header));
    }
    let Some(lock) = read_lock(out)? else {
        return Ok(None);
    };
    let header = lock.header();
    index.lock = Some(lock_stat(stat, taken, &header));
    index.sources = relock(std::mem::take(&mut index.sources), lock.sources);
    index.outputs = relock(std::mem::take(&mut index.outputs), lock.outputs);
    Ok(Some(header))
}

/// The index's record of a lock file of stat `stat` (taken at `taken`) whose small fields are
/// `header`.
fn lock_stat(stat: Stat, taken: i64, header: &Lock) -> LockStat {
    LockStat {
        stat,
        racy: stat.racy(taken),
        fields: serde_json::to_string(header).expect("lock serializes"),
    }
}

/// `table` with each entry's `locked` hash taken from `map` (both sorted by path); an entry
/// neither on disk nor in the lock is dropped.
fn relock(table: Vec<Entry>, map: BTreeMap<String, String>) -> Vec<Entry> {
    let mut out = Vec::with_capacity(table.len().max(map.len()));
    let mut old = table.into_iter().peekable();
    let unlocked = |e: Entry| e.stat.is_some().then_some(Entry { locked: None, ..e });
    for (path, hash) in map {
        while let Some(e) = old.next_if(|e| e.path < path) {
            out.extend(unlocked(e));
        }
        let e = old.next_if(|e| e.path == path).unwrap_or(Entry {
            path,
            ..Entry::default()
        });
        out.push(Entry {
            locked: Some(hash),
            ..e
        });
    }
    out.extend(old.filter_map(unlocked));
    out
}

/// A file as the walk found it: its path and stat (None when it could not be stat'ed).
pub struct Walked {
    pub path: String,
    pub stat: Option<Stat>,
}

/// What a refresh found, against the lock's hashes.
#[derive(Debug, Default)]
pub struct Delta {
    /// On disk, not in the lock.
    pub added: Vec<String>,
    /// On disk with other bytes than the lock's.
    pub modified: Vec<String>,
    /// In the lock, not on disk (or unreadable).
    pub gone: Vec<String>,
    /// The size of each file of the lock that is on disk.
    pub sizes: Vec<(String, u64)>,
    /// Files the lock lists.
    pub locked: usize,
    /// Files whose bytes were read.
    pub hashed: usize,
    /// Whether the table changed.
    pub changed: bool,
}

/// Merges what the walk found (`walked`, sorted by path) into `table`: a file whose stat the
/// table knows keeps its hash; the others are hashed with `hash_of` (in parallel), except new
/// files when `hash_new` is false (they are only reported).
pub fn refresh(
    table: &mut Vec<Entry>,
    walked: Vec<Walked>,
    hash_of: impl Fn(&str) -> Option<String> + Sync,
    hash_new: bool,
    taken: i64,
) -> Delta {
    let mut d = Delta::default();
    let mut out: Vec<Entry> = Vec::with_capacity(walked.len());
    // Whether each entry of `out` was found by the walk.
    let mut present: Vec<bool> = Vec::with_capacity(walked.len());
    let mut need: Vec<usize> = Vec::new();
    let mut old = std::mem::take(table).into_iter().peekable();
    // A file of the table that the walk did not find: kept while the lock lists it.
    let absent = |e: Entry, out: &mut Vec<Entry>, present: &mut Vec<bool>| {
        let changed = e.stat.is_some() || e.locked.is_none();
        if e.locked.is_some() {
            out.push(Entry {
                stat: None,
                hash: None,
                ..e
            });
            present.push(false);
        }
        changed
    };
    for w in walked {
        while let Some(e) = old.next_if(|e| e.path < w.path) {
            d.changed |= absent(e, &mut out, &mut present);
        }
        let prev = old.next_if(|e| e.path == w.path);
        present.push(true);
        if let (Some(e), Some(s)) = (&prev, &w.stat)
            && e.known(s).is_some()
        {
            out.push(prev.expect("matched"));
            continue;
        }
        d.changed = true;
        let locked = prev.and_then(|e| e.locked);
        if hash_new || locked.is_some() {
            need.push(out.len());
        }
        out.push(Entry {
            path: w.path,
            stat: w.stat.map(|s| (s, s.racy(taken))),
            hash: None,
            locked,
        });
    }
    for e in old {
        d.changed |= absent(e, &mut out, &mut present);
    }
    let hashes: Vec<Option<String>> = need.par_iter().map(|&k| hash_of(&out[k].path)).collect();
    d.hashed = need.len();
    for (k, h) in need.into_iter().zip(hashes) {
        out[k].hash = h;
    }
    for (e, &here) in out.iter().zip(&present) {
        match (&e.locked, here) {
            (None, true) => d.added.push(e.path.clone()),
            (Some(_), false) => d.gone.push(e.path.clone()),
            (Some(l), true) => match &e.hash {
                None => d.gone.push(e.path.clone()),
                Some(h) => {
                    if h != l {
                        d.modified.push(e.path.clone());
                    }
                    let size = e.stat.map_or(0, |(s, _)| s.size);
                    d.sizes.push((e.path.clone(), size));
                }
            },
            (None, false) => {}
        }
        d.locked += e.locked.is_some() as usize;
    }
    // A file found without a stat and not in the lock is reported, not kept.
    out.retain(|e| e.stat.is_some() || e.locked.is_some());
    *table = out;
    d
}

/// The output files on disk under `layout` (the skill folders of `skills` included), sorted,
/// with their stats, and the lock file's stat; the publish manifest is not an output.
fn stat_outputs<'a>(
    layout: &Layout,
    skills: impl IntoIterator<Item = &'a String>,
) -> Result<(Option<Stat>, Vec<Walked>), BuildError> {
    let mut lock = None;
    let mut files = Vec::new();
    for (path, stat) in layout.stat_files_on_disk(&skill_names(skills))? {
        match path.as_str() {
            LOCK_FILE => lock = Some(stat),
            PUBLISH_FILE => {}
            _ => files.push(Walked {
                path,
                stat: Some(stat),
            }),
        }
    }
    Ok((lock, files))
}

/// Compares the output files on disk with the lock's hashes (stat first).
pub fn compare_outputs(
    out: &Path,
    header: &Lock,
    index: &mut StatIndex,
    taken: i64,
) -> Result<Delta, BuildError> {
    let layout = Layout::of_lock(out, header);
    let locked = index.outputs.iter().filter(|e| e.locked.is_some());
    let (_, walked) = stat_outputs(&layout, locked.map(|e| &e.path))?;
    let read = |p: &str| std::fs::read(layout.path(p)).ok().map(|b| file_hash(&b));
    Ok(refresh(&mut index.outputs, walked, read, false, taken))
}

/// The longest [`index_after_build`] waits for the outputs' stats to settle.
const SETTLE_MAX_NS: i64 = 100_000_000;

/// The stat index after a build wrote `lock`'s outputs: the sources (stat'ed at ingest, from
/// `taken` on), then every output file and the lock as they are on disk now.
pub fn index_after_build(
    out: &Path,
    lock: &Lock,
    sources: &[SourceFile],
    taken: i64,
) -> Result<StatIndex, BuildError> {
    let mut index = StatIndex::default();
    let mut sources: Vec<Entry> = sources
        .iter()
        .map(|s| Entry {
            path: s.path.clone(),
            stat: s.stat.map(|st| (st, st.racy(taken))),
            hash: Some(s.hash.clone()),
            locked: Some(s.hash.clone()),
        })
        .collect();
    sources.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    index.sources = sources;
    let layout = Layout::of_lock(out, lock);
    let mut now = now_ns();
    let (mut lock_file, mut files) = stat_outputs(&layout, lock.outputs.keys())?;
    // The writer has just touched the outputs (written some, linked the others back into
    // place: their change time moved): a stat taken now would not be trusted next time, and
    // every touched file would be hashed again (150 MB at 100,000 documents). Waited out (at
    // most the 50 ms margin) and taken again.
    let stats = files.iter().filter_map(|w| w.stat).chain(lock_file);
    if let Some(wait) = stats.filter_map(|s| s.racy_for(now)).max()
        && wait <= SETTLE_MAX_NS
    {
        std::thread::sleep(std::time::Duration::from_nanos(wait as u64 + 1_000_000));
        now = now_ns();
        (lock_file, files) = stat_outputs(&layout, lock.outputs.keys())?;
    }
    index.outputs = files
        .into_iter()
        .filter_map(|w| {
            let (stat, hash) = (w.stat?, lock.outputs.get(&w.path)?.clone());
            Some(Entry {
                stat: Some((stat, stat.racy(now))),
                hash: Some(hash.clone()),
                locked: Some(hash),
                path: w.path,
            })
        })
        .collect();
    index.lock = lock_file.map(|stat| lock_stat(stat, now, &lock.header()));
    Ok(index)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn st(n: i64) -> Stat {
        Stat {
            size: n as u64,
            mtime_ns: n * 1_000_000_000 + 1,
            ctime_ns: n * 1_000_000_000 + 1,
            ino: n as u64,
            dev: 1,
        }
    }

    fn walked(path: &str, n: i64) -> Walked {
        Walked {
            path: path.into(),
            stat: Some(st(n)),
        }
    }

    #[test]
    fn refresh_hashes_only_moved_stats_and_reports_against_the_lock() {
        let taken = 1_000 * 1_000_000_000;
        let lock = BTreeMap::from([
            ("a".to_string(), "ha".to_string()),
            ("b".to_string(), "hb".to_string()),
            ("gone".to_string(), "hg".to_string()),
        ]);
        let mut table = relock(Vec::new(), lock);
        let first = refresh(
            &mut table,
            vec![walked("a", 1), walked("b", 2), walked("new", 3)],
            |p| Some(format!("h{p}")),
            true,
            taken,
        );
        assert_eq!(first.hashed, 3, "nothing known yet: every file is read");
        assert_eq!(first.added, vec!["new"]);
        assert_eq!(first.gone, vec!["gone"]);
        assert!(first.modified.is_empty());
        // b's bytes change and its stat moves; a is only known by stat.
        let second = refresh(
            &mut table,
            vec![walked("a", 1), walked("b", 5), walked("new", 3)],
            |p| (p == "b").then(|| "hb2".to_string()),
            true,
            taken,
        );
        assert_eq!(second.hashed, 1, "only b's stat moved");
        assert_eq!(second.modified, vec!["b"]);
        assert_eq!(second.locked, 3);
        assert_eq!(second.sizes.len(), 2);
        let third = refresh(
            &mut table.clone(),
            vec![walked("a", 1), walked("b", 5), walked("new", 3)],
            |_| panic!("nothing to read"),
            true,
            taken,
        );
        assert!(!third.changed && third.hashed == 0);
    }
}
