#!/usr/bin/env bash
# Installs the Agent Skills reference validator (npm skills-ref, pinned) into tools/skills-ref/
# (gitignored), for the test that validates every top-level skill c2s writes.
# Usage: scripts/fetch-skills-ref.sh     then: tools/skills-ref/node_modules/.bin/skills-ref validate DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/tools/skills-ref"
version="0.1.5"
die() { echo "fetch-skills-ref: $*" >&2; exit 2; }
command -v node >/dev/null || die "node is missing: install Node.js (apt-get install nodejs npm)"
command -v npm >/dev/null || die "npm is missing: install it (apt-get install npm)"
bin="$dest/node_modules/.bin/skills-ref"
if [ -x "$bin" ] && grep -q "\"version\": \"$version\"" "$dest/node_modules/skills-ref/package.json" 2>/dev/null; then
  echo "ok      $bin"
  exit 0
fi
mkdir -p "$dest"
npm install --prefix "$dest" --no-audit --no-fund --silent "skills-ref@$version" \
  || die "could not install skills-ref@$version from the npm registry"
[ -x "$bin" ] || die "$bin was not installed"
echo "fetched $bin"
