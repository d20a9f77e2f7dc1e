#!/usr/bin/env bash
# Times README's quick start as a newcomer runs it: a fresh clone of HEAD (beside this checkout,
# so that ../shared/data is found) with an empty target folder, then each command of README's
# "Quick start" block, as printed, one after the other. Crates already in ~/.cargo are not
# downloaded again. Prints each command's wall time and the target folder's size, then removes
# the clone.
#
# Usage: scripts/time-quickstart.sh [CLONE_DIR]   (default: ../c2s-quickstart)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
clone="${1:-$root/../c2s-quickstart}"
# The commands of the first ```sh block after "## Quick start", without their comments.
mapfile -t commands < <(awk '/^## Quick start/{q=1} q&&/^```sh/{b=1;next} b&&/^```/{exit} b' \
  "$root/README.md" | sed 's/[[:space:]]*#.*$//' | grep -v '^[[:space:]]*$')
[ ${#commands[@]} -gt 0 ] || { echo "time-quickstart: no quick start block in README.md" >&2; exit 2; }
rm -rf "$clone"
git clone -q "$root" "$clone"
trap 'rm -rf "$clone" "$clone.log"' EXIT
cd "$clone"
unset CARGO_TARGET_DIR
echo "commit $(git rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
for c in "${commands[@]}"; do
  start=$(date +%s.%N)
  rc=0
  bash -c "$c" >"$clone.log" 2>&1 || rc=$?
  end=$(date +%s.%N)
  printf '%-40s %8.1f s  (exit %d)\n' "$c" "$(echo "$end - $start" | bc)" "$rc"
  [ "$rc" -eq 0 ] || { tail -20 "$clone.log"; exit "$rc"; }
done
echo "target folder: $(du -sh target | cut -f1)"
