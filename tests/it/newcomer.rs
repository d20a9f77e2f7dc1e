//! A newcomer's first commands: README's "on your own docs" block on a real docs repo, `c2s
//! init` on each site generator, shell completions, `-v`, and an example in every command's
//! help.

use std::path::Path;

use crate::common::{c2s, copy_dir, data_dir, doc_block, ok, sh, skip, stderr};

/// A copy of a docs repo of the shared data in `dir`, or a loud skip.
fn docs_repo_in(name: &str, dir: &Path) -> bool {
    let src = data_dir().join("docs-repos").join(name);
    if !src.is_dir() {
        skip(&format!(
            "docs repo {} not found (set C2S_DATA_DIR)",
            src.display()
        ));
        return false;
    }
    copy_dir(&src, dir);
    true
}

#[test]
fn the_readme_commands_on_your_own_docs_run_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    if !docs_repo_in("uv", dir) {
        return;
    }
    let block = doc_block("README.md", "On your own docs:", "sh");
    let lines: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 4, "{block}");
    let init = sh(dir, lines[0]);
    let said = stderr(&init);
    assert!(
        said.contains("MkDocs (mkdocs.yml), pages in docs/"),
        "{said}"
    );
    let config = std::fs::read_to_string(dir.join("c2s.toml")).unwrap();
    assert!(config.contains(r#"paths = ["docs"]"#), "{config}");
    let built = sh(dir, lines[1]);
    assert!(
        stderr(&built).contains("Structured from mkdocs.yml"),
        "{}",
        stderr(&built)
    );
    assert!(dir.join("c2s-out/c2s.lock").is_file());
    sh(dir, lines[2]);
    let asked = sh(dir, lines[3]);
    let answer = String::from_utf8_lossy(&asked.stdout).to_lowercase();
    assert!(
        answer.contains("sources") && answer.contains("lock"),
        "{answer}"
    );
}

#[test]
fn init_finds_an_mdbook_one_folder_down_and_never_overwrites_a_config() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    if !docs_repo_in("mdbook", dir) {
        return;
    }
    let o = c2s(dir, &["init", "--out", "book-skills"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("mdBook (guide/book.toml), pages in guide/src/"),
        "{}",
        stderr(&o)
    );
    let built = c2s(dir, &["build"]);
    assert!(built.status.success(), "{}", stderr(&built));
    assert!(
        stderr(&built).contains("Structured from guide/src/SUMMARY.md"),
        "{}",
        stderr(&built)
    );
    assert!(dir.join("book-skills/c2s.lock").is_file());
    let before = std::fs::read(dir.join("c2s.toml")).unwrap();
    let again = c2s(dir, &["init"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("c2s.toml already exists"),
        "{}",
        stderr(&again)
    );
    assert_eq!(std::fs::read(dir.join("c2s.toml")).unwrap(), before);
    let nowhere = c2s(dir, &["init", "no-such-folder"]);
    assert_eq!(nowhere.status.code(), Some(2));
    assert!(
        stderr(&nowhere).contains("no-such-folder is not a folder"),
        "{}",
        stderr(&nowhere)
    );
}

#[test]
fn init_without_a_site_generator_takes_the_docs_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    for i in 0..4 {
        std::fs::write(
            docs.join(format!("p{i}.md")),
            format!("# Page {i}\n\nText {i}.\n"),
        )
        .unwrap();
    }
    let o = c2s(tmp.path(), &["init"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no site generator, pages in docs/"),
        "{}",
        stderr(&o)
    );
    let built = c2s(tmp.path(), &["build", "-q"]);
    assert!(built.status.success(), "{}", stderr(&built));
    assert_eq!(c2s(tmp.path(), &["check"]).status.code(), Some(0));
}

#[test]
fn completions_are_printed_for_each_shell() {
    let tmp = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "complete -F _c2s"),
        ("zsh", "#compdef c2s"),
        ("fish", "complete -c c2s"),
        ("elvish", "c2s"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let o = c2s(tmp.path(), &["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let script = String::from_utf8_lossy(&o.stdout);
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(
            script.contains("verify-state"),
            "{shell} lacks check's flags"
        );
    }
    let bad = c2s(tmp.path(), &["completions", "cmd.exe"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn install_page_completion_commands_name_real_shells() {
    let block = doc_block("install.md", "## Shell completions", "sh");
    let tmp = tempfile::tempdir().unwrap();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        // The command before the redirection, run as written; where it writes is the user's.
        let cmd = line.split('>').next().unwrap().trim();
        let o = sh(tmp.path(), cmd);
        assert!(!o.stdout.is_empty(), "{cmd}");
    }
}

#[test]
fn verbose_shows_every_warning_of_a_kind_and_quiet_conflicts_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("uv");
    if !docs_repo_in("uv", &repo) {
        return;
    }
    let build = |extra: &[&str], out: &str| {
        let mut args = vec!["build", "docs", "--out", out];
        args.extend_from_slice(extra);
        let o = c2s(&repo, &args);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let count = |s: &str| {
        s.matches("points to no page or file of the corpus;")
            .count()
    };
    let plain = build(&[], "a");
    assert_eq!(count(&plain), 10, "{plain}");
    assert!(
        plain.contains("more links point to no page or file of the corpus (`-v` shows them all"),
        "{plain}"
    );
    let verbose = build(&["-v"], "b");
    assert!(count(&verbose) > 10, "{verbose}");
    assert!(!verbose.contains("more links point"), "{verbose}");
    let both = c2s(&repo, &["build", "docs", "-q", "-v"]);
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn every_command_help_shows_an_example() {
    let tmp = tempfile::tempdir().unwrap();
    for cmd in [
        "build",
        "check",
        "watch",
        "clean",
        "ask",
        "mcp",
        "eval",
        "publish",
        "pack",
        "init",
        "completions",
    ] {
        let o = c2s(tmp.path(), &[cmd, "--help"]);
        assert!(o.status.success());
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(
            help.contains("Example"),
            "`c2s {cmd} --help` has no example:\n{help}"
        );
        assert!(help.contains(&format!("c2s {cmd}")), "{help}");
    }
}

#[test]
fn a_failed_build_leaves_no_new_files() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir_all(d.join("empty")).unwrap();
    let o = c2s(d, &["build", "empty", "--out", "out"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no usable documents in empty"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains(".pdf .docx"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(".mdx .rst .rest .txt"),
        "{}",
        stderr(&o)
    );
    let left: Vec<String> = crate::common::files(d);
    assert!(left.is_empty(), "a failed build left {left:?}");
    // A cache folder that holds a memo stays whatever happens.
    std::fs::write(d.join("empty/a.md"), "# A\n\nSome text about invoices.\n").unwrap();
    ok(d, &["build", "empty", "--out", "out", "-q"]);
    std::fs::remove_file(d.join("empty/a.md")).unwrap();
    assert_eq!(
        c2s(d, &["build", "empty", "--out", "out"]).status.code(),
        Some(2)
    );
    assert!(d.join("cache/c2s.sqlite").is_file());
}

#[test]
fn an_output_named_as_path_is_read_and_clean_cache_works_after_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    crate::common::synth_corpus(&d.join("docs"), 20, 2, 3);
    ok(d, &["build", "docs", "--out", "skills-out", "-q"]);
    // `c2s ask --offline "q" skills-out`: the folder is the output, not a corpus to compile.
    let asked = c2s(d, &["ask", "--offline", "topic", "skills-out", "-q"]);
    assert!(asked.status.success(), "{}", stderr(&asked));
    assert!(String::from_utf8_lossy(&asked.stdout).contains("sources"));
    assert_eq!(c2s(d, &["check", "skills-out"]).status.code(), Some(0));
    // clean, then clean --cache: the memo beside the output goes too.
    ok(d, &["clean", "--out", "skills-out", "-q"]);
    assert!(d.join("cache/c2s.sqlite").is_file());
    let again = c2s(d, &["clean", "--out", "skills-out", "--cache"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(!d.join("cache/c2s.sqlite").exists());
}

#[test]
fn counts_of_one_are_singular() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir_all(d.join("docs")).unwrap();
    std::fs::write(d.join("docs/a.md"), "# A\n\nSome text about invoices.\n").unwrap();
    let o = c2s(d, &["build", "docs", "--out", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(said.contains("Ingested 1 document from 1 file"), "{said}");
    assert!(
        said.contains("Embedded 1 document, 0 passages of long ones"),
        "{said}"
    );
    assert!(said.contains("1 document → 1 skill, 1 level"), "{said}");
}
