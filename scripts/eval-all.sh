#!/usr/bin/env bash
# Runs `c2s eval` on every benchmark set in ../shared/data (or $C2S_DATA_DIR) with both the
# default `hashed` embedder and `onnx` MiniLM (scripts/fetch-models.sh first), and prints one
# line per set and embedder: navigator and navigator+fallback Recall@5, the best flat method,
# the paired-bootstrap verdict on Recall@5, top-level routing accuracy, navigation bytes per
# query and the miss categories. Per-query JSON goes to $OUT (default target/eval-all).
# Usage: scripts/eval-all.sh [SET...]      C2S_BIN=path/to/c2s to evaluate another build.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
data="${C2S_DATA_DIR:-$root/../shared/data}"
out="${OUT:-$root/target/eval-all}"
sets=("$@")
[ ${#sets[@]} -eq 0 ] && sets=(wixqa-sample emanual covidqa)
embedders=(${EMBEDDERS:-hashed onnx})
if [ -z "${C2S_BIN:-}" ]; then
  (cd "$root" && cargo build --release --quiet)
  C2S_BIN="$root/target/release/c2s"
fi
mkdir -p "$out"
for e in "${embedders[@]}"; do
  cfg="$out/$e.toml"
  if [ "$e" = onnx ]; then
    cat > "$cfg" <<TOML
[embed]
backend = "onnx"
[embed.onnx]
model_dir = "$root/models/all-MiniLM-L6-v2-int8"
library = "$root/models/onnxruntime-1.32.0/libonnxruntime.so.1.32.0"
[cache]
path = "cache-onnx/c2s.sqlite"
TOML
  else
    printf '[cache]\npath = "cache-hashed/c2s.sqlite"\n' > "$cfg"
  fi
done
echo "c2s: $C2S_BIN; $(nproc) cores; one run each"
printf '%-13s %-7s %8s %8s %-14s %-22s %-5s %8s %9s  %s\n' set embed nav nav+fb best_flat "nav vs flat (R@5)" fb routing nav_bytes misses
for s in "${sets[@]}"; do
  for e in "${embedders[@]}"; do
    json="$out/$s-$e.json"
    "$C2S_BIN" eval --data "$data/$s" --config "$out/$e.toml" --json "$json" -q > "$out/$s-$e.md" 2> "$out/$s-$e.log"
    tree="$out/cache-$e/eval/$s"
    misses="$(python3 "$root/scripts/analyze_misses.py" "$json" "$tree" "$data/$s" | tail -n +2 | sed 's/  */ /g; s/ (.*//' | paste -sd';' -)"
    python3 - "$json" "$s" "$e" "$misses" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["summaries"]
flat = max(("bm25", "dense", "hybrid"), key=lambda m: s[m]["means"]["recall@5"])
c = r["comparisons"]["recall@5"][1]
f = r["fallback_comparisons"]["recall@5"][1]
nav, fb = s["navigator"], s["navigator+fallback"]
print(f'{sys.argv[2]:<13} {sys.argv[3]:<7} {nav["means"]["recall@5"]:8.3f} {fb["means"]["recall@5"]:8.3f} '
      f'{flat:<6} {s[flat]["means"]["recall@5"]:.3f} {c["verdict"]:<5} {c["mean_diff"]:+.3f} p={c["p_value"]:.3f} '
      f'{f["verdict"]:<5} {nav["routing_accuracy"]:8.3f} {nav["bytes_per_query"]:9.0f}  {sys.argv[4]}')
PY
  done
done
