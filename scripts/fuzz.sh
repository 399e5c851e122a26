#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, ASan + UBSan, in build-sanitize/) and
# runs each for SECONDS (default 60), one after the other:
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
[ ${#targets[@]} -gt 0 ] || targets=(parse fuse lower npy run-input runtime package-json diff gemm)

"$root/scripts/install-deps.sh" || exit 1
build_sanitize --target attn-fuzzers || exit 1

work="$sanitize_build/fuzz"
mlir_seeds="$work/seeds"
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

passed=0 failed=0 skipped=0
for t in "${targets[@]}"; do
  name="attn-$t-fuzzer"
  bin="$sanitize_build/bin/$name"
  if [ ! -x "$bin" ]; then
    echo "fuzz $name: not built, skipped"
    skipped=$((skipped + 1))
    continue
  fi
  corpus="$work/corpus-$t" crashes="$work/crashes-$t" log="$work/$t.log"
  mkdir -p "$corpus" "$crashes"
  touch "$work/$t.start"  # crash inputs of earlier runs do not count
  # New inputs go to the first directory; the seeds are only read. The
  # seeds all run first, even past SECONDS.
  start=$(date +%s)
  # shellcheck disable=SC2046 # the flags are words
  "$bin" -max_total_time="$seconds" -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$crashes/" $(target_flags "$t") "$corpus" \
    "$(target_seeds "$t")" > "$log" 2>&1
  rc=$?
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
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "fuzz $name: FAILED (exit $rc); log $log, inputs in $crashes:"
    grep -E "^attn fuzz:|ERROR|runtime error|==[0-9]+==|#[0-9]+ 0x" "$log" | head -40
    # CI runs in a clone that is gone afterwards: print the inputs themselves
    # so a failure can be reproduced from the log alone.
    for input in "${inputs[@]:0:3}"; do
      echo "---- $input (base64, decode with: base64 -d > input)"
      base64 "$input" | head -c 100000
      echo "---- end of $input"
    done
  fi
done
echo "fuzz: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
