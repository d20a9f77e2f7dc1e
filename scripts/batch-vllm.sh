#!/usr/bin/env bash
# Compile a corpus through an offline runner of the OpenAI batch format (vLLM's `run-batch`):
# export each dependent step's LLM requests, run them, import the answers, until the build
# completes. Extra arguments go to every `c2s build` (e.g. a corpus path or --out).
#
#   RUN_BATCH='vllm run-batch --model Qwen/Qwen2.5-7B-Instruct' scripts/batch-vllm.sh
#
# The model named in RUN_BATCH must be llm.model in c2s.toml (vLLM checks each request's model).
set -euo pipefail
: "${RUN_BATCH:?set RUN_BATCH to the runner command, e.g. RUN_BATCH=\"vllm run-batch --model MODEL\"}"
dir=${BATCH_DIR:-c2s-batches}
mkdir -p "$dir/in" "$dir/out"
c2s build --batch-export "$dir/in" "$@"
while compgen -G "$dir/in/*.jsonl" >/dev/null; do
  rm -f "$dir"/out/*.jsonl
  for f in "$dir"/in/*.jsonl; do
    $RUN_BATCH -i "$f" -o "$dir/out/$(basename "$f")"
  done
  c2s build --batch-import "$dir"/out/*.jsonl --batch-export "$dir/in" "$@"
done
