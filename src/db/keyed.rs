//! A file of binary values by 32-byte key, sorted, hashed and read whole: the format of the
//! records kept beside the memo for the next build (`used`: the results the last build used;
//! `ingest::parsed`: the sources it parsed). A file that is damaged, cut short or of another
//! kind (its magic line) is not read; it is replaced atomically.
//!
//! Layout: the magic line, the entry count (u64 LE), the index (per entry, in key order: the
//! key, the value's offset in the data and its length, u64 LE each), the data, then the blake3
//! hash of everything before it.
//!
//! A record is read as [`Layered`]: the file and a small overlay beside it (`.add`) that holds
//! what later builds added. The file is rewritten only when the overlay outgrows about 1% of
//! it; until then each build rewrites the overlay alone, so that what it added is found by the
//! next build however many builds come before the next rewrite.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::cache::Key;
use crate::hash::Hashing;

/// Bytes of one index row: key, offset, length.
const ROW: usize = 32 + 8 + 8;
const TRAILER: usize = 32;

/// A keyed file, read whole and searched in place.
pub struct Keyed {
    buf: bytes::Bytes,
    /// The length of the magic line.
    magic: usize,
    count: usize,
}

impl Keyed {
    /// Reads the file at `path`; None when it is missing, damaged or not of the kind `magic`.
    pub fn read(path: &Path, magic: &[u8]) -> Option<Keyed> {
        let buf = std::fs::read(path).ok()?;
        Keyed::parse(buf, magic)
    }

    fn parse(buf: Vec<u8>, magic: &[u8]) -> Option<Keyed> {
        let head = magic.len() + 8;
        if buf.len() < head + TRAILER || !buf.starts_with(magic) {
            return None;
        }
        let body_len = buf.len() - TRAILER;
        let (body, trailer) = buf.split_at(body_len);
        if blake3::hash(body).as_bytes() != trailer {
            return None;
        }
        let count = usize::try_from(u64_at(&buf, magic.len())).ok()?;
        let data = count.checked_mul(ROW)?.checked_add(head)?;
        if data > body_len {
            return None;
        }
        let file = Keyed {
            buf: buf.into(),
            magic: magic.len(),
            count,
        };
        let data_len = body_len - data;
        // Every value lies inside the data: `get` can then slice without checking.
        let fits = (0..count).all(|i| {
            let (_, off, len) = file.row(i);
            off.checked_add(len).is_some_and(|end| end <= data_len)
        });
        fits.then_some(file)
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether a build that used `kept` entries, `missed` of them not found here, should write
    /// the file again: entries are keyed by everything they depend on and stay right forever,
    /// so it is rewritten only when more than about 1% of them were missing, or when most of
    /// it is no longer used.
    pub fn worth_rewriting(used: Option<&Keyed>, kept: usize, missed: usize) -> bool {
        let Some(used) = used else {
            return true;
        };
        missed > (kept / 100).max(256) || used.len() > kept + kept / 4 + 256
    }

    fn row(&self, i: usize) -> (&[u8], usize, usize) {
        let at = self.magic + 8 + i * ROW;
        let key = &self.buf[at..at + 32];
        let off = u64_at(&self.buf, at + 32) as usize;
        let len = u64_at(&self.buf, at + 40) as usize;
        (key, off, len)
    }

    /// The value stored under `key`, if any. Keys are hashes, spread evenly: the search guesses
    /// where a key lies from its first bytes (two or three probes where halving takes 18 at
    /// 260,000 entries, each a cache miss), and halves every other step, so that it never
    /// takes more than twice the steps of a plain binary search.
    pub fn get(&self, key: &Key) -> Option<&[u8]> {
        self.find(key).map(|r| &self.buf[r])
    }

    /// Where the value of `key` lies in the file, if it is there (see [`Keyed::get`]).
    fn find(&self, key: &Key) -> Option<std::ops::Range<usize>> {
        let (mut lo, mut hi) = (0, self.count);
        let target = prefix(key);
        let mut guess = true;
        while lo < hi {
            let mid = if guess {
                let (a, b) = (prefix(self.row(lo).0), prefix(self.row(hi - 1).0));
                if target < a || target > b {
                    return None;
                }
                let ahead = (target - a) as u128 * (hi - 1 - lo) as u128;
                let at = ahead.checked_div((b - a) as u128).unwrap_or(0) as usize;
                lo + at
            } else {
                (lo + hi) / 2
            };
            guess = !guess;
            let (k, off, len) = self.row(mid);
            match k.cmp(&key[..]) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let data = self.magic + 8 + self.count * ROW;
                    return Some(data + off..data + off + len);
                }
            }
        }
        None
    }
}

/// The first eight bytes of a key, as a number in key order.
fn prefix(key: &[u8]) -> u64 {
    u64::from_be_bytes(key[..8].try_into().expect("eight bytes"))
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().expect("eight bytes"))
}

/// Writes `entries` (key and value; a key given twice is kept once) to `path` as a file of the
/// kind `magic`: a temporary file, streamed and then renamed over the old one, so a reader never
/// sees half a file.
pub fn write<'a>(
    path: &Path,
    magic: &[u8],
    entries: impl IntoIterator<Item = (&'a Key, &'a [u8])>,
) -> io::Result<()> {
    let mut rows: Vec<(&Key, &[u8])> = entries.into_iter().collect();
    rows.sort_unstable_by(|a, b| a.0.cmp(b.0));
    rows.dedup_by(|a, b| a.0 == b.0);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let file = std::fs::File::create(&tmp)?;
    // Buffered before the hasher, so that it hashes large pieces (with SIMD), not each field.
    let mut w = BufWriter::with_capacity(1 << 20, Hashing::new(file));
    w.write_all(magic)?;
    w.write_all(&(rows.len() as u64).to_le_bytes())?;
    let mut off = 0u64;
    for (key, value) in &rows {
        w.write_all(&key[..])?;
        w.write_all(&off.to_le_bytes())?;
        w.write_all(&(value.len() as u64).to_le_bytes())?;
        off += value.len() as u64;
    }
    for (_, value) in &rows {
        w.write_all(value)?;
    }
    let Hashing {
        mut inner, hasher, ..
    } = w.into_inner().map_err(|e| e.into_error())?;
    inner.write_all(hasher.finalize().as_bytes())?;
    drop(inner);
    std::fs::rename(&tmp, path)
}

/// Where the overlay of the record at `path` is kept.
pub fn overlay_path(path: &Path) -> std::path::PathBuf {
    path.with_extension("add")
}

/// A record and its overlay (see the module doc): a key is looked up in the record, then in
/// the overlay. Entries are right for any build that asks for their key, so either file may be
/// missing, damaged, older or newer than the other.
#[derive(Default)]
pub struct Layered {
    main: Option<Keyed>,
    overlay: Option<Keyed>,
}

/// One entry a build used, for [`Layered::save`]: its key and value, and whether it was made
/// by this build (found in neither file).
pub struct Row<'a> {
    pub key: &'a Key,
    pub value: &'a [u8],
    pub fresh: bool,
}

impl Layered {
    /// Reads the record at `path` and its overlay (each None when missing, damaged or of
    /// another kind).
    pub fn read(path: &Path, magic: &[u8]) -> Layered {
        Layered {
            main: Keyed::read(path, magic),
            overlay: Keyed::read(&overlay_path(path), magic),
        }
    }

    /// Whether neither file was read.
    pub fn is_empty(&self) -> bool {
        self.main.is_none() && self.overlay.is_none()
    }

    /// The file that holds `key` (the record first) and where its value lies there.
    fn locate(&self, key: &Key) -> Option<(&Keyed, std::ops::Range<usize>)> {
        [&self.main, &self.overlay]
            .into_iter()
            .flatten()
            .find_map(|k| Some((k, k.find(key)?)))
    }

    /// The value stored under `key`, if any.
    pub fn get(&self, key: &Key) -> Option<&[u8]> {
        self.locate(key).map(|(k, r)| &k.buf[r])
    }

    /// Like [`Layered::get`], sharing the file's bytes.
    pub fn get_shared(&self, key: &Key) -> Option<bytes::Bytes> {
        self.locate(key).map(|(k, r)| k.buf.slice(r))
    }

    fn in_overlay(&self, key: &Key) -> bool {
        self.overlay.as_ref().is_some_and(|o| o.get(key).is_some())
    }

    /// Keeps what a build used for the next build: the record is rewritten (and the overlay
    /// removed) when the entries it lacks are more than about 1% of `used` or most of it is no
    /// longer used ([`Keyed::worth_rewriting`]); otherwise only the overlay is, with the
    /// entries the record lacks, and only when those changed.
    pub fn save<'a>(
        &self,
        path: &Path,
        magic: &[u8],
        used: impl IntoIterator<Item = Row<'a>>,
    ) -> io::Result<()> {
        let used: Vec<Row> = used.into_iter().collect();
        let fresh = used.iter().filter(|u| u.fresh).count();
        let mut outside: Vec<(&Key, &[u8])> = used
            .iter()
            .filter(|u| u.fresh || self.in_overlay(u.key))
            .map(|u| (u.key, u.value))
            .collect();
        outside.sort_unstable_by(|a, b| a.0.cmp(b.0));
        outside.dedup_by(|a, b| a.0 == b.0);
        let overlay = overlay_path(path);
        if Keyed::worth_rewriting(self.main.as_ref(), used.len(), outside.len()) {
            write(path, magic, used.iter().map(|u| (u.key, u.value)))?;
            return remove_if_there(&overlay);
        }
        if outside.is_empty() {
            return remove_if_there(&overlay);
        }
        let same = fresh == 0 && self.overlay.as_ref().map(Keyed::len) == Some(outside.len());
        if same {
            return Ok(());
        }
        write(&overlay, magic, outside)
    }
}

fn remove_if_there(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAGIC: &[u8] = b"c2s-test 1\n";

    fn key(n: u8) -> Key {
        [n; 32]
    }

    #[test]
    fn written_results_are_found_by_key_and_others_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("used-x.bin");
        let (a, b, c) = (key(3), key(1), key(2));
        let entries: Vec<(&Key, &[u8])> =
            vec![(&a, b"three"), (&b, b""), (&c, b"two"), (&a, b"three")];
        write(&path, MAGIC, entries).unwrap();
        let used = Keyed::read(&path, MAGIC).unwrap();
        assert_eq!(used.len(), 3, "a key given twice is kept once");
        assert_eq!(used.get(&a), Some(&b"three"[..]));
        assert_eq!(used.get(&b), Some(&b""[..]));
        assert_eq!(used.get(&c), Some(&b"two"[..]));
        assert_eq!(used.get(&key(9)), None);
        assert!(!path.with_extension("bin.tmp").exists());
    }

    #[test]
    fn every_key_is_found_among_many_and_uneven_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("used-x.bin");
        let hashed = |i: u32| *blake3::hash(&i.to_le_bytes()).as_bytes();
        // Hash keys, as the records hold, and a run that shares its first bytes (the guess
        // cannot tell those apart: halving must).
        let mut keys: Vec<Key> = (0..5000).map(hashed).collect();
        keys.extend((0..60u8).map(|i| {
            let mut k = [0x80; 32];
            k[31] = i;
            k
        }));
        keys.extend([[0; 32], [0xff; 32]]);
        let values: Vec<Vec<u8>> = keys.iter().map(|k| k[..4].to_vec()).collect();
        write(
            &path,
            MAGIC,
            keys.iter().zip(values.iter().map(Vec::as_slice)),
        )
        .unwrap();
        let file = Keyed::read(&path, MAGIC).unwrap();
        for k in &keys {
            assert_eq!(file.get(k), Some(&k[..4]), "{k:?}");
        }
        for i in 5000..6000 {
            assert_eq!(file.get(&hashed(i)), None);
        }
        let mut near = [0x80; 32];
        near[31] = 200;
        assert_eq!(file.get(&near), None);
    }

    #[test]
    fn a_damaged_or_cut_file_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("used-x.bin");
        let k = key(7);
        write(&path, MAGIC, [(&k, &b"value"[..])]).unwrap();
        let good = std::fs::read(&path).unwrap();
        let mut flipped = good.clone();
        let at = good.len() - TRAILER - 2;
        flipped[at] ^= 1;
        std::fs::write(&path, &flipped).unwrap();
        assert!(
            Keyed::read(&path, MAGIC).is_none(),
            "a changed byte fails the hash"
        );
        std::fs::write(&path, &good[..good.len() - 1]).unwrap();
        assert!(
            Keyed::read(&path, MAGIC).is_none(),
            "a cut file fails the hash"
        );
        std::fs::write(&path, b"c2s-test 9\n").unwrap();
        assert!(Keyed::read(&path, MAGIC).is_none());
        assert!(Keyed::read(&dir.path().join("missing.bin"), MAGIC).is_none());
        std::fs::write(&path, &good).unwrap();
        assert!(
            Keyed::read(&path, b"c2s-other 1\n").is_none(),
            "a file of another kind is not read"
        );
        assert_eq!(
            Keyed::read(&path, MAGIC).unwrap().get(&k),
            Some(&b"value"[..])
        );
    }

    /// `keys` as a build that used them passes them (value: the first two bytes of the key).
    fn used(keys: &[Key], fresh: impl Fn(&Key) -> bool) -> Vec<Row<'_>> {
        keys.iter()
            .map(|k| Row {
                key: k,
                value: &k[..2],
                fresh: fresh(k),
            })
            .collect()
    }

    /// `n` hash keys, from the `from`th on.
    fn keys(from: u32, n: u32) -> Vec<Key> {
        (from..from + n)
            .map(|i| *blake3::hash(&i.to_le_bytes()).as_bytes())
            .collect()
    }

    #[test]
    fn an_overlay_keeps_what_builds_add_until_the_record_is_worth_rewriting() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recipes-x.bin");
        let overlay = overlay_path(&path);
        let mut all = keys(0, 400);
        Layered::default()
            .save(&path, MAGIC, used(&all, |_| true))
            .unwrap();
        assert!(
            path.is_file() && !overlay.exists(),
            "a first build writes the record"
        );
        let record = std::fs::read(&path).unwrap();
        // Each build adds one entry: the record stays as it is, the overlay grows, and every
        // entry added since the record was written is found.
        for step in 0..5 {
            let read = Layered::read(&path, MAGIC);
            for k in &all {
                assert_eq!(read.get(k), Some(&k[..2]), "step {step}");
            }
            let new = keys(1000 + step, 1)[0];
            assert_eq!(read.get(&new), None);
            all.push(new);
            read.save(&path, MAGIC, used(&all, |k| *k == new)).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), record, "step {step}");
            let added = Keyed::read(&overlay, MAGIC).unwrap();
            assert_eq!(added.len(), step as usize + 1, "step {step}");
        }
        // A build that adds nothing leaves the overlay as it is.
        let before = std::fs::metadata(&overlay).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let read = Layered::read(&path, MAGIC);
        read.save(&path, MAGIC, used(&all, |_| false)).unwrap();
        assert_eq!(
            std::fs::metadata(&overlay).unwrap().modified().unwrap(),
            before
        );
        // One that no longer uses two of the added entries drops them from the overlay.
        let fewer = &all[..all.len() - 2];
        read.save(&path, MAGIC, used(fewer, |_| false)).unwrap();
        assert_eq!(Keyed::read(&overlay, MAGIC).unwrap().len(), 3);
        // Past about 1% of entries outside the record, the record is rewritten with everything
        // and the overlay goes.
        let read = Layered::read(&path, MAGIC);
        let many = keys(5000, 300);
        let mut everything = all.clone();
        everything.extend(&many);
        read.save(&path, MAGIC, used(&everything, |k| many.contains(k)))
            .unwrap();
        assert!(!overlay.exists(), "the overlay was folded into the record");
        let read = Layered::read(&path, MAGIC);
        assert_eq!(read.main.as_ref().map(Keyed::len), Some(everything.len()));
        for k in &everything {
            assert_eq!(read.get(k), Some(&k[..2]));
        }
    }

    #[test]
    fn a_damaged_overlay_is_not_read_and_the_record_still_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("used-x.bin");
        let base = keys(0, 300);
        Layered::default()
            .save(&path, MAGIC, used(&base, |_| true))
            .unwrap();
        let mut all = base.clone();
        all.extend(keys(900, 3));
        let read = Layered::read(&path, MAGIC);
        read.save(&path, MAGIC, used(&all, |k| !base.contains(k)))
            .unwrap();
        let overlay = overlay_path(&path);
        let mut bytes = std::fs::read(&overlay).unwrap();
        let at = bytes.len() / 2;
        bytes[at] ^= 1;
        std::fs::write(&overlay, bytes).unwrap();
        let read = Layered::read(&path, MAGIC);
        assert_eq!(read.get(&base[7]), Some(&base[7][..2]));
        assert_eq!(read.get(&all[301]), None, "the damaged overlay is not read");
    }
}
