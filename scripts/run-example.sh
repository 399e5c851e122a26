#!/usr/bin/env bash
# The README's main job: installs what is missing, builds AttnFuse if needed,
# then takes the bundled example (the seed's NaiveCausalAttention) through
# the product: the IR as written, the IR after fusion, and the compiled
# module run fused and unfused on the same random inputs (fully masked rows
# included), compared within the dtype's tolerance.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTN_BUILD_DIR:-$root/build}
example=${1:-$root/examples/naive_causal_attention.mlir}
entry=${2:-naive}

"$root/scripts/install-deps.sh" >/dev/null
"$root/scripts/build.sh" >/dev/null

echo "== $example, as written =="
"$build/bin/attn-opt" "$example"
echo
echo "== after attn-opt --attn-fuse-sdpa =="
"$build/bin/attn-opt" --attn-fuse-sdpa "$example"
echo
echo "== attn-run --entry $entry --check (fused flash vs unfused math, same inputs) =="
"$build/bin/attn-run" "$example" --entry "$entry" --check
