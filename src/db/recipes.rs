//! Values a build derives to compute memo keys, by recipe, in one file beside the memo
//! (`recipes-<id>.bin`): a leaf group's summarizer input is made from its members' texts
//! (markdown parsed, excerpts cut) only to be hashed, on every build, for every group. Its
//! recipe (the hash of everything the derivation reads: the members' content hashes and card
//! titles, the c2s version) names the result, so the next build looks it up instead.
//!
//! Like `used`, an entry is right for any build that asks for its key: the file may be older
//! or newer than the memo and the output, and a damaged one is not read.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use super::cache::Key;
use super::keyed::Keyed;

const MAGIC: &[u8] = b"c2s-recipes 1\n";

/// The recipes the last build recorded, and those this build used (each once, however many
/// times a level was summarized), with their kind and whether it was missing from the record.
#[derive(Default)]
pub struct Recipes {
    read: Option<Keyed>,
    kept: HashMap<Key, (Vec<u8>, Made)>,
}

/// Whether a kept value had to be made (was not recorded), and of which kind it is.
type Made = Option<&'static str>;

/// Where the recipes of the output `out` are kept (`memo` is the memo's path).
pub fn path_for(out: &Path, memo: &Path) -> PathBuf {
    super::cache::beside_memo(memo, out, "recipes", "bin")
}

impl Recipes {
    /// The recipes at `path` (none when missing, damaged or of another format).
    pub fn open(path: &Path) -> Recipes {
        Recipes {
            read: Keyed::read(path, MAGIC),
            ..Recipes::default()
        }
    }

    /// The value recorded for `recipe`.
    pub fn get(&self, recipe: &Key) -> Option<&[u8]> {
        self.read.as_ref()?.get(recipe)
    }

    /// Notes that this build used `value` for `recipe` (of the kind `kind`, e.g. `"group"`);
    /// `missed` when it was not recorded.
    pub fn keep(&mut self, kind: &'static str, recipe: Key, value: Vec<u8>, missed: bool) {
        self.kept
            .entry(recipe)
            .or_insert((value, missed.then_some(kind)));
    }

    /// How many values this build had to derive (their recipe was not recorded).
    pub fn missed(&self) -> usize {
        self.kept
            .values()
            .filter(|(_, made)| made.is_some())
            .count()
    }

    /// How many values of the kind `kind` this build had to derive.
    pub fn missed_of(&self, kind: &str) -> usize {
        self.kept
            .values()
            .filter(|(_, made)| *made == Some(kind))
            .count()
    }

    /// Writes the recipes this build used to `path` when the recorded ones missed more than
    /// about 1% of them (or most are no longer used), and forgets both.
    pub fn save(&mut self, path: &Path) -> io::Result<()> {
        let read = self.read.take();
        let missed = self.missed();
        let kept = std::mem::take(&mut self.kept);
        if kept.is_empty() || !Keyed::worth_rewriting(read.as_ref(), kept.len(), missed) {
            return Ok(());
        }
        drop(read);
        super::keyed::write(
            path,
            MAGIC,
            kept.iter().map(|(k, (v, _))| (k, v.as_slice())),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_recipe_is_found_and_a_damaged_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recipes-x.bin");
        let mut r = Recipes::open(&path);
        assert_eq!(r.get(&[1; 32]), None);
        r.keep("group", [1; 32], b"one".to_vec(), true);
        r.keep("group", [2; 32], b"two".to_vec(), true);
        r.save(&path).unwrap();
        let r = Recipes::open(&path);
        assert_eq!(r.get(&[2; 32]), Some(&b"two"[..]));
        assert_eq!(r.get(&[3; 32]), None);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() / 2;
        bytes[at] ^= 1;
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(Recipes::open(&path).get(&[2; 32]), None);
    }

    #[test]
    fn recipes_that_were_all_found_are_not_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recipes-x.bin");
        let mut r = Recipes::open(&path);
        r.keep("group", [1; 32], b"one".to_vec(), true);
        r.save(&path).unwrap();
        let before = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut r = Recipes::open(&path);
        let v = r.get(&[1; 32]).unwrap().to_vec();
        r.keep("group", [1; 32], v, false);
        r.save(&path).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            before
        );
    }
}
