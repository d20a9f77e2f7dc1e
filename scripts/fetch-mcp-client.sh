#!/usr/bin/env bash
# Installs the official MCP Python SDK (PyPI `mcp`, pinned) into tools/mcp-client/ (gitignored),
# for the test that drives `c2s mcp` with a real MCP client (tests/fixtures/mcp_client.py).
# Usage: scripts/fetch-mcp-client.sh     then: PYTHONPATH=tools/mcp-client python3 tests/fixtures/mcp_client.py C2S OUT
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/tools/mcp-client"
version="2.3.0"
die() { echo "fetch-mcp-client: $*" >&2; exit 2; }
command -v python3 >/dev/null || die "python3 is missing: install Python 3.10 or newer"
if PYTHONPATH="$dest" python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$version')" 2>/dev/null; then
  echo "ok      $dest (mcp $version)"
  exit 0
fi
rm -rf "$dest"
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
  --no-warn-conflicts --target "$dest" "mcp==$version" \
  || die "could not install mcp==$version from PyPI"
PYTHONPATH="$dest" python3 -c "import mcp.client.stdio" || die "$dest holds no usable mcp package"
echo "fetched $dest (mcp $version)"
