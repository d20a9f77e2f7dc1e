//! The stat index: for every source and output file of one output folder, its size, times and
//! inode at the last build or check, the hash of its bytes then, and the hash `c2s.lock` records
//! for it, so that a file whose stat is unchanged is not read again (git's index). Local to one
//! machine and kept in the cache folder. The content hash stays the truth: a file whose stat
//! moved is hashed, and a stat taken too close to a write is not trusted.

use std::fs::Metadata;
use std::io::{self, Read, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

const MAGIC: &[u8] = b"c2s-stat-index 3\n";

/// What identifies a file's bytes without reading them: size, modification and change times,
/// inode and device (as git's index keeps them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stat {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
    pub dev: u64,
}

/// How close to a write a stat with fine times is not trusted.
const FINE_MARGIN_NS: i64 = 50_000_000;

impl Stat {
    /// The stat of `meta` (on other platforms than Unix, without ctime, inode and device).
    pub fn of(meta: &Metadata) -> Stat {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Stat {
                size: meta.len(),
                mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
                ctime_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
                ino: meta.ino(),
                dev: meta.dev(),
            }
        }
        #[cfg(not(unix))]
        {
            let mtime_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64);
            Stat {
                size: meta.len(),
                mtime_ns,
                ..Stat::default()
            }
        }
    }

    /// Whether a write could still land in the same timestamp tick as a stat taken at `taken_ns`
    /// (then the stat proves nothing about the bytes). Times without a fraction of a second come
    /// from a file system with whole-second (or two-second) times.
    pub fn racy(&self, taken_ns: i64) -> bool {
        let coarse = self.mtime_ns % 1_000_000_000 == 0 || self.ctime_ns % 1_000_000_000 == 0;
        let margin = if coarse {
            2_000_000_000
        } else {
            FINE_MARGIN_NS
        };
        self.mtime_ns.max(self.ctime_ns) + margin > taken_ns
    }

    /// How many nanoseconds after `taken_ns` a stat of an unchanged file stops being racy,
    /// when it is racy and its times are fine (a whole-second file system is not waited for).
    pub fn racy_for(&self, taken_ns: i64) -> Option<i64> {
        let coarse = self.mtime_ns % 1_000_000_000 == 0 || self.ctime_ns % 1_000_000_000 == 0;
        let left = self.mtime_ns.max(self.ctime_ns) + FINE_MARGIN_NS - taken_ns;
        (!coarse && left > 0).then_some(left)
    }
}

/// One file of the index.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Entry {
    /// The path `c2s.lock` uses.
    pub path: String,
    /// Its stat when last seen on disk, and whether that stat was too close to a write to be
    /// trusted (None: not on disk, only in the lock).
    pub stat: Option<(Stat, bool)>,
    /// The hash of its bytes when it had `stat`.
    pub hash: Option<String>,
    /// The hash the lock records for it (None: not in the lock).
    pub locked: Option<String>,
}

impl Entry {
    /// The recorded hash, if `stat` is the recorded stat and it was trusted.
    pub fn known(&self, stat: &Stat) -> Option<&str> {
        match &self.stat {
            Some((s, false)) if s == stat => self.hash.as_deref(),
            _ => None,
        }
    }
}

/// The files of a table whose bytes the index knows (a trusted stat, and the hash of the bytes
/// it had), by the path `c2s.lock` uses: the writer compares a file it is about to replace with
/// these instead of reading it.
#[derive(Debug, Default)]
pub struct OnDisk(std::collections::HashMap<String, (Stat, String)>);

impl OnDisk {
    /// The entries of `table` with a trusted stat and a hash.
    pub fn of(table: Vec<Entry>) -> OnDisk {
        let known = table.into_iter().filter_map(|e| match (e.stat, e.hash) {
            (Some((s, false)), Some(h)) => Some((e.path, (s, h))),
            _ => None,
        });
        OnDisk(known.collect())
    }

    /// The hash of the bytes of the file whose lock path is `key`, if `stat` is its recorded
    /// (and trusted) stat.
    pub fn known(&self, key: &str, stat: &Stat) -> Option<&str> {
        let (recorded, hash) = self.0.get(key)?;
        (recorded == stat).then_some(hash.as_str())
    }

    /// The hash of the bytes of the file at `path` (whose lock path is `key`), if its stat now
    /// is the recorded one; None when it moved, is gone or was never known.
    pub fn hash(&self, key: &str, path: &Path) -> Option<&str> {
        let (recorded, hash) = self.0.get(key)?;
        let now = Stat::of(&std::fs::symlink_metadata(path).ok()?);
        (now == *recorded).then_some(hash.as_str())
    }
}

/// The lock file's stat (trusted or not) and its fields other than `sources` and `outputs`, as
/// JSON: the maps are the `locked` hashes of the entries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LockStat {
    pub stat: Stat,
    pub racy: bool,
    pub fields: String,
}

/// The index of one output folder: its sources and outputs, each sorted by path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatIndex {
    pub lock: Option<LockStat>,
    pub sources: Vec<Entry>,
    pub outputs: Vec<Entry>,
}

/// Nanoseconds since the epoch, now (taken before the stats it dates).
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

impl StatIndex {
    /// The lock's other fields if `stat` is the lock file's recorded and trusted stat.
    pub fn lock_fields(&self, stat: &Stat) -> Option<&str> {
        let l = self.lock.as_ref()?;
        (!l.racy && l.stat == *stat).then_some(l.fields.as_str())
    }

    /// Reads the index at `path`; a missing, old or damaged one is an empty index (it is only a
    /// shortcut: every file is then hashed).
    pub fn read(path: &Path) -> StatIndex {
        std::fs::read(path)
            .ok()
            .and_then(|b| decode(&b).ok())
            .unwrap_or_default()
    }

    /// Writes the index to `path` atomically (a temporary file renamed over it), if its folder
    /// exists (`check` never creates a cache folder).
    pub fn write(&self, path: &Path) -> io::Result<()> {
        if path
            .parent()
            .is_some_and(|d| !d.as_os_str().is_empty() && !d.is_dir())
        {
            return Ok(());
        }
        let mut buf = Vec::with_capacity(48 * (self.sources.len() + self.outputs.len()) + 256);
        buf.extend_from_slice(MAGIC);
        match &self.lock {
            Some(l) => {
                buf.push(1 | (l.racy as u8) << 1);
                put_stat(&mut buf, &l.stat);
                put_str(&mut buf, &l.fields);
            }
            None => buf.push(0),
        }
        // The sources' table goes after its length, so that a reader decodes both in parallel.
        let mut sources = Vec::with_capacity(48 * self.sources.len() + 8);
        put_table(&mut sources, &self.sources);
        buf.extend_from_slice(&(sources.len() as u64).to_le_bytes());
        buf.extend_from_slice(&sources);
        put_table(&mut buf, &self.outputs);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&buf)?;
        drop(f);
        std::fs::rename(&tmp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

const HAS_STAT: u8 = 1;
const RACY: u8 = 2;
const HAS_HASH: u8 = 4;
const HAS_LOCKED: u8 = 8;
const LOCKED_IS_HASH: u8 = 16;

/// Entries with front-coded paths (sorted paths share long prefixes).
fn put_table(buf: &mut Vec<u8>, table: &[Entry]) {
    buf.extend_from_slice(&(table.len() as u64).to_le_bytes());
    let mut prev = "";
    for e in table {
        let shared = common_prefix(prev, &e.path).min(u16::MAX as usize);
        buf.extend_from_slice(&(shared as u16).to_le_bytes());
        put_str(buf, &e.path[shared..]);
        prev = &e.path;
        let same = e.locked.is_some() && e.locked == e.hash;
        let flags = e
            .stat
            .map_or(0, |(_, r)| HAS_STAT | if r { RACY } else { 0 })
            | if e.hash.is_some() { HAS_HASH } else { 0 }
            | if e.locked.is_some() { HAS_LOCKED } else { 0 }
            | if same { LOCKED_IS_HASH } else { 0 };
        buf.push(flags);
        if let Some((s, _)) = &e.stat {
            put_stat(buf, s);
        }
        if let Some(h) = &e.hash {
            put_str(buf, h);
        }
        if let (Some(l), false) = (&e.locked, same) {
            put_str(buf, l);
        }
    }
}

/// The length of the common prefix of `a` and `b`, at a character boundary.
fn common_prefix(a: &str, b: &str) -> usize {
    let n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    (0..=n).rev().find(|&i| b.is_char_boundary(i)).unwrap_or(0)
}

fn put_str(buf: &mut Vec<u8>, s: &str) {
    buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
    buf.extend_from_slice(s.as_bytes());
}

fn put_stat(buf: &mut Vec<u8>, s: &Stat) {
    for v in [s.size, s.mtime_ns as u64, s.ctime_ns as u64, s.ino, s.dev] {
        buf.extend_from_slice(&v.to_le_bytes());
    }
}

fn decode(bytes: &[u8]) -> io::Result<StatIndex> {
    let mut r = bytes
        .strip_prefix(MAGIC)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "not a stat index"))?;
    let mut ix = StatIndex::default();
    let lock = byte(&mut r)?;
    if lock & 1 == 1 {
        ix.lock = Some(LockStat {
            stat: stat_of(&mut r)?,
            racy: lock & 2 != 0,
            fields: string(&mut r)?,
        });
    }
    // The two tables are decoded in parallel: the outputs' starts after the sources'.
    let split = u64_of(&mut r)? as usize;
    if split > r.len() {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    let (mut first, mut second) = r.split_at(split);
    let (sources, outputs) = rayon::join(|| table(&mut first), || table(&mut second));
    ix.sources = sources?;
    ix.outputs = outputs?;
    Ok(ix)
}

fn table(r: &mut &[u8]) -> io::Result<Vec<Entry>> {
    let n = u64_of(r)? as usize;
    let mut out: Vec<Entry> = Vec::with_capacity(n.min(r.len() / 8));
    for _ in 0..n {
        let mut b = [0u8; 2];
        r.read_exact(&mut b)?;
        let shared = u16::from_le_bytes(b) as usize;
        let prev = out.last().map_or("", |e| e.path.as_str());
        let head = prev
            .get(..shared)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "bad prefix"))?;
        let tail = bytes(r)?;
        let mut path = String::with_capacity(head.len() + tail.len());
        path.push_str(head);
        path.push_str(
            std::str::from_utf8(tail).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?,
        );
        let flags = byte(r)?;
        let stat = match flags & HAS_STAT {
            0 => None,
            _ => Some((stat_of(r)?, flags & RACY != 0)),
        };
        let hash = match flags & HAS_HASH {
            0 => None,
            _ => Some(string(r)?),
        };
        let locked = match (flags & HAS_LOCKED, flags & LOCKED_IS_HASH) {
            (0, _) => None,
            (_, 0) => Some(string(r)?),
            _ => hash.clone(),
        };
        out.push(Entry {
            path,
            stat,
            hash,
            locked,
        });
    }
    Ok(out)
}

fn byte(r: &mut &[u8]) -> io::Result<u8> {
    let mut b = [0u8; 1];
    r.read_exact(&mut b)?;
    Ok(b[0])
}

fn u64_of(r: &mut &[u8]) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

fn bytes<'a>(r: &mut &'a [u8]) -> io::Result<&'a [u8]> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    let n = u32::from_le_bytes(b) as usize;
    if n > r.len() {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    let (s, rest) = r.split_at(n);
    *r = rest;
    Ok(s)
}

fn string(r: &mut &[u8]) -> io::Result<String> {
    String::from_utf8(bytes(r)?.to_vec()).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

fn stat_of(r: &mut &[u8]) -> io::Result<Stat> {
    let mut v = [0u64; 5];
    for x in &mut v {
        *x = u64_of(r)?;
    }
    Ok(Stat {
        size: v[0],
        mtime_ns: v[1] as i64,
        ctime_ns: v[2] as i64,
        ino: v[3],
        dev: v[4],
    })
}

impl super::journal::Produced for StatIndex {
    fn record(&self) -> super::journal::Record {
        super::journal::Record::Stat
    }

    fn keep(&mut self, path: &Path) -> io::Result<()> {
        self.write(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(mtime_s: i64) -> Stat {
        Stat {
            size: 10,
            mtime_ns: mtime_s * 1_000_000_000 + 5,
            ctime_ns: mtime_s * 1_000_000_000 + 5,
            ino: 7,
            dev: 1,
        }
    }

    fn entry(path: &str, s: Option<Stat>, hash: Option<&str>, locked: Option<&str>) -> Entry {
        let taken = 100 * 1_000_000_000;
        Entry {
            path: path.into(),
            stat: s.map(|s| (s, s.racy(taken))),
            hash: hash.map(String::from),
            locked: locked.map(String::from),
        }
    }

    #[test]
    fn round_trips_and_trusts_only_old_equal_stats() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stat.index");
        let ix = StatIndex {
            lock: Some(LockStat {
                stat: stat(40),
                racy: false,
                fields: "{}".into(),
            }),
            sources: vec![
                entry("a/b.md", Some(stat(50)), Some("h1"), Some("h1")),
                entry("a/bc.md", Some(stat(100)), Some("h2"), Some("h0")),
                entry("a/gone.md", None, None, Some("h9")),
                entry("é/x.md", Some(stat(50)), Some("h3"), None),
            ],
            outputs: vec![entry(
                "skills/x/SKILL.md",
                Some(stat(40)),
                Some("h4"),
                Some("h4"),
            )],
        };
        ix.write(&path).unwrap();
        let back = StatIndex::read(&path);
        assert_eq!(back, ix);
        let a = &back.sources[0];
        assert_eq!(a.known(&stat(50)), Some("h1"));
        assert_eq!(a.known(&stat(51)), None, "a moved stat is not trusted");
        assert_eq!(
            back.sources[1].known(&stat(100)),
            None,
            "a racy stat is not trusted"
        );
        let moved_ctime = Stat {
            ctime_ns: stat(60).ctime_ns,
            ..stat(50)
        };
        assert_eq!(a.known(&moved_ctime), None, "ctime counts");
        assert_eq!(back.lock_fields(&stat(40)), Some("{}"));
        assert_eq!(back.lock_fields(&stat(41)), None);
    }

    #[test]
    fn whole_second_times_get_a_wider_margin() {
        let s = Stat {
            mtime_ns: 99 * 1_000_000_000,
            ctime_ns: 99 * 1_000_000_000,
            ..Stat::default()
        };
        assert!(
            s.racy(100 * 1_000_000_000),
            "within 2 s on a coarse file system"
        );
        assert!(!stat(99).racy(100 * 1_000_000_000), "fine times: 50 ms");
    }

    #[test]
    fn a_damaged_index_reads_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stat.index");
        std::fs::write(&path, b"c2s-stat-index 3\n\x01\x02").unwrap();
        assert_eq!(StatIndex::read(&path), StatIndex::default());
        assert_eq!(
            StatIndex::read(&dir.path().join("none")),
            StatIndex::default()
        );
    }
}
