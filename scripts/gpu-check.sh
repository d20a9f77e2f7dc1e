#!/usr/bin/env bash
# GPU checks for a machine with a real GPU and a Vulkan driver, which needs no Rust toolchain:
#   1. the WGSL K-Means shader tests (tests/it/gpu.rs) with C2S_REQUIRE_ALL=1, so a missing
#      adapter fails instead of skipping;
#   2. the K-Means benchmark (benches/kmeans.rs): CPU and GPU on the same data;
#   3. a cold `c2s build` of a synthetic corpus with kmeans.device = "cpu", "gpu" (batches
#      smaller than kmeans.gpu_min_work stay on the CPU) and "gpu" with gpu_min_work = 0 (every
#      batch on the GPU), comparing what they write and the documents' clusters' inertia.
# With --million, only the tree step of a large build (default 1,000,000 documents): a cold
# build on the GPU fills the memo, then `--full` rebuilds (reclustering from scratch; cards,
# embeddings and summaries from the memo) on the GPU and on the CPU, compared by K-Means
# seconds, tree step and inertia. With --all, steps 1-3 and then the large build, sized to
# the time GPU_CHECK_DEADLINE leaves: the whole check in one call of a time-limited lease.
# Last, a summary of the figures against the targets of the GPU work (scripts/gpu_summary.py).
#
# usage: scripts/gpu-check.sh --prepare DIR      build the three binaries here, stripped and
#                                                 xz-compressed into DIR (about 15 MB), and
#                                                 fetch the Vulkan loader's packages into DIR/gl
#        scripts/gpu-check.sh DIR [N_DOCS [KM_N KM_D KM_K]]   steps 1-3 from DIR's binaries
#        scripts/gpu-check.sh DIR --million [N_DOCS]          the large build's tree step
#        scripts/gpu-check.sh DIR --all [N_DOCS [KM_N KM_D KM_K [N_LARGE]]]   both
#        scripts/gpu-check.sh --compare DIR_A DIR_B   two outputs compared as step 3 does
# environment:
#   OUT=DIR                 also write the log (gpu-check.log) and the figures (results.jsonl)
#                           there as they arrive, and the summary (summary.json) at the end
#   GPU_CHECK_DEADLINE=SECS start no step after SECS seconds from the start (it says which it
#                           skipped), and stop the large build's CPU rebuild there: its time
#                           is then a lower bound
set -euo pipefail
# Paths given (DIR, OUT, --compare's) are taken from where the script was started.
here=$PWD
from_here() { case "$1" in /*) echo "$1" ;; *) echo "$here/$1" ;; esac; }
[ -z "${OUT:-}" ] || OUT=$(from_here "$OUT")
cd "$(dirname "$0")/.."
start_time=$(date +%s)
# The shader tests of a test binary include tests that run this script: never from within it.
if [ -n "${C2S_GPU_CHECK_RUNNING:-}" ]; then
  echo "error: scripts/gpu-check.sh was started by its own step (a test binary that runs the script's tests)" >&2
  exit 2
fi
export C2S_GPU_CHECK_RUNNING=1

# The Vulkan loader and the libraries the NVIDIA driver's Vulkan part loads (libglvnd), as
# Debian packages: carried to a GPU machine whose image lacks them (see vulkan_setup).
GL_PACKAGES="libvulkan1 libglvnd0 libglx0 libegl1 libgl1 libopengl0 libgles2"

# compare DIR_A DIR_B NAME_B NAME_A: whether two builds wrote the same files, c2s.lock aside
# (its config hash counts the kmeans settings); else how many differ, and the first five.
compare() {
  local differ
  # (diff exits 1 when they differ: under set -e that would end the script)
  differ=$(diff -rq -x c2s.lock "$1" "$2") || true
  if [ -z "$differ" ]; then
    echo "outputs $3: identical to $4 (c2s.lock aside)"
  else
    echo "outputs $3: $(wc -l <<<"$differ") files differ from $4 (near-tie assignments):"
    sed -n 1,5p <<<"$differ"
  fi
}

if [ "${1:-}" = "--compare" ]; then
  compare "$(from_here "${2:?usage: scripts/gpu-check.sh --compare DIR_A DIR_B}")" \
    "$(from_here "${3:?usage: scripts/gpu-check.sh --compare DIR_A DIR_B}")" "$3" "$2"
  exit 0
fi

if [ "${1:-}" = "--prepare" ]; then
  dir=$(from_here "${2:?usage: scripts/gpu-check.sh --prepare DIR}")
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
  mkdir -p "$dir/gl"
  # shellcheck disable=SC2086
  if (cd "$dir/gl" && apt-get download $GL_PACKAGES >/dev/null 2>&1); then
    echo "Vulkan loader packages: $(cd "$dir/gl" && ls ./*.deb | wc -l) in $dir/gl"
  else
    echo "warning: could not fetch the Vulkan loader packages ($GL_PACKAGES) into $dir/gl;" \
      "a GPU machine without libvulkan.so.1 will need them (apt-get update, then --prepare again)" >&2
  fi
  ls -la "$dir"
  exit 0
fi

dir=$(from_here "${1:?usage: scripts/gpu-check.sh DIR [--million N | --all ...] [N_DOCS [KM_N KM_D KM_K]]}")
mode=checks
case "${2:-}" in
  --million) mode=million; set -- "$1" "${3:-1000000}" ;;
  --all) mode=all; shift 2; set -- "$dir" "$@" ;;
esac
if [ "$mode" = million ]; then
  large="$2"
else
  docs="${2:-50000}"; km_n="${3:-200000}"; km_d="${4:-384}"; km_k="${5:-1000}"; large="${6:-1000000}"
fi
deadline="${GPU_CHECK_DEADLINE:-0}"
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
results="$bin/results.jsonl"
: >"$results"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  # Everything printed from here on also goes to $OUT, line by line, so a run stopped at its
  # time limit still leaves what it measured.
  exec > >(tee -a "$OUT/gpu-check.log") 2>&1
fi

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

# record JSON: one line of figures, kept for the summary (and in $OUT as it arrives).
record() {
  echo "$1" >>"$results"
  if [ -n "${OUT:-}" ]; then echo "$1" >>"$OUT/results.jsonl"; fi
}

# seconds_left: what the deadline leaves (a large number without one).
seconds_left() {
  if [ "$deadline" -gt 0 ]; then echo $((deadline - ($(date +%s) - start_time))); else echo 1000000; fi
}

# due NAME NEED: whether a step that needs about NEED seconds can start; says so when not.
due() {
  local left; left=$(seconds_left)
  if [ "$left" -lt "$2" ]; then
    echo "skipped $1: ${left}s left before GPU_CHECK_DEADLINE, about ${2}s needed"
    record "{\"skipped\":\"$1\",\"seconds_left\":$left}"
    return 1
  fi
}

# vulkan_setup: make the Vulkan loader and the GPU's driver file findable. A machine image
# without libvulkan.so.1 gets the packages from DIR/gl, unpacked here (never over /) and put
# on LD_LIBRARY_PATH; an NVIDIA driver mounted under /usr/local/nvidia (outside the loader's
# search path) is named through VK_DRIVER_FILES.
vulkan_setup() {
  # (grep reads the whole list: with -q it could stop early, and pipefail would count the
  # writer's broken pipe as not found)
  if ! ldconfig -p 2>/dev/null | grep 'libvulkan\.so\.1 ' >/dev/null; then
    if compgen -G "$dir/gl/*.deb" >/dev/null; then
      for f in "$dir"/gl/*.deb; do dpkg -x "$f" "$bin/gl"; done
      export LD_LIBRARY_PATH="$bin/gl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      echo "vulkan: the loader is not installed; using the $(ls "$dir"/gl/*.deb | wc -l) packages from $dir/gl"
    else
      echo "vulkan: no libvulkan.so.1 on this machine and no packages in $dir/gl (scripts/gpu-check.sh --prepare $dir fetches them)"
    fi
  fi
  local nv=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ] && [ -f "$nv" ] &&
    ! compgen -G "/usr/share/vulkan/icd.d/nvidia*" >/dev/null &&
    ! compgen -G "/etc/vulkan/icd.d/nvidia*" >/dev/null; then
    export VK_DRIVER_FILES="$nv" VK_ICD_FILENAMES="$nv"
    echo "vulkan: driver file $nv"
  fi
}

# report FILE VARIANT START END: one build's figures (wall, tree step, K-Means seconds,
# inertia), printed and recorded.
report() {
  python3 - "$@" "$bin/line.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
variant, wall = sys.argv[2], float(sys.argv[4]) - float(sys.argv[3])
tree = rep["tree"]
r = {"build": variant, "docs": rep["documents"], "wall": round(wall, 3),
     "timings": rep["timings"], "skills": rep["skills"], "levels": rep["levels"],
     "kmeans_secs": tree.get("kmeans_secs"), "leaf_inertia": tree.get("leaf_inertia"),
     "kmeans_device": rep["kmeans_device"]}
with open(sys.argv[5], "w") as f:
    f.write(json.dumps(r))
steps = ", ".join(f"{k} {v:.2f}s" for k, v in r["timings"].items())
km = f"; K-Means {r['kmeans_secs']:.2f}s, inertia {r['leaf_inertia']:.3f}" if r["kmeans_secs"] is not None else ""
print(f"{variant}: wall {r['wall']:.2f} s, {r['skills']} skills, {r['levels']} levels; {steps}{km}")
print(f"{variant}: K-Means ran on {r['kmeans_device']}")
PY
  record "$(cat "$bin/line.json")"
}

# inertia BASE VARIANT...: each variant's inertia against BASE's.
inertia() {
  python3 - "$results" "$@" <<'PY'
import json, sys
path, base, *others = sys.argv[1:]
builds = {}
for line in open(path):
    r = json.loads(line)
    if "build" in r:
        builds[r["build"]] = r["leaf_inertia"]
for v in others:
    if base in builds and v in builds:
        q = builds[v] / builds[base]
        print(f"inertia {v}: {q:.5f} x {base} ({(q - 1) * 100:+.3f}%)")
PY
}

# build VARIANT CORPUS CACHE DEVICE [ARGS...]: one `c2s build`, reported; stopped at the
# deadline, when it says so, records how long it ran (a lower bound) and fails.
build() {
  local variant=$1 corpus=$2 cache=$3 device=$4; shift 4
  local start end status=0 left
  left=$(seconds_left)
  [ "$left" -ge 1 ] || left=1
  start=$(date +%s.%N)
  timeout "$left" "$c2s" build "$corpus" --out "$bin/out-$variant" --quiet --json \
    --set "cache.path=$cache" --set "kmeans.device=$device" --set tree.structure=cluster "$@" \
    >"$bin/report-$variant.json" || status=$?
  end=$(date +%s.%N)
  if [ "$status" = 124 ]; then
    local ran; ran=$(python3 -c "print(round($end - $start, 1))")
    echo "$variant: stopped at GPU_CHECK_DEADLINE after $ran s (a lower bound on its wall time)"
    record "{\"build\":\"$variant\",\"docs\":$(basename "$corpus" | tr -dc 0-9),\"stopped_after\":$ran}"
    return 1
  elif [ "$status" != 0 ]; then
    echo "error: c2s build ($variant) failed with exit code $status" >&2
    exit "$status"
  fi
  report "$bin/report-$variant.json" "$variant" "$start" "$end"
}

shader_tests() {
  echo "== 1. shader tests (C2S_REQUIRE_ALL=1)"
  # (--skip: the tests of this very script, which need the repository they were built in;
  # gpu_check_script also matches binaries built before they moved to gpu::script)
  # A failure is recorded and the check goes on: the figures still come back from the one
  # device call, and the summary says the tests failed.
  local status=0
  C2S_REQUIRE_ALL=1 "$it" gpu:: --skip gpu::script:: --skip gpu_check_script --test-threads=1 ||
    status=$?
  if [ "$status" = 0 ]; then
    record '{"shader_tests":"passed"}'
  else
    echo "the shader tests FAILED (exit code $status); the steps below still run"
    record '{"shader_tests":"failed"}'
  fi
}

kmeans_bench() {
  echo "== 2. K-Means benchmark: N=$km_n D=$km_d k=$km_k, 20 iterations"
  if [ -z "$kmeans" ]; then
    echo "skipped: $dir holds no kmeans benchmark binary"
    return 0
  fi
  "$kmeans" "$km_n" "$km_d" "$km_k" 20 "$bin/kmeans-data.f32" | while IFS= read -r line; do
    echo "$line"
    case "$line" in "{"*) record "{\"bench\":$line,\"n\":$km_n,\"d\":$km_d,\"k\":$km_k}" ;; esac
  done
  rm -f "$bin/kmeans-data.f32"
}

cold_builds() {
  echo "== 3. cold c2s build of $docs synthetic documents: kmeans.device = cpu, gpu, gpu with gpu_min_work = 0"
  local corpus="$bin/synth-$docs" variant
  python3 scripts/gen_synth.py "$docs" "$corpus" >/dev/null
  for variant in cpu gpu gpu-all; do
    local extra=()
    [ "$variant" = gpu-all ] && extra=(--set kmeans.gpu_min_work=0)
    build "$variant" "$corpus" "$bin/cache-$variant.sqlite" "${variant%-all}" "${extra[@]}" || return 0
  done
  inertia cpu gpu gpu-all
  # Every variant builds the same tree up to near-ties: compare what each wrote (the lock
  # differs by the config hash, which counts the kmeans settings).
  for variant in gpu gpu-all; do
    compare "$bin/out-cpu" "$bin/out-$variant" "$variant" cpu
  done
  rm -rf "$corpus" "$bin"/out-* "$bin"/cache-*
}

# large_size N: N, halved while the deadline leaves too little for N documents. The estimate
# scales step 3's cold CPU build (its time grows about as documents^1.2 on one machine) and
# allows the large build two of those and the corpus's generation: the cold build and the
# rebuild on the GPU, each faster than a cold CPU build, and enough of the CPU's rebuild for a
# lower bound.
large_size() {
  local n=$1 left
  left=$(seconds_left)
  python3 - "$results" "$n" "$left" <<'PY'
import json, sys
path, n, left = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cold = [r for r in map(json.loads, open(path)) if r.get("build") == "cpu"]
if cold and left < 10**6:
    docs, wall = cold[0]["docs"], cold[0]["wall"]
    per = lambda m: wall * (m / docs) ** 1.2
    while n > 50_000 and 2 * per(n) + 0.0001 * n > left:
        n //= 2
print(n)
PY
}

large_build() {
  local n=$1 corpus="$bin/synth-$1"
  echo "== tree step of a $n-document build: cold on the gpu, then --full on the gpu and the cpu"
  record "{\"large\":$n}"
  due "generating $n documents" $((n / 15000 + 10)) || return 0
  local t0; t0=$(date +%s.%N)
  python3 scripts/gen_synth.py "$n" "$corpus" >/dev/null
  echo "generated $n documents in $(python3 -c "import time; print(round(time.time() - $t0, 1))") s"
  local cache="$bin/cache.sqlite"
  due "the cold build" 30 || return 0
  build cold-gpu "$corpus" "$cache" gpu || return 0
  due "the gpu rebuild" 20 || return 0
  build full-gpu "$corpus" "$cache" gpu --full || return 0
  # The CPU rebuild last, so that a deadline stops it rather than the GPU's: its time so far
  # is then a lower bound.
  due "the cpu rebuild" 5 || return 0
  build full-cpu "$corpus" "$cache" cpu --full || return 0
  inertia full-cpu full-gpu cold-gpu
  # One device, one seed: the cold build and the rebuild cluster alike.
  inertia cold-gpu full-gpu
}

record "{\"mode\":\"$mode\"}"
gpu_line=$(nvidia-smi -L 2>/dev/null | sed -n 1p) || true
echo "== machine: $(nproc) cores; ${gpu_line:-no nvidia-smi}"
vulkan_setup
case "$mode" in
  million)
    large_build "$large"
    ;;
  checks | all)
    if due "the shader tests" 20; then shader_tests; fi
    if due "the K-Means benchmark" 60; then kmeans_bench; fi
    if due "the cold builds" 60; then cold_builds; fi
    if [ "$mode" = all ]; then large_build "$(large_size "$large")"; fi
    ;;
esac
echo "== summary"
python3 scripts/gpu_summary.py "$results" ${OUT:+"$OUT/summary.json"}
