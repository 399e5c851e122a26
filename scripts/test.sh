#!/usr/bin/env bash
# The README's test command: installs what is missing, builds everything the
# tests need and runs every test (lit: dialect, passes, lowering, end to end,
# kernel ABI checks; GPU tests report UNSUPPORTED without a GPU). Ends with
# lit's summary and one plain `N passed, N failed, N skipped` line.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTN_BUILD_DIR:-$root/build}

"$root/scripts/install-deps.sh" || exit 1
start=$(date +%s)
"$root/scripts/build.sh" || exit 1
echo "build: $(( $(date +%s) - start )) s"

results="$build/test/lit-results.json"
rm -f "$results"
"$(llvm-config-22 --prefix)/bin/lit" -sv -o "$results" "$build/test"
status=$?
python3 "$root/scripts/lit-summary.py" "$results" || status=1
exit $status
