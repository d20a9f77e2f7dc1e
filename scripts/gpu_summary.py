#!/usr/bin/env python3
"""The figures of scripts/gpu-check.sh against the targets of the GPU K-Means work.

usage: gpu_summary.py RESULTS_JSONL [SUMMARY_JSON]

RESULTS_JSONL holds one JSON object a line, as gpu-check.sh records them: {"mode": MODE} first
("checks", "million" or "all": which parts ran), {"bench": ...} for each line of the K-Means
benchmark, {"build": NAME, ...} for each build, {"large": N} when the large build starts,
{"skipped": STEP} for a step the deadline left out, and {"shader_tests": "passed" or
"failed"}. Prints one line a figure, each with its target and whether it is met, and writes
them to SUMMARY_JSON when given. A figure that was not measured says so;
it is never counted as met.

Targets: exact K-Means on the GPU at least 10x the CPU path; a build's tree step on the GPU at
least 3x the CPU's (cold builds of step 3, and the large build's --full rebuilds); inertia
within 0.5% of the CPU's; the same inertia for the same seed on one device.
"""
import json
import sys


def load(path):
    bench, builds, skipped, run = [], {}, [], {"mode": "all"}
    for line in open(path, encoding="utf-8"):
        if not line.strip():
            continue
        r = json.loads(line)
        if "mode" in r or "large" in r:
            run.update(r)
        elif "bench" in r:
            bench.append(r)
        elif "build" in r:
            builds[r["build"]] = r
        elif "skipped" in r:
            skipped.append(r["skipped"])
        elif "shader_tests" in r:
            run["shader_tests"] = r["shader_tests"]
    return run, bench, builds, skipped


def bench_runs(bench):
    """The benchmark's runs by kind: (device, coarse) -> figures, the GPU's with its stats."""
    runs, last = {}, None
    for r in bench:
        b = r["bench"]
        if "gpu_stats" in b:
            if last is not None:
                runs[last]["gpu_stats"] = b["gpu_stats"]
            continue
        key = ("cpu" if b["device"].startswith("cpu") else "gpu", "coarse-to-fine" in b["device"])
        runs[key] = dict(b, n=r["n"], d=r["d"], k=r["k"])
        last = key
    return runs


def ran_on_gpu(run, before=None):
    """Whether the GPU ran this benchmark run (its stats count runs beyond the ones before)."""
    if run is None or "gpu_stats" not in run:
        return False
    runs = run["gpu_stats"]["gpu_runs"] - (before["gpu_stats"]["gpu_runs"] if before else 0)
    return runs > 0


class Summary:
    def __init__(self):
        self.rows = []

    def add(self, what, value, target, met):
        verdict = "not measured" if met is None else "met" if met else "NOT met"
        self.rows.append({"what": what, "value": value, "target": target, "verdict": verdict})
        print(f"{what}: {value} [{target}: {verdict}]")

    def speed(self, what, cpu, gpu, target):
        if cpu is None or gpu is None:
            self.add(what, "not measured", f">= {target}x", None)
        else:
            x = cpu / gpu if gpu > 0 else float("inf")
            self.add(what, f"cpu {cpu:.2f} s, gpu {gpu:.2f} s: {x:.2f}x", f">= {target}x", x >= target)

    def inertia(self, what, cpu, gpu):
        if cpu is None or gpu is None:
            self.add(what, "not measured", "within 0.5%", None)
        else:
            q = gpu / cpu - 1
            self.add(what, f"{q * 100:+.3f}%", "within 0.5%", abs(q) <= 0.005)


def summarize(run, bench, builds, skipped):
    s = Summary()
    if "shader_tests" in run:
        s.add("shader tests on this device", run["shader_tests"], "pass",
              run["shader_tests"] == "passed")
    if run["mode"] in ("checks", "all"):
        bench_rows(s, bench)
        cold_rows(s, builds)
    if run["mode"] in ("million", "all"):
        large_rows(s, builds, run.get("large"))
    for name, b in builds.items():
        if "stopped_after" in b:
            print(f"stopped at the deadline: the {name} build of {b['docs']} documents, "
                  f"after {b['stopped_after']:.1f} s")
    for step in skipped:
        print(f"skipped at the deadline: {step}")
    return s.rows


def bench_rows(s, bench):
    runs = bench_runs(bench)
    cpu, gpu = runs.get(("cpu", False)), runs.get(("gpu", False))
    size = f" {cpu['n']}x{cpu['d']} k={cpu['k']}" if cpu else ""
    gpu_ok = ran_on_gpu(gpu)
    if gpu is not None and not gpu_ok:
        print("the benchmark's GPU run fell back to the CPU: its time is not the GPU's")
    s.speed(f"exact K-Means{size}", cpu and cpu["seconds"], gpu_ok and gpu["seconds"] or None, 10)
    s.inertia(f"exact K-Means{size}, inertia", cpu and cpu["inertia_cosine"],
              gpu_ok and gpu["inertia_cosine"] or None)
    cc, gc = runs.get(("cpu", True)), runs.get(("gpu", True))
    if cc or gc:
        gc_ok = ran_on_gpu(gc, gpu)
        x = f"{cc['seconds'] / gc['seconds']:.2f}x" if cc and gc_ok and gc["seconds"] > 0 else "-"
        print(f"coarse-to-fine K-Means{size}: cpu {cc and cc['seconds']} s, gpu "
              f"{gc['seconds'] if gc_ok else 'not measured'} s ({x})")
        s.inertia(f"coarse-to-fine K-Means{size}, inertia", cc and cc["inertia_cosine"],
                  gc_ok and gc["inertia_cosine"] or None)


def tree(b):
    """A finished build's tree step, in seconds."""
    return b["timings"].get("tree") if b and "timings" in b else None


def on_gpu(b):
    """True when a finished build's K-Means ran on the GPU (None otherwise)."""
    return (b and "kmeans_device" in b and b["kmeans_device"].startswith("gpu")) or None


def cold_rows(s, builds):
    base = builds.get("cpu")
    docs = f" of {base['docs']} documents" if base else ""
    for v in ("gpu", "gpu-all"):
        b = builds.get(v)
        if b and "kmeans_device" in b and not on_gpu(b):
            print(f"cold build {v}: K-Means ran on {b['kmeans_device']}")
        s.speed(f"cold build{docs}, tree step, {v}", tree(base), on_gpu(b) and tree(b), 3)
        s.inertia(f"cold build{docs}, {v}, inertia", base and base.get("leaf_inertia"),
                  b and b.get("leaf_inertia"))


def large_rows(s, builds, n):
    fc, fg, cold = builds.get("full-cpu"), builds.get("full-gpu"), builds.get("cold-gpu")
    what = f"--full rebuild of {n} documents, tree step"
    if fc and "stopped_after" in fc and tree(fg):
        # Stopped at the deadline: the CPU's tree step took at least its wall time less what
        # the GPU rebuild spent outside its tree step.
        low = (fc["stopped_after"] - (fg["wall"] - tree(fg))) / tree(fg)
        s.add(what, f"cpu stopped after {fc['stopped_after']:.1f} s, gpu {tree(fg):.2f} s: "
              f"at least {low:.2f}x", ">= 3x", True if low >= 3 else None)
    else:
        s.speed(what, tree(fc), on_gpu(fg) and tree(fg), 3)
    if tree(fc) and on_gpu(fg):
        km = fc["kmeans_secs"] / fg["kmeans_secs"] if fg["kmeans_secs"] else float("inf")
        print(f"--full rebuild of {n} documents, K-Means: cpu {fc['kmeans_secs']:.2f} s, "
              f"gpu {fg['kmeans_secs']:.2f} s ({km:.2f}x)")
    s.inertia(f"--full rebuild of {n} documents, inertia", fc and fc.get("leaf_inertia"),
              fg and fg.get("leaf_inertia"))
    if tree(cold) and tree(fg):
        same = cold["leaf_inertia"] == fg["leaf_inertia"]
        s.add(f"{n} documents on the gpu, cold build and rebuild",
              f"inertia {cold['leaf_inertia']:.6f} and {fg['leaf_inertia']:.6f}",
              "equal for one seed on one device", same)
    if n is not None and n < 1_000_000:
        print(f"the large build had {n} documents, not 1,000,000 (the deadline, or an argument)")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = summarize(*load(sys.argv[1]))
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
