//! Safety: a build killed with SIGKILL leaves the previous output intact and the memo consistent,
//! and the next build recomputes nothing that had finished; a second concurrent build waits.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{files, ok, synth_corpus};

fn card_entries(dir: &Path) -> u64 {
    let o = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["cache", "stats", "c", "--out", "o", "--json"])
        .current_dir(dir)
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    j["stages"]["card"]["entries"].as_u64().unwrap_or(0)
}

fn snapshot(out: &Path) -> BTreeMap<String, Vec<u8>> {
    files(out)
        .into_iter()
        .map(|f| (f.clone(), std::fs::read(out.join(&f)).unwrap()))
        .collect()
}

fn edit_all(dir: &Path, n: usize, tag: &str) {
    for i in 0..n {
        let f = dir.join(format!("c/doc-{i:05}.md"));
        let t = std::fs::read_to_string(&f).unwrap();
        std::fs::write(&f, format!("{t}\n{tag} revision.\n")).unwrap();
    }
}

#[test]
fn sigkill_mid_build_loses_nothing_finished() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 300, 10, 4);
    ok(d, &["build", "c", "--out", "o", "-q"]);
    let before = snapshot(&d.join("o"));
    assert_eq!(card_entries(d), 300);
    edit_all(d, 300, "second");
    let mut child = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["build", "c", "--out", "o", "-q"])
        .env("C2S_THROTTLE_MS", "10")
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut persisted = 0;
    while Instant::now() < deadline {
        persisted = card_entries(d).saturating_sub(300);
        if persisted >= 40 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        (40..300).contains(&persisted),
        "killed after {persisted} new cards"
    );
    // The previous output is untouched.
    assert_eq!(snapshot(&d.join("o")), before);
    // The next build reuses every card that was persisted before the kill.
    let r: serde_json::Value =
        serde_json::from_str(&ok(d, &["build", "c", "--out", "o", "-q", "--json"])).unwrap();
    let card = &r["stages"]["card"];
    assert_eq!(
        card["computed"].as_u64().unwrap() + card["reused"].as_u64().unwrap(),
        300
    );
    assert!(
        card["reused"].as_u64().unwrap() >= persisted,
        "reused {card} but {persisted} were persisted"
    );
    assert!(card["computed"].as_u64().unwrap() <= 300 - persisted);
    let check = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["check", "c", "--out", "o"])
        .current_dir(d)
        .status()
        .unwrap();
    assert_eq!(check.code(), Some(0));
}

#[test]
fn a_second_concurrent_build_waits_for_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 120, 6, 8);
    let first = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["build", "c", "--out", "o", "-q"])
        .env("C2S_THROTTLE_MS", "15")
        .current_dir(d)
        .spawn()
        .unwrap();
    // Wait until the first build holds the lock (it has started computing cards).
    let deadline = Instant::now() + Duration::from_secs(30);
    while card_entries(d) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let second = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["build", "c", "--out", "o"])
        .current_dir(d)
        .output()
        .unwrap();
    let mut first = first;
    assert!(first.wait().unwrap().success());
    assert!(second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("waiting for another c2s build"), "{err}");
    assert!(
        err.contains("up to date"),
        "the second build found the first one's output: {err}"
    );
}

/// documents.json and vectors.bin are written to a spill folder beside the output while they are
/// hashed, then moved into place: the output is the same as when nothing can be spilled, and no
/// spill folder outlives a build (a killed build's is removed by the next one; a dry run makes
/// none).
#[test]
fn large_files_spilled_while_hashed_give_the_same_output_and_leave_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 120, 6, 4);
    let spill = |out: &str| d.join(format!(".{out}.c2s-spill"));
    // "p": spilled; "q": its spill folder's place is taken by a file, so nothing spills.
    std::fs::write(spill("q"), b"not a folder").unwrap();
    for out in ["p", "q"] {
        ok(d, &["build", "c", "--out", out, "-q"]);
    }
    assert_eq!(snapshot(&d.join("p")), snapshot(&d.join("q")));
    assert!(!spill("p").exists(), "the spill folder outlived the build");
    // An edit: documents.json and vectors.bin change and are moved in from the spill folder.
    edit_all(d, 3, "spilled");
    let stale = spill("p").join("documents.json");
    std::fs::create_dir_all(stale.parent().unwrap()).unwrap();
    std::fs::write(&stale, b"left by a killed build").unwrap();
    ok(d, &["build", "c", "--out", "p", "--dry-run", "-q"]);
    assert!(
        stale.exists(),
        "a dry run touches nothing beside the output"
    );
    for out in ["p", "q"] {
        ok(d, &["build", "c", "--out", out, "-q"]);
    }
    let p = snapshot(&d.join("p"));
    assert_eq!(p, snapshot(&d.join("q")));
    assert!(String::from_utf8_lossy(&p["documents.json"]).contains("spilled revision"));
    assert!(
        !spill("p").exists(),
        "a killed build's spill folder was kept"
    );
    let check = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["check", "c", "--out", "p"])
        .current_dir(d)
        .status()
        .unwrap();
    assert_eq!(check.code(), Some(0));
}
