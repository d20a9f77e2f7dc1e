//! Tree invariants, checked as properties over generated corpora of several sizes and knobs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proptest::prelude::*;

use c2s::tree::is_valid_name;

use crate::common::{OutTree, ok, read_tree, synth_corpus};

/// Documents reachable from the top-level skills by following Contents links.
fn reachable_docs(out: &Path, tree: &OutTree) -> Vec<String> {
    let mut docs = Vec::new();
    let mut stack: Vec<String> = tree.roots.clone();
    while let Some(f) = stack.pop() {
        let nav = &tree.nav[&f];
        docs.extend(nav.doc_rows.iter().cloned());
        let dir = Path::new(&f).parent().unwrap();
        for link in &nav.child_links {
            let target = dir.join(link);
            let rel = target.to_string_lossy().into_owned();
            if tree.nav.contains_key(&rel) && !link.starts_with("..") {
                stack.push(rel);
            }
        }
    }
    assert!(out.is_dir());
    docs
}

/// The ids of the documents held in bundle files (each section's first anchor).
fn bundled_ids(out: &Path) -> BTreeSet<String> {
    crate::common::files(out)
        .into_iter()
        .filter(|f| f.contains("/bundles/"))
        .flat_map(|f| {
            let text = std::fs::read_to_string(out.join(&f)).unwrap();
            text.lines()
                .filter_map(|l| l.strip_prefix("<a id=\""))
                .filter_map(|l| l.split_once('"').map(|(id, _)| id.to_string()))
                .collect::<Vec<_>>()
        })
        .collect()
}

pub fn check_invariants(out: &Path, n_docs: usize, p: usize, k: usize) {
    let tree = read_tree(out);
    assert_eq!(tree.doc_ids.len(), n_docs);
    // Exactly one home leaf per document, and every document reachable from a skill.
    let mut homes: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for nav in tree.nav.values() {
        for d in &nav.doc_rows {
            homes.entry(d).or_default().push(&nav.path);
        }
    }
    for id in &tree.doc_ids {
        let h = homes.get(id.as_str()).map_or(0, Vec::len);
        assert_eq!(h, 1, "document {id} has {h} home leaves");
    }
    let reach: BTreeSet<String> = reachable_docs(out, &tree).into_iter().collect();
    assert_eq!(reach, tree.doc_ids);
    // Every document row links the document's file, in the page's own docs/ folder, or its
    // section of a bundle (the host's files cap packs documents).
    let bundled = bundled_ids(out);
    let doc_files = crate::common::doc_files(out);
    for nav in tree.nav.values() {
        let dir = Path::new(&nav.path).parent().unwrap();
        for d in &nav.doc_rows {
            if bundled.contains(d) {
                continue;
            }
            let file = Path::new(&doc_files[d]);
            assert!(
                out.join(file).is_file() && file.parent() == Some(&dir.join("docs")),
                "{} lists {d} but its file {} is missing or elsewhere",
                nav.path,
                file.display()
            );
        }
        for link in &nav.see_links {
            let file = link.split('#').next().unwrap();
            assert!(
                out.join(dir).join(file).is_file(),
                "stub link {link} in {} leads nowhere",
                nav.path
            );
        }
    }
    // No trivial levels: a node with sub-groups has at least two.
    for nav in tree.nav.values() {
        assert_ne!(nav.child_links.len(), 1, "{} has a single child", nav.path);
        // Leaf groups folded into their parent's page are sections of it, rows and all.
        let folded = nav.text.contains("\n### group-");
        assert!(
            nav.child_links.is_empty() || nav.doc_rows.is_empty() || folded,
            "{} mixes sub-groups and documents",
            nav.path
        );
        assert!(
            nav.text.contains("## How to navigate") && nav.text.contains("get_document"),
            "{} has no directions",
            nav.path
        );
    }
    // A corpus that fits K groups gets one level.
    if n_docs <= k {
        assert!(tree.nav.keys().all(|f| f.ends_with("SKILL.md")));
    }
    // @see stubs point at existing ids that live in another leaf.
    for nav in tree.nav.values() {
        for s in nav.see_rows.iter().chain(&nav.see_elsewhere) {
            assert!(
                tree.doc_ids.contains(s),
                "stub {s} in {} points nowhere",
                nav.path
            );
            assert!(
                !nav.doc_rows.contains(s),
                "stub {s} duplicates a home row in {}",
                nav.path
            );
        }
    }
    // At most K top-level skills; names and descriptions valid; counts consistent.
    assert!(
        tree.roots.len() <= k && !tree.roots.is_empty(),
        "{} skills for K={k}",
        tree.roots.len()
    );
    for nav in tree.nav.values() {
        assert!(is_valid_name(&nav.name), "bad name {}", nav.name);
        assert_eq!(nav.name, nav.folder);
        assert!((1..=1024).contains(&nav.description.chars().count()));
    }
    let total: usize = tree.roots.iter().map(|r| tree.nav[r].num_documents).sum();
    assert_eq!(total, n_docs);
    // Depth about ceil(log_p(N/K)) + 1 (cluster levels plus the document layer).
    let depth = tree
        .nav
        .keys()
        .map(|f| f.matches('/').count() - 1)
        .max()
        .unwrap()
        + 1;
    let ratio = n_docs as f64 / k as f64;
    let expected = if ratio <= 1.0 {
        1.0
    } else {
        ratio.ln() / (p as f64).ln()
    }
    .ceil() as usize
        + 1;
    assert!(
        depth.abs_diff(expected) <= 1,
        "depth {depth}, expected about {expected} (N={n_docs}, p={p}, K={k})"
    );
    // Typical navigation files stay small: about 2 KB of rows and sentence summaries, plus
    // the fixed directions (about 350 bytes). (The median on the larger corpus below: 2,598
    // bytes with 100-token passages, 2,512 with 200.)
    let mut sizes: Vec<usize> = tree.nav.values().map(|n| n.bytes).collect();
    sizes.sort();
    assert!(
        sizes[sizes.len() / 2] < 2700,
        "median navigation file is {} bytes",
        sizes[sizes.len() / 2]
    );
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 12,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0xC25),
        ..ProptestConfig::default()
    })]

    #[test]
    fn tree_invariants_hold(
        n in prop::sample::select(vec![8usize, 40, 150, 400]),
        topics in 2usize..12,
        p in 4usize..12,
        k in 3usize..12,
        seed in 0u64..1000,
    ) {
        let tmp = tempfile::tempdir().unwrap();
        synth_corpus(&tmp.path().join("c"), n, topics, seed);
        ok(tmp.path(), &[
            "build", "c", "-q", "--out", "o",
            "--set", &format!("tree.p={p}"), "--set", &format!("K={k}"), "--set", &format!("tree.seed={seed}"),
        ]);
        check_invariants(&tmp.path().join("o"), n, p, k);
    }
}

#[test]
fn invariants_on_a_larger_corpus() {
    let tmp = tempfile::tempdir().unwrap();
    synth_corpus(&tmp.path().join("c"), 1500, 40, 11);
    ok(tmp.path(), &["build", "c", "-q", "--out", "o"]);
    check_invariants(&tmp.path().join("o"), 1500, 10, 10);
}
