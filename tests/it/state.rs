//! The committed output is the build state: a clone without the memo continues a build with the
//! same results, folder names and LLM calls as the clone that built it; a changed model
//! recomputes everything; a tampered state file is warned about and gives a correct cold build.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{append, c2s, commit_and_clone, contents, copy_dir, git, repo, stderr};
use crate::llm_server::Server;

/// A docs repo at `dir`: the example corpus and a config that builds it with the loopback model,
/// clustered (`structure = "cluster"`), so that an edit takes the warm start from the state.
fn docs_repo(dir: &Path, server: &Server) {
    copy_dir(&repo().join("examples/docs"), &dir.join("docs"));
    std::fs::write(
        dir.join("c2s.toml"),
        format!(
            "[corpus]\npaths = [\"docs\"]\n[output]\ndir = \"out\"\n[tree]\np = 5\nK = 4\nmin_cluster_size = 3\nstructure = \"cluster\"\n\
             [llm]\nbackend = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"test-model\"\n\
             [llm.limits]\nbackoff_s = 0.01\nmax_backoff_s = 0.05\n",
            server.url
        ),
    )
    .unwrap();
}

/// `c2s build --json` in `dir` (plus `args`): the report, and the LLM calls it made.
fn build(dir: &Path, server: &Server, args: &[&str]) -> (Value, usize) {
    let before = server.requests().len();
    let mut all = vec!["build", "--json"];
    all.extend_from_slice(args);
    let o = c2s(dir, &all);
    assert!(
        o.status.success(),
        "build in {}: {}",
        dir.display(),
        stderr(&o)
    );
    let report = serde_json::from_slice(&o.stdout).unwrap();
    (report, server.requests().len() - before)
}

fn edit(dir: &Path) {
    append(
        &dir.join("docs/auth/two-factor.md"),
        "\nRecovery codes can be printed from Settings > Security.\n",
    );
}

fn seeded(report: &Value) -> u64 {
    report["seeded"].as_u64().unwrap()
}

/// A: built and committed. Returns A and a fresh clone of it (no `cache/`).
fn built_and_cloned(tmp: &Path, server: &Server) -> (PathBuf, PathBuf) {
    let a = tmp.join("a");
    docs_repo(&a, server);
    build(&a, server, &[]);
    let b = tmp.join("b");
    commit_and_clone(&a, &b);
    assert!(!b.join("cache").exists(), "the memo is not committed");
    (a, b)
}

#[test]
fn a_fresh_clone_continues_the_build_with_the_same_calls_and_diff() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start();
    let (a, b) = built_and_cloned(tmp.path(), &server);
    edit(&a);
    edit(&b);
    let (ra, calls_a) = build(&a, &server, &[]);
    let (rb, calls_b) = build(&b, &server, &[]);
    assert_eq!(ra["tree"]["kind"], "warm", "{ra}");
    assert_eq!(rb["tree"]["kind"], "warm", "{rb}");
    assert_eq!(seeded(&ra), 0);
    assert!(seeded(&rb) > 0, "{rb}");
    assert_eq!(calls_a, calls_b, "A {ra}\nB {rb}");
    // One card, and per level above it a summary and a label, then the skill's tags; plus the
    // two tries of each label whose answers were rejected in this build.
    let levels = ra["levels"].as_u64().unwrap() as usize;
    let fallbacks: u64 = ra["llm_usage"]
        .as_object()
        .unwrap()
        .values()
        .map(|u| u["answers"]["fallback"].as_u64().unwrap())
        .sum();
    let most = 2 * levels + 2 + 2 * fallbacks as usize;
    assert!(calls_a >= 1 && calls_a <= most, "{calls_a} calls: {ra}");
    let stat = |dir: &Path| git(dir, &["diff", "--stat"]);
    assert_eq!(stat(&a), stat(&b));
    assert!(stat(&a).contains("two-factor"), "{}", stat(&a));
    assert_eq!(contents(&a.join("out")), contents(&b.join("out")));
    // The clone's memo now holds what it was seeded with: a rebuild seeds nothing more, and
    // neither asks anything, not even for the labels whose answers were rejected (their
    // stand-ins are remembered).
    let (again_a, calls_a) = build(&a, &server, &[]);
    let (again_b, calls_b) = build(&b, &server, &[]);
    assert_eq!(
        (seeded(&again_b), calls_a, calls_b),
        (0, 0, 0),
        "{again_a}\n{again_b}"
    );
}

#[test]
fn a_changed_model_in_a_fresh_clone_recomputes_everything() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start();
    let (_a, b) = built_and_cloned(tmp.path(), &server);
    let (r, calls) = build(&b, &server, &["--set", "llm.model=other-model"]);
    let docs = r["documents"].as_u64().unwrap();
    // No LLM result is taken from the state (embeddings are, where a card came out the same:
    // their key is the text embedded, which did not change).
    for stage in ["card", "summary", "label", "tags"] {
        assert_eq!(r["stages"][stage]["reused"], 0, "{stage}: {r}");
    }
    assert_eq!(r["stages"]["card"]["computed"].as_u64(), Some(docs));
    assert!(calls as u64 > docs, "{calls} calls");
}

#[test]
fn a_tampered_state_file_warns_and_gives_a_correct_cold_build() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start();
    let (a, b) = built_and_cloned(tmp.path(), &server);
    // A title changed by hand in the state: the lock's hash no longer matches.
    let state = b.join("out/state/card.jsonl");
    let text = std::fs::read_to_string(&state).unwrap();
    let line = text.lines().find(|l| l.contains("\"title\":")).unwrap();
    let forged = line.replacen("\"title\":\"", "\"title\":\"Forged ", 1);
    std::fs::write(&state, text.replacen(line, &forged, 1)).unwrap();
    let (r, _) = build(&b, &server, &[]);
    let warned = r["warning_list"].as_array().unwrap().iter().any(|w| {
        w["file"] == "out/state/card.jsonl" && w["message"].as_str().unwrap().contains("hash")
    });
    assert!(warned, "{r}");
    assert_eq!(r["tree"]["kind"], "full", "{r}");
    assert_eq!(seeded(&r), 0);
    assert!(!std::fs::read_to_string(&state).unwrap().contains("Forged"));
    // The same as a cold build of the same sources without any output.
    let c = tmp.path().join("c");
    git(
        tmp.path(),
        &["clone", "-q", a.to_str().unwrap(), c.to_str().unwrap()],
    );
    std::fs::remove_dir_all(c.join("out")).unwrap();
    build(&c, &server, &[]);
    assert_eq!(contents(&b.join("out")), contents(&c.join("out")));
}

/// The memo's rows of `stage` in the clone at `dir`.
fn memo_rows(dir: &Path, stage: &str) -> u64 {
    let db = rusqlite::Connection::open(dir.join("cache/c2s.sqlite")).unwrap();
    let n: i64 = db
        .query_row("SELECT count(*) FROM memo WHERE stage = ?1", [stage], |r| {
            r.get(0)
        })
        .unwrap();
    n as u64
}

fn count(report: &Value, stage: &str, what: &str) -> u64 {
    let n = report["stages"][stage][what].as_u64();
    n.unwrap_or_else(|| panic!("no {stage} {what} in {report}"))
}

/// With the offline backends a fresh clone computes every seeded result again to vet it; it
/// writes to the memo only what it computed for the edit (the vetted ones reach the next build
/// in the record of used results), the next edit reuses every other result, and without that
/// record a build computes them again: the clone's output stays the one the original's memo
/// gives for the same edits.
#[test]
fn an_offline_fresh_clone_vets_by_computing_and_the_next_edit_reuses_what_it_computed() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    copy_dir(&repo().join("examples/docs"), &a.join("docs"));
    std::fs::write(
        a.join("c2s.toml"),
        "[corpus]\npaths = [\"docs\"]\n[output]\ndir = \"out\"\n[tree]\nstructure = \"cluster\"\n",
    )
    .unwrap();
    let built = |dir: &Path| -> Value {
        let o = c2s(dir, &["build", "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    built(&a);
    let b = tmp.path().join("b");
    commit_and_clone(&a, &b);
    let edits = [
        (
            "docs/auth/two-factor.md",
            "Recovery codes can be printed from Settings > Security.",
        ),
        (
            "docs/billing/refunds.md",
            "Refunds to a closed card arrive as store credit.",
        ),
        (
            "docs/billing/invoices.md",
            "Invoices list the tax number of the account.",
        ),
    ];
    let edit_both = |(file, line): (&str, &str)| {
        for dir in [&a, &b] {
            append(&dir.join(file), &format!("\n{line}\n"));
        }
        built(&a);
        built(&b)
    };
    let first = edit_both(edits[0]);
    let docs = count(&first, "card", "computed") + count(&first, "card", "reused");
    assert!(seeded(&first) > docs, "{first}");
    assert_eq!(count(&first, "card", "computed"), 1, "{first}");
    for stage in ["card", "embed"] {
        assert_eq!(
            memo_rows(&b, stage),
            count(&first, stage, "computed"),
            "{stage}: only what the edit computed is in the memo: {first}"
        );
    }
    let second = edit_both(edits[1]);
    assert_eq!(seeded(&second), 0, "{second}");
    assert_eq!(
        (
            count(&second, "card", "computed"),
            count(&second, "card", "reused")
        ),
        (1, docs - 1),
        "{second}"
    );
    for used in std::fs::read_dir(b.join("cache")).unwrap() {
        let path = used.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("used-")
        {
            std::fs::remove_file(path).unwrap();
        }
    }
    // The memo holds the two cards the edits computed; every other one is computed again.
    let third = edit_both(edits[2]);
    assert_eq!(count(&third, "card", "computed"), docs - 2, "{third}");
    assert_eq!(contents(&a.join("out")), contents(&b.join("out")));
    let o = c2s(&b, &["check"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `scripts/bench-fresh-ab.py` with `args`, its stdout and stderr.
fn bench_ab(args: &[&std::ffi::OsStr]) -> (bool, String, String) {
    let o = std::process::Command::new("python3")
        .arg(repo().join("scripts/bench-fresh-ab.py"))
        .args(args)
        .output()
        .expect("python3 runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (o.status.success(), text(&o.stdout), text(&o.stderr))
}

#[test]
fn the_alternating_fresh_clone_benchmark_runs_and_reports_each_binary() {
    // `scripts/bench-fresh-ab.py` (docs/src/benchmarks.md) on a small corpus, the same binary
    // twice: two cold builds each, then an edit with the memo and a fresh-clone edit each.
    let tmp = tempfile::tempdir().unwrap();
    let bin = std::ffi::OsStr::new(env!("CARGO_BIN_EXE_c2s"));
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    let work = tmp.path().join("ab");
    let (ok, out, err) = bench_ab(&[
        os("--docs"),
        os("60"),
        os("--rounds"),
        os("1"),
        os("--work"),
        work.as_os_str(),
        bin,
        bin,
    ]);
    assert!(ok, "{out}{err}");
    let ratios: Vec<f64> = out
        .lines()
        .filter_map(|l| l.split(", ratio ").nth(1))
        .map(|r| r.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ratios.len(), 2, "{out}");
    assert!(ratios.iter().all(|&r| r > 0.0), "{out}");
    // Each fresh clone started without the memo and its records, and continued the output.
    for i in 0..2 {
        let d = work.join(format!("{i}-c2s"));
        for kind in ["memo", "fresh"] {
            let lock = d.join(kind).join("out").join("c2s.lock");
            assert!(lock.is_file(), "{}", lock.display());
        }
    }
    // `--cpus 1` (docs/src/benchmarks.md): the binary pinned to one core, named so in its line.
    let pinned = tmp.path().join("pinned");
    let (ok, out, err) = bench_ab(&[
        os("--docs"),
        os("30"),
        os("--rounds"),
        os("1"),
        os("--cpus"),
        os("1"),
        os("--work"),
        pinned.as_os_str(),
        bin,
    ]);
    assert!(ok, "{out}{err}");
    assert!(out.contains(" on 1 core: edit with the memo "), "{out}");
    let lock = pinned.join("0-c2s-1cpu/fresh/out/c2s.lock");
    assert!(lock.is_file(), "{}", lock.display());
    // A count the machine does not have is refused, naming the option and the limit.
    let none = tmp.path().join("none");
    let (ok, _, err) = bench_ab(&[
        os("--cpus"),
        os("100000"),
        os("--work"),
        none.as_os_str(),
        bin,
    ]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("--cpus: each count must be between 1 and"),
        "{err}"
    );
    assert!(!none.exists(), "nothing is made before the check");
}
