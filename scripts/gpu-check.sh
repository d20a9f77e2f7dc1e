#!/usr/bin/env bash
# GPU checks for a machine with a real GPU and a Vulkan driver, which needs no Rust toolchain:
#   1. the WGSL K-Means shader tests (tests/it/gpu.rs) with C2S_REQUIRE_ALL=1, so a missing
#      adapter fails instead of skipping;
#   2. the K-Means benchmark (benches/kmeans.rs): CPU and GPU on the same data;
#   3. a cold `c2s build` of a synthetic corpus with kmeans.device = "cpu", "gpu" (batches
#      smaller than kmeans.gpu_min_work stay on the CPU) and "gpu" with gpu_min_work = 0 (every
#      batch on the GPU), comparing what they write and the documents' clusters' inertia.
# With --million, only the tree step of a large build (default 1,000,000 documents): one cold
# CPU build, then `--full` rebuilds (reclustering from scratch, cards, embeddings and summaries
# from the memo) on the CPU and on the GPU, compared by K-Means seconds, tree step and inertia.
#
# usage: scripts/gpu-check.sh --prepare DIR      build the three binaries here, stripped and
#                                                 xz-compressed into DIR (about 15 MB)
#        scripts/gpu-check.sh DIR [N_DOCS [KM_N KM_D KM_K]]   run the checks from DIR's binaries
#        scripts/gpu-check.sh DIR --million [N_DOCS]          the large build's tree step
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--prepare" ]; then
  dir="${2:?usage: scripts/gpu-check.sh --prepare DIR}"
  mkdir -p "$dir"
  cargo build --release --quiet
  it=$(cargo test --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "it" and m.get("executable"):
        print(m["executable"])')
  km=$(cargo bench --bench kmeans --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "kmeans" and m.get("executable"):
        print(m["executable"])')
  for pair in "c2s:target/release/c2s" "it:$it" "kmeans:$km"; do
    name="${pair%%:*}"; src="${pair#*:}"
    strip -o "$dir/$name" "$src"
    xz -f -T0 "$dir/$name"
  done
  ls -la "$dir"
  exit 0
fi

dir="${1:?usage: scripts/gpu-check.sh DIR [N_DOCS [KM_N KM_D KM_K]]}"
million=""
if [ "${2:-}" = "--million" ]; then
  million=1
  set -- "$1" "${3:-1000000}"
fi
docs="${2:-50000}"; km_n="${3:-200000}"; km_d="${4:-384}"; km_k="${5:-1000}"
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
# DIR/NAME.xz (from --prepare) is unpacked; a plain DIR/NAME is run where it is.
exe() {
  if [ -f "$dir/$1.xz" ]; then
    xz -dc "$dir/$1.xz" >"$bin/$1" && chmod +x "$bin/$1" && echo "$bin/$1"
  elif [ -x "$dir/$1" ]; then
    echo "$dir/$1"
  fi
  return 0
}
c2s=$(exe c2s); it=$(exe it); kmeans=$(exe kmeans)
[ -n "$c2s" ] && [ -n "$it" ] || { echo "error: $dir holds no c2s and it binaries; run scripts/gpu-check.sh --prepare $dir first" >&2; exit 2; }
echo "== machine: $(nproc) cores; $(nvidia-smi -L 2>/dev/null | head -1 || echo 'no nvidia-smi')"

# report FILE VARIANT START END: one build's figures (wall, tree step, K-Means seconds, inertia).
report() {
  python3 - "$@" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
variant, wall = sys.argv[2], float(sys.argv[4]) - float(sys.argv[3])
steps = ", ".join(f"{k} {v:.2f}s" for k, v in rep["timings"].items())
tree = rep["tree"]
km = f"; K-Means {tree['kmeans_secs']:.2f}s, inertia {tree['leaf_inertia']:.3f}" if "kmeans_secs" in tree else ""
print(f"{variant}: wall {wall:.2f} s, {rep['skills']} skills, {rep['levels']} levels; {steps}{km}")
print(f"{variant}: K-Means ran on {rep['kmeans_device']}")
PY
}

# inertia BASE VARIANT...: each variant's inertia against BASE's.
inertia() {
  python3 - "$bin" "$@" <<'PY'
import json, sys
d, base, *others = sys.argv[1:]
get = lambda v: json.load(open(f"{d}/report-{v}.json"))["tree"]["leaf_inertia"]
for v in others:
    print(f"inertia {v}: {get(v) / get(base):.5f} x {base} ({(get(v) / get(base) - 1) * 100:+.3f}%)")
PY
}

if [ -n "$million" ]; then
  echo "== tree step of a $docs-document build: cold on the cpu, then --full on the cpu and the gpu"
  corpus="$bin/synth-$docs"
  python3 scripts/gen_synth.py "$docs" "$corpus" >/dev/null
  # tree.structure=cluster: the synthetic corpus's folders would otherwise make the tree
  # (issue 48), and this check times K-Means.
  cache=(--set "cache.path=$bin/cache.sqlite" --set tree.structure=cluster)
  for variant in cold-cpu cpu gpu; do
    device="${variant#cold-}"
    full=(--full)
    [ "$variant" = cold-cpu ] && full=()
    start=$(date +%s.%N)
    "$c2s" build "$corpus" --out "$bin/out-$variant" --quiet --json "${cache[@]}" \
      --set "kmeans.device=$device" "${full[@]}" >"$bin/report-$variant.json"
    end=$(date +%s.%N)
    report "$bin/report-$variant.json" "$variant" "$start" "$end"
  done
  inertia cpu gpu
  exit 0
fi

echo "== 1. shader tests (C2S_REQUIRE_ALL=1)"
# (--skip: the integration test that runs this very script)
C2S_REQUIRE_ALL=1 "$it" gpu:: --skip gpu_check_script --test-threads=1

echo "== 2. K-Means benchmark: N=$km_n D=$km_d k=$km_k, 20 iterations"
if [ -n "$kmeans" ]; then
  "$kmeans" "$km_n" "$km_d" "$km_k" 20 "$bin/kmeans-data.f32"
else
  echo "skipped: $dir holds no kmeans benchmark binary"
fi

echo "== 3. cold c2s build of $docs synthetic documents: kmeans.device = cpu, gpu, gpu with gpu_min_work = 0"
corpus="$bin/synth-$docs"
python3 scripts/gen_synth.py "$docs" "$corpus" >/dev/null
for variant in cpu gpu gpu-all; do
  sets=(--set "cache.path=$bin/cache-$variant.sqlite" --set "kmeans.device=${variant%-all}"
    --set tree.structure=cluster)
  [ "$variant" = gpu-all ] && sets+=(--set kmeans.gpu_min_work=0)
  out="$bin/out-$variant"
  start=$(date +%s.%N)
  "$c2s" build "$corpus" --out "$out" --quiet --json "${sets[@]}" >"$bin/report-$variant.json"
  end=$(date +%s.%N)
  report "$bin/report-$variant.json" "$variant" "$start" "$end"
done
inertia cpu gpu gpu-all
# Every variant builds the same tree up to near-ties: compare what each wrote (the lock differs
# by the config hash, which counts the kmeans settings).
for variant in gpu gpu-all; do
  if diff -rq -x c2s.lock "$bin/out-cpu" "$bin/out-$variant" >/dev/null; then
    echo "outputs $variant: identical to cpu (c2s.lock aside)"
  else
    echo "outputs $variant: $(diff -rq -x c2s.lock "$bin/out-cpu" "$bin/out-$variant" | wc -l) files differ from cpu (near-tie assignments):"
    diff -rq -x c2s.lock "$bin/out-cpu" "$bin/out-$variant" | head -5
  fi
done
