#!/usr/bin/env bash
# Batched cold build of a synthetic corpus (default 10,000 documents) against the loopback
# Files/Batches test server: prints the batches, requests per batch, and the wall time spent
# outside waiting for the provider. Usage: scripts/bench-batch.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
C2S_BATCH_DOCS="${1:-10000}" cargo test --release --test it batch::bench_ -- --ignored --nocapture
