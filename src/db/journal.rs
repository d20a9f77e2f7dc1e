//! What a build remembers between builds of one output: the records in the memo's folder (the
//! stat index, the results the build used, the parsed sources, the recipes, the recipes of
//! `documents.json`'s entries, and their overlays) and the key slots in the memo. They are named,
//! read, committed and removed here only; each kind's codec lives with the stage that uses it.
//!
//! A record is only a shortcut: the next build does more work without it, never different work.
//! Most are committed together after the output is written; one whose entries are keyed by
//! content alone holds for any build and may be kept as soon as it is made ([`Journal::keep_now`]:
//! the parsed sources, which would otherwise stay in memory through the whole build).
//! A record that cannot be written is a warning that says what the next build does instead; one
//! that is missing, damaged or of another version is read as empty.

use std::io;
use std::path::{Path, PathBuf};

use super::cache::{CacheError, Memo};

/// A kind of record a build keeps beside the memo for the next build of the same output. Adding
/// one is a variant here (its file name and what its loss costs) and its codec: a reader given
/// [`Journal::path`], and a [`Produced`] that writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// Files known by their stat: the sources, the outputs, the lock (`db::statindex`).
    Stat,
    /// The results the last build used, by memo key (`db::used`).
    Used,
    /// The sources as the last build parsed them (`ingest::parsed`).
    Parsed,
    /// Values derived to compute keys: group inputs, texts to embed (`db::recipes`).
    Recipes,
    /// The recipes of `documents.json`'s entries (`stage::render::splice`).
    Entries,
}

impl Record {
    /// Every kind, in the order a build commits them.
    pub const ALL: [Record; 5] = [
        Record::Stat,
        Record::Used,
        Record::Parsed,
        Record::Recipes,
        Record::Entries,
    ];

    /// The file's kind and extension: `<kind>-<output id>.<ext>`.
    fn file(self) -> (&'static str, &'static str) {
        match self {
            Record::Stat => ("stat", "index"),
            Record::Used => ("used", "bin"),
            Record::Parsed => ("parsed", "bin"),
            Record::Recipes => ("recipes", "bin"),
            Record::Entries => ("entries", "bin"),
        }
    }

    /// What the next build does when this record cannot be written.
    pub fn lost(self) -> &'static str {
        match self {
            Record::Stat => "the next build hashes every file again",
            Record::Used => "the next build looks every result up in the memo",
            Record::Parsed => "the next build reads every source",
            Record::Recipes => "the next build makes the inputs of every group and document again",
            Record::Entries => "the next build makes every entry of documents.json again",
        }
    }
}

/// A record this build produced, written when the journal commits, after the output.
pub trait Produced: Send {
    fn record(&self) -> Record;
    /// Writes the record at `path` (nothing when the file on disk still holds).
    fn keep(&mut self, path: &Path) -> io::Result<()>;
}

/// What a build remembers of one output, opened once per build from the output and the memo.
pub struct Journal {
    /// The output folder, absolute (the records are named after it).
    out: PathBuf,
    memo: PathBuf,
    produced: Vec<Box<dyn Produced>>,
}

/// The memo's records of the key slots of an output are named after this and its path.
const SLOTS: &str = "slots:";

impl Journal {
    /// The records of the output `out`, kept beside the memo at `memo`.
    pub fn open(out: &Path, memo: &Path) -> Journal {
        Journal {
            out: crate::paths::abs(out),
            memo: memo.to_path_buf(),
            produced: Vec::new(),
        }
    }

    /// Every output the memo at `memo.path()` has built (it holds their key slots).
    pub fn built_by(memo: &Memo) -> Result<Vec<Journal>, CacheError> {
        Ok(memo
            .record_names(SLOTS)?
            .into_iter()
            .map(|name| Journal::open(Path::new(&name[SLOTS.len()..]), memo.path()))
            .collect())
    }

    /// The output folder (absolute).
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// Where the record `r` is kept.
    pub fn path(&self, r: Record) -> PathBuf {
        let (kind, ext) = r.file();
        self.beside_memo(kind, ext)
    }

    /// The folder where a build saves the output files that were edited by hand before it
    /// replaces them (`edits-<id>/`, by their path in the output), so that no edit is lost.
    pub fn saved_edits(&self) -> PathBuf {
        let file = self.beside_memo("edits", "d");
        file.with_extension("")
    }

    /// The lock file that keeps two builds of the output from running at once.
    pub fn build_lock(&self) -> PathBuf {
        self.beside_memo("build", "lock")
    }

    /// `<kind>-<id>.<ext>` in the memo's folder, `id` named after the output's absolute path.
    fn beside_memo(&self, kind: &str, ext: &str) -> PathBuf {
        let dir = self.memo.parent().unwrap_or(Path::new("."));
        let id = blake3::hash(self.out.to_string_lossy().as_bytes()).to_hex();
        dir.join(format!("{kind}-{}.{ext}", &id[..16]))
    }

    /// Every file of the journal: each record and its overlay (`db::keyed`).
    fn files(&self) -> impl Iterator<Item = PathBuf> + '_ {
        Record::ALL.into_iter().flat_map(|r| {
            let path = self.path(r);
            [super::keyed::overlay_path(&path), path]
        })
    }

    fn slots_name(&self) -> String {
        format!("{SLOTS}{}", self.out.display())
    }

    /// Whether the memo has built this output before (it holds its key slots). A memo that
    /// has not is a fresh clone's: the build seeds from the output's state.
    pub fn known_to(&self, memo: &Memo) -> Result<bool, CacheError> {
        memo.has_record(&self.slots_name())
    }

    /// The key slots the last build recorded (none when missing or unreadable): what a dry run
    /// explains its misses against.
    pub fn slots<T: serde::de::DeserializeOwned + Default>(&self, memo: &Memo) -> T {
        memo.record(&self.slots_name())
            .ok()
            .flatten()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Takes a record this build produced, to be written when the journal commits.
    pub fn take(&mut self, produced: impl Produced + 'static) {
        self.produced.push(Box::new(produced));
    }

    /// Whether the key slots of this build are to be written: when the memo has none for the
    /// output, or when `moved` (more than about 1% of the keys moved). At 100,000 documents
    /// they are 37 MB of JSON, and rewriting them cost an edit build 0.3 s. A kept older record
    /// still explains a change right (a key that moved since differs from it too); `cache gc`
    /// keeps the results of the output's state as well, so it never drops what a later build
    /// used.
    pub fn wants_slots(&self, memo: &Memo, moved: bool) -> Result<bool, CacheError> {
        Ok(moved || !self.known_to(memo)?)
    }

    /// Writes one record now: one keyed by content alone, as soon as it is made (the parsed
    /// sources), or outside a build (`c2s check` keeps the stat index it refreshed).
    pub fn keep_now(&self, record: &mut dyn Produced) -> io::Result<()> {
        record.keep(&self.path(record.record()))
    }

    /// Writes what the build produced, in [`Record::ALL`]'s order, each freed once written, then
    /// the key slots that `slots` makes (None: the memo's still hold; see
    /// [`Journal::wants_slots`]); they are made last, when the records are gone, since they copy
    /// every key the build used. Returns the records that could not be written (the file and
    /// why, for a warning); the key slots are the memo's, and a failure to write them is an
    /// error.
    pub fn commit<T: serde::Serialize>(
        &mut self,
        memo: &Memo,
        slots: impl FnOnce() -> Option<T>,
    ) -> Result<Vec<(PathBuf, String)>, CacheError> {
        let mut produced = std::mem::take(&mut self.produced);
        produced.sort_by_key(|p| Record::ALL.iter().position(|r| *r == p.record()));
        let mut failed = Vec::new();
        for mut p in produced {
            let path = self.path(p.record());
            if let Err(e) = p.keep(&path) {
                let lost = p.record().lost();
                failed.push((path, format!("cannot write ({e}); {lost}")));
            }
        }
        if let Some(slots) = slots() {
            let bytes = serde_json::to_vec(&slots).expect("slots serialize");
            memo.set_record(&self.slots_name(), &bytes)?;
        }
        Ok(failed)
    }

    /// Removes every record file of the output (`c2s clean --cache`); true when one was there.
    /// `Err` names the file that could not be removed.
    pub fn remove_files(&self) -> Result<bool, (PathBuf, io::Error)> {
        let mut removed = false;
        for path in self.files() {
            match std::fs::remove_file(&path) {
                Ok(()) => removed = true,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err((path, e)),
            }
        }
        Ok(removed)
    }

    /// Forgets the output in the memo and beside it (`cache gc`, for an output that is gone):
    /// its key slots, a tree record of older versions, and its record files, as far as they go.
    pub fn forget(&self, memo: &Memo) -> Result<(), CacheError> {
        memo.delete_record(&self.slots_name())?;
        memo.delete_record(&format!("tree:{}", self.out.display()))?;
        let _ = self.remove_files();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record that writes `bytes`, or fails; either way it notes its kind in [`WRITTEN`].
    struct Fake(Record, Option<&'static str>);

    static WRITTEN: std::sync::Mutex<Vec<Record>> = std::sync::Mutex::new(Vec::new());

    impl Produced for Fake {
        fn record(&self) -> Record {
            self.0
        }
        fn keep(&mut self, path: &Path) -> io::Result<()> {
            WRITTEN.lock().unwrap().push(self.0);
            match self.1 {
                Some(bytes) => std::fs::write(path, bytes),
                None => Err(io::Error::other("disk full")),
            }
        }
    }

    #[test]
    fn every_record_is_named_after_the_output_and_removed_with_its_overlay() {
        let dir = tempfile::tempdir().unwrap();
        let memo = dir.path().join("cache/c2s.sqlite");
        std::fs::create_dir_all(memo.parent().unwrap()).unwrap();
        let (a, b) = (
            Journal::open(Path::new("out-a"), &memo),
            Journal::open(Path::new("out-b"), &memo),
        );
        let names: std::collections::HashSet<PathBuf> = a.files().chain(b.files()).collect();
        assert_eq!(
            names.len(),
            20,
            "two outputs, five records, each with an overlay"
        );
        for p in a.files() {
            std::fs::write(p, b"x").unwrap();
        }
        std::fs::write(b.path(Record::Used), b"x").unwrap();
        assert!(a.remove_files().unwrap());
        assert!(a.files().all(|p| !p.exists()));
        assert!(
            b.path(Record::Used).exists(),
            "another output's records stay"
        );
        assert!(!a.remove_files().unwrap());
    }

    #[test]
    fn a_commit_writes_in_order_reports_what_failed_and_keeps_slots_in_the_memo() {
        let dir = tempfile::tempdir().unwrap();
        let memo = Memo::open(&dir.path().join("c2s.sqlite")).unwrap();
        let mut j = Journal::open(&dir.path().join("out"), memo.path());
        assert!(!j.known_to(&memo).unwrap());
        j.take(Fake(Record::Entries, Some("e")));
        j.take(Fake(Record::Used, None));
        j.take(Fake(Record::Stat, Some("s")));
        assert!(
            j.wants_slots(&memo, false).unwrap(),
            "a memo without the output's slots"
        );
        let failed = j
            .commit(&memo, || Some(crate::db::exec::Slots::default()))
            .unwrap();
        let order = WRITTEN.lock().unwrap().clone();
        assert_eq!(order, [Record::Stat, Record::Used, Record::Entries]);
        assert_eq!(failed.len(), 1);
        assert!(failed[0].1.contains("disk full"), "{failed:?}");
        assert!(failed[0].1.contains(Record::Used.lost()));
        let j = Journal::open(&dir.path().join("out"), memo.path());
        assert_eq!(std::fs::read(j.path(Record::Stat)).unwrap(), b"s");
        assert!(
            j.known_to(&memo).unwrap(),
            "the slots mark the output as built"
        );
        assert!(!j.wants_slots(&memo, false).unwrap() && j.wants_slots(&memo, true).unwrap());
        assert_eq!(Journal::built_by(&memo).unwrap().len(), 1);
        j.forget(&memo).unwrap();
        assert!(!j.known_to(&memo).unwrap() && !j.path(Record::Stat).exists());
    }
}
