#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, ASan + UBSan, in build-sanitize/) and
# runs each for SECONDS (default 60), ATTN_FUZZ_JOBS targets at a time (default:
# the number of cores, at most 4; each fuzzer is one process):
#   parse, fuse, lower   MLIR text through the parser, attn-fuse-sdpa, the
#                        CPU lowering (seeds: the lit inputs, fuzz/make-corpus.py,
#                        dictionary fuzz/attn.dict, inputs up to 64 KiB)
#   npy                  attn-run's .npy reader (round trip checked)
#   run-input            attn-run's --entry/--shape/--input/--output handling
#   runtime              the C runtime's descriptor checks and trace API
#   package-json         libAttnPackage's manifest reader (lib/Package/Json.c)
#   diff                 fused against math-path numbers through the JIT
#   gemm                 CPU GEMM/GEMV products against a float64 reference
# (the last six from fuzz/seeds/<target>/). Prints the executions and crash
# inputs of each target and ends with one line `fuzz: N passed, N failed,
# N skipped`; a target passes when it ran its time without a crash, leak,
# timeout (an input slower than the target's limit: 20 s, diff 120 s, gemm
# 60 s) or out-of-memory. Crash inputs are kept in
# build-sanitize/fuzz/crashes-<target>/ (turn them into a test under
# test/fuzz/, see docs/hardening.md).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/sanitize-common.sh"

seconds=${1:-60}
shift $(( $# > 0 ? 1 : 0 ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(lower parse fuse npy run-input runtime package-json diff gemm)

"$root/scripts/install-deps.sh" || exit 1
build_sanitize --target attn-fuzzers || exit 1

work="$sanitize_build/fuzz"
mlir_seeds="$work/seeds"
mkdir -p "$work"
rm -rf "$mlir_seeds"
python3 "$root/fuzz/make-corpus.py" --max-len 65536 "$mlir_seeds" || exit 1

# The flags of target $1 (dictionary, size and time limits) and its seeds.
target_flags() {
  case $1 in
    parse|fuse|lower) echo "-max_len=65536 -timeout=20 -dict=$root/fuzz/attn.dict" ;;
    diff) echo "-max_len=64 -timeout=120" ;;
    gemm) echo "-max_len=32 -timeout=60" ;;
    *) echo "-max_len=4096 -timeout=20" ;;
  esac
}
target_seeds() {
  case $1 in
    parse|fuse|lower) echo "$mlir_seeds" ;;
    *) echo "$root/fuzz/seeds/$1" ;;
  esac
}

# Runs target $1 and prints its report; the last line is "passed", "failed"
# or "skipped".
fuzz_target() {
  local t=$1 name="attn-$1-fuzzer"
  local bin="$sanitize_build/bin/$name"
  if [ ! -x "$bin" ]; then
    echo "fuzz $name: not built, skipped"
    echo skipped
    return
  fi
  local corpus="$work/corpus-$t" crashes="$work/crashes-$t" log="$work/$t.log"
  mkdir -p "$corpus" "$crashes"
  touch "$work/$t.start"  # crash inputs of earlier runs do not count
  # New inputs go to the first directory; the seeds are only read. The
  # seeds all run first, even past SECONDS.
  local start rc
  start=$(date +%s)
  # shellcheck disable=SC2046 # the flags are words
  "$bin" -max_total_time="$seconds" -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$crashes/" $(target_flags "$t") "$corpus" \
    "$(target_seeds "$t")" > "$log" 2>&1
  rc=$?
  local execs rate inputs found
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
  rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$log")
  # slow-unit-* files (inputs over 10 s) are written there too; a timeout is
  # an input over the target's -timeout, which fails it.
  mapfile -t inputs < <(find "$crashes" -type f -newer "$work/$t.start" \
    \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))
  found=${#inputs[@]}
  echo "fuzz $name: ${execs:-?} executions (${rate:-?}/s) in $(( $(date +%s) - start )) s," \
    "$(find "$corpus" -type f | wc -l) corpus files, $found crash input(s)"
  if [ $rc -eq 0 ] && [ "$found" -eq 0 ]; then
    echo passed
    return
  fi
  echo "fuzz $name: FAILED (exit $rc); log $log, inputs in $crashes:"
  grep -E "^attn fuzz:|ERROR|runtime error|==[0-9]+==|#[0-9]+ 0x" "$log" | head -40
  # CI runs in a clone that is gone afterwards: print the inputs themselves
  # so a failure can be reproduced from the log alone.
  local input
  for input in "${inputs[@]:0:3}"; do
    echo "---- $input (base64, decode with: base64 -d > input)"
    base64 "$input" | head -c 100000
    echo "---- end of $input"
  done
  echo failed
}

# The targets ATTN_FUZZ_JOBS at a time (the lower target's seed pass alone
# takes minutes under ASan), each report printed whole, in the targets'
# order.
jobs=${ATTN_FUZZ_JOBS:-$(nproc)}
[ "$jobs" -le 4 ] || jobs=4
[ "$jobs" -ge 1 ] || jobs=1
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  fuzz_target "$t" > "$work/$t.report" 2>&1 &
done
wait
passed=0 failed=0 skipped=0
for t in "${targets[@]}"; do
  sed '$d' "$work/$t.report"
  case $(tail -n 1 "$work/$t.report") in
    passed) passed=$((passed + 1)) ;;
    skipped) skipped=$((skipped + 1)) ;;
    *) failed=$((failed + 1)) ;;
  esac
done
echo "fuzz: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
