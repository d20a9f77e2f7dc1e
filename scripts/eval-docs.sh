#!/usr/bin/env bash
# Retrieval on docs repos (issue 48): `c2s eval` on the question sets under bench/docs-qa/ (gold
# ids are page paths) against the shared docs repos, built as their authors' structure gives
# the tree (`tree.structure = "auto"`) and as a flat corpus is clustered (`"cluster"`), with the
# `hashed` and `onnx` embedders. Prints Recall@5 of the navigator and of flat BM25, dense and
# hybrid search per repo, embedder and structure. Per-query JSON goes to $OUT (target/eval-docs).
# Each eval runs in the repository (includes read inside it, as a user's build does).
# Usage: scripts/eval-docs.sh [REPO...]      (default: uv mdbook); EMBEDDERS="hashed onnx"
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
data="${C2S_DATA_DIR:-$root/../shared/data}/docs-repos"
out="${OUT:-$root/target/eval-docs}"
repos=("$@")
[ ${#repos[@]} -eq 0 ] && repos=(uv mdbook)
embedders=(${EMBEDDERS:-hashed onnx})
if [ -z "${C2S_BIN:-}" ]; then
  (cd "$root" && cargo build --release --quiet)
  C2S_BIN="$root/target/release/c2s"
fi
mkdir -p "$out"
docs_of() { case "$1" in mdbook) echo guide/src ;; *) echo docs ;; esac; }
for e in "${embedders[@]}"; do
  cfg="$out/$e.toml"
  if [ "$e" = onnx ]; then
    printf '[embed]\nbackend = "onnx"\n[embed.onnx]\nmodel_dir = "%s"\nlibrary = "%s"\n[cache]\npath = "%s"\n' \
      "$root/models/all-MiniLM-L6-v2-int8" "$root/models/onnxruntime-1.32.0/libonnxruntime.so.1.32.0" "$out/cache-onnx.sqlite" > "$cfg"
  else
    printf '[cache]\npath = "%s"\n' "$out/cache-hashed.sqlite" > "$cfg"
  fi
done
echo "c2s: $C2S_BIN; $(nproc) cores; one run each; Recall@5"
printf '%-8s %-7s %-8s %7s %9s %6s %6s %6s\n' repo embed tree queries navigator bm25 dense hybrid
for r in "${repos[@]}"; do
  for e in "${embedders[@]}"; do
    for s in auto cluster; do
      json="$out/$r-$e-$s.json"
      (cd "$data/$r" && "$C2S_BIN" eval --data "$root/bench/docs-qa/$r" --corpus "$(docs_of "$r")" \
        --config "$out/$e.toml" --set "tree.structure=$s" --out "$out/tree-$r-$e-$s" \
        --methods navigator,bm25,dense,hybrid --json "$json" -q > "$out/$r-$e-$s.md" 2> "$out/$r-$e-$s.log")
      python3 - "$json" "$r" "$e" "$s" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
s = rep["summaries"]
n = len({q["query"] for q in rep["results"]})
r5 = lambda m: s[m]["means"]["recall@5"]
print(f"{sys.argv[2]:<8} {sys.argv[3]:<7} {sys.argv[4]:<8} {n:7} {r5('navigator'):9.3f} {r5('bm25'):6.3f} {r5('dense'):6.3f} {r5('hybrid'):6.3f}")
PY
    done
  done
done
