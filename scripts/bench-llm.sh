#!/usr/bin/env bash
# LLM client throughput: N card calls against the loopback server with a fixed latency, at a
# given concurrency; prints each run and the median ratio to concurrency / latency.
# usage: scripts/bench-llm.sh [DOCS] [CONCURRENCY] [LATENCY_MS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
docs="${1:-1000}"; conc="${2:-20}"; lat="${3:-100}"; rounds="${4:-3}"
cargo bench --bench llm_throughput --no-run -q 2>/dev/null
log=target/bench/llm-runs.jsonl
mkdir -p target/bench
: >"$log"
for _ in $(seq "$rounds"); do
  cargo bench -q --bench llm_throughput -- "$docs" "$conc" "$lat" | tee -a "$log"
done
python3 - "$log" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
print(f"median calls/s {statistics.median(r['calls_per_s'] for r in runs):.1f} of ideal {runs[0]['ideal_per_s']:.1f}: "
      f"ratio {statistics.median(r['ratio'] for r in runs):.3f}")
PY
