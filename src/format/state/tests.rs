//! Tests of the state files: line bytes, shards, reading back.

use super::super::codec::{base64, sparse};
use super::*;

/// The state file and every shard in one buffer (as format 1 kept them).
fn write(
    w: &mut Vec<u8>,
    tree_hash: &str,
    docs: &BTreeMap<&str, &str>,
    entries: &[Entry],
) -> io::Result<()> {
    write_head(w, tree_hash, docs)?;
    for shard in shards(entries) {
        write_shard(w, &shard.entries)?;
    }
    Ok(())
}

/// A result's line as serde_json and `format!` write it (how lines were first written).
fn reference_line(e: &Entry) -> String {
    let stage = serde_json::to_string(&e.stage).unwrap();
    let key: String = e.key.iter().map(|b| format!("{b:02x}")).collect();
    match e.form {
        Form::Json => {
            // Memo JSON on one line is kept as it is (its escapes too).
            let json = if e.value.contains(&b'\n') {
                let v: Value = serde_json::from_slice(&e.value).unwrap();
                serde_json::to_string(&v).unwrap()
            } else {
                String::from_utf8(e.value.to_vec()).unwrap()
            };
            format!("{{\"stage\":{stage},\"key\":\"{key}\",\"json\":{json}}}\n")
        }
        Form::F32 => {
            let (field, bytes) = match sparse(&e.value) {
                Some(z) => ("f32z", z),
                None => ("f32", e.value.to_vec()),
            };
            let b64 = base64(&bytes);
            format!("{{\"stage\":{stage},\"key\":\"{key}\",\"{field}\":\"{b64}\"}}\n")
        }
    }
}

#[test]
fn result_lines_are_the_bytes_serde_json_writes() {
    let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let mut sparse_vec = vec![0.0f32; 64];
    sparse_vec[3] = 0.5;
    let entries = [
        (
            "card",
            Form::Json,
            br#"{"title":"A \"quoted\" \u00e9t\u00e9","phrases":["x"]}"#.to_vec(),
        ),
        (
            "summary",
            Form::Json,
            b"{\n  \"text\": \"pretty\"\n}".to_vec(),
        ),
        ("embed", Form::F32, f32s(&[0.25, -1.5, 3.0, 0.125, 7.0])),
        ("embed", Form::F32, f32s(&sparse_vec)),
        ("embed", Form::F32, f32s(&[1.0, 2.0])),
        ("st\"age", Form::Json, b"1".to_vec()),
    ];
    for (n, (stage, form, value)) in entries.into_iter().enumerate() {
        let e = Entry {
            stage: stage.into(),
            key: [n as u8 * 37; 32],
            form,
            value: value.into(),
        };
        let mut line = Vec::new();
        entry_line(&mut line, &e).unwrap();
        assert_eq!(
            String::from_utf8(line).unwrap(),
            reference_line(&e),
            "{stage}"
        );
    }
}

#[test]
fn document_lines_are_the_bytes_serde_json_writes() {
    let ids = [
        "plain",
        "quo\"te",
        "back\\slash",
        "tab\there",
        "été ✓",
        "ctl\u{1}",
    ];
    for doc in ids {
        let mut out = Vec::new();
        write_head(&mut out, "t", &BTreeMap::from([(doc, "h")])).unwrap();
        let line = String::from_utf8(out)
            .unwrap()
            .lines()
            .nth(1)
            .unwrap()
            .to_string();
        assert_eq!(
            line,
            serde_json::to_string(&Doc { doc, hash: "h" }).unwrap()
        );
    }
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
            value: v.clone().into(),
        },
        Entry {
            stage: "card".into(),
            key: [1; 32],
            form: Form::Json,
            value: br#"{"title":"T","phrases":["x"]}"#.to_vec().into(),
        },
    ];
    let mut out = Vec::new();
    write(&mut out, "th", &docs, &entries).unwrap();
    let text = String::from_utf8(out.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], r#"{"c2s_state":2,"tree_hash":"th"}"#);
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
                    format!("{{\"n\":{i}}}").into_bytes().into()
                } else {
                    (i as f32).to_le_bytes().to_vec().into()
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
        value: bytes.clone().into(),
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
    let e = read(
        b"{\"c2s_state\":1,\"tree_hash\":\"t\"}\n{\"stage\":\"card\",\"key\":\"zz\",\"json\":1}\n",
        true,
    )
    .unwrap_err();
    assert!(e.starts_with("line 2:"), "{e}");
    assert!(
        read(b"print('hi')\n", true)
            .unwrap_err()
            .starts_with("line 1:")
    );
    assert!(read(b"", true).is_err());
}

fn numbered(i: u32, stage: &str) -> Entry {
    let mut key = [0u8; 32];
    key[..4].copy_from_slice(&i.wrapping_mul(2_654_435_761).to_be_bytes());
    Entry {
        stage: stage.into(),
        key,
        form: Form::Json,
        value: format!("{{\"n\":{i}}}").into_bytes().into(),
    }
}

#[test]
fn shards_split_a_stage_by_key_digits_as_it_grows() {
    let mut entries: Vec<Entry> = (0..5000).map(|i| numbered(i, "card")).collect();
    entries.extend((0..10).map(|i| numbered(1_000_000 + i, "label")));
    entries.extend((0..70_000).map(|i| numbered(2_000_000 + i, "embed")));
    entries.push(numbered(3_000_000, "st/age"));
    let shards = shards(&entries);
    let of = |stage: &str| {
        shards
            .iter()
            .filter(|s| s.entries[0].stage == stage)
            .collect::<Vec<_>>()
    };
    assert_eq!(of("label").len(), 1);
    assert_eq!(of("label")[0].path, "state/label.jsonl");
    assert_eq!(of("card").len(), 16);
    assert_eq!(of("card")[0].path, "state/card-0.jsonl");
    assert_eq!(of("embed").len(), 256);
    assert_eq!(of("embed")[255].path, "state/embed-ff.jsonl");
    assert_eq!(of("st/age")[0].path, "state/st_age.jsonl");
    for s in &shards {
        assert!(s.entries.iter().all(|e| e.stage == s.entries[0].stage));
        assert!(s.entries.windows(2).all(|w| w[0].key < w[1].key));
        assert!(is_state(&s.path), "{}", s.path);
    }
    assert_eq!(
        shards.iter().map(|s| s.entries.len()).sum::<usize>(),
        75_011
    );
    // What a shard holds reads back.
    let mut back = HashMap::new();
    for s in &shards {
        let mut bytes = Vec::new();
        write_shard(&mut bytes, &s.entries).unwrap();
        read_results(&bytes, &mut back).unwrap();
    }
    assert_eq!(back.len(), 75_011);
    let e = &entries[42];
    assert_eq!(back[&e.key], ("card".to_string(), e.value.to_vec()));
    assert!(is_state("state.jsonl") && !is_state("statements.md") && !is_state("stately/x"));
}

#[test]
fn format_1_state_files_are_read_and_newer_ones_refused() {
    let old = concat!(
        "{\"c2s_state\":1,\"tree_hash\":\"t\"}\n",
        "{\"doc\":\"a\",\"hash\":\"h\"}\n",
        "{\"stage\":\"card\",\"key\":\"",
        "0101010101010101010101010101010101010101010101010101010101010101",
        "\",\"json\":{\"title\":\"T\"}}\n"
    );
    let st = read(old.as_bytes(), true).unwrap();
    assert_eq!(st.doc_hashes["a"], "h");
    assert_eq!(st.results[&[1; 32]].1, br#"{"title":"T"}"#.to_vec());
    let e = read(b"{\"c2s_state\":3,\"tree_hash\":\"t\"}\n", true).unwrap_err();
    assert!(e.contains("newer c2s"), "{e}");
    let mut into = HashMap::new();
    let e = read_results(b"{\"doc\":\"a\",\"hash\":\"h\"}\n", &mut into).unwrap_err();
    assert!(e.starts_with("line 1:"), "{e}");
}

#[test]
fn a_result_line_reads_the_same_through_either_path() {
    // The borrowed reading of most lines and the JSON-tree reading of the rest agree on every
    // shape a line can take, odd ones included.
    let key = "ab".repeat(32);
    let f32 = base64(&[0u8; 8]);
    let z = base64(&sparse(&[0u8; 16]).unwrap());
    let lines = [
        format!(r#"{{"stage":"card","key":"{key}","json":{{"b":1,"a":[true,null]}}}}"#),
        format!(r#"{{"stage":"card","key":"{key}","json":null}}"#),
        format!(r#"{{"stage":"ca\u0072d","key":"{key}","json":"x\"y"}}"#),
        format!(r#"{{"stage":"embed","key":"{key}","f32":"{f32}"}}"#),
        format!(r#"{{"stage":"embed","key":"{key}","f32z":"{z}","extra":[1]}}"#),
        format!(r#"{{"stage":"card","key":"{key}","json":1,"f32":5}}"#),
        r#"{"stage":"card","key":5,"json":1}"#.to_string(),
        format!(r#"{{"stage":"card","stage":"label","key":"{key}","json":1}}"#),
        format!(r#"{{"stage":"card","key":"{key}"}}"#),
        format!(r#"{{"stage":"embed","key":"{key}","f32":"@@"}}"#),
        r#"[1,2]"#.to_string(),
        r#"{"stage":"card","#.to_string(),
    ];
    for line in &lines {
        let mut fast = HashMap::new();
        let read = read_results(line.as_bytes(), &mut fast);
        let slow = serde_json::from_str::<Value>(line)
            .map_err(|e| format!("line 1: not JSON ({e})"))
            .and_then(|v| result(&v).map_err(|e| format!("line 1: {e}")));
        match slow {
            Ok((k, stage, value)) => {
                assert_eq!(read, Ok(()), "{line}");
                assert_eq!(fast.get(&k), Some(&(stage, value)), "{line}");
            }
            Err(e) => assert_eq!(read, Err(e), "{line}"),
        }
    }
}
