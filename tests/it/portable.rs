//! A build is the same from any working folder and leaves nothing but its output in `git
//! status`: paths are recorded relative to the project root, `c2s.toml` is found in a parent
//! folder, `--out DIR` alone finds the build again, hand edits that a build replaces are named,
//! and another output inside the corpus is never read back.

use std::path::Path;

use crate::common::{c2s, contents, copy_dir, files, git, repo, stderr};

fn run(cwd: &Path, args: &[&str]) -> String {
    let o = c2s(cwd, args);
    assert!(
        o.status.success(),
        "c2s {args:?} in {}: {}",
        cwd.display(),
        stderr(&o)
    );
    stderr(&o)
}

/// A docs repo: the example corpus, a config, and two folders to run commands from.
fn project(dir: &Path) {
    copy_dir(&repo().join("examples/docs"), &dir.join("docs"));
    std::fs::write(
        dir.join("c2s.toml"),
        "[corpus]\npaths = [\"docs\"]\n[output]\ndir = \"skills-out\"\n[tree]\np = 5\nK = 4\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("docs/auth/deeper")).unwrap();
}

#[test]
fn the_same_build_from_three_folders_gives_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("proj");
    project(&p);
    let out = p.join("skills-out");
    let mut seen = Vec::new();
    // With the config: found in the folder, in a parent (as cargo finds Cargo.toml), and named.
    for (cwd, args) in [
        (p.clone(), vec!["build", "-q"]),
        (p.join("docs/auth/deeper"), vec!["build", "-q"]),
        (
            tmp.path().to_path_buf(),
            vec!["build", "-q", "--config", "proj/c2s.toml"],
        ),
    ] {
        std::fs::remove_dir_all(&out).ok();
        std::fs::remove_dir_all(p.join("cache")).ok();
        run(&cwd, &args);
        seen.push(contents(&out));
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "outputs differ");
    let lock = std::fs::read_to_string(out.join("c2s.lock")).unwrap();
    assert!(lock.contains("\"docs/auth/sso.md\""), "{lock}");
    assert!(!lock.contains(tmp.path().to_str().unwrap()), "{lock}");
    // `check` from a subfolder and from `/`.
    for cwd in [p.join("docs/auth"), Path::new("/").to_path_buf()] {
        let args = ["check", "--config", &format!("{}/c2s.toml", p.display())];
        let args: Vec<&str> = if cwd == Path::new("/") {
            args.to_vec()
        } else {
            vec!["check"]
        };
        let o = c2s(&cwd, &args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "check in {}: {}",
            cwd.display(),
            stderr(&o)
        );
    }
    // Without a config: the corpus is the root, and the memo sits beside the output.
    let bare = tmp.path().join("bare-out");
    let docs = p.join("docs");
    let mut seen = Vec::new();
    for cwd in [
        tmp.path().to_path_buf(),
        p.join("docs/auth/deeper"),
        "/".into(),
    ] {
        std::fs::remove_dir_all(&bare).ok();
        std::fs::remove_dir_all(tmp.path().join("cache")).ok();
        run(
            &cwd,
            &[
                "build",
                "-q",
                docs.to_str().unwrap(),
                "--out",
                bare.to_str().unwrap(),
            ],
        );
        seen.push(contents(&bare));
        assert!(tmp.path().join("cache/c2s.sqlite").is_file());
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "outputs differ");
    let lock = std::fs::read_to_string(bare.join("c2s.lock")).unwrap();
    assert!(lock.contains("\"auth/sso.md\""), "{lock}");
}

#[test]
fn check_clean_and_cache_work_with_out_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    copy_dir(&repo().join("examples/docs"), &docs);
    run(
        tmp.path(),
        &["build", "-q", "docs", "--out", "site", "--set", "tree.K=3"],
    );
    let elsewhere = tmp.path().join("docs/db");
    let site = tmp.path().join("site");
    let site = site.to_str().unwrap();
    // The lock says how the output was built: the corpus and the --set.
    let o = c2s(&elsewhere, &["check", "--out", site]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = c2s(&elsewhere, &["cache", "stats", "--out", site]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("card"));
    std::fs::write(docs.join("new.md"), "# New page\n\nA page about quotas.\n").unwrap();
    let o = c2s(&elsewhere, &["check", "--out", site]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("new.md"), "{}", stderr(&o));
    run(&elsewhere, &["build", "-q", "--out", site]);
    assert_eq!(
        c2s(&elsewhere, &["check", "--out", site]).status.code(),
        Some(0)
    );
    run(&elsewhere, &["clean", "--cache", "--out", site]);
    assert!(!Path::new(site).exists());
    assert!(!tmp.path().join("cache/c2s.sqlite").exists());
}

#[test]
fn a_first_build_in_a_fresh_docs_repo_adds_only_its_output_to_git_status() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path();
    project(p);
    git(p, &["init", "-q"]);
    git(p, &["add", "."]);
    git(p, &["commit", "-q", "-m", "docs"]);
    run(p, &["build", "-q"]);
    assert_eq!(git(p, &["status", "--porcelain"]), "?? skills-out/\n");
    assert_eq!(
        std::fs::read_to_string(p.join("cache/.gitignore"))
            .unwrap()
            .lines()
            .last(),
        Some("*")
    );
}

#[test]
fn a_replaced_hand_edit_is_named_and_an_output_in_the_corpus_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path();
    project(p);
    run(p, &["build", "-q"]);
    let skill = files(&p.join("skills-out"))
        .into_iter()
        .find(|f| f.ends_with("/SKILL.md"))
        .unwrap();
    let path = p.join("skills-out").join(&skill);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("\nA note added by hand.\n");
    std::fs::write(&path, text).unwrap();
    // An old copy of the output, left inside the corpus.
    copy_dir(&p.join("skills-out"), &p.join("docs/old-skills"));
    let err = run(p, &["build"]);
    assert!(
        err.contains(&format!("skills-out/{skill}: was edited by hand")),
        "{err}"
    );
    // The hand edit is not lost: the build saved it in the cache folder and says where.
    let saved = err
        .split("your version is saved as ")
        .nth(1)
        .and_then(|r| r.split(';').next())
        .unwrap_or_else(|| panic!("no saved copy named: {err}"));
    assert!(saved.starts_with("cache/edits-"), "{saved}");
    let copy = std::fs::read_to_string(p.join(saved)).unwrap();
    assert!(copy.ends_with("A note added by hand.\n"), "{copy}");
    assert!(err.contains("docs/old-skills: holds a c2s.lock"), "{err}");
    assert!(err.contains("Ingested 29 documents"), "{err}");
    let o = c2s(p, &["check"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
