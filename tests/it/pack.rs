//! `c2s pack`: upload zips (the skill's folder at the archive root) and the static discovery site
//! (`.well-known/agent-skills/index.json`, v0.2.0 of the draft), checked with the real `unzip`
//! and `sha256sum`: every digest matches its archive, every archive holds SKILL.md at its root and
//! exactly the skill's files; archives are reproducible, an edit changes only its skill's
//! archive, an edited output is refused, and archives of removed skills are deleted.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{c2s, contents, ok, stderr, synth_corpus};

fn tool(cmd: &str, args: &[&str], dir: &Path) -> String {
    let o = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{cmd} is needed for this test: {e}"));
    assert!(
        o.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The entries of a zip, as the real `unzip` lists them.
fn zip_entries(zip: &Path) -> Vec<String> {
    let dir = zip.parent().unwrap();
    let name = zip.file_name().unwrap().to_str().unwrap();
    let mut v: Vec<String> = tool("unzip", &["-Z1", name], dir)
        .lines()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

fn sha256(file: &Path) -> String {
    let dir = file.parent().unwrap();
    let name = file.file_name().unwrap().to_str().unwrap();
    let line = tool("sha256sum", &[name], dir);
    format!("sha256:{}", line.split_whitespace().next().unwrap())
}

fn index(pack: &Path) -> Value {
    let text = std::fs::read(pack.join(".well-known/agent-skills/index.json")).unwrap();
    serde_json::from_slice(&text).unwrap()
}

fn digests(pack: &Path) -> BTreeMap<String, String> {
    index(pack)["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["digest"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The files of each skill folder of an output, by skill.
fn skill_files(out: &Path) -> BTreeMap<String, BTreeMap<String, Vec<u8>>> {
    let mut by: BTreeMap<String, BTreeMap<String, Vec<u8>>> = BTreeMap::new();
    for (path, bytes) in contents(&out.join("skills")) {
        let (skill, rest) = path.split_once('/').unwrap();
        by.entry(skill.to_string())
            .or_default()
            .insert(rest.to_string(), bytes);
    }
    by
}

#[test]
fn archives_and_the_discovery_index_are_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 120, 3, 5);
    // A files cap that bundles documents, so bundles and folded pages are packed too.
    ok(
        d,
        &[
            "build",
            "c",
            "--out",
            "o",
            "-q",
            "--set",
            "K=2",
            "--set",
            "output.limits.files_per_skill=40",
        ],
    );
    let o = c2s(d, &["pack", "--out", "o"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(said.contains("o-pack/upload"), "{said}");
    assert!(said.contains("index.json"), "{said}");
    let pack = d.join("o-pack");
    let skills = skill_files(&d.join("o"));
    let idx = index(&pack);
    assert_eq!(
        idx["$schema"],
        "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    );
    let entries = idx["skills"].as_array().unwrap();
    assert_eq!(entries.len(), skills.len());
    for e in entries {
        let name = e["name"].as_str().unwrap();
        let files = &skills[name];
        assert_eq!(e["type"], "archive");
        assert_eq!(e["url"], format!("{name}.zip"));
        let skill_md = String::from_utf8(files["SKILL.md"].clone()).unwrap();
        let description = e["description"].as_str().unwrap();
        assert!(!description.is_empty());
        let front = skill_md.split("\n---").next().unwrap();
        let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_str(&front[4..]).unwrap();
        assert_eq!(yaml["description"].as_str(), Some(description));

        // The discovery archive: its digest is the file's, SKILL.md at its root, exactly the
        // skill's files, byte for byte.
        let archive = pack
            .join(".well-known/agent-skills")
            .join(format!("{name}.zip"));
        assert_eq!(e["digest"].as_str().unwrap(), sha256(&archive));
        let listed = zip_entries(&archive);
        assert!(listed.contains(&"SKILL.md".to_string()), "{listed:?}");
        assert_eq!(listed, files.keys().cloned().collect::<Vec<_>>());
        let out = tmp.path().join(format!("x-{name}"));
        tool(
            "unzip",
            &["-q", archive.to_str().unwrap(), "-d", out.to_str().unwrap()],
            d,
        );
        let unpacked: BTreeMap<String, Vec<u8>> = contents(&out).into_iter().collect();
        assert_eq!(&unpacked, files, "{name}: unpacked files differ");

        // The upload zip: the skill's folder at its root.
        let upload = pack.join("upload").join(format!("{name}.zip"));
        let listed = zip_entries(&upload);
        assert!(listed.contains(&format!("{name}/SKILL.md")));
        assert!(listed.iter().all(|p| p.starts_with(&format!("{name}/"))));
        assert_eq!(listed.len(), files.len());
        tool("unzip", &["-tq", upload.to_str().unwrap()], d);
    }
    assert!(
        skills
            .values()
            .any(|f| f.keys().any(|k| k.starts_with("bundles/"))),
        "bundles were packed"
    );
}

#[test]
fn packs_are_reproducible_and_an_edit_changes_one_archive() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 60, 3, 8);
    let build = || ok(d, &["build", "c", "--out", "o", "-q", "--set", "K=3"]);
    build();
    // A zip left by an earlier pack of a skill the output no longer has goes; other files stay.
    let pack = d.join("p");
    std::fs::create_dir_all(pack.join("upload")).unwrap();
    std::fs::write(pack.join("upload/skill-99-gone.zip"), b"old").unwrap();
    std::fs::write(pack.join("upload/README.txt"), b"mine").unwrap();
    ok(d, &["pack", "--out", "o", "--dir", "p", "-q"]);
    assert!(!pack.join("upload/skill-99-gone.zip").exists());
    assert!(pack.join("upload/README.txt").exists());
    let first = digests(&pack);
    let bytes_before = contents(&pack);
    ok(d, &["pack", "--out", "o", "--dir", "p", "-q"]);
    assert_eq!(contents(&pack), bytes_before, "a second pack differs");

    // Edit one document: only the skill that holds it gets a new archive.
    let doc = std::fs::read_dir(d.join("c"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .min()
        .unwrap();
    let mut text = std::fs::read_to_string(&doc).unwrap();
    text.push_str("\nOne more sentence about quarterly invoices.\n");
    std::fs::write(&doc, text).unwrap();
    build();
    ok(d, &["pack", "--out", "o", "--dir", "p", "-q"]);
    let second = digests(&pack);
    assert_eq!(first.len(), second.len());
    let changed = first.iter().filter(|(k, v)| second[*k] != **v).count();
    assert_eq!(changed, 1, "{first:?}\n{second:?}");

    // Absolute URLs on request.
    let j = ok(
        d,
        &[
            "pack",
            "--out",
            "o",
            "--dir",
            "p",
            "--base-url",
            "https://docs.example.com/.well-known/agent-skills/",
            "--json",
        ],
    );
    let j: Value = serde_json::from_str(&j).unwrap();
    assert_eq!(j["skills"].as_array().unwrap().len(), first.len());
    for s in index(&pack)["skills"].as_array().unwrap() {
        let url = s["url"].as_str().unwrap();
        assert_eq!(
            url,
            format!(
                "https://docs.example.com/.well-known/agent-skills/{}.zip",
                s["name"].as_str().unwrap()
            )
        );
    }
}

#[test]
fn an_edited_output_is_not_packed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 40, 2, 3);
    ok(d, &["build", "c", "--out", "o", "-q"]);
    let skill = crate::common::first_skill(&d.join("o"));
    let md = skill.join("SKILL.md");
    let mut text = std::fs::read_to_string(&md).unwrap();
    text.push_str("\nedited by hand\n");
    std::fs::write(&md, text).unwrap();
    let o = c2s(d, &["pack", "--out", "o"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("SKILL.md was edited"), "{err}");
    assert!(err.contains("c2s build"), "{err}");
    // Pack's own words, not publish's.
    assert!(
        err.contains("nothing was packed") && err.contains("pack again"),
        "{err}"
    );
    assert!(!err.contains("sent") && !err.contains("publish"), "{err}");
}

/// The commands the guide's `c2s pack` section shows, run in a docs repo with a `c2s.toml`.
#[test]
fn the_readme_pack_commands_run() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("docs"), 30, 3, 4);
    std::fs::write(d.join("c2s.toml"), "[corpus]\npaths = [\"docs\"]\n").unwrap();
    let block =
        crate::common::doc_block("publishing.md", "## Upload zips and a discovery site", "sh");
    let mut ran = 0;
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let args: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(args[0], "c2s", "{line}");
        ok(d, &args[1..]);
        ran += 1;
    }
    assert_eq!(ran, 3);
    let idx = index(&d.join("c2s-out-pack"));
    let skills = idx["skills"].as_array().unwrap();
    assert!(!skills.is_empty());
    for s in skills {
        let url = s["url"].as_str().unwrap();
        assert!(
            url.starts_with("https://docs.example.com/.well-known/agent-skills/"),
            "{url}"
        );
        let name = s["name"].as_str().unwrap();
        assert!(d.join(format!("c2s-out-pack/upload/{name}.zip")).is_file());
    }
}

#[test]
fn a_pack_folder_inside_the_output_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    synth_corpus(&d.join("c"), 20, 2, 3);
    ok(d, &["build", "c", "--out", "o", "-q"]);
    let o = c2s(d, &["pack", "--out", "o", "--dir", "o/pack"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("pass --dir outside it"), "{err}");
    assert!(!d.join("o/pack").exists());
    let o = c2s(d, &["check", "c", "--out", "o"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
