//! Card-call throughput against the loopback test server with a fixed latency: N documents,
//! `concurrency` requests in flight. Prints one JSON line with the ratio to the ideal
//! `concurrency / latency`. Run through `scripts/bench-llm.sh`.
//!
//! usage: cargo bench --bench llm_throughput -- DOCS CONCURRENCY LATENCY_MS

#[path = "../tests/it/llm_server.rs"]
#[allow(dead_code)]
mod llm_server;

use std::process::Command;
use std::time::Duration;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .map(|a| a.parse().expect("numbers: DOCS CONCURRENCY LATENCY_MS"))
        .collect();
    let [docs, concurrency, latency_ms] = args[..] else {
        eprintln!("usage: llm_throughput DOCS CONCURRENCY LATENCY_MS");
        std::process::exit(2);
    };
    let server = llm_server::Server::start();
    server.set_latency(Duration::from_millis(latency_ms as u64));
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    std::fs::create_dir(dir.join("docs")).unwrap();
    for i in 0..docs {
        std::fs::write(
            dir.join(format!("docs/doc-{i:05}.md")),
            format!(
                "# Document {i}\n\nText of document {i} about topic {}.\n",
                i % 37
            ),
        )
        .unwrap();
    }
    std::fs::write(
        dir.join("c2s.toml"),
        format!(
            "[corpus]\npaths = [\"docs\"]\n[llm]\nbackend = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"bench\"\n[llm.limits]\nconcurrency = {concurrency}\n",
            server.url
        ),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args(["build", "--json", "-q"])
        .current_dir(dir)
        .output()
        .expect("run c2s");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).expect("report");
    let secs = r["timings"]["card"].as_f64().expect("card timing");
    let calls = server.count("card");
    assert_eq!(calls, docs, "one card call per document");
    let per_s = calls as f64 / secs;
    let ideal = concurrency as f64 / (latency_ms as f64 / 1000.0);
    println!(
        "{{\"calls\":{calls},\"concurrency\":{concurrency},\"latency_ms\":{latency_ms},\"card_seconds\":{secs:.3},\"calls_per_s\":{per_s:.1},\"ideal_per_s\":{ideal:.1},\"ratio\":{:.3}}}",
        per_s / ideal
    );
}
