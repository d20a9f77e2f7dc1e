//! `c2s watch`: start it, edit a file, wait for the rebuild, check the output changed, stop it.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{self, synth_corpus};

fn wait_for(what: &str, cond: impl FnMut() -> bool) {
    common::wait_for(60, cond, || format!("timed out waiting for {what}"));
}

#[test]
fn watch_rebuilds_on_change_and_stops_on_ctrl_c() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 30, 3, 2);
    let child = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["watch", "c", "--out", "o", "--debounce-ms", "100"])
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let docs = d.join("o/documents.json");
    wait_for("the first build", || docs.is_file());
    std::thread::sleep(Duration::from_millis(300));
    // An editor's temporary file does not trigger a build; a real edit does.
    std::fs::write(d.join("c/doc-00001.md~"), "backup").unwrap();
    std::fs::write(
        d.join("c/doc-00001.md"),
        "# Platypus\n\nThe platypus lays eggs and hunts by electroreception.\n",
    )
    .unwrap();
    wait_for("the rebuild", || {
        std::fs::read_to_string(&docs).is_ok_and(|t| t.contains("electroreception"))
    });
    // A broken file is logged and watching goes on.
    std::fs::write(
        d.join("c/records.jsonl"),
        "{not json}\n{\"id\": \"ok-1\", \"text\": \"Echidnas are monotremes too.\"}\n",
    )
    .unwrap();
    wait_for("the second rebuild", || {
        std::fs::read_to_string(&docs).is_ok_and(|t| t.contains("Echidnas"))
    });
    // Reading the sources during a build must not trigger another build.
    std::thread::sleep(Duration::from_millis(1500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "watch exited with {:?}: {err}",
        out.status
    );
    assert!(err.contains("Watching"), "{err}");
    assert!(err.contains("Stopped"), "{err}");
    assert!(
        err.contains("records.jsonl:1"),
        "the bad line was reported: {err}"
    );
    assert!(
        !err.contains("doc-00001.md~"),
        "editor backups are ignored: {err}"
    );
}
