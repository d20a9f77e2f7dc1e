#!/usr/bin/env bash
# Installs mdBook (crates.io `mdbook`, pinned, built without its server and watcher) into
# tools/mdbook/ (gitignored), for the test that builds the guide in docs/.
# Usage: scripts/fetch-mdbook.sh     then: tools/mdbook/bin/mdbook build docs
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/tools/mdbook"
version="0.5.4"
die() { echo "fetch-mdbook: $*" >&2; exit 2; }
bin="$dest/bin/mdbook"
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "v$version"; then
  echo "ok      $bin"
  exit 0
fi
command -v cargo >/dev/null || die "cargo is missing: install a Rust toolchain (rustup)"
# A target folder of its own, removed afterwards: mdBook's build is not c2s's.
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
CARGO_TARGET_DIR="$build" cargo install --quiet --locked --no-default-features \
  --version "$version" --root "$dest" mdbook \
  || die "could not build mdbook $version from crates.io"
[ -x "$bin" ] || die "$bin was not installed"
echo "fetched $bin"
