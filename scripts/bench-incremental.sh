#!/usr/bin/env bash
# Incremental-build benchmark with the offline backends on a synthetic corpus (default 10,000
# documents): cold build, no-op rebuild, `c2s check`, one-document edits, ten documents edited
# before one build, and one-document edits in a fresh clone (the committed output without the memo: the build seeds from OUT/state/).
# Reports the median of several runs of each and its ratio to the cold build, and the state
# file's size against the whole output. Usage: scripts/bench-incremental.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-10000}"
runs="${RUNS:-5}"
work="${BENCH_DIR:-target/bench}"
mkdir -p "$work"
# C2S_BIN runs another binary (a build of an older commit, for before/after figures); C2S_SET
# adds settings to every build.
if [ -n "${C2S_BIN:-}" ]; then
  bin="$(realpath "$C2S_BIN")"
else
  cargo build --release --quiet
  bin="$PWD/target/release/c2s"
fi
corpus="$work/synth-inc-$n"
rm -rf "$corpus"
python3 scripts/gen_synth.py "$n" "$corpus"
out="$work/out-inc-$n"
cache="$work/cache-inc-$n.sqlite"
echo "machine: $(nproc) cores; c2s $($bin --version | cut -d' ' -f2); $n documents; median of $runs runs"
N_DOCS="$n" python3 - "$bin" "$corpus" "$out" "$cache" "$runs" <<'PY'
import os, shutil, statistics, subprocess, sys, time, glob
binary, corpus, out, cache, runs = sys.argv[1:6]
runs = int(runs)
common = [corpus, "--out", out, "--set", f"cache.path={os.path.abspath(cache)}", "--quiet"]
# C2S_SET="key=value ..." adds settings to every build (e.g. tree.structure=cluster, the tree
# the synthetic corpus's folders gave before the structure was followed).
for s in os.environ.get("C2S_SET", "").split():
    common += ["--set", s]
# A million documents fit no hosted skill platform (the build refuses them for host = "all"):
# the run builds for plain files, as such a corpus would be.
if int(os.environ.get("N_DOCS", "0")) >= 1_000_000:
    common += ["--set", "output.host=files"]

rss = {}

def timed(args, ok_codes=(0,), what=None):
    """Runs c2s ARGS; returns its wall seconds and keeps its peak RSS (KiB) under `what`."""
    t = time.perf_counter()
    p = subprocess.Popen([binary] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    if code not in ok_codes:
        sys.exit(f"{args[0]} failed ({code}): {err.decode(errors='replace')}")
    rss.setdefault(what or args[0], []).append(usage.ru_maxrss)
    return dt

def forget_memo():
    """What a fresh clone lacks: the memo and every record beside it (the cache folder): the stat
    index, the used results, parsed sources, recipes and documents.json entries, and their overlays."""
    here = os.path.dirname(os.path.abspath(cache))
    records = [os.path.join(here, f"{kind}-*.{ext}") for kind in ("used", "parsed", "recipes", "entries") for ext in ("bin", "add")]
    for f in glob.glob(os.path.abspath(cache) + "*") + glob.glob(os.path.join(here, "stat-*.index")) + [f for pattern in records for f in glob.glob(pattern)]:
        os.remove(f)

def clear():
    shutil.rmtree(out, ignore_errors=True)
    forget_memo()

cold = []
for _ in range(max(1, runs // 2)):
    clear()
    cold.append(timed(["build"] + common, what="cold build"))
noop = [timed(["build"] + common, what="no-op rebuild") for _ in range(runs)]
check = [timed(["check"] + common) for _ in range(runs)]
files = sorted(glob.glob(os.path.join(corpus, "**", "*.md"), recursive=True))
edit = []
for i in range(runs):
    with open(files[i * 97 % len(files)], "a") as f:
        f.write(f"\nA new remark about quasar{i} telemetry.\n")
    edit.append(timed(["build"] + common, what="one-document edit"))
stale = timed(["check"] + common)
# Ten documents edited before one build.
ten = []
for i in range(runs):
    for j in range(10):
        with open(files[(i * 1009 + j * 331 + 7) % len(files)], "a") as f:
            f.write(f"\nA batch remark about nebula{i}x{j} telemetry.\n")
    ten.append(timed(["build"] + common, what="ten-document edit"))
# A fresh clone: the same output, no memo; each run edits one more document first.
fresh = []
for i in range(runs):
    forget_memo()
    with open(files[(i * 97 + 13) % len(files)], "a") as f:
        f.write(f"\nA fresh-clone remark about pulsar{i} telemetry.\n")
    fresh.append(timed(["build"] + common, what="fresh-clone edit"))
c = statistics.median(cold)
n_docs = len(files)
# Targets (seconds) for no-op, check and one edit, by corpus size.
if n_docs >= 1_000_000:
    t_noop, t_check, t_edit = 3.0, None, 5.0
elif n_docs >= 100_000:
    t_noop, t_check, t_edit = 0.5, 0.5, 1.5
else:
    t_noop, t_check, t_edit = 1.0, 0.5, 2.0
for name, xs, target in [("cold build", cold, None), ("no-op rebuild", noop, t_noop), ("check", check, t_check), ("one-document edit", edit, t_edit), ("ten-document edit", ten, None), ("fresh-clone edit", fresh, 3.0)]:
    m = statistics.median(xs)
    tgt = f"  target <= {target:.1f} s" if target else ""
    peak = statistics.median(rss[name]) / 1024
    print(f"{name:<18} median {m:7.3f} s  ({m / c:6.3f} x cold)  peak RSS {peak:6.0f} MiB{tgt}   runs: {', '.join(f'{x:.3f}' for x in xs)}")
print(f"peak RSS of an edit / the cold build: {statistics.median(rss['one-document edit']) / statistics.median(rss['cold build']):.2f} (target <= 0.25)")
print(f"fresh-clone edit / edit with the memo: {statistics.median(fresh) / statistics.median(edit):.2f} x (target <= 2)")
total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(out) for f in fs)
state = os.path.getsize(os.path.join(out, "state.jsonl")) + sum(
    os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(os.path.join(out, "state")) for f in fs)
print(f"state.jsonl and state/ {state / 1e6:.1f} MB of a {total / 1e6:.1f} MB output ({100 * state / total:.0f}%)")
PY
