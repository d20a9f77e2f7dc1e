#!/usr/bin/env bash
# The answering methods with a small local model on a shared benchmark set (issue 53's
# comparison): rag, agentic-search, agent and guided, one model for all, on llama.cpp's server
# (scripts/serve-llm.sh) with the config in bench/small-models/c2s.toml.
#
# Usage: scripts/bench-small-models.sh MODEL N MINUTES [SET] [PORT]
#   MODEL    0.5b or 1.5b (from scripts/fetch-llm.sh)
#   N        the first N questions of the set
#   MINUTES  --max-minutes: no question starts after it; run the same command again to go on
#            (every answer is memoized in bench/small-models/cache/)
#   SET      a folder of ../shared/data, or a path to a set (default wixqa-sample)
# Writes bench/results/<set>-qwen2.5-coder-<model>-<commit>.json (per-question answers, metrics,
# tokens and seconds) and prints the summary table. C2S_BIN picks the binary (default
# target/release/c2s); BENCH_BASE_URL uses a server that is already running instead of starting
# one; BENCH_RESULTS writes the results file into another folder, BENCH_CACHE keeps the tree and
# the memo of answers in another folder than bench/small-models/cache. BENCH_METHODS picks the
# methods (default rag,agentic-search,agent,guided): more questions for two of them cost a
# fraction of the time (the free-form agent takes 3 to 6 times a guided walk's).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
model="${1:?usage: $0 MODEL N MINUTES [SET] [PORT]}" n="${2:?N}" minutes="${3:?MINUTES}"
set_name="${4:-wixqa-sample}" port="${5:-8093}"
bin="${C2S_BIN:-$root/target/release/c2s}"
data="$root/../shared/data/$set_name"
case "$set_name" in */*) data="$set_name"; set_name="$(basename "$set_name")" ;; esac
[ -d "$data" ] || { echo "bench-small-models: no data set at $data" >&2; exit 2; }
name="qwen2.5-coder-$model-instruct-q4_k_m"
commit="$(git -C "$root" rev-parse --short HEAD)"
out="${BENCH_RESULTS:-$root/bench/results}/$set_name-qwen2.5-coder-$model-$commit.json"
cache="${BENCH_CACHE:-$root/bench/small-models/cache}"
base_url="${BENCH_BASE_URL:-}"
if [ -z "$base_url" ]; then
  "$root/scripts/serve-llm.sh" start --model "$model" --port "$port" --ctx 8192 >/dev/null
  trap '"$root/scripts/serve-llm.sh" stop --port "$port" >/dev/null 2>&1 || true' EXIT
  base_url="http://127.0.0.1:$port/v1"
fi
"$bin" eval --data "$data" --config "$root/bench/small-models/c2s.toml" \
  --set "agent.model=\"$name\"" --set "agent.base_url=\"$base_url\"" \
  --set "cache.path=\"$cache/memo.sqlite\"" \
  --limit "$n" --methods "${BENCH_METHODS:-rag,agentic-search,agent,guided}" --max-minutes "$minutes" \
  --out "$cache/tree-$set_name" --json "$out"
echo "results: $out"
