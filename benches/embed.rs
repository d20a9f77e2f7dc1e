//! Embedding throughput of the `onnx` backend on a corpus's texts. Prints one JSON line.
//! Run through `scripts/bench-embed.sh`, which runs Python onnxruntime on the same texts.
//!
//! usage: cargo bench --bench embed -- CORPUS_JSONL MODEL_DIR LIBRARY THREADS BATCH MAX_TOKENS

use std::path::PathBuf;
use std::time::Instant;

use c2s::config::OnnxConfig;
use c2s::embed::{Embedder, Onnx};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [corpus, model_dir, lib, threads, batch, max_tokens] = &args[..] else {
        eprintln!("usage: embed CORPUS_JSONL MODEL_DIR LIBRARY THREADS BATCH MAX_TOKENS");
        std::process::exit(2);
    };
    let texts: Vec<String> = std::fs::read_to_string(corpus)
        .expect("read corpus")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("json line")["text"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let cfg = OnnxConfig {
        threads: threads.parse().expect("threads"),
        batch_size: batch.parse().expect("batch"),
        max_tokens: max_tokens.parse().expect("max_tokens"),
        ..OnnxConfig::default()
    };
    let e = Onnx::new(
        &cfg,
        &PathBuf::from(model_dir),
        Some(PathBuf::from(lib)),
        None,
    )
    .expect("model");
    let load = Instant::now();
    e.dims();
    let load_s = load.elapsed().as_secs_f64();
    // The same order as a build: shortest first, so batches pad little.
    let mut order: Vec<&str> = texts.iter().map(String::as_str).collect();
    order.sort_by_key(|t| t.len());
    let t0 = Instant::now();
    let v = e.embed(&order).expect("embed");
    let s = t0.elapsed().as_secs_f64();
    assert_eq!(v.len(), texts.len());
    println!(
        "{{\"impl\":\"c2s\",\"docs\":{},\"seconds\":{s:.3},\"docs_per_s\":{:.2},\"load_s\":{load_s:.3}}}",
        texts.len(),
        texts.len() as f64 / s
    );
}
