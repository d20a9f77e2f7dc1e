//! Values a build derives to compute memo keys, by recipe, in one file beside the memo
//! (`recipes-<id>.bin`): a leaf group's summarizer input is made from its members' texts
//! (markdown parsed, excerpts cut) only to be hashed, on every build, for every group. Its
//! recipe (the hash of everything the derivation reads: the members' content hashes and card
//! titles, the c2s version) names the result, so the next build looks it up instead. A
//! document's texts to embed are recalled the same way (`stage::embed_input`).
//!
//! Like `used`, an entry is right for any build that asks for its key: the file may be older
//! or newer than the memo and the output, and a damaged one is not read. What a build made is
//! kept in the overlay until the file is worth rewriting (`db::keyed::Layered`), so that an
//! edit never makes again what an earlier edit made.

use std::collections::HashMap;
use std::io;
use std::path::Path;

use super::cache::Key;
use super::journal::{Produced, Record};
use super::keyed::{Layered, Row};

const MAGIC: &[u8] = b"c2s-recipes 1\n";

/// The recipes the last build recorded, and those this build used (each once, however many
/// times a level was summarized).
#[derive(Default)]
pub struct Recipes {
    read: Layered,
    kept: HashMap<Key, Kept>,
}

/// What this build used under a recipe: the recorded value (read again from the record only if
/// the file is rewritten), or a value it had to make, of a kind (e.g. `"group"`).
pub enum Kept {
    Recorded,
    Made(&'static str, Vec<u8>),
}

impl Recipes {
    /// The recipes at `path` (none when missing, damaged or of another format).
    pub fn open(path: &Path) -> Recipes {
        Recipes {
            read: Layered::read(path, MAGIC),
            ..Recipes::default()
        }
    }

    /// The value recorded for `recipe`.
    pub fn get(&self, recipe: &Key) -> Option<&[u8]> {
        self.read.get(recipe)
    }

    /// Notes what this build used for `recipe`.
    pub fn keep(&mut self, recipe: Key, kept: Kept) {
        self.kept.entry(recipe).or_insert(kept);
    }

    /// Notes what each item used (items without a recipe use none), and returns the items.
    pub fn keep_all<T>(&mut self, made: Vec<(T, Option<(Key, Kept)>)>) -> Vec<T> {
        made.into_iter()
            .map(|(item, kept)| {
                if let Some((recipe, kept)) = kept {
                    self.keep(recipe, kept);
                }
                item
            })
            .collect()
    }

    /// How many values of the kind `kind` this build had to derive.
    pub fn missed_of(&self, kind: &str) -> usize {
        self.kept
            .values()
            .filter(|k| matches!(k, Kept::Made(made, _) if *made == kind))
            .count()
    }

    /// Keeps the recipes this build used at `path` (the file rewritten when the recorded ones
    /// missed more than about 1% of them or most are no longer used, else its overlay; see
    /// `db::keyed::Layered`), and forgets both.
    pub fn save(&mut self, path: &Path) -> io::Result<()> {
        let read = std::mem::take(&mut self.read);
        let kept = std::mem::take(&mut self.kept);
        if kept.is_empty() {
            return Ok(());
        }
        let rows = kept.iter().filter_map(|(key, v)| match v {
            Kept::Made(_, value) => Some(Row {
                key,
                value,
                fresh: true,
            }),
            Kept::Recorded => read.get(key).map(|value| Row {
                key,
                value,
                fresh: false,
            }),
        });
        read.save(path, MAGIC, rows)
    }
}

impl Produced for Recipes {
    fn record(&self) -> Record {
        Record::Recipes
    }

    fn keep(&mut self, path: &Path) -> io::Result<()> {
        self.save(path)
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
        r.keep([1; 32], Kept::Made("group", b"one".to_vec()));
        r.keep([2; 32], Kept::Made("group", b"two".to_vec()));
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
        r.keep([1; 32], Kept::Made("group", b"one".to_vec()));
        r.save(&path).unwrap();
        let before = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut r = Recipes::open(&path);
        assert!(r.get(&[1; 32]).is_some());
        r.keep([1; 32], Kept::Recorded);
        r.save(&path).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            before
        );
    }

    #[test]
    fn a_rewrite_keeps_the_recorded_values_it_used() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recipes-x.bin");
        let mut r = Recipes::open(&path);
        r.keep([1; 32], Kept::Made("group", b"one".to_vec()));
        r.keep([2; 32], Kept::Made("group", b"two".to_vec()));
        r.save(&path).unwrap();
        // Enough new values to rewrite the file; one recorded value used, one not.
        let mut r = Recipes::open(&path);
        r.keep([1; 32], Kept::Recorded);
        for i in 0..300u32 {
            let mut k = [9; 32];
            k[..4].copy_from_slice(&i.to_le_bytes());
            r.keep(k, Kept::Made("embed", i.to_le_bytes().to_vec()));
        }
        assert_eq!((r.missed_of("embed"), r.missed_of("group")), (300, 0));
        r.save(&path).unwrap();
        let r = Recipes::open(&path);
        assert_eq!(r.get(&[1; 32]), Some(&b"one"[..]));
        assert_eq!(r.get(&[2; 32]), None, "what the build did not use goes");
        let mut k = [9; 32];
        k[..4].copy_from_slice(&7u32.to_le_bytes());
        assert_eq!(r.get(&k), Some(&7u32.to_le_bytes()[..]));
    }
}
