#!/usr/bin/env bash
# Regenerates docs/AttnOps.md from the ops' ODS descriptions (the attn.sdpa
# contract is written once, there). test/docs/ops-doc.test fails when the
# committed page is stale.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(llvm-config-22 --prefix)
"$prefix/bin/mlir-tblgen" -gen-op-doc -I "$root/include" -I "$prefix/include" \
  "$root/include/attn/Dialect/Attn/IR/AttnOps.td" -o "$root/docs/AttnOps.md"
echo "wrote docs/AttnOps.md"
