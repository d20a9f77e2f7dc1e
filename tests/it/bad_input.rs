//! A corpus with every kind of bad input: each gets a warning naming the file (and line), the build goes on.

use std::path::Path;

use crate::common::{c2s, insta_settings, stderr};

fn write(dir: &Path, rel: &str, bytes: &[u8]) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

/// Builds the bad-input fixture: good documents plus one of each problem.
fn fixture(root: &Path) {
    let c = root.join("corpus");
    write(&c, "good/one.md", b"---\ntitle: Pairing the remote\ndescription: How to pair the Samsung Smart Remote.\n---\nHold Back and Play for three seconds.\n");
    write(&c, "good/two.md", b"# Resetting the network\n\nOpen Settings, General, Network and choose Reset Network to restore defaults.\n");
    write(&c, "good/three.txt", b"Picture modes\nChoose Dynamic, Standard, Natural or Movie picture mode for the room lighting.\n");
    write(&c, "good/four.html", b"<html><head><title>Sound output</title></head><body><p>Select the speakers used for audio output, such as a soundbar over HDMI ARC.</p></body></html>");
    write(
        &c,
        "latin1.txt",
        b"Caf\xe9 menu settings\nThe caf\xe9 mode changes the backlight.\n",
    );
    write(&c, "image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR");
    write(&c, "empty.md", b"   \n\n");
    write(
        &c,
        "records.jsonl",
        b"{\"id\": \"r1\", \"title\": \"Record one\", \"text\": \"Firmware update over USB takes ten minutes.\"}\n\
{\"id\": \"r2\", \"text\": broken}\n\
{\"id\": \"r3\", \"title\": \"No text here\"}\n\
{\"id\": \"r1\", \"title\": \"Record one again\", \"text\": \"Energy saving mode dims the screen after idle time.\"}\n\
{\"id\": \"r5\", \"text\": \"Hold Back and Play for three seconds.\"}\n",
    );
    write(
        &c,
        "broken.json",
        b"[{\"id\": \"j1\", \"text\": \"ok\"}, {oops}]",
    );
    let long = format!(
        "# Long manual\n\n{}",
        "The accessibility shortcuts menu lists voice guide options. ".repeat(40)
    );
    write(&c, "long.md", long.as_bytes());
    write(&c, "huge.txt", &vec![b'a'; 5000]);
    std::os::unix::fs::symlink("..", c.join("good/loop")).unwrap();
    std::os::unix::fs::symlink("missing-target.md", c.join("dangling.md")).unwrap();
    let fifo = c.join("pipe.txt");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(made, "mkfifo is needed for the FIFO case");
}

#[test]
fn every_bad_input_is_a_named_warning() {
    let tmp = tempfile::tempdir().unwrap();
    fixture(tmp.path());
    let o = c2s(
        tmp.path(),
        &[
            "build",
            "corpus",
            "--out",
            "out",
            "--json",
            "-q",
            "--set",
            "tree.max_doc_chars=500",
            "--set",
            "embed.max_chunks=1",
            "--set",
            "corpus.max_file_bytes=4000",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut lines: Vec<String> = report["warning_list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| match w.get("line") {
            Some(l) => format!(
                "{}:{}: {}",
                w["file"].as_str().unwrap(),
                l,
                w["message"].as_str().unwrap()
            ),
            None => format!(
                "{}: {}",
                w["file"].as_str().unwrap(),
                w["message"].as_str().unwrap()
            ),
        })
        .collect();
    lines.sort();
    insta_settings().bind(|| insta::assert_snapshot!("bad_input_warnings", lines.join("\n")));
    // Every warning also reached stderr, even with -q.
    for l in &lines {
        assert!(stderr(&o).contains(l.as_str()), "stderr lacks {l}");
    }
    // Good documents are all there; the duplicate id was renamed; the long text is kept whole.
    let docs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("out/documents.json")).unwrap())
            .unwrap();
    let ids: Vec<&String> = docs.as_object().unwrap().keys().collect();
    assert_eq!(report["documents"], docs.as_object().unwrap().len());
    assert!(
        ids.iter().any(|i| *i == "r1") && ids.iter().any(|i| *i == "r1-2"),
        "{ids:?}"
    );
    let long = docs
        .as_object()
        .unwrap()
        .values()
        .find(|d| d["title"] == "Long manual")
        .unwrap();
    assert!(long["text"].as_str().unwrap().len() > 2000);
    let latin = docs
        .as_object()
        .unwrap()
        .values()
        .find(|d| d["source"] == "latin1.txt")
        .unwrap();
    assert!(latin["text"].as_str().unwrap().contains('\u{fffd}'));
    // The duplicate text (r5 == good/one.md body) was folded in as an alias.
    let folded = docs.as_object().unwrap().values().any(|d| {
        d["aliases"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "r5"))
    });
    assert!(folded, "r5 should be an alias: {docs}");
}
