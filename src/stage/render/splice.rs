//! `documents.json` made from the previous build's file: an entry whose recipe (the c2s version
//! and everything the entry shows: id, title, source, the text by its content hash, one-line,
//! phrases, aliases, file) is one the previous file was made from is copied from that file
//! instead of serialized again (the text's JSON escaping is most of the cost: 100 MB at
//! 100,000 documents). The recipes of a file are kept beside the memo (`entries-<id>.bin`)
//! under the hash of the file's bytes, and used only while the file on disk is known, by its
//! stat, to have those bytes: a damaged, edited or replaced file is made whole again.

use std::collections::HashMap;
use std::io::{self, Write};
use std::ops::Range;
use std::path::Path;

use super::Ctx;
use super::files::{DocEntryRef, pretty_entry};
use crate::db::cache::Key;
use crate::db::journal::{Produced, Record};
use crate::db::keyed::Keyed;

/// The previous `documents.json`: where it is, and the hash of its bytes when the stat pass
/// knows them (None: its stat moved, or there is none).
pub struct Previous<'p> {
    pub file: &'p Path,
    pub hash: Option<&'p str>,
}

/// How `documents.json` is made this build.
pub struct Splice {
    /// The previous file's bytes (empty when none is used).
    old: Vec<u8>,
    /// Per entry, in id order: the document, its recipe, and the range of the previous file
    /// that holds its bytes (None: made).
    pieces: Vec<(usize, Key, Option<Range<usize>>)>,
    /// The hash of the previous file, when its recipes were read.
    recorded: Option<String>,
}

impl Splice {
    /// Plans the file for `ctx`: which entries of the previous file to copy, by the recipes
    /// recorded for it in `entries` (`db::journal::Record::Entries`).
    pub fn plan(ctx: &Ctx, previous: Previous, entries: &Path) -> Splice {
        use rayon::prelude::*;
        let mut order: Vec<usize> = (0..ctx.docs.len()).collect();
        // As a map by id keeps them: in id order, the last document of a repeated id.
        order.sort_by(|&a, &b| ctx.docs[a].id.cmp(&ctx.docs[b].id).then(b.cmp(&a)));
        order.dedup_by(|a, b| ctx.docs[*a].id == ctx.docs[*b].id);
        let made_from = previous
            .hash
            .and_then(|hash| Keyed::read(entries, &magic(hash)));
        let old = made_from
            .as_ref()
            .and_then(|_| std::fs::read(previous.file).ok())
            .unwrap_or_default();
        let ranges = entry_ranges(&old);
        let pieces = order
            .into_par_iter()
            .map(|d| {
                let recipe = recipe(ctx, d);
                let copied = made_from
                    .as_ref()
                    .filter(|m| m.get(&recipe).is_some())
                    .and_then(|_| {
                        let key = serde_json::to_string(&ctx.docs[d].id).ok()?;
                        ranges.get(key.as_bytes()).cloned()
                    });
                (d, recipe, copied)
            })
            .collect();
        let recorded = made_from.and(previous.hash.map(str::to_string));
        Splice {
            old,
            pieces,
            recorded,
        }
    }

    /// Writes `documents.json` (`{id: {…}}` as `serde_json::to_writer_pretty` writes it): the
    /// planned entries copied, the others made in parallel, a window at a time.
    pub fn write(&self, ctx: &Ctx, w: &mut dyn Write) -> io::Result<()> {
        self.write_with(w, |d, buf| entry(ctx, d, buf))
    }

    /// [`Splice::write`] with `make` writing the entry of a document.
    fn write_with(
        &self,
        w: &mut dyn Write,
        make: impl Fn(usize, &mut Vec<u8>) -> io::Result<()> + Sync,
    ) -> io::Result<()> {
        if self.pieces.is_empty() {
            return w.write_all(b"{}\n");
        }
        w.write_all(b"{\n")?;
        crate::format::content::write_records(
            w,
            &self.pieces,
            512,
            b",\n",
            |piece, buf| match piece {
                (_, _, Some(range)) => {
                    buf.extend_from_slice(&self.old[range.clone()]);
                    Ok(())
                }
                (d, _, None) => make(*d, buf),
            },
        )?;
        w.write_all(b"\n}\n")
    }

    /// The record, for the next build, that the file whose bytes hash to `hash` was made from
    /// these recipes. When that is the file whose record was read and every entry was copied
    /// (its recipe is in the record), the record still holds: nothing is to be written.
    pub fn kept(self, hash: &str) -> Kept {
        let unchanged = self.recorded.as_deref() == Some(hash) && self.made() == 0;
        Kept {
            recipes: (!unchanged).then(|| self.pieces.into_iter().map(|p| p.1).collect()),
            hash: hash.to_string(),
        }
    }

    /// How many entries are made, not copied from the previous file.
    pub fn made(&self) -> usize {
        self.pieces.iter().filter(|p| p.2.is_none()).count()
    }
}

/// The recipes `documents.json` was made from, under the hash of its bytes (None: the record
/// on disk still holds).
pub struct Kept {
    recipes: Option<Vec<Key>>,
    hash: String,
}

impl Produced for Kept {
    fn record(&self) -> Record {
        Record::Entries
    }

    fn keep(&mut self, path: &Path) -> io::Result<()> {
        let Some(recipes) = &self.recipes else {
            return Ok(());
        };
        let rows = recipes.iter().map(|recipe| (recipe, &[][..]));
        crate::db::keyed::write(path, &magic(&self.hash), rows)
    }
}

/// The first line of a recipes file: its kind and the hash of the file it describes.
fn magic(hash: &str) -> Vec<u8> {
    format!("c2s-entries 1 {hash}\n").into_bytes()
}

/// One entry's bytes: `  "<id>": {` … `  }`, at the indentation of the whole map.
fn entry(ctx: &Ctx, d: usize, buf: &mut Vec<u8>) -> io::Result<()> {
    let (doc, card, place) = (&ctx.docs[d], &ctx.cards[d], &ctx.place.docs[d]);
    let value = DocEntryRef {
        title: &card.title,
        source: &doc.source,
        text: &doc.text,
        one_line: &card.one_line,
        phrases: &card.phrases,
        aliases: &doc.aliases,
        file: (!place.file.is_empty()).then(|| place.link()),
    };
    pretty_entry(&doc.id, &value, buf)
}

/// What an entry is made from. The text is named by the document's content hash (which
/// covers it), or given whole when there is none.
fn recipe(ctx: &Ctx, d: usize) -> Key {
    let (doc, card, place) = (&ctx.docs[d], &ctx.cards[d], &ctx.place.docs[d]);
    let mut buf = Vec::with_capacity(512);
    let mut field = |bytes: &[u8]| {
        buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        buf.extend_from_slice(bytes);
    };
    field(b"c2s documents.json entry");
    field(env!("CARGO_PKG_VERSION").as_bytes());
    let text = match doc.content_hash.is_empty() {
        true => &doc.text,
        false => &doc.content_hash,
    };
    for s in [&doc.id, text, &card.title, &doc.source, &card.one_line] {
        field(s.as_bytes());
    }
    for list in [&card.phrases, &doc.aliases] {
        field(&(list.len() as u64).to_le_bytes());
        for s in list {
            field(s.as_bytes());
        }
    }
    match place.file.is_empty() {
        true => field(b"no file"),
        false => field(place.link().as_bytes()),
    }
    *blake3::hash(&buf).as_bytes()
}

/// The byte range of each entry of a `documents.json` as c2s writes it, by its key as written
/// (the id as a JSON string). Entries start after `{\n` or `,\n` with two spaces and a quote;
/// their fields are indented further, and no JSON string holds a raw line break, so nothing
/// inside an entry looks like a start. Anything else gives no ranges (every entry is made).
fn entry_ranges(old: &[u8]) -> HashMap<&[u8], Range<usize>> {
    let mut out = HashMap::new();
    let Some(body) = old
        .strip_prefix(b"{\n")
        .and_then(|b| b.strip_suffix(b"\n}\n"))
    else {
        return out;
    };
    let finder = memchr::memmem::Finder::new(b",\n  \"");
    let mut start = 2;
    let ends = finder
        .find_iter(body)
        .map(|i| i + 2)
        .chain(std::iter::once(body.len() + 2));
    for end in ends {
        let e = &old[start..end];
        // `  "<id>": {`: the key ends at the first `": {` followed by a line break.
        let Some(k) = memchr::memmem::find(e, b"\": {\n") else {
            return HashMap::new();
        };
        if !e.starts_with(b"  \"") {
            return HashMap::new();
        }
        out.insert(&e[2..k + 1], start..end);
        start = end + 2;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_found_by_their_key_as_written() {
        let map = std::collections::BTreeMap::from([
            (
                "a",
                serde_json::json!({"text": "x\",\n  \"fake\": {\n", "phrases": ["p", "q"]}),
            ),
            ("b\"c", serde_json::json!({"text": "y"})),
        ]);
        let mut file = serde_json::to_vec_pretty(&map).unwrap();
        file.push(b'\n');
        let ranges = entry_ranges(&file);
        assert_eq!(ranges.len(), 2);
        let a = &file[ranges[&b"\"a\""[..]].clone()];
        assert!(
            a.starts_with(b"  \"a\": {") && a.ends_with(b"  }"),
            "{}",
            String::from_utf8_lossy(a)
        );
        let bc = &file[ranges[&br#""b\"c""#[..]].clone()];
        assert!(bc.starts_with(br#"  "b\"c": {"#));
        // Not a file c2s wrote: nothing is taken from it.
        assert!(entry_ranges(b"{\"a\": 1}").is_empty());
        assert!(entry_ranges(b"").is_empty());
    }

    #[derive(serde::Serialize)]
    struct Row {
        title: String,
        tags: Vec<String>,
        note: Option<&'static str>,
    }

    fn rows(n: usize, edited: usize) -> Vec<(String, Row)> {
        (0..n)
            .map(|i| {
                let row = Row {
                    title: format!(
                        "Title \"{i}\"\n\tline{}",
                        if i == edited { " (new)" } else { "" }
                    ),
                    tags: (0..i % 3).map(|t| format!("t{t}")).collect(),
                    note: (i % 2 == 0).then_some("é ✓"),
                };
                (format!("doc-{i:05}"), row)
            })
            .collect()
    }

    /// The splice of `rows` over `old` as `Splice::plan` would make it when every recipe is
    /// recorded: each entry copied where `old` has the same bytes for its key.
    fn spliced(rows: &[(String, Row)], old: Vec<u8>) -> (Vec<u8>, usize) {
        let ranges: HashMap<Vec<u8>, Range<usize>> = entry_ranges(&old)
            .into_iter()
            .map(|(k, r)| (k.to_vec(), r))
            .collect();
        let pieces = rows
            .iter()
            .enumerate()
            .map(|(d, (id, row))| {
                let mut want = Vec::new();
                pretty_entry(id, row, &mut want).unwrap();
                let key = serde_json::to_vec(id).unwrap();
                let copied = ranges
                    .get(&key)
                    .filter(|r| old[(*r).clone()] == want[..])
                    .cloned();
                (d, [d as u8; 32], copied)
            })
            .collect();
        let splice = Splice {
            old,
            pieces,
            recorded: None,
        };
        let mut out = Vec::new();
        splice
            .write_with(&mut out, |d, buf| pretty_entry(&rows[d].0, &rows[d].1, buf))
            .unwrap();
        (out, splice.pieces.len() - splice.made())
    }

    #[test]
    fn a_spliced_file_is_what_serde_writes() {
        for n in [0usize, 1, 3, 513, 9000] {
            let expect = |rows: &[(String, Row)]| {
                let map: std::collections::BTreeMap<&str, &Row> =
                    rows.iter().map(|(k, v)| (k.as_str(), v)).collect();
                serde_json::to_string_pretty(&map).unwrap() + "\n"
            };
            let before = rows(n, usize::MAX);
            let (made, copied) = spliced(&before, Vec::new());
            assert_eq!(
                (String::from_utf8(made.clone()).unwrap(), copied),
                (expect(&before), 0),
                "{n}"
            );
            // One entry edited: the others are copied from the previous file.
            let after = rows(n, n / 2);
            let (out, copied) = spliced(&after, made);
            assert_eq!(String::from_utf8(out).unwrap(), expect(&after), "{n}");
            assert_eq!(copied, n.saturating_sub(1), "{n}");
        }
    }
}
