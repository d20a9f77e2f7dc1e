#!/usr/bin/env bash
# Ingest cost of two c2s binaries on one synthetic corpus: cold builds (no output, no cache:
# every source is read, parsed and checked for planted instructions), alternating A and B,
# RUNS times each; reports the median `timings.ingest` (seconds) of each and B/A.
# Usage: scripts/bench-ingest.sh N BIN_A BIN_B   (RUNS=5; BENCH_DIR=target/bench)
set -euo pipefail
cd "$(dirname "$0")/.."
n="$1"; a="$(realpath "$2")"; b="$(realpath "$3")"
runs="${RUNS:-5}"
work="${BENCH_DIR:-target/bench}"
corpus="$work/synth-ingest-$n"
mkdir -p "$work"
[ -d "$corpus" ] || python3 scripts/gen_synth.py "$n" "$corpus" >/dev/null
python3 - "$a" "$b" "$corpus" "$work" "$runs" <<'PY'
import json, os, shutil, statistics, subprocess, sys
a, b, corpus, work, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
laps = {a: [], b: []}
for i in range(runs):
    for binary in (a, b):
        out, cache = os.path.join(work, "ingest-out"), os.path.join(work, "ingest-cache")
        shutil.rmtree(out, ignore_errors=True); shutil.rmtree(cache, ignore_errors=True)
        p = subprocess.run([binary, "build", corpus, "--out", out, "--json", "--quiet",
                            "--set", f"cache.path={cache}/c2s.sqlite", "--set", "tree.structure=cluster",
                            "--set", "output.host=files"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"{binary} failed: {p.stderr}")
        laps[binary].append(json.loads(p.stdout)["timings"]["ingest"])
ma, mb = statistics.median(laps[a]), statistics.median(laps[b])
print(f"A {a}: median ingest {ma:.3f} s  runs {', '.join(f'{x:.3f}' for x in laps[a])}")
print(f"B {b}: median ingest {mb:.3f} s  runs {', '.join(f'{x:.3f}' for x in laps[b])}")
print(f"B / A = {mb / ma:.3f}")
PY
