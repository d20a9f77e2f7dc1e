#!/usr/bin/env bash
# Embedding throughput: c2s's onnx backend against Python onnxruntime + tokenizers, same model,
# texts, threads, batch size and truncation, alternating in one run; prints medians and the ratio.
# usage: scripts/bench-embed.sh [CORPUS_JSONL] [THREADS] [ROUNDS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
corpus="${1:-$root/../shared/data/wixqa-sample/corpus.jsonl}"
threads="${2:-2}"
rounds="${3:-3}"
batch=32
max_tokens=256
models="$root/models"
"$root/scripts/fetch-models.sh" >/dev/null
venv="$root/target/bench/ortpy"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q onnxruntime==1.32.0 tokenizers numpy
fi
cd "$root"
cargo bench --bench embed --no-run -q 2>/dev/null
log="$root/target/bench/embed-runs.jsonl"
: >"$log"
for r in $(seq "$rounds"); do
  cargo bench -q --bench embed -- "$corpus" "$models/all-MiniLM-L6-v2-int8" \
    "$models/onnxruntime-1.32.0/libonnxruntime.so.1.32.0" "$threads" "$batch" "$max_tokens" | tee -a "$log"
  "$venv/bin/python" scripts/bench_embed.py "$corpus" "$models/all-MiniLM-L6-v2-int8" "$threads" "$batch" "$max_tokens" | tee -a "$log"
done
python3 - "$log" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
med = {i: statistics.median(r["docs_per_s"] for r in runs if r["impl"] == i) for i in ("c2s", "python")}
print(f"median docs/s: c2s {med['c2s']:.2f}, python {med['python']:.2f}, ratio c2s/python {med['c2s']/med['python']:.3f}")
PY
