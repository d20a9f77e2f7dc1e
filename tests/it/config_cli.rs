//! Config and command-line behaviour: errors name the problem and exit 2; overrides; safety of the output.

use crate::common::{c2s, example, ok, read_tree, stderr, synth_corpus};

#[test]
fn unknown_config_key_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("c2s.toml"), "[tree]\nbranching = 3\n").unwrap();
    let o = c2s(tmp.path(), &["build"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("branching") && e.contains("c2s.toml"), "{e}");
}

#[test]
fn missing_config_says_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let o = c2s(tmp.path(), &["build"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no c2s.toml"), "{}", stderr(&o));
    assert!(stderr(&o).contains("c2s build PATH --out DIR"));
}

#[test]
fn config_file_option_and_relative_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    synth_corpus(&proj.join("docs"), 30, 3, 1);
    std::fs::write(
        proj.join("my.toml"),
        "[corpus]\npaths = [\"docs\"]\n[output]\ndir = \"built\"\n",
    )
    .unwrap();
    ok(tmp.path(), &["build", "-q", "--config", "proj/my.toml"]);
    assert!(proj.join("built/c2s.lock").is_file());
}

#[test]
fn set_overrides_a_knob() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let j: serde_json::Value = serde_json::from_str(&ok(
        &example(),
        &[
            "build",
            "-q",
            "--json",
            "--set",
            &format!("cache.path={}", tmp.path().join("m.sqlite").display()),
            "--set",
            "K=2",
            "--set",
            "tree.p=4",
            "--out",
            out.to_str().unwrap(),
        ],
    ))
    .unwrap();
    assert!(j["skills"].as_u64().unwrap() <= 2, "{j}");
    let bad = c2s(
        &example(),
        &["build", "--set", "nope=1", "--out", out.to_str().unwrap()],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("unknown key `nope`"),
        "{}",
        stderr(&bad)
    );
    let bad = c2s(
        &example(),
        &["build", "--set", "tree.p=1", "--out", out.to_str().unwrap()],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("tree.p"), "{}", stderr(&bad));
}

#[test]
fn empty_corpus_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("c")).unwrap();
    std::fs::write(tmp.path().join("c/picture.png"), [0u8, 1, 2]).unwrap();
    std::fs::write(tmp.path().join("c/blank.md"), "  \n").unwrap();
    let o = c2s(tmp.path(), &["build", "c", "--out", "o"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no usable documents in c"),
        "{}",
        stderr(&o)
    );
    assert!(!tmp.path().join("o").exists());
    let o = c2s(tmp.path(), &["build", "missing", "--out", "o"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
}

#[test]
fn refuses_to_replace_a_foreign_folder() {
    let tmp = tempfile::tempdir().unwrap();
    synth_corpus(&tmp.path().join("docs"), 20, 2, 2);
    std::fs::create_dir_all(tmp.path().join("src")).unwrap();
    std::fs::write(tmp.path().join("src/main.rs"), "fn main() {}").unwrap();
    let o = c2s(tmp.path(), &["build", "docs", "--out", "src"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("refusing to replace"), "{}", stderr(&o));
    assert!(tmp.path().join("src/main.rs").is_file());
    let o = c2s(tmp.path(), &["clean", "docs", "--out", "src"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(tmp.path().join("src/main.rs").is_file());
}

#[test]
fn output_inside_corpus_is_not_read_back_and_corpus_inside_output_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    synth_corpus(&tmp.path().join("docs"), 25, 3, 3);
    let first: serde_json::Value = serde_json::from_str(&ok(
        tmp.path(),
        &["build", "docs", "-q", "--json", "--out", "docs/_out"],
    ))
    .unwrap();
    let second: serde_json::Value = serde_json::from_str(&ok(
        tmp.path(),
        &["build", "docs", "-q", "--json", "--out", "docs/_out"],
    ))
    .unwrap();
    assert_eq!(first["documents"], 25);
    assert_eq!(second["documents"], 25);
    let o = c2s(tmp.path(), &["build", "docs", "--out", "."]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("overlaps"), "{}", stderr(&o));
}

#[test]
fn single_jsonl_file_and_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let mut lines = String::new();
    for i in 0..12 {
        lines.push_str(&format!(
            "{{\"id\": \"rec/{i}\", \"title\": \"Record {i}\", \"contents\": \"Widget {} calibration step {i} for the flux capacitor.\"}}\n",
            i % 3
        ));
    }
    std::fs::write(tmp.path().join("c.jsonl"), lines).unwrap();
    ok(tmp.path(), &["build", "c.jsonl", "-q", "--out", "o"]);
    let t = read_tree(&tmp.path().join("o"));
    assert!(
        t.doc_ids.contains("rec-0") && t.doc_ids.contains("rec-11"),
        "{:?}",
        t.doc_ids
    );
    ok(tmp.path(), &["clean", "c.jsonl", "--out", "o"]);
    assert!(!tmp.path().join("o").exists());
}

#[test]
fn the_guide_config_reference_is_a_valid_config() {
    let block = crate::common::doc_block("configuration.md", "# Configuration", "toml");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("c2s.toml"), block).unwrap();
    synth_corpus(&tmp.path().join("docs"), 25, 3, 4);
    ok(tmp.path(), &["build", "-q"]);
    assert!(tmp.path().join("c2s-out/c2s.lock").is_file());
    assert!(tmp.path().join("cache/c2s.sqlite").is_file());
    assert_eq!(c2s(tmp.path(), &["check"]).status.code(), Some(0));
}

#[test]
fn a_closed_pipe_ends_c2s_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, cache) = crate::common::build_example(tmp.path());
    // `c2s check | head -0`: the reader is gone before c2s prints.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["check", "--out", out.to_str().unwrap(), "--set", &cache])
        .current_dir(crate::common::repo())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
}

/// `c2s ARGS` in `dir` with `env` set (and NO_COLOR, CLICOLOR and TERM cleared first).
fn c2s_env(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_c2s"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("TERM");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn colors_follow_the_color_flag_and_no_color() {
    let tmp = tempfile::tempdir().unwrap();
    crate::common::copy_dir(
        &crate::common::repo().join("examples/docs"),
        &tmp.path().join("docs"),
    );
    let esc = "\x1b[";
    // Not a terminal: no colors unless asked for.
    let o = c2s_env(tmp.path(), &["build", "docs", "--out", "out"], &[]);
    assert!(o.status.success());
    assert!(!String::from_utf8_lossy(&o.stderr).contains(esc));
    // `--color always` colors status lines and errors, whatever NO_COLOR says.
    let o = c2s_env(
        tmp.path(),
        &[
            "build", "docs", "--out", "out", "--full", "--color", "always",
        ],
        &[("NO_COLOR", "1")],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("\x1b[1;32m    Finished\x1b[0m"), "{err}");
    let o = c2s_env(
        tmp.path(),
        &["--color", "always", "check", "--out", "nothere"],
        &[],
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("\x1b[1;31merror\x1b[0m: "));
    // `--color never` never does.
    let o = c2s_env(
        tmp.path(),
        &[
            "build", "docs", "--out", "out", "--full", "--color", "never",
        ],
        &[],
    );
    assert!(!String::from_utf8_lossy(&o.stderr).contains(esc));
}

#[test]
fn an_output_that_does_not_exist_is_named_as_the_problem() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        &["check", "--out", "nothere"][..],
        &["clean", "--out", "nothere", "--cache"][..],
    ] {
        let o = c2s(tmp.path(), args);
        assert_eq!(o.status.code(), Some(2));
        let e = stderr(&o);
        assert!(
            e.contains("nothere is not an output c2s built (no such folder)")
                && e.contains("`c2s build PATH --out nothere`"),
            "{e}"
        );
    }
    std::fs::create_dir(tmp.path().join("plain")).unwrap();
    let e = stderr(&c2s(tmp.path(), &["check", "--out", "plain"]));
    assert!(
        e.contains("plain is not an output c2s built (it has no c2s.lock)"),
        "{e}"
    );
}

#[test]
fn each_command_describes_path_and_skills_dir_as_it_uses_them() {
    let tmp = tempfile::tempdir().unwrap();
    let help = |args: &[&str]| {
        let mut all = args.to_vec();
        all.push("--help");
        ok(tmp.path(), &all)
    };
    let build = help(&["build"]);
    assert!(build.contains("to build without a config file"), "{build}");
    assert!(
        build.contains("Write the top-level skill folders"),
        "{build}"
    );
    for cmd in [
        &["ask"][..],
        &["mcp"][..],
        &["pack"][..],
        &["publish"][..],
        &["check"][..],
        &["clean"][..],
        &["cache", "stats"][..],
        &["cache", "gc"][..],
    ] {
        let h = help(cmd);
        assert!(
            !h.contains("to build without a config file"),
            "{cmd:?}: {h}"
        );
        assert!(
            !h.contains("Write the top-level skill folders"),
            "{cmd:?}: {h}"
        );
        assert!(h.contains("nearest parent"), "{cmd:?}: {h}");
    }
}
