#!/usr/bin/env bash
# The README's test command: installs what is missing, builds everything the
# tests need and runs every stage:
#   lit       the lit suite (dialect, passes, lowering, end to end, kernel
#             ABI and emulator checks; GPU tests report UNSUPPORTED here)
#   python    the attnfuse package's pytest suite (installs pinned torch)
#   wheel     the attnfuse wheel built from the build above, installed into
#             a fresh venv, the README's Python example run there
#   sanitize  the lit suite again against an ASan+UBSan build of our code
#   fuzz      each libFuzzer target for 20 s (ATTN_FUZZ_SECONDS; longer runs
#             belong outside CI, docs/hardening.md)
# ATTN_TEST_STAGES="lit python" runs a subset. Each stage prints one line
# `STAGE: N passed, N failed, N skipped`; the last line sums them.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTN_BUILD_DIR:-$root/build}
stages=${ATTN_TEST_STAGES:-lit python wheel sanitize fuzz}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

"$root/scripts/install-deps.sh" || exit 1
# The lit suite's quantized-weight tests build their inputs with the
# attnfuse package (numpy, torch; they report UNSUPPORTED without them).
case " $stages " in
  *" lit "*|*" python "*|*" wheel "*|*" sanitize "*)
    "$root/scripts/install-python-deps.sh" || exit 1 ;;
esac
start=$(date +%s)
"$root/scripts/build.sh" || exit 1
echo "build: $(( $(date +%s) - start )) s"

run_lit() {
  local results="$build/test/lit-results.json"
  rm -f "$results"
  "$(llvm-config-22 --prefix)/bin/lit" -sv -o "$results" "$build/test"
  python3 "$root/scripts/lit-summary.py" "$results"
}

# pytest's own closing line ("== 3 passed, 1 skipped in 2.0s ==") as ours.
python_summary() {
  python3 - "$1" <<'PY'
import re, sys
line = [l for l in open(sys.argv[1]) if re.search(r"\d+ (passed|failed|error)", l)]
last = line[-1] if line else ""
count = lambda w: sum(int(n) for n in re.findall(r"(\d+) " + w, last))
print("python: %d passed, %d failed, %d skipped"
      % (count("passed"), count("failed") + count("errors?"), count("skipped")))
PY
}

status=0
for stage in $stages; do
  t0=$(date +%s)
  echo "== stage $stage"
  case $stage in
    lit) run_lit 2>&1 | tee "$logs/$stage"; rc=${PIPESTATUS[0]} ;;
    python) "$root/scripts/test-python.sh" 2>&1 | tee "$logs/$stage.raw"
            rc=${PIPESTATUS[0]}
            python_summary "$logs/$stage.raw" | tee "$logs/$stage" ;;
    wheel) "$root/scripts/test-wheel.sh" 2>&1 | tee "$logs/$stage"
           rc=${PIPESTATUS[0]} ;;
    sanitize) "$root/scripts/test-sanitize.sh" 2>&1 | tee "$logs/$stage"
              rc=${PIPESTATUS[0]} ;;
    fuzz) "$root/scripts/fuzz.sh" "${ATTN_FUZZ_SECONDS:-20}" 2>&1 | tee "$logs/$stage"
          rc=${PIPESTATUS[0]} ;;
    *) echo "unknown stage '$stage'"; rc=1 ;;
  esac
  [ "$rc" -eq 0 ] || status=1
  echo "$rc" > "$logs/$stage.rc"
  echo "stage $stage: $(( $(date +%s) - t0 )) s"
done

# The stages' summary lines, summed: the last line of the output.
python3 - "$logs" $stages <<'PY' || status=1
import re, sys, os
passed = failed = skipped = 0
for stage in sys.argv[2:]:
    path = os.path.join(sys.argv[1], stage)
    lines = open(path).read().splitlines() if os.path.exists(path) else []
    hits = [l for l in lines if re.fullmatch(r"\w+: \d+ passed, \d+ failed, \d+ skipped", l)]
    if not hits:
        failed += 1  # a stage that printed no summary failed to run
        continue
    p, f, s = map(int, re.findall(r"\d+", hits[-1]))
    if open(path + ".rc").read().strip() != "0" and f == 0:
        f = 1  # the stage failed outside its tests (a build, say)
    passed, failed, skipped = passed + p, failed + f, skipped + s
print("total: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
sys.exit(1 if failed else 0)
PY
exit $status
