#!/usr/bin/env bash
# Builds AttnFuse with AddressSanitizer + UndefinedBehaviorSanitizer into
# build-sanitize/ (scripts/sanitize-common.sh) and runs the whole lit suite
# against it. A sanitizer report anywhere (also in a process whose failure a
# test expects, or in a child of a helper script) fails the run: every
# report is written to build-sanitize/sanitizer-reports/ and printed at the
# end. Ends with one line `sanitize: N passed, N failed, N skipped`.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/sanitize-common.sh"

"$root/scripts/install-deps.sh" || exit 1
start=$(date +%s)
build_sanitize || exit 1
echo "sanitize build: $(( $(date +%s) - start )) s"

reports="$sanitize_build/sanitizer-reports"
rm -rf "$reports" && mkdir -p "$reports"
# abort_on_error: a report kills the process with SIGABRT, so `not tool`
# (which accepts any nonzero exit but no crash) still fails the test.
export ASAN_OPTIONS="abort_on_error=1:log_path=$reports/asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="abort_on_error=1:log_path=$reports/ubsan:$UBSAN_OPTIONS"

results="$sanitize_build/test/lit-results.json"
rm -f "$results"
start=$(date +%s)
"$prefix/bin/lit" -sv --time-tests -o "$results" "$sanitize_build/test"
status=$?
echo "sanitize lit: $(( $(date +%s) - start )) s"

shopt -s nullglob
# With allocator_may_return_null=1 (sanitize-common.sh) ASan still logs a
# warning for each allocation it refuses; the compiled code's allocation
# check then reports it (allocation-checks.test). Such a log is no finding.
for f in "$reports"/*; do
  grep -qv 'WARNING: AddressSanitizer failed to allocate' "$f" || rm -f "$f"
done
found=("$reports"/*)
if [ ${#found[@]} -gt 0 ]; then
  echo "sanitize: ${#found[@]} sanitizer report(s):"
  for f in "${found[@]}"; do echo "== $f"; cat "$f"; done
  status=1
fi
python3 "$root/scripts/lit-summary.py" "$results" sanitize || status=1
exit $status
