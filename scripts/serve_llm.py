"""Runs llama.cpp's OpenAI-compatible server (PyPI xllamacpp) on a GGUF model until SIGTERM.

Started by scripts/serve-llm.sh, which installs xllamacpp into tools/ and waits for /health.
Usage: python3 serve_llm.py MODEL.gguf --port 8080 [--host 127.0.0.1] [--ctx 8192]
       [--threads N] [--parallel 1]
"""

import argparse
import os
import signal
import sys
import threading


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("model")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--ctx", type=int, default=8192, help="context tokens per slot")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--parallel", type=int, default=1, help="requests decoded at once")
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()

    import xllamacpp as xlc

    p = xlc.CommonParams()
    p.model.path = a.model
    p.hostnames = [a.host]
    p.port = a.port
    p.n_parallel = a.parallel
    # n_ctx is shared by the slots: give each one the context asked for.
    p.n_ctx = a.ctx * a.parallel
    p.use_jinja = True
    p.cpuparams.n_threads = a.threads
    p.cpuparams_batch.n_threads = a.threads
    p.sampling.seed = a.seed
    p.ui = False
    p.warmup = True
    server = xlc.Server(p)
    print(f"serving {a.model} at {server.listening_address}/v1", flush=True)

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
