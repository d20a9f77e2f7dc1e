//! The large-k clustering path (coarse-to-fine above k = 256) in real builds: tree invariants,
//! determinism for a seed, warm starts after an edit, and `check`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{c2s, files, ok, synth_corpus};
use crate::invariants::check_invariants;

const N: usize = 1200;
const P: usize = 4;
const K: usize = 8;

fn build(dir: &Path, out: &str) -> serde_json::Value {
    let (p, k) = (format!("tree.p={P}"), format!("K={K}"));
    let args = [
        "build", "c", "-q", "--json", "--out", out, "--set", &p, "--set", &k,
    ];
    serde_json::from_str(&ok(dir, &args)).expect("build --json")
}

fn contents(out: &Path) -> BTreeMap<String, Vec<u8>> {
    files(out)
        .into_iter()
        .map(|f| (f.clone(), std::fs::read(out.join(&f)).unwrap()))
        .collect()
}

#[test]
fn large_k_builds_are_deterministic_keep_invariants_and_warm_start() {
    // Level 1 asks for k = N / p = 300 clusters: above the exact path's limit.
    assert!(N.div_ceil(P) > c2s::kmeans::scaled::EXACT_MAX_K);
    let tmp = tempfile::tempdir().unwrap();
    synth_corpus(&tmp.path().join("c"), N, 120, 5);
    let first = build(tmp.path(), "a");
    let leaves = first["stages"]["tags"]["computed"].as_u64().unwrap();
    assert!(leaves > 150, "a large k gives many leaves, got {leaves}");
    let a = tmp.path().join("a");
    check_invariants(&a, N, P, K);
    // A second output from the same cache: K-Means is not cached, so it clusters again.
    build(tmp.path(), "b");
    assert!(
        contents(&a) == contents(&tmp.path().join("b")),
        "two builds with the same seed differ"
    );
    // One edit: a warm start places the document; the output stays valid and fresh.
    let file = tmp.path().join("c/doc-00007.md");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("# ", "# Quasar telemetry ", 1)).unwrap();
    let r = build(tmp.path(), "a");
    assert_eq!(r["tree"]["kind"], "warm", "{r}");
    assert_eq!(r["stages"]["card"]["computed"], 1);
    check_invariants(&a, N, P, K);
    let (p, k) = (format!("tree.p={P}"), format!("K={K}"));
    let check = c2s(
        tmp.path(),
        &["check", "c", "--out", "a", "--set", &p, "--set", &k],
    );
    assert_eq!(check.status.code(), Some(0));
}
