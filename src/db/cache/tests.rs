use super::*;

#[test]
fn roundtrip_and_records() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memo::open(&dir.path().join("c.sqlite")).unwrap();
    let k = KeyParts {
        stage: "card".into(),
        stage_version: 1,
        prompt: "p".into(),
        model: "m".into(),
        inputs: vec!["h".into()],
    }
    .key();
    assert!(m.get_many(&[k]).unwrap().is_empty());
    m.put_many("card", &[(k, b"v".to_vec())]).unwrap();
    drop(m);
    let m = Memo::open(&dir.path().join("c.sqlite")).unwrap();
    assert_eq!(m.get_many(&[k]).unwrap()[&k], b"v");
    m.set_record("tree:x", b"t").unwrap();
    assert_eq!(m.record("tree:x").unwrap().unwrap(), b"t");
    assert_eq!(m.record_names("tree:").unwrap(), vec!["tree:x"]);
    assert_eq!(m.stats().unwrap()["card"].entries, 1);
    assert_eq!(m.retain(&Default::default()).unwrap(), 1);
}

#[test]
fn a_large_lookup_over_several_connections_finds_what_one_finds() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memo::open(&dir.path().join("c.sqlite")).unwrap();
    let key = |i: u32| *blake3::hash(&i.to_le_bytes()).as_bytes();
    let stored: Vec<(Key, Vec<u8>)> = (0..3 * PARALLEL_LOOKUP as u32)
        .map(|i| (key(i), i.to_string().into_bytes()))
        .collect();
    m.put_many("card", &stored).unwrap();
    assert!(!m.has_record("slots:x").unwrap());
    m.set_record("slots:x", b"{}").unwrap();
    assert!(m.has_record("slots:x").unwrap());
    // Every stored key twice, and as many that are not stored.
    let wanted: Vec<Key> = (0..6 * PARALLEL_LOOKUP as u32)
        .map(key)
        .chain(stored.iter().map(|(k, _)| *k))
        .collect();
    let found = m.get_many(&wanted).unwrap();
    assert_eq!(found.len(), stored.len());
    for (k, v) in &stored {
        assert_eq!(&found[k], v);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    assert_eq!(pool.install(|| m.get_many(&wanted)).unwrap(), found);
}

#[test]
fn model_is_part_of_the_key() {
    let a = KeyParts {
        stage: "card".into(),
        stage_version: 1,
        prompt: "p".into(),
        model: "m1".into(),
        inputs: vec![],
    };
    let b = KeyParts {
        model: "m2".into(),
        ..a.clone()
    };
    assert_ne!(a.key(), b.key());
}

#[test]
fn a_memo_empty_when_opened_is_asked_only_for_the_stages_this_process_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    let key = |s: &str| {
        KeyParts {
            stage: "card".into(),
            stage_version: 1,
            prompt: "p".into(),
            model: "m".into(),
            inputs: vec![s.into()],
        }
        .key()
    };
    let (a, b) = (key("a"), key("b"));
    let m = Memo::open(&path).unwrap();
    // Another connection (another process) writes the card `a`: this one, empty when opened and
    // not having written cards, does not ask.
    Memo::open(&path)
        .unwrap()
        .put_many("card", &[(a, b"1".to_vec())])
        .unwrap();
    assert!(m.get_of("card", &[a]).unwrap().is_empty());
    assert_eq!(m.get_many(&[a]).unwrap().len(), 1);
    // Once it writes a card, cards are looked up: both are found.
    m.put_results("card", &[(b, b"2".to_vec(), None)]).unwrap();
    assert_eq!(m.get_of("card", &[a, b]).unwrap().len(), 2);
    assert!(m.get_of("label", &[a]).unwrap().is_empty());
    // A memo that held results when opened is asked for every stage.
    let again = Memo::open(&path).unwrap();
    assert_eq!(again.get_of("label", &[a]).unwrap().len(), 1);
}
