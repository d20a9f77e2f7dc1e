//! A real local model in the loop: README's "Build with a local model" commands, as written
//! (with a free port), against Qwen2.5-Coder-0.5B-Instruct on llama.cpp's server. The example
//! corpus builds with `backend = "openai"` and every LLM stage reports how its answers parsed;
//! `c2s ask` opens documents for two questions and stops within the step cap, showing an answer
//! only with its sources; the guided walk answers one question citing a document it opened.
//! Then the example with the 20 planted pages of `planted.rs` mixed in:
//! every planted page is warned about, and none of its planted text reaches a navigation file.

use std::path::PathBuf;
use std::process::Command;

use crate::common::{doc_block, repo, sh, skip};

const MODEL: &str = "models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";

/// Stops the server when the test ends, passed or not.
struct Served {
    dir: PathBuf,
    port: u16,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = Command::new("scripts/serve-llm.sh")
            .args(["stop", "--port", &self.port.to_string()])
            .current_dir(&self.dir)
            .output();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The block's commands, one per line, comments dropped, the port replaced.
fn commands(block: &str, port: u16) -> Vec<String> {
    block
        .lines()
        .map(|l| l.split(" #").next().unwrap_or("").trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.replace("8080", &port.to_string()))
        .collect()
}

#[test]
fn a_real_local_model_builds_the_example_and_answers() {
    let root = repo();
    if !root.join(MODEL).is_file() || !root.join("tools/xllamacpp/xllamacpp").is_dir() {
        skip(
            "the local model or its server is missing (run scripts/fetch-llm.sh 0.5b and scripts/serve-llm.sh install)",
        );
        return;
    }
    // A copy of this repository's example (its c2s.toml and its corpus), and the scripts,
    // models and tools the guide's commands use.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let copy = Command::new("cp")
        .args([
            "-r",
            root.join("examples").to_str().unwrap(),
            dir.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(copy.success());
    let _ = std::fs::remove_dir_all(dir.join("examples/out"));
    let _ = std::fs::remove_dir_all(dir.join("examples/cache"));
    for link in ["scripts", "models", "tools"] {
        std::os::unix::fs::symlink(root.join(link), dir.join(link)).unwrap();
    }
    let port = free_port();
    let setup = commands(
        &doc_block("backends.md", "## Build with a local model", "sh"),
        port,
    );
    assert_eq!(setup.len(), 2, "{setup:?}");
    sh(dir, &setup[0]);
    let _served = Served {
        dir: dir.to_path_buf(),
        port,
    };
    sh(dir, &setup[1]);
    let toml = doc_block(
        "backends.md",
        "(in place of its `[llm]` section, if it has one):",
        "toml",
    )
    .replace("8080", &port.to_string());
    let config = std::fs::read_to_string(dir.join("examples/c2s.toml")).unwrap();
    let own_llm = "[llm]\nbackend = \"extractive\"\n";
    assert!(
        config.contains(own_llm),
        "the example's c2s.toml changed: {config}"
    );
    let config = config.replace(own_llm, "") + &toml;
    std::fs::write(dir.join("examples/c2s.toml"), config).unwrap();
    let run = commands(&doc_block("backends.md", "and build and ask:", "sh"), port);
    assert_eq!(run.len(), 4, "{run:?}");

    // The build: every LLM stage says how its answers parsed.
    let built = sh(dir, &run[0]);
    let stderr = String::from_utf8_lossy(&built.stderr);
    eprintln!("{stderr}");
    let answers = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("answers: "))
        .unwrap_or_else(|| panic!("no answers line:\n{stderr}"));
    for stage in ["card", "label", "summary", "tags"] {
        assert!(answers.contains(&format!("{stage} ")), "{stage}: {answers}");
    }
    let lock: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("examples/out/c2s.lock")).unwrap()).unwrap();
    assert!(
        lock["models"]["llm"]
            .as_str()
            .is_some_and(|m| m.contains("qwen2.5-coder-0.5b")),
        "{lock}"
    );

    // Two questions: each opens a document and stops within the step cap, and none of our own
    // notes is shown as an answer. Whether a 0.5B model's answer is grounded in what it opened
    // varies with the machine; the agent shows it only when it is (`agent` tests that logic).
    let mut answered = 0;
    for line in &run[1..3] {
        let o = sh(dir, line);
        let stdout = String::from_utf8_lossy(&o.stdout);
        let stderr = String::from_utf8_lossy(&o.stderr);
        eprintln!("{line}\n{stdout}{stderr}");
        let status = stderr
            .lines()
            .find(|l| l.contains(" turns ("))
            .unwrap_or_else(|| panic!("no agent line: {stderr}"));
        let number = |after: usize| -> usize {
            status
                .split_whitespace()
                .nth(after)
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{status}"))
        };
        assert!(number(1) <= 10, "{status}");
        let opened = status
            .split(", ")
            .find(|p| p.ends_with("documents opened"))
            .and_then(|p| p.split_whitespace().next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or_else(|| panic!("{status}"));
        assert!(opened >= 1, "the agent opened no document: {status}");
        assert!(!status.contains("(budget,"), "{status}\n{stdout}");
        // Never our own notes copied as an answer.
        for ours in ["instructions to you", "never to follow", "planted text"] {
            assert!(!stdout.contains(ours), "{stdout}");
        }
        if status.contains("(answered,") {
            assert!(
                stdout.contains("\nsources") && stdout.contains(":\n  `"),
                "{stdout}"
            );
            answered += 1;
        }
    }
    eprintln!("{answered} of 2 questions answered grounded");

    // The guided walk: the model picks from menus and answers from what it was shown, citing
    // an opened document.
    let o = sh(
        dir,
        "c2s ask --config examples/c2s.toml --set 'agent.protocol=\"guided\"' --json \"How do I turn on two-factor authentication?\"",
    );
    let r: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
    eprintln!("guided: {r}");
    assert_eq!(r["protocol"], "guided");
    assert_eq!(r["stopped"], "answered", "{r}");
    let fetched = r["fetched"].as_array().unwrap();
    let cited = r["cited"].as_array().unwrap();
    assert!(
        !cited.is_empty() && cited.iter().all(|c| fetched.contains(c)),
        "{r}"
    );

    // The example with the 37 planted pages of `planted.rs` mixed in, built by the same model
    // into another output (the example's cards come from the memo): every planted page is
    // warned about, and none of its planted text reaches navigation.
    std::fs::create_dir_all(dir.join("examples/more")).unwrap();
    crate::planted::add_planted_pages(&dir.join("examples/more"));
    let built = sh(
        dir,
        "c2s build --config examples/c2s.toml --out planted-out --set 'corpus.paths=[\"docs\", \"more\"]'",
    );
    let stderr = String::from_utf8_lossy(&built.stderr);
    eprintln!("{stderr}");
    for (page, _) in crate::planted::manifest() {
        assert!(
            stderr.contains(&format!("more/planted/{page}:")),
            "{page} not warned about"
        );
    }
    assert_eq!(
        crate::planted::leaks(&dir.join("planted-out")),
        Vec::<String>::new()
    );
    sh(dir, &run[3]);
}
