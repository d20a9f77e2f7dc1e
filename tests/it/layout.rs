//! The source tree keeps its layers: no import cycle between top-level modules of `src/`, nor
//! between the files of any one folder (`scripts/module-deps.py --cycles`, which lists each
//! cycle it finds); and what a build remembers between builds has one owner, `db::journal`,
//! the only file that names a record file beside the memo.

use std::process::Command;

#[test]
fn no_import_cycle_between_modules_or_between_the_files_of_a_folder() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new("python3")
        .arg(repo.join("scripts/module-deps.py"))
        .arg("--cycles")
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "import cycles (folder: a -> b -> a):\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn the_script_finds_a_cycle_between_the_files_of_a_folder() {
    // The check itself is checked: a copy of src/ with one planted sibling cycle fails it.
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("scripts")).unwrap();
    std::fs::copy(
        repo.join("scripts/module-deps.py"),
        dir.path().join("scripts/module-deps.py"),
    )
    .unwrap();
    let src = dir.path().join("src/pipeline");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("a.rs"), "use super::b::B;\npub struct A;\n").unwrap();
    std::fs::write(src.join("b.rs"), "pub struct B(crate::pipeline::a::A);\n").unwrap();
    std::fs::write(
        src.join("c.rs"),
        "use super::a::A;\n#[cfg(test)]\nuse super::b::B;\n",
    )
    .unwrap();
    let o = Command::new("python3")
        .arg(dir.path().join("scripts/module-deps.py"))
        .arg("--cycles")
        .output()
        .expect("python3 runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success(), "{out}");
    assert_eq!(out.trim(), "pipeline: a -> b -> a", "{out}");
}

#[test]
fn only_the_journal_names_the_files_beside_the_memo() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let kinds = ["stat", "used", "parsed", "recipes", "entries", "build"];
    let mut naming = Vec::new();
    let mut stack = vec![repo.join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let names_one = kinds.iter().any(|k| {
                ["index", "bin", "lock"]
                    .iter()
                    .any(|ext| text.contains(&format!("\"{k}\", \"{ext}\"")))
            });
            if names_one || text.contains("fn beside_memo") {
                naming.push(path.strip_prefix(repo).unwrap().display().to_string());
            }
        }
    }
    assert_eq!(naming, ["src/db/journal.rs"]);
}
