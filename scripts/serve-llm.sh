#!/usr/bin/env bash
# Starts, stops or checks a local OpenAI-compatible chat server: llama.cpp's own server from the
# pinned PyPI wheel xllamacpp (MIT, prebuilt for the CPU, installed into tools/xllamacpp), on a
# GGUF from scripts/fetch-llm.sh. It listens on 127.0.0.1 only.
#
# Usage:
#   scripts/serve-llm.sh start [--model 0.5b|1.5b|FILE.gguf] [--port 8080] [--ctx 8192]
#                              [--threads N] [--parallel 1] [--wait-s 300]
#   scripts/serve-llm.sh stop   [--port 8080]
#   scripts/serve-llm.sh status [--port 8080]
#   scripts/serve-llm.sh install     (only installs the server into tools/xllamacpp)
# `start` returns once the server answers /health with the model loaded, and prints the base URL
# (http://127.0.0.1:PORT/v1). The PID and the log are tools/llm-server-PORT.{pid,log}.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="2026.10.11549"
site="$root/tools/xllamacpp"
die() { echo "serve-llm: $*" >&2; exit 2; }

cmd="${1:-}"
[ -n "$cmd" ] && shift || true
model="0.5b" port=8080 ctx=8192 threads="$(nproc)" parallel=1 wait_s=300
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --ctx) ctx="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --parallel) parallel="$2"; shift 2 ;;
    --wait-s) wait_s="$2"; shift 2 ;;
    *) die "unknown option '$1' (see the usage at the top of $0)" ;;
  esac
done
pidfile="$root/tools/llm-server-$port.pid"
log="$root/tools/llm-server-$port.log"
url="http://127.0.0.1:$port"

healthy() { python3 - "$url/health" <<'PY'
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=2) as r:
        sys.exit(0 if r.status == 200 else 1)
except Exception:
    sys.exit(1)
PY
}
running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

install_server() {
  if PYTHONPATH="$site" python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('xllamacpp') != '$version')" 2>/dev/null; then
    return
  fi
  rm -rf "$site"
  echo "installing xllamacpp $version into $site" >&2
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    --no-warn-conflicts --no-deps --target "$site" "xllamacpp==$version" \
    || die "could not install xllamacpp==$version from PyPI"
}

case "$cmd" in
  install)
    install_server
    echo "ok      $site (xllamacpp $version)" >&2
    ;;
  start)
    if running; then
      healthy || die "a server (PID $(cat "$pidfile")) holds port $port but does not answer; run: $0 stop --port $port"
      echo "$url/v1"
      exit 0
    fi
    case "$model" in
      0.5b|1.5b) gguf="$("$root/scripts/fetch-llm.sh" "$model")" ;;
      *) gguf="$model" ;;
    esac
    [ -f "$gguf" ] || die "no model file at $gguf (fetch one: scripts/fetch-llm.sh 0.5b)"
    install_server
    mkdir -p "$root/tools"
    PYTHONPATH="$site" nohup python3 "$root/scripts/serve_llm.py" "$gguf" --port "$port" \
      --ctx "$ctx" --threads "$threads" --parallel "$parallel" >"$log" 2>&1 &
    echo $! >"$pidfile"
    for _ in $(seq 1 $((wait_s * 2))); do
      if healthy; then
        echo "serving $(basename "$gguf") (PID $(cat "$pidfile"), log $log)" >&2
        echo "$url/v1"
        exit 0
      fi
      running || { tail -n 20 "$log" >&2; rm -f "$pidfile"; die "the server exited while starting (log above)"; }
      sleep 0.5
    done
    die "the server did not answer $url/health within $wait_s s (log: $log)"
    ;;
  stop)
    if running; then
      pid="$(cat "$pidfile")"
      kill "$pid"
      for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
      echo "stopped PID $pid" >&2
    else
      echo "no server on port $port" >&2
    fi
    rm -f "$pidfile"
    ;;
  status)
    if running && healthy; then echo "$url/v1"; else echo "no server on port $port" >&2; exit 1; fi
    ;;
  *) die "usage: $0 start|stop|status|install [options]" ;;
esac
