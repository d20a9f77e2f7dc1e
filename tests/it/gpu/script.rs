//! `scripts/gpu-check.sh` and `scripts/gpu_summary.py`: the GPU check from prebuilt binaries
//! on the software Vulkan device, its deadline, what it leaves in `$OUT`, and the summary's
//! verdicts against the GPU targets.

use super::gpu;
use std::path::Path;

/// `scripts/gpu-check.sh DIR` as the README gives it, on this build's binaries (`it` is this
/// test binary; no benchmark binary, so that step says it skipped), at a small size, with its
/// log, figures and summary in `$OUT`.
#[test]
fn gpu_check_script_runs_from_prebuilt_binaries() {
    if gpu().is_none() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let text = gpu_check(&["300", "500", "16", "8"], &[("OUT", out.path())], true);
    assert!(
        text.contains("test result: ok. ") && text.contains(" 0 failed"),
        "{text}"
    );
    assert!(text.contains("skipped: ") && text.contains("no kmeans benchmark binary"));
    for variant in ["cpu", "gpu", "gpu-all"] {
        assert!(text.contains(&format!("\n{variant}: wall ")), "{text}");
    }
    // At this size every run is below the default kmeans.gpu_min_work, unless it is 0.
    assert!(
        text.contains(
            "gpu: K-Means ran on cpu (every batch of runs was smaller than kmeans.gpu_min_work"
        ),
        "{text}"
    );
    assert!(text.contains("gpu-all: K-Means ran on gpu: "), "{text}");
    // The documents' clusters' inertia of each GPU build against the CPU build's.
    for variant in ["gpu", "gpu-all"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("inertia {variant}: ")))
            .unwrap_or_else(|| panic!("no inertia line for {variant}: {text}"));
        let ratio: f64 = line.split(' ').nth(2).unwrap().parse().unwrap();
        assert!((ratio - 1.0).abs() < 0.005, "{line}");
    }
    // Same tree on every device, up to the shader's documented near-ties.
    for variant in ["gpu", "gpu-all"] {
        assert!(
            text.contains(&format!(
                "outputs {variant}: identical to cpu (c2s.lock aside)"
            )) || text.contains(&format!("outputs {variant}: "))
                && text.contains("(near-tie assignments)"),
            "{text}"
        );
    }
    // The summary, last: the GPU's inertia within 0.5%; no benchmark, so no speed figure;
    // the default build's K-Means stayed on the CPU, so its speed is not measured either.
    let summary = text.split("== summary\n").nth(1).expect("a summary");
    assert!(
        summary.contains("exact K-Means: not measured [>= 10x: not measured]"),
        "{summary}"
    );
    assert!(
        summary.contains("cold build of 300 documents, gpu-all, inertia: ")
            && summary.contains("[within 0.5%: met]"),
        "{summary}"
    );
    assert!(
        summary.contains("cold build of 300 documents, tree step, gpu: not measured"),
        "{summary}"
    );
    // $OUT holds the whole log, one line of figures per build and the summary.
    let log = std::fs::read_to_string(out.path().join("gpu-check.log")).unwrap();
    assert!(log.contains("== 3. cold c2s build") && log.contains("== summary"));
    let figures = std::fs::read_to_string(out.path().join("results.jsonl")).unwrap();
    let builds: Vec<serde_json::Value> = figures
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v.get("build").is_some())
        .collect();
    assert_eq!(builds.len(), 3, "{figures}");
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("summary.json")).unwrap())
            .unwrap();
    assert!(rows.as_array().unwrap().len() >= 6, "{rows}");
}

/// `scripts/gpu-check.sh DIR --million N` at a small N: a cold build on the GPU, then `--full`
/// rebuilds on the GPU and the CPU, compared by K-Means seconds and inertia.
#[test]
fn gpu_check_script_times_the_tree_step_of_a_large_build() {
    if gpu().is_none() {
        return;
    }
    let text = gpu_check(&["--million", "400"], &[], true);
    for variant in ["cold-gpu", "full-gpu", "full-cpu"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{variant}: wall ")))
            .unwrap_or_else(|| panic!("no {variant} line: {text}"));
        assert!(
            line.contains(" tree ") && line.contains("; K-Means "),
            "{line}"
        );
    }
    assert!(text.contains("inertia full-gpu: "), "{text}");
    assert!(!text.contains("== 1. shader tests"), "{text}");
    assert!(
        text.contains("[equal for one seed on one device: met]"),
        "{text}"
    );
    assert!(
        text.contains("the large build had 400 documents, not 1,000,000"),
        "{text}"
    );
}

/// A shader test that fails on the device does not end the check: the builds still run (the
/// one device call must bring their figures back), and the summary says the tests failed.
#[test]
fn gpu_check_goes_on_when_a_shader_test_fails() {
    if gpu().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let it = tmp.path().join("failing-it");
    std::fs::write(
        &it,
        "#!/bin/sh\necho 'test gpu::kernels::x ... FAILED'\nexit 101\n",
    )
    .unwrap();
    std::fs::set_permissions(&it, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = tempfile::tempdir().unwrap();
    let text = gpu_check_with(
        &it,
        &["300", "500", "16", "8"],
        &[("OUT", out.path())],
        true,
    );
    assert!(
        text.contains("the shader tests FAILED (exit code 101); the steps below still run"),
        "{text}"
    );
    assert!(text.contains("\ngpu-all: wall "), "{text}");
    assert!(
        text.contains("shader tests on this device: failed [pass: NOT met]"),
        "{text}"
    );
    let results = std::fs::read_to_string(out.path().join("results.jsonl")).unwrap();
    assert!(
        results.contains(r#"{"shader_tests":"failed"}"#),
        "{results}"
    );
}

/// The one-call form docs/src/gpu.md gives, with a deadline already past: every step says it
/// was skipped, and the summary counts nothing as met. Needs no GPU: nothing runs.
#[test]
fn gpu_check_script_skips_what_the_deadline_leaves_no_time_for() {
    let line = crate::common::doc_block("gpu.md", "lent for a limited time", "console");
    let words: Vec<&str> = line.split_whitespace().collect();
    // NAME=VALUE ... scripts/gpu-check.sh DIR ARGS
    let at = words
        .iter()
        .position(|w| *w == "scripts/gpu-check.sh")
        .expect("the command runs scripts/gpu-check.sh");
    let names: Vec<&str> = words[..at]
        .iter()
        .map(|w| w.split('=').next().unwrap())
        .collect();
    assert_eq!(names, ["GPU_CHECK_DEADLINE", "OUT"], "{line}");
    assert_eq!(words[at + 1], "DIR", "{line}");
    let out = tempfile::tempdir().unwrap();
    let text = gpu_check(
        &words[at + 2..],
        &[("GPU_CHECK_DEADLINE", Path::new("1")), ("OUT", out.path())],
        false,
    );
    for step in [
        "the shader tests",
        "the K-Means benchmark",
        "the cold builds",
        "generating 1000000 documents",
    ] {
        assert!(
            text.contains(&format!("skipped {step}: ")),
            "{step}: {text}"
        );
        assert!(
            text.contains(&format!("skipped at the deadline: {step}")),
            "{text}"
        );
    }
    assert!(
        !text.contains(": met]") && !text.contains("NOT met"),
        "{text}"
    );
    assert!(text.contains("exact K-Means: not measured"), "{text}");
    assert!(
        text.contains("--full rebuild of 1000000 documents, tree step: not measured"),
        "{text}"
    );
    let log = std::fs::read_to_string(out.path().join("gpu-check.log")).unwrap();
    assert!(log.contains("skipped the shader tests: "), "{log}");
}

/// Step 3's comparison of two outputs (`--compare`): the lock aside, identical; else how many
/// files differ and the first five, and the script goes on (diff's exit status under
/// pipefail once ended it there, before the summary). Needs no GPU.
#[test]
fn gpu_check_compare_lists_differing_outputs_and_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("out-cpu"), tmp.path().join("out-gpu"));
    for (dir, text) in [(&a, "one"), (&b, "two")] {
        std::fs::create_dir(dir).unwrap();
        std::fs::write(dir.join("c2s.lock"), text).unwrap();
        for i in 0..7 {
            std::fs::write(dir.join(format!("f{i}.md")), "same").unwrap();
        }
    }
    // Paths from where the script was started, as a user types them.
    let run = |x: &str, y: &str| {
        let o = std::process::Command::new(crate::common::repo().join("scripts/gpu-check.sh"))
            .arg("--compare")
            .args([x, y])
            .current_dir(tmp.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let same = run("out-cpu", "out-gpu");
    assert!(
        same.contains("identical to ") && same.contains("(c2s.lock aside)"),
        "{same}"
    );
    for i in 0..7 {
        std::fs::write(b.join(format!("f{i}.md")), "other").unwrap();
    }
    let differ = run("out-cpu", "out-gpu");
    assert!(differ.contains(": 7 files differ from "), "{differ}");
    assert_eq!(
        differ.lines().filter(|l| l.starts_with("Files ")).count(),
        5,
        "{differ}"
    );
}

/// The summary's arithmetic and verdicts on figures as gpu-check.sh records them: speed-ups
/// against their targets, a benchmark run that fell back to the CPU (not the GPU's time), and
/// a CPU rebuild stopped at the deadline (a lower bound).
#[test]
fn gpu_summary_judges_the_figures_against_the_targets() {
    let tmp = tempfile::tempdir().unwrap();
    let bench = |device: &str, secs: f64, inertia: f64| {
        format!(
            r#"{{"bench":{{"device":"{device}","seconds":{secs},"iterations":20,"inertia_cosine":{inertia},"inertia_sq_euclidean":0}},"n":200000,"d":384,"k":1000}}"#
        )
    };
    let stats = |runs: usize| {
        format!(
            r#"{{"bench":{{"gpu_stats":{{"gpu_runs":{runs},"batches":1,"cpu_runs":0,"round_trips":9,"upload_secs":0,"seed_secs":0,"lloyd_secs":0}}}},"n":200000,"d":384,"k":1000}}"#
        )
    };
    let build = |name: &str, docs: usize, tree: f64, inertia: f64, device: &str| {
        format!(
            r#"{{"build":"{name}","docs":{docs},"wall":{},"timings":{{"tree":{tree}}},"skills":8,"levels":3,"kmeans_secs":{},"leaf_inertia":{inertia},"kmeans_device":"{device}"}}"#,
            tree + 10.0,
            tree * 0.8
        )
    };
    let (mode, large) = (
        r#"{"mode":"all"}"#.to_string(),
        r#"{"large":500000}"#.to_string(),
    );
    let lines = [
        mode.clone(),
        r#"{"shader_tests":"failed"}"#.to_string(),
        bench("cpu (16 threads)", 30.0, 1000.0),
        bench("NVIDIA H200 (DiscreteGpu, Vulkan)", 2.5, 1001.0),
        stats(1),
        bench("cpu coarse-to-fine (16 threads)", 5.0, 1050.0),
        bench(
            "NVIDIA H200 (DiscreteGpu, Vulkan) coarse-to-fine",
            1.0,
            1100.0,
        ),
        stats(1),
        build("cpu", 50_000, 8.0, 500.0, "cpu (16 threads)"),
        build("gpu", 50_000, 4.0, 500.5, "gpu: NVIDIA H200 (1 run)"),
        build(
            "gpu-all",
            50_000,
            2.0,
            501.0,
            "gpu: NVIDIA H200 (1349 runs)",
        ),
        large.clone(),
        build("cold-gpu", 500_000, 20.0, 9000.0, "gpu: NVIDIA H200"),
        build("full-gpu", 500_000, 20.0, 9000.0, "gpu: NVIDIA H200"),
        r#"{"build":"full-cpu","docs":500000,"stopped_after":100.0}"#.to_string(),
    ];
    let text = summary(tmp.path(), &lines);
    // A failed shader test is a figure of its own; the others are still judged.
    assert!(
        text.contains("shader tests on this device: failed [pass: NOT met]"),
        "{text}"
    );
    // 30 / 2.5 = 12x; inertia +0.1%.
    assert!(
        text.contains(
            "exact K-Means 200000x384 k=1000: cpu 30.00 s, gpu 2.50 s: 12.00x [>= 10x: met]"
        ),
        "{text}"
    );
    assert!(
        text.contains("inertia: +0.100% [within 0.5%: met]"),
        "{text}"
    );
    // The coarse-to-fine GPU run's stats count no run of its own: the CPU ran it.
    assert!(
        text.contains("coarse-to-fine K-Means 200000x384 k=1000, inertia: not measured"),
        "{text}"
    );
    assert!(
        text.contains("tree step, gpu: cpu 8.00 s, gpu 4.00 s: 2.00x [>= 3x: NOT met]"),
        "{text}"
    );
    assert!(
        text.contains("tree step, gpu-all: cpu 8.00 s, gpu 2.00 s: 4.00x [>= 3x: met]"),
        "{text}"
    );
    assert!(
        text.contains("gpu-all, inertia: +0.200% [within 0.5%: met]"),
        "{text}"
    );
    // Stopped after 100 s; the GPU rebuild spent 10 s outside its 20 s tree step: the CPU's
    // tree step took at least 90 s, 4.5x.
    assert!(
        text.contains("cpu stopped after 100.0 s, gpu 20.00 s: at least 4.50x [>= 3x: met]"),
        "{text}"
    );
    assert!(
        text.contains("[equal for one seed on one device: met]"),
        "{text}"
    );
    assert!(
        text.contains("the large build had 500000 documents"),
        "{text}"
    );
    assert!(
        text.contains(
            "stopped at the deadline: the full-cpu build of 500000 documents, after 100.0 s"
        ),
        "{text}"
    );

    // A GPU benchmark run whose stats count no GPU run fell back to the CPU: not the GPU's time.
    let lines = [
        mode,
        bench("cpu (16 threads)", 30.0, 1000.0),
        bench("NVIDIA H200 (DiscreteGpu, Vulkan)", 29.0, 1000.0),
        stats(0),
        large,
        r#"{"build":"full-cpu","docs":500000,"stopped_after":100.0}"#.to_string(),
        build("full-gpu", 500_000, 50.0, 9000.0, "gpu: NVIDIA H200"),
    ];
    let text = summary(tmp.path(), &lines);
    assert!(
        text.contains("the benchmark's GPU run fell back to the CPU"),
        "{text}"
    );
    assert!(
        text.contains("exact K-Means 200000x384 k=1000: not measured [>= 10x: not measured]"),
        "{text}"
    );
    // A lower bound under the target proves nothing either way.
    assert!(
        text.contains("at least 1.80x [>= 3x: not measured]"),
        "{text}"
    );
    assert!(!text.contains("NOT met"), "{text}");
}

/// Runs `scripts/gpu_summary.py` on LINES; returns what it printed.
fn summary(tmp: &Path, lines: &[String]) -> String {
    let results = tmp.join("results.jsonl");
    std::fs::write(&results, lines.join("\n") + "\n").unwrap();
    let repo = crate::common::repo();
    let o = std::process::Command::new("python3")
        .arg(repo.join("scripts/gpu_summary.py"))
        .arg(&results)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs `scripts/gpu-check.sh DIR ARGS` with ENV on this build's binaries (DIR holds links to
/// the `c2s` binary and to this test binary as `it`); returns what it printed, once it
/// succeeded. EMULATED lets the benchmark take the software device.
fn gpu_check(args: &[&str], env: &[(&str, &Path)], emulated: bool) -> String {
    gpu_check_with(&std::env::current_exe().unwrap(), args, env, emulated)
}

/// [`gpu_check`] with `it` as the test binary.
fn gpu_check_with(it: &Path, args: &[&str], env: &[(&str, &Path)], emulated: bool) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bin");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_c2s"), dir.join("c2s")).unwrap();
    std::os::unix::fs::symlink(it, dir.join("it")).unwrap();
    let repo = crate::common::repo();
    let mut cmd = std::process::Command::new(repo.join("scripts/gpu-check.sh"));
    cmd.arg(&dir).args(args).current_dir(&repo);
    cmd.env_remove("OUT").env_remove("GPU_CHECK_DEADLINE");
    if emulated {
        cmd.env("C2S_BENCH_EMULATED", "1");
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    text
}
