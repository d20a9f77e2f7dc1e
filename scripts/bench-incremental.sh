#!/usr/bin/env bash
# Incremental-build benchmark with the offline backends on a synthetic corpus (default 10,000
# documents): cold build, no-op rebuild, `c2s check`, one-document edits, and the same edits in a
# fresh clone (the committed output without the memo: the build seeds from OUT/state.jsonl).
# Reports the median of several runs of each and its ratio to the cold build, and the state
# file's size against the whole output. Usage: scripts/bench-incremental.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-10000}"
runs="${RUNS:-5}"
work="${BENCH_DIR:-target/bench}"
mkdir -p "$work"
cargo build --release --quiet
bin="$PWD/target/release/c2s"
corpus="$work/synth-inc-$n"
rm -rf "$corpus"
python3 scripts/gen_synth.py "$n" "$corpus"
out="$work/out-inc-$n"
cache="$work/cache-inc-$n.sqlite"
echo "machine: $(nproc) cores; c2s $($bin --version | cut -d' ' -f2); $n documents; median of $runs runs"
python3 - "$bin" "$corpus" "$out" "$cache" "$runs" <<'PY'
import os, shutil, statistics, subprocess, sys, time, glob
binary, corpus, out, cache, runs = sys.argv[1:6]
runs = int(runs)
common = [corpus, "--out", out, "--set", f"cache.path={os.path.abspath(cache)}", "--quiet"]

def timed(args, ok_codes=(0,)):
    t = time.perf_counter()
    r = subprocess.run([binary] + args, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if r.returncode not in ok_codes:
        sys.exit(f"{args[0]} failed ({r.returncode}): {r.stderr}")
    return dt

def clear():
    shutil.rmtree(out, ignore_errors=True)
    for f in glob.glob(os.path.abspath(cache) + "*"):
        os.remove(f)

cold = []
for _ in range(max(1, runs // 2)):
    clear()
    cold.append(timed(["build"] + common))
noop = [timed(["build"] + common) for _ in range(runs)]
check = [timed(["check"] + common) for _ in range(runs)]
files = sorted(glob.glob(os.path.join(corpus, "**", "*.md"), recursive=True))
edit = []
for i in range(runs):
    with open(files[i * 97 % len(files)], "a") as f:
        f.write(f"\nA new remark about quasar{i} telemetry.\n")
    edit.append(timed(["build"] + common))
stale = timed(["check"] + common)
# A fresh clone: the same output, no memo; each run edits one more document first.
fresh = []
for i in range(runs):
    for f in glob.glob(os.path.abspath(cache) + "*"):
        os.remove(f)
    with open(files[(i * 97 + 13) % len(files)], "a") as f:
        f.write(f"\nA fresh-clone remark about pulsar{i} telemetry.\n")
    fresh.append(timed(["build"] + common))
c = statistics.median(cold)
for name, xs, target in [("cold build", cold, None), ("no-op rebuild", noop, 1.0), ("check", check, 0.5), ("one-document edit", edit, 2.0), ("fresh-clone edit", fresh, 3.0)]:
    m = statistics.median(xs)
    tgt = f"  target <= {target:.1f} s" if target else ""
    print(f"{name:<18} median {m:7.3f} s  ({m / c:6.3f} x cold){tgt}   runs: {', '.join(f'{x:.3f}' for x in xs)}")
print(f"fresh-clone edit / edit with the memo: {statistics.median(fresh) / statistics.median(edit):.2f} x (target <= 2)")
total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(out) for f in fs)
state = os.path.getsize(os.path.join(out, "state.jsonl"))
print(f"state.jsonl {state / 1e6:.1f} MB of a {total / 1e6:.1f} MB output ({100 * state / total:.0f}%)")
PY
