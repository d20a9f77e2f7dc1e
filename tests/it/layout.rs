//! The source tree keeps its layers: no import cycle between top-level modules of `src/`
//! (`scripts/module-deps.py --cycles`, which lists each cycle it finds).

use std::process::Command;

#[test]
fn no_import_cycle_between_top_level_modules() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new("python3")
        .arg(repo.join("scripts/module-deps.py"))
        .arg("--cycles")
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "import cycles between top-level modules:\n{}",
        String::from_utf8_lossy(&o.stdout)
    );
}
