#!/usr/bin/env bash
# CPU K-Means (exact, and coarse-to-fine as builds run it above k = 256) against scikit-learn's
# KMeans (algorithm="lloyd", k-means++ init) and MiniBatchKMeans on the same data,
# same N, D, k, n_init = 1, max_iter, tol = 0 and the same number of threads, back to back.
# Also runs the GPU path when a real GPU adapter exists (and prints the adapter).
# usage: scripts/bench-kmeans.sh [N D K MAX_ITER]   (default 50000 384 500 20)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-50000}"; d="${2:-384}"; k="${3:-500}"; iters="${4:-20}"
threads="${THREADS:-$(nproc)}"
mkdir -p target/bench
data="target/bench/kmeans-$n-$d.f32"
venv="target/bench/venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c "import sklearn, numpy, threadpoolctl" 2>/dev/null || "$venv/bin/pip" install -q scikit-learn numpy threadpoolctl
repeat="${REPEAT:-3}"
echo "N=$n D=$d k=$k n_init=1 max_iter=$iters tol=0 threads=$threads; $repeat alternating runs each"
cargo bench --quiet --bench kmeans --no-run 2>/dev/null
for r in $(seq "$repeat"); do
RAYON_NUM_THREADS="$threads" cargo bench --quiet --bench kmeans -- "$n" "$d" "$k" "$iters" "$data" 2>/dev/null
# OPENBLAS_* are unset only for this command (see the workplace notes); scikit-learn's KMeans
# runs its own OpenMP loops, limited to the same thread count.
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS="$threads" "$venv/bin/python" - "$data" "$n" "$d" "$k" "$iters" "$threads" <<'PY'
import json, sys, time
import numpy as np
from sklearn.cluster import KMeans, MiniBatchKMeans
from threadpoolctl import threadpool_limits
path, n, d, k, iters, threads = sys.argv[1], *map(int, sys.argv[2:])
x = np.fromfile(path, dtype="<f4").reshape(n, d)
with threadpool_limits(limits=threads):
    t = time.perf_counter()
    km = KMeans(n_clusters=k, init="k-means++", n_init=1, max_iter=iters, tol=0.0, algorithm="lloyd", random_state=42).fit(x)
    secs = time.perf_counter() - t
# The same objective as c2s's (spherical): 1 - cos to the normalized cluster centers.
c = km.cluster_centers_ / np.linalg.norm(km.cluster_centers_, axis=1, keepdims=True)
cos_inertia = float(np.sum(1.0 - np.einsum("ij,ij->i", x, c[km.labels_])))
print(json.dumps({"device": f"scikit-learn (threads={threads})", "seconds": round(secs, 3), "iterations": int(km.n_iter_),
                  "inertia_cosine": round(cos_inertia, 3), "inertia_sq_euclidean": round(float(km.inertia_), 3)}))
with threadpool_limits(limits=threads):
    t = time.perf_counter()
    mb = MiniBatchKMeans(n_clusters=k, init="k-means++", n_init=1, max_iter=iters, batch_size=max(1024, 3 * k), random_state=42).fit(x)
    secs = time.perf_counter() - t
c = mb.cluster_centers_ / np.maximum(np.linalg.norm(mb.cluster_centers_, axis=1, keepdims=True), 1e-12)
labels = mb.predict(x)
cos_inertia = float(np.sum(1.0 - np.einsum("ij,ij->i", x, c[labels])))
print(json.dumps({"device": f"scikit-learn MiniBatchKMeans (threads={threads})", "seconds": round(secs, 3), "iterations": int(mb.n_iter_),
                  "inertia_cosine": round(cos_inertia, 3), "inertia_sq_euclidean": round(float(mb.inertia_), 3)}))
PY
done | tee target/bench/kmeans-runs.jsonl
python3 - <<'PY'
import json, statistics
runs = [json.loads(l) for l in open("target/bench/kmeans-runs.jsonl") if l.startswith("{")]
by = {}
for r in runs:
    by.setdefault(r["device"], []).append(r)
med = {dev: statistics.median(x["seconds"] for x in rs) for dev, rs in by.items()}
for dev, rs in by.items():
    print(f"{dev:<32} median {med[dev]:7.2f} s   cosine inertia {rs[0]['inertia_cosine']:.1f}   iterations {rs[0]['iterations']}")
skl = next((d for d in med if d.startswith("scikit-learn (")), None)
for cpu in (d for d in med if d.startswith("cpu")):
    if skl:
        print(f"speed-up of c2s {cpu} over scikit-learn KMeans: {med[skl] / med[cpu]:.2f}x (target >= 1.0)")
PY
