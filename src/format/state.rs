//! The build state file `state.jsonl`: every memoized result a build used, under the memo key it
//! was computed with, and each document's content hash. A checkout without the memo reads it
//! back to continue the build (seed its memo, warm-start its tree) instead of starting over.
//!
//! One JSON object per line, so that a one-document edit changes a few lines of a diff:
//! - first `{"c2s_state":1,"tree_hash":"…"}`;
//! - then `{"doc":ID,"hash":HASH}` per document, by id;
//! - then `{"stage":STAGE,"key":HEX,"json":VALUE}` (JSON results: cards, summaries, labels,
//!   tags, review decisions) or `{"stage":STAGE,"key":HEX,"f32":BASE64}` (vectors, little-endian
//!   f32; `"f32z"` for a mostly-zero vector: its length, then index and value of the others),
//!   by stage and key.
//!
//! The file is data: it is parsed, never run, and a build takes from it only the results whose
//! key it asks for.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The state file at the output root.
pub const STATE_FILE: &str = "state.jsonl";

/// Version of the line format.
pub const STATE_VERSION: u32 = 1;

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

#[derive(Serialize)]
struct Doc<'a> {
    doc: &'a str,
    hash: &'a str,
}

/// Writes the state: the header, the documents, then `entries` sorted by stage and key (one
/// line per key).
pub fn write(
    w: &mut dyn Write,
    tree_hash: &str,
    docs: &BTreeMap<&str, &str>,
    entries: &[Entry],
) -> io::Result<()> {
    let header = Header {
        c2s_state: STATE_VERSION,
        tree_hash: tree_hash.to_string(),
    };
    writeln!(w, "{}", serde_json::to_string(&header)?)?;
    for (doc, hash) in docs {
        writeln!(w, "{}", serde_json::to_string(&Doc { doc, hash })?)?;
    }
    let mut order: Vec<&Entry> = entries.iter().collect();
    order.sort_by(|a, b| (&a.stage, a.key).cmp(&(&b.stage, b.key)));
    order.dedup_by(|a, b| a.stage == b.stage && a.key == b.key);
    // In parallel, the same bytes as one line after the other.
    crate::format::content::write_records(w, &order, 2048, b"", |e, buf| entry_line(buf, e))
}

/// One result's line.
fn entry_line(w: &mut Vec<u8>, e: &Entry) -> io::Result<()> {
    let stage = serde_json::to_string(&e.stage)?;
    let key = hex(&e.key);
    match e.form {
        Form::Json => {
            // Memo JSON is compact, on one line, as it is; anything else is re-encoded.
            let compact;
            let value: &[u8] = if e.value.contains(&b'\n') {
                let v: Value = serde_json::from_slice(&e.value).map_err(io::Error::other)?;
                compact = serde_json::to_vec(&v)?;
                &compact
            } else {
                &e.value
            };
            write!(w, "{{\"stage\":{stage},\"key\":\"{key}\",\"json\":")?;
            w.write_all(value)?;
            writeln!(w, "}}")
        }
        Form::F32 => match sparse(&e.value) {
            // Mostly zeros (the hashed embedder's vectors): only the others, by index.
            Some(z) => writeln!(
                w,
                "{{\"stage\":{stage},\"key\":\"{key}\",\"f32z\":\"{}\"}}",
                base64(&z)
            ),
            None => writeln!(
                w,
                "{{\"stage\":{stage},\"key\":\"{key}\",\"f32\":\"{}\"}}",
                base64(&e.value)
            ),
        },
    }
}

/// Reads a state file (with `results`, its results too; without, it stops after the
/// documents); `Err` names the line and what is wrong with it.
pub fn read(bytes: &[u8], results: bool) -> Result<State, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 ({e})"))?;
    let mut lines = text.lines().enumerate();
    let (_, first) = lines.next().ok_or("the file is empty")?;
    let header: Header =
        serde_json::from_str(first).map_err(|e| format!("line 1: not a c2s state header ({e})"))?;
    if header.c2s_state != STATE_VERSION {
        return Err(format!(
            "line 1: state format {} (this c2s reads {STATE_VERSION})",
            header.c2s_state
        ));
    }
    let mut state = State {
        tree_hash: header.tree_hash,
        ..State::default()
    };
    for (i, line) in lines {
        let at = |what: String| format!("line {}: {what}", i + 1);
        let v: Value = serde_json::from_str(line).map_err(|e| at(format!("not JSON ({e})")))?;
        let field = |name: &str| v.get(name).and_then(Value::as_str);
        if let (Some(doc), Some(hash)) = (field("doc"), field("hash")) {
            state.doc_hashes.insert(doc.to_string(), hash.to_string());
            continue;
        }
        let (Some(stage), Some(key)) = (field("stage"), field("key")) else {
            return Err(at("neither a document nor a result".into()));
        };
        if !results {
            break;
        }
        let key = unhex(key).ok_or_else(|| at(format!("key {key:?} is not 64 hex digits")))?;
        let value = match (v.get("json"), field("f32"), field("f32z")) {
            (Some(j), None, None) => serde_json::to_vec(j).expect("a JSON value serializes"),
            (None, Some(b), None) => {
                let bytes = unbase64(b).ok_or_else(|| at("f32 is not base64".into()))?;
                if !bytes.len().is_multiple_of(4) {
                    return Err(at("f32 does not hold whole floats".into()));
                }
                bytes
            }
            (None, None, Some(b)) => unbase64(b)
                .and_then(|z| dense(&z))
                .ok_or_else(|| at("f32z is not a sparse vector".into()))?,
            _ => return Err(at("a result needs one of `json`, `f32` or `f32z`".into())),
        };
        state.results.insert(key, (stage.to_string(), value));
    }
    Ok(state)
}

/// A vector of f32 bytes with at most a third of its values non-zero, as its length (u32) and
/// (index u16, value f32) pairs, all little-endian; `None` when that would not be smaller.
fn sparse(bytes: &[u8]) -> Option<Vec<u8>> {
    let n = bytes.len() / 4;
    if n > u16::MAX as usize {
        return None;
    }
    let nonzero: Vec<(usize, &[u8])> = bytes
        .chunks_exact(4)
        .enumerate()
        .filter(|(_, c)| *c != [0u8; 4])
        .collect();
    if 3 * nonzero.len() > n {
        return None;
    }
    let mut out = (n as u32).to_le_bytes().to_vec();
    for (i, c) in nonzero {
        out.extend_from_slice(&(i as u16).to_le_bytes());
        out.extend_from_slice(c);
    }
    Some(out)
}

/// The f32 bytes of a [`sparse`] vector; `None` when it is not one.
fn dense(z: &[u8]) -> Option<Vec<u8>> {
    let n = u32::from_le_bytes(z.get(..4)?.try_into().ok()?) as usize;
    let pairs = &z[4..];
    if n > u16::MAX as usize || !pairs.len().is_multiple_of(6) {
        return None;
    }
    let mut out = vec![0u8; n * 4];
    for p in pairs.chunks_exact(6) {
        let i = u16::from_le_bytes([p[0], p[1]]) as usize;
        out.get_mut(i * 4..i * 4 + 4)?.copy_from_slice(&p[2..6]);
    }
    Some(out)
}

fn hex(key: &Key) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Key> {
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, k) in key.iter_mut().enumerate() {
        *k = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(key)
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for (j, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if j <= c.len() {
                s.push(B64[(n >> shift & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

fn unbase64(s: &str) -> Option<Vec<u8>> {
    let s = s.as_bytes();
    if !s.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    for c in s.chunks(4) {
        let mut n = 0u32;
        let mut pad = 0;
        for (j, &ch) in c.iter().enumerate() {
            let v = match ch {
                b'A'..=b'Z' => ch - b'A',
                b'a'..=b'z' => ch - b'a' + 26,
                b'0'..=b'9' => ch - b'0' + 52,
                b'+' => 62,
                b'/' => 63,
                b'=' if j >= 2 => {
                    pad += 1;
                    0
                }
                _ => return None,
            };
            if pad > 0 && ch != b'=' {
                return None;
            }
            n = n << 6 | v as u32;
        }
        let three = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&three[..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_roundtrips() {
        for len in 0..10 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 5) as u8).collect();
            assert_eq!(unbase64(&base64(&bytes)).unwrap(), bytes);
        }
        assert_eq!(base64(b"Man"), "TWFu");
        assert_eq!(base64(b"Ma"), "TWE=");
        assert!(unbase64("TW=u").is_none());
    }

    #[test]
    fn state_roundtrips_sorted() {
        let docs = BTreeMap::from([("b", "h2"), ("a", "h1")]);
        let v: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let entries = vec![
            Entry {
                stage: "embed".into(),
                key: [2; 32],
                form: Form::F32,
                value: v.clone(),
            },
            Entry {
                stage: "card".into(),
                key: [1; 32],
                form: Form::Json,
                value: br#"{"title":"T","phrases":["x"]}"#.to_vec(),
            },
        ];
        let mut out = Vec::new();
        write(&mut out, "th", &docs, &entries).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], r#"{"c2s_state":1,"tree_hash":"th"}"#);
        assert_eq!(lines[1], r#"{"doc":"a","hash":"h1"}"#);
        assert!(lines[3].starts_with(r#"{"stage":"card""#), "{text}");
        let back = read(&out, true).unwrap();
        assert!(read(&out, false).unwrap().results.is_empty());
        assert_eq!(back.tree_hash, "th");
        assert_eq!(back.doc_hashes.len(), 2);
        assert_eq!(back.results[&[2; 32]], ("embed".to_string(), v));
        assert_eq!(
            back.results[&[1; 32]].1,
            br#"{"title":"T","phrases":["x"]}"#.to_vec()
        );
    }

    #[test]
    fn many_results_are_written_in_order_across_pieces() {
        // More than one window of pieces, given in reverse and with a repeat.
        let n: u32 = 40_000;
        let mut entries: Vec<Entry> = (0..n)
            .rev()
            .map(|i| {
                let mut key = [0u8; 32];
                key[..4].copy_from_slice(&i.to_be_bytes());
                Entry {
                    stage: if i % 2 == 0 { "card" } else { "embed" }.into(),
                    key,
                    form: if i % 2 == 0 { Form::Json } else { Form::F32 },
                    value: if i % 2 == 0 {
                        format!("{{\"n\":{i}}}").into_bytes()
                    } else {
                        (i as f32).to_le_bytes().to_vec()
                    },
                }
            })
            .collect();
        entries.push(Entry {
            stage: "card".into(),
            key: entries[1].key,
            form: Form::Json,
            value: entries[1].value.clone(),
        });
        let mut out = Vec::new();
        write(&mut out, "th", &BTreeMap::new(), &entries).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(lines.len(), n as usize, "one line per key");
        let mut one_by_one = Vec::new();
        let mut sorted: Vec<&Entry> = entries.iter().collect();
        sorted.sort_by(|a, b| (&a.stage, a.key).cmp(&(&b.stage, b.key)));
        sorted.dedup_by(|a, b| a.stage == b.stage && a.key == b.key);
        for e in sorted {
            entry_line(&mut one_by_one, e).unwrap();
        }
        assert_eq!(text.split_once('\n').unwrap().1.as_bytes(), &one_by_one[..]);
        let back = read(&out, true).unwrap();
        assert_eq!(back.results.len(), n as usize);
    }

    #[test]
    fn mostly_zero_vectors_are_written_sparse() {
        let mut v = vec![0.0f32; 384];
        v[3] = 0.25;
        v[200] = -1.5;
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let entry = Entry {
            stage: "embed".into(),
            key: [7; 32],
            form: Form::F32,
            value: bytes.clone(),
        };
        let mut out = Vec::new();
        write(&mut out, "t", &BTreeMap::new(), &[entry]).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.contains("\"f32z\":"), "{text}");
        assert!(text.len() < 200, "{text}");
        assert_eq!(read(&out, true).unwrap().results[&[7; 32]].1, bytes);
        let dense_v: Vec<u8> = (0..8)
            .flat_map(|i| (i as f32 + 1.0).to_le_bytes())
            .collect();
        assert_eq!(sparse(&dense_v), None);
        assert_eq!(
            dense(&[1, 0, 0, 0, 9, 0, 0, 0, 0, 0]),
            None,
            "index out of range"
        );
    }

    #[test]
    fn bad_lines_are_named() {
        let e = read(b"{\"c2s_state\":1,\"tree_hash\":\"t\"}\n{\"stage\":\"card\",\"key\":\"zz\",\"json\":1}\n", true)
            .unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
        assert!(
            read(b"print('hi')\n", true)
                .unwrap_err()
                .starts_with("line 1:")
        );
        assert!(read(b"", true).is_err());
    }
}
