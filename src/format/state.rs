//! The build state: every memoized result a build used, under the memo key it was computed
//! with, and each document's content hash. A checkout without the memo reads it back to
//! continue the build (seed its memo, warm-start its tree) instead of starting over.
//!
//! One JSON object per line, so that a one-document edit changes a few lines of a diff:
//! - `state.jsonl`: first `{"c2s_state":2,"tree_hash":"…"}`, then `{"doc":ID,"hash":HASH}` per
//!   document, by id;
//! - `state/<stage>.jsonl`, or `state/<stage>-<hex>.jsonl` for the results whose key starts
//!   with those hex digits once a stage has more than 4,096 (one digit up to 65,536, then
//!   two): `{"stage":STAGE,"key":HEX,"json":VALUE}` (JSON results: cards, summaries, labels,
//!   tags, review decisions) or `{"stage":STAGE,"key":HEX,"f32":BASE64}` (vectors,
//!   little-endian f32; `"f32z"` for a mostly-zero vector: its length, then index and value
//!   of the others), by key. An edit rewrites the few shards whose results changed, not every
//!   result (150 MB at 100,000 documents).
//!
//! Format 1 kept the results in `state.jsonl` after the documents; it is still read. The files
//! are data: parsed, never run, and a build takes from them only the results whose key it
//! asks for.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::codec::{base64_into, dense, hex_into, sparse, unbase64, unhex};

/// The state file at the output root.
pub const STATE_FILE: &str = "state.jsonl";

/// The folder of the result shards, at the output root.
pub const STATE_DIR: &str = "state";

/// Version of the format: 2 keeps the results in [`STATE_DIR`]; 1 (results in the state file)
/// is read too.
pub const STATE_VERSION: u32 = 2;

/// Results per shard past which a stage's results are split by the first hex digit of their
/// key (and past 16 times that, by the first two).
const SHARD_RESULTS: usize = 4096;

pub use crate::db::cache::Key;
pub use crate::db::exec::{Entry, Form};

/// A state file read back.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct State {
    pub tree_hash: String,
    /// Content hash per document id.
    pub doc_hashes: BTreeMap<String, String>,
    /// Memo bytes per key, with their stage.
    pub results: HashMap<Key, (String, Vec<u8>)>,
}

#[derive(Serialize, Deserialize)]
struct Header {
    c2s_state: u32,
    tree_hash: String,
}

#[cfg(test)]
#[derive(Serialize)]
struct Doc<'a> {
    doc: &'a str,
    hash: &'a str,
}

/// Whether the output path `rel` is build state (the state file or a result shard).
pub fn is_state(rel: &str) -> bool {
    rel == STATE_FILE
        || rel
            .strip_prefix(STATE_DIR)
            .is_some_and(|r| r.starts_with('/') || r.starts_with('\\'))
}

/// Writes the state file: the header, then the documents.
pub fn write_head(
    w: &mut dyn Write,
    tree_hash: &str,
    docs: &BTreeMap<&str, &str>,
) -> io::Result<()> {
    let header = Header {
        c2s_state: STATE_VERSION,
        tree_hash: tree_hash.to_string(),
    };
    writeln!(w, "{}", serde_json::to_string(&header)?)?;
    // The bytes serde_json writes for a `Doc`, without a string per line.
    let mut line = Vec::with_capacity(128);
    for (doc, hash) in docs {
        line.clear();
        line.extend_from_slice(b"{\"doc\":");
        json_str(&mut line, doc)?;
        line.extend_from_slice(b",\"hash\":");
        json_str(&mut line, hash)?;
        line.extend_from_slice(b"}\n");
        w.write_all(&line)?;
    }
    Ok(())
}

/// One result shard: its output path and its results, by key.
pub struct Shard<'e> {
    pub path: String,
    pub entries: Vec<&'e Entry>,
}

/// `entries` (in any order, repeats allowed) by stage and key, one per key, cut into shards.
pub fn shards(entries: &[Entry]) -> Vec<Shard<'_>> {
    let mut order: Vec<&Entry> = entries.iter().collect();
    // Unstable is enough: entries of one stage and key hold the same result (the memo's).
    order.sort_unstable_by(|a, b| (&a.stage, a.key).cmp(&(&b.stage, b.key)));
    order.dedup_by(|a, b| a.stage == b.stage && a.key == b.key);
    let mut out: Vec<Shard> = Vec::new();
    for stage in order.chunk_by(|a, b| a.stage == b.stage) {
        let digits = shard_digits(stage.len());
        let top = |k: &Key| u32::from_be_bytes([k[0], k[1], 0, 0]) >> (32 - 4 * digits).min(31);
        for part in stage.chunk_by(|a, b| digits == 0 || top(&a.key) == top(&b.key)) {
            let p = prefix(&part[0].key, digits);
            let name = file_stem(&part[0].stage);
            out.push(Shard {
                path: if p.is_empty() {
                    format!("{STATE_DIR}/{name}.jsonl")
                } else {
                    format!("{STATE_DIR}/{name}-{p}.jsonl")
                },
                entries: part.to_vec(),
            });
        }
    }
    out
}

/// How many hex digits of the key name the shard of a stage with `n` results.
fn shard_digits(n: usize) -> usize {
    let mut digits = 0;
    while digits < 3 && n > SHARD_RESULTS << (4 * digits) {
        digits += 1;
    }
    digits
}

/// The first `digits` hex digits of `key` (a shard's name; shards are told apart by the top
/// bits of the key, without making a string per comparison).
fn prefix(key: &Key, digits: usize) -> String {
    let mut hex = Vec::with_capacity(64);
    hex_into(&mut hex, key);
    String::from_utf8_lossy(&hex[..digits]).into_owned()
}

/// A stage's name as a file name (stages are plain words; anything else becomes `_`).
fn file_stem(stage: &str) -> String {
    stage
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Writes one shard's results, a line each (in parallel: the same bytes as one line after the
/// other).
pub fn write_shard(w: &mut dyn Write, entries: &[&Entry]) -> io::Result<()> {
    crate::format::content::write_records(w, entries, 2048, b"", |e, buf| entry_line(buf, e))
}

/// One result's line, written straight into `w` (a line per result makes the state file
/// large: no allocation per field).
fn entry_line(w: &mut Vec<u8>, e: &Entry) -> io::Result<()> {
    w.extend_from_slice(b"{\"stage\":");
    json_str(w, &e.stage)?;
    w.extend_from_slice(b",\"key\":\"");
    hex_into(w, &e.key);
    match e.form {
        Form::Json => {
            // Memo JSON is compact, on one line, as it is; anything else is re-encoded.
            w.extend_from_slice(b"\",\"json\":");
            if e.value.contains(&b'\n') {
                let v: Value = serde_json::from_slice(&e.value).map_err(io::Error::other)?;
                serde_json::to_writer(&mut *w, &v)?;
            } else {
                w.extend_from_slice(&e.value);
            }
        }
        Form::F32 => match sparse(&e.value) {
            // Mostly zeros (the hashed embedder's vectors): only the others, by index.
            Some(z) => {
                w.extend_from_slice(b"\",\"f32z\":\"");
                base64_into(w, &z);
                w.push(b'"');
            }
            None => {
                w.extend_from_slice(b"\",\"f32\":\"");
                base64_into(w, &e.value);
                w.push(b'"');
            }
        },
    }
    w.extend_from_slice(b"}\n");
    Ok(())
}

/// `s` as a JSON string: as it is when nothing in it needs escaping.
fn json_str(w: &mut Vec<u8>, s: &str) -> io::Result<()> {
    if s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        w.push(b'"');
        w.extend_from_slice(s.as_bytes());
        w.push(b'"');
        Ok(())
    } else {
        serde_json::to_writer(w, s).map_err(io::Error::other)
    }
}

/// The head of the state file at `path`: its header and document lines, up to the first result
/// (what a build without `results` reads).
pub fn read_head(path: &std::path::Path) -> io::Result<Vec<u8>> {
    use std::io::BufRead;
    let mut r = io::BufReader::with_capacity(1 << 20, std::fs::File::open(path)?);
    let mut head = Vec::new();
    loop {
        let at = head.len();
        if r.read_until(b'\n', &mut head)? == 0 || head[at..].starts_with(b"{\"stage\"") {
            head.truncate(at);
            return Ok(head);
        }
    }
}

/// A document line, read without building a JSON tree.
#[derive(Deserialize)]
struct DocLine<'a> {
    #[serde(borrow)]
    doc: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    hash: std::borrow::Cow<'a, str>,
}

/// Reads a state file (with `results`, the results of a format-1 file too; without, it stops
/// after the documents); `Err` names the line and what is wrong with it.
pub fn read(bytes: &[u8], results: bool) -> Result<State, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 ({e})"))?;
    let mut lines = text.lines().enumerate();
    let (_, first) = lines.next().ok_or("the file is empty")?;
    let header: Header =
        serde_json::from_str(first).map_err(|e| format!("line 1: not a c2s state header ({e})"))?;
    if !(1..=STATE_VERSION).contains(&header.c2s_state) {
        return Err(format!(
            "line 1: state format {} (this c2s reads 1 to {STATE_VERSION}; a newer c2s wrote it)",
            header.c2s_state
        ));
    }
    let mut state = State {
        tree_hash: header.tree_hash,
        ..State::default()
    };
    for (i, line) in lines {
        let at = |what: String| format!("line {}: {what}", i + 1);
        if line.starts_with("{\"doc\"")
            && let Ok(d) = serde_json::from_str::<DocLine>(line)
        {
            state
                .doc_hashes
                .insert(d.doc.into_owned(), d.hash.into_owned());
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| at(format!("not JSON ({e})")))?;
        let field = |name: &str| v.get(name).and_then(Value::as_str);
        if let (Some(doc), Some(hash)) = (field("doc"), field("hash")) {
            state.doc_hashes.insert(doc.to_string(), hash.to_string());
            continue;
        }
        if !results {
            result(&v).map_err(at)?;
            break;
        }
        let (key, stage, value) = result(&v).map_err(at)?;
        state.results.insert(key, (stage, value));
    }
    Ok(state)
}

/// Reads a result shard into `results`; `Err` names the line and what is wrong with it.
pub fn read_results(
    bytes: &[u8],
    results: &mut HashMap<Key, (String, Vec<u8>)>,
) -> Result<(), String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 ({e})"))?;
    for (i, line) in text.lines().enumerate() {
        let at = |what: String| format!("line {}: {what}", i + 1);
        // Most lines are as c2s writes them: read without a tree of values (a vector's base64
        // is not copied); any other line is read as any JSON, which names what is wrong.
        let read = match serde_json::from_str::<ResultLine>(line) {
            Ok(r) => parts(Fields {
                stage: r.stage.as_deref(),
                key: r.key.as_deref(),
                json: r.json.as_ref(),
                f32: r.f32.as_deref(),
                f32z: r.f32z.as_deref(),
            }),
            Err(_) => {
                let v: Value =
                    serde_json::from_str(line).map_err(|e| at(format!("not JSON ({e})")))?;
                result(&v)
            }
        };
        let (key, stage, value) = read.map_err(at)?;
        results.insert(key, (stage, value));
    }
    Ok(())
}

/// A result line's fields as [`read_results`] reads most lines: strings borrowed where they hold
/// no escape, `json` kept even when it is `null`. A line with another type in one of these
/// fields, or one twice, is no `ResultLine` (and is read as a [`Value`]).
#[derive(Deserialize)]
struct ResultLine<'a> {
    #[serde(borrow, default)]
    stage: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    key: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    json: Option<Value>,
    #[serde(borrow, default)]
    f32: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    f32z: Option<std::borrow::Cow<'a, str>>,
}

/// A field that is there, whatever its value (`null` too).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The fields of a result line (a string field of another type reads as absent).
struct Fields<'v> {
    stage: Option<&'v str>,
    key: Option<&'v str>,
    json: Option<&'v Value>,
    f32: Option<&'v str>,
    f32z: Option<&'v str>,
}

/// A result line's key, stage and memo bytes.
fn result(v: &Value) -> Result<(Key, String, Vec<u8>), String> {
    let field = |name: &str| v.get(name).and_then(Value::as_str);
    parts(Fields {
        stage: field("stage"),
        key: field("key"),
        json: v.get("json"),
        f32: field("f32"),
        f32z: field("f32z"),
    })
}

/// [`result`] of the fields of a line.
fn parts(f: Fields) -> Result<(Key, String, Vec<u8>), String> {
    let (Some(stage), Some(key)) = (f.stage, f.key) else {
        return Err("neither a document nor a result".into());
    };
    let key = unhex(key).ok_or_else(|| format!("key {key:?} is not 64 hex digits"))?;
    let value = match (f.json, f.f32, f.f32z) {
        (Some(j), None, None) => serde_json::to_vec(j).expect("a JSON value serializes"),
        (None, Some(b), None) => {
            let bytes = unbase64(b).ok_or("f32 is not base64")?;
            if !bytes.len().is_multiple_of(4) {
                return Err("f32 does not hold whole floats".into());
            }
            bytes
        }
        (None, None, Some(b)) => unbase64(b)
            .and_then(|z| dense(&z))
            .ok_or("f32z is not a sparse vector")?,
        _ => return Err("a result needs one of `json`, `f32` or `f32z`".into()),
    };
    Ok((key, stage.to_string(), value))
}

#[cfg(test)]
mod tests;
