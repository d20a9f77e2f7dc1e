#!/usr/bin/env bash
# Cold-build benchmark with the offline backends: generates deterministic synthetic corpora
# (topical structure, see scripts/gen_synth.py) and times `c2s build` on each, reporting wall
# time and peak RSS. Usage: scripts/bench-build.sh [SIZES...]   (default: 10000 50000)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("${@:-10000 50000}")
[ $# -eq 0 ] && sizes=(10000 50000)
work="${BENCH_DIR:-target/bench}"
mkdir -p "$work"
# C2S_BIN runs another binary (a build of an older commit, for before/after figures).
if [ -n "${C2S_BIN:-}" ]; then
  bin="$(realpath "$C2S_BIN")"
else
  cargo build --release --quiet
  bin="$PWD/target/release/c2s"
fi
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; c2s $($bin --version | cut -d' ' -f2)"
printf '%-8s %10s %12s %8s %8s\n' docs wall_s peak_rss_mb skills levels
outs=()
for n in "${sizes[@]}"; do
  # synth2: the generator that gives every topic its own words at any size (see gen_synth.py).
  corpus="$work/synth2-$n"
  [ -d "$corpus" ] || python3 scripts/gen_synth.py "$n" "$corpus"
  # Cold: no previous output and an empty cache. The output goes to a new folder (removed after
  # the run): ext4 slows down creating inodes right after a mass deletion, which would bill a
  # previous run's `rm -rf` to this one's write step.
  rm -rf "$work/cache-$n.sqlite"*
  out="$work/out-$n-$(date +%s%N)"
  python3 - "$bin" "$corpus" "$out" "$n" "$PWD/$work/cache-$n.sqlite" <<'PY'
import json, resource, subprocess, sys, time
binary, corpus, out, n, cache = sys.argv[1:6]
t = time.perf_counter()
# A million documents fit no hosted skill platform (refused for host = "all"): built for files.
host = ["--set", "output.host=files"] if int(n) >= 1_000_000 else []
# tree.structure=cluster: the corpus's area/topic folders would otherwise give the tree
# (issue 48); this benchmark times the clustered build.
sets = ["--set", f"cache.path={cache}", "--set", "tree.structure=cluster"]
r = subprocess.run([binary, "build", corpus, "--out", out, "--quiet", "--json"] + sets + host,
                   capture_output=True, text=True)
wall = time.perf_counter() - t
if r.returncode != 0:
    sys.exit(r.stderr)
rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
rep = json.loads(r.stdout)
print(f"{n:<8} {wall:10.2f} {rss_mb:12.0f} {rep['skills']:8} {rep['levels']:8}")
print("         steps: " + ", ".join(f"{k} {v:.2f}s" for k, v in rep["timings"].items()), file=sys.stderr)
PY
  outs+=("$out")
done
rm -rf "${outs[@]}"
