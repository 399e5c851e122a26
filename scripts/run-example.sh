#!/usr/bin/env bash
# The README's main job: builds AttnFuse if needed, then fuses the bundled
# example (the seed's NaiveCausalAttention) and shows the IR before and after.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTN_BUILD_DIR:-$root/build}
example=${1:-$root/examples/naive_causal_attention.mlir}

"$root/scripts/install-deps.sh" >/dev/null
"$root/scripts/build.sh" >/dev/null

echo "== $example, as written =="
"$build/bin/attn-opt" "$example"
