//! The `onnx` embedder: parity with Python onnxruntime, an end-to-end build of wixqa-sample,
//! memo keys that follow the model settings, and errors that say how to get the parts.

use std::path::{Path, PathBuf};

use c2s::config::OnnxConfig;
use c2s::embed::{Embedder, Onnx};

use crate::common::{c2s, ok, repo, skip, stderr};

/// The model folder and runtime library that `scripts/fetch-models.sh` unpacks.
pub fn model_parts() -> Option<(PathBuf, PathBuf)> {
    let models = std::env::var_os("C2S_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("models"));
    let model_dir = models.join("all-MiniLM-L6-v2-int8");
    let lib = std::env::var_os("ORT_DYLIB_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| models.join("onnxruntime-1.32.0/libonnxruntime.so.1.32.0"));
    if model_dir.join("model.onnx").is_file() && lib.is_file() {
        Some((model_dir, lib))
    } else {
        skip(&format!(
            "ONNX model or runtime not found under {} (run scripts/fetch-models.sh)",
            models.display()
        ));
        None
    }
}

/// `--set` overrides that select the onnx embedder.
fn onnx_sets(model_dir: &Path, lib: &Path) -> Vec<String> {
    vec![
        "embed.backend=onnx".into(),
        format!("embed.onnx.model_dir={:?}", model_dir.display().to_string()),
        format!("embed.onnx.library={:?}", lib.display().to_string()),
    ]
}

fn with_sets<'a>(mut args: Vec<&'a str>, sets: &'a [String]) -> Vec<&'a str> {
    for s in sets {
        args.push("--set");
        args.push(s);
    }
    args
}

/// A temp folder with `docs/a.md`.
fn one_doc() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("docs")).unwrap();
    std::fs::write(tmp.path().join("docs/a.md"), "# A\n\nSome text.\n").unwrap();
    tmp
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let d: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let n =
        a.iter().map(|x| x * x).sum::<f32>().sqrt() * b.iter().map(|x| x * x).sum::<f32>().sqrt();
    d / n
}

#[test]
fn vectors_match_python_onnxruntime() {
    let Some((model_dir, lib)) = model_parts() else {
        return;
    };
    let fixture: serde_json::Value = serde_json::from_slice(
        &std::fs::read(repo().join("tests/fixtures/onnx/reference.json")).unwrap(),
    )
    .unwrap();
    let rows = fixture["rows"].as_array().unwrap();
    let texts: Vec<&str> = rows.iter().map(|r| r["text"].as_str().unwrap()).collect();
    let want: Vec<Vec<f32>> = rows
        .iter()
        .map(|r| {
            r["vector"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect()
        })
        .collect();
    let cfg = OnnxConfig {
        threads: 1,
        batch_size: 3,
        ..OnnxConfig::default()
    };
    let e = Onnx::new(&cfg, &model_dir, Some(lib), None).unwrap();
    assert_eq!(e.dims(), 384);
    // All at once (padded batches of mixed lengths), and one by one: both match the reference.
    let batched = e.embed(&texts).unwrap();
    for (i, t) in texts.iter().enumerate() {
        let single = e.embed(&[t]).unwrap().remove(0);
        for (how, got) in [("batched", &batched[i]), ("single", &single)] {
            let c = cosine(got, &want[i]);
            assert!(c >= 0.999, "{how} sentence {i} ({t:.40}): cosine {c}");
        }
        let norm = batched[i].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "not L2-normalized: {norm}");
    }
    assert_eq!(e.device(), "cpu");
}

#[test]
fn wixqa_sample_builds_with_onnx_embeddings() {
    let Some((model_dir, lib)) = model_parts() else {
        return;
    };
    let data = crate::common::data_dir().join("wixqa-sample/corpus.jsonl");
    if !data.is_file() {
        skip(&format!("benchmark data {} not found", data.display()));
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut sets = onnx_sets(&model_dir, &lib);
    sets.push(format!(
        "cache.path={:?}",
        tmp.path().join("memo.sqlite").display().to_string()
    ));
    let args = with_sets(
        vec![
            "build",
            data.to_str().unwrap(),
            "--json",
            "--out",
            out.to_str().unwrap(),
        ],
        &sets,
    );
    let o = c2s(&repo(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["documents"], 173);
    assert_eq!(report["stages"]["embed"]["computed"], 173);
    assert!(
        stderr(&o).contains("ONNX Runtime on the CPU"),
        "{}",
        stderr(&o)
    );
    let lock: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("c2s.lock")).unwrap()).unwrap();
    let model = lock.to_string();
    assert!(
        model.contains("onnx:") && model.contains(":mean:256:l2"),
        "{model}"
    );
    // The same build again reuses every vector.
    let o = c2s(&repo(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let again: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        again["stages"]["embed"]["computed"].as_u64().unwrap_or(0) == 0,
        "{again}"
    );
}

#[test]
fn pooling_and_max_tokens_are_part_of_the_memo_key() {
    let Some((model_dir, lib)) = model_parts() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    for (i, t) in [
        "Billing and invoices",
        "Custom domains and DNS",
        "Mobile app login",
    ]
    .iter()
    .enumerate()
    {
        std::fs::write(
            docs.join(format!("d{i}.md")),
            format!("# {t}\n\nHow {t} work, step by step.\n"),
        )
        .unwrap();
    }
    let mut sets = onnx_sets(&model_dir, &lib);
    sets.push("tree.K=2".into());
    let embeds = |extra: &[&str]| -> u64 {
        let mut s = sets.clone();
        s.extend(extra.iter().map(|x| x.to_string()));
        let args = with_sets(vec!["build", "docs", "--json"], &s);
        let o = c2s(tmp.path(), &args);
        assert!(o.status.success(), "{}", stderr(&o));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        r["stages"]["embed"]["computed"].as_u64().unwrap()
    };
    assert_eq!(embeds(&[]), 3);
    assert_eq!(
        embeds(&["embed.onnx.threads=1", "embed.onnx.batch_size=2"]),
        0,
        "threads and batching do not change vectors"
    );
    assert_eq!(embeds(&["embed.onnx.pooling=\"cls\""]), 3);
    assert_eq!(embeds(&["embed.onnx.max_tokens=64"]), 3);
    assert_eq!(
        embeds(&[]),
        0,
        "the first settings' vectors are still cached"
    );
}

#[test]
fn missing_parts_say_how_to_get_them() {
    let tmp = one_doc();
    let empty = tmp.path().join("no-model");
    let o = c2s(
        tmp.path(),
        &[
            "build",
            "docs",
            "--set",
            "embed.backend=onnx",
            "--set",
            &format!("embed.onnx.model_dir={:?}", empty.display().to_string()),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("model.onnx") && e.contains("scripts/fetch-models.sh"),
        "{e}"
    );
    assert!(!e.contains("panicked"), "{e}");

    let Some((model_dir, _)) = model_parts() else {
        return;
    };
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args([
            "build",
            "docs",
            "--set",
            "embed.backend=onnx",
            "--set",
            &format!("embed.onnx.model_dir={:?}", model_dir.display().to_string()),
        ])
        .current_dir(tmp.path())
        .env_remove("ORT_DYLIB_PATH")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("ORT_DYLIB_PATH") && e.contains("fetch-models.sh"),
        "{e}"
    );
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn a_dims_mismatch_is_an_error_not_a_panic() {
    let Some((model_dir, lib)) = model_parts() else {
        return;
    };
    let tmp = one_doc();
    let mut sets = onnx_sets(&model_dir, &lib);
    sets.push("embed.dims=100".into());
    let o = c2s(tmp.path(), &with_sets(vec!["build", "docs"], &sets));
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("384") && e.contains("embed.dims"), "{e}");
    ok(
        tmp.path(),
        &with_sets(vec!["build", "docs", "-q"], &onnx_sets(&model_dir, &lib)),
    );
}

#[test]
fn cuda_falls_back_to_the_cpu_with_a_note() {
    let Some((model_dir, lib)) = model_parts() else {
        return;
    };
    let tmp = one_doc();
    let mut sets = onnx_sets(&model_dir, &lib);
    sets.push("embed.onnx.device=\"cuda\"".into());
    let o = c2s(
        tmp.path(),
        &with_sets(vec!["build", "docs", "--json"], &sets),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The PyPI CPU build has no CUDA provider (and this machine no GPU): the CPU runs, with a note.
    let e = stderr(&o);
    assert!(
        e.contains("CUDA execution provider did not start") && e.contains("running on the CPU"),
        "{e}"
    );
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["embed_device"], "cpu");
}
