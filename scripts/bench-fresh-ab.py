#!/usr/bin/env python3
"""Fresh-clone edits against edits with the memo, for several c2s binaries in alternation.

On a shared machine whose speed drifts by tens of percent within minutes, two runs of
`bench-incremental.sh` one after the other compare two moments as much as two binaries. This
script builds one synthetic corpus and gives each binary its own copy and output (built cold
once) for edits with the memo, and another for fresh-clone edits (the
memo and every record beside it deleted before each). It runs ROUNDS rounds, each a one-document
edit with the memo by every binary in turn and then a fresh-clone edit by every binary, and
prints each binary's medians and their ratio (the issue 49 target: fresh clone <= 2x an edit).
With --cpus 1,2 each binary also runs pinned to that many cores (`taskset`, and as many rayon
threads), every variant in the same rounds: how the ratio moves with the cores at hand.

usage: scripts/bench-fresh-ab.py [--docs N] [--rounds R] [--work DIR] [--cpus N,...] BIN [BIN...]
"""
import argparse, glob, os, shutil, statistics, subprocess, sys, time

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--docs", type=int, default=10000)
ap.add_argument("--rounds", type=int, default=7)
ap.add_argument("--work", default="target/bench-ab")
ap.add_argument("--cpus", default="",
                help="comma-separated core counts to run each binary on (default: all cores)")
ap.add_argument("bins", nargs="+")
args = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
work = os.path.abspath(args.work)
try:
    cpus = [int(c) for c in args.cpus.split(",") if c.strip()] or [None]
except ValueError:
    sys.exit(f"--cpus: expected core counts separated by commas, like 1,2 (got {args.cpus!r})")
# The cores this process may run on (a container may allow fewer than the machine has).
usable = sorted(os.sched_getaffinity(0))
if any(c is not None and not 1 <= c <= len(usable) for c in cpus):
    sys.exit(f"--cpus: each count must be between 1 and {len(usable)} (the cores this process may use)")
if cpus != [None] and not shutil.which("taskset"):
    sys.exit("--cpus needs `taskset` (util-linux)")
# One variant per binary and core count, each with its own copies.
variants = [(os.path.abspath(b), c) for b in args.bins for c in cpus]
names = [f"{i}-{os.path.basename(b)}" + (f"-{c}cpu" if c else "") for i, (b, c) in enumerate(variants)]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
corpus = os.path.join(work, "corpus")
subprocess.run([sys.executable, os.path.join(here, "gen_synth.py"), str(args.docs), corpus],
               check=True, stdout=subprocess.DEVNULL)


def build(i, kind):
    d = os.path.join(work, names[i], kind)
    c = variants[i][1]
    pin = ["taskset", "-c", ",".join(map(str, usable[:c]))] if c else []
    env = dict(os.environ, RAYON_NUM_THREADS=str(c)) if c else None
    t = time.perf_counter()
    subprocess.run(pin + [variants[i][0], "build", d + "/corpus", "--out", d + "/out", "--set",
                    f"cache.path={d}/cache.sqlite", "--set", "tree.structure=cluster", "--quiet"],
                   check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t


def forget(i):
    """What a fresh clone lacks: the memo and every record beside it."""
    d = os.path.join(work, names[i], "fresh")
    kinds = ("used", "parsed", "recipes", "entries")
    for f in (glob.glob(d + "/cache.sqlite*") + glob.glob(d + "/stat-*.index")
              + [f for k in kinds for e in ("bin", "add") for f in glob.glob(f"{d}/{k}-*.{e}")]):
        os.remove(f)


def edit(i, kind, n, words):
    d = os.path.join(work, names[i], kind)
    files = sorted(glob.glob(d + "/corpus/**/*.md", recursive=True))
    with open(files[n % len(files)], "a") as f:
        f.write(f"\nA new remark about {words}.\n")


# Two copies per binary, each built cold once: one only ever edited with its memo, one whose
# memo and records are deleted before each edit (a fresh clone of the committed output).
for i in range(len(variants)):
    for kind in ("memo", "fresh"):
        shutil.copytree(corpus, os.path.join(work, names[i], kind, "corpus"))
        build(i, kind)
times = {i: {"edit": [], "fresh": []} for i in range(len(variants))}
# Each round: every binary's edit with the memo, then every binary's fresh-clone edit, so that a
# drift of the machine's speed falls on both kinds alike.
for r in range(args.rounds):
    for i in range(len(variants)):
        edit(i, "memo", r * 97, f"quasar{r} telemetry")
        times[i]["edit"].append(build(i, "memo"))
    for i in range(len(variants)):
        forget(i)
        edit(i, "fresh", r * 89 + 13, f"nebula{r} telemetry")
        times[i]["fresh"].append(build(i, "fresh"))
print(f"machine: {len(usable)} cores; {args.docs} documents; medians of {args.rounds} alternated rounds")
for i, (b, c) in enumerate(variants):
    e, f = statistics.median(times[i]["edit"]), statistics.median(times[i]["fresh"])
    on = f" on {c} core{'s' if c > 1 else ''}" if c else ""
    print(f"{b}{on}: edit with the memo {e:.3f} s, fresh-clone edit {f:.3f} s, ratio {f / e:.2f}"
          f"  (edits {' '.join(f'{x:.3f}' for x in times[i]['edit'])};"
          f" fresh {' '.join(f'{x:.3f}' for x in times[i]['fresh'])})")
