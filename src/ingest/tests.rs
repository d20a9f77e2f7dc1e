//! Ingest given what a build knows beforehand (the examination's walk and the bytes it read).

use super::*;

#[test]
fn a_source_the_examination_read_whole_is_not_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("a.md"), "# Alpha\n\nAs the file holds it now.\n").unwrap();
    std::fs::write(docs.join("b.md"), "# Beta\n\nRead by ingest itself.\n").unwrap();
    let opts = IngestOptions {
        paths: vec![docs.clone()],
        include: &[],
        exclude: &[],
        max_file_bytes: 1 << 20,
        max_doc_chars: None,
        display_base: dir.path().to_path_buf(),
        skip_dirs: Vec::new(),
        top: None,
    };
    // What the examination read of a.md: other bytes than the file holds now, so that the
    // documents show which ones ingest used.
    let mut read = ReadAhead::default();
    let ahead = b"# Alpha\n\nAs the examination read it.\n".to_vec();
    read.insert(
        "docs/a.md".into(),
        (ahead, "hash-from-the-examination".into()),
    );
    let prior = Prior {
        walk: walk(&opts).unwrap(),
        sources: &OnDisk::default(),
        parsed: ParsedCache::open(&dir.path().join("parsed.bin")),
        read,
    };
    let mut diags = Diagnostics::default();
    let corpus = ingest_with(&opts, &mut Graph::one_shot(), &mut diags, Some(prior)).unwrap();
    let text = |source: &str| {
        let d = corpus.documents.iter().find(|d| d.source == source);
        d.unwrap_or_else(|| panic!("{source} in {:?}", corpus.documents))
            .text
            .clone()
    };
    assert!(text("docs/a.md").contains("As the examination read it."));
    assert!(text("docs/b.md").contains("Read by ingest itself."));
    let hash = |path: &str| {
        let s = corpus.sources.iter().find(|s| s.path == path).unwrap();
        (s.hash.clone(), s.stat.is_some())
    };
    let b = std::fs::read(docs.join("b.md")).unwrap();
    assert_eq!(
        hash("docs/a.md"),
        ("hash-from-the-examination".to_string(), true)
    );
    assert_eq!(hash("docs/b.md"), (crate::hash::content_hash(&b), true));
    assert_eq!(corpus.read, 2, "both parsed now: {diags:?}");
}
