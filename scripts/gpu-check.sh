#!/usr/bin/env bash
# GPU check of the AttnFuse CUDA kernels, for a machine with an NVIDIA GPU,
# CUDA, CMake (and ideally ninja), no LLVM/MLIR and no network needed.
#
#   1. builds kernels/ standalone into a temporary directory (sm_90 only, or
#      $GPU_CHECK_ARCHS), printing ptxas register/spill statistics,
#   2. runs the host ABI test and the GPU correctness test (both tile variants;
#      every kernel: tensor-core, generic, f32, split-key decode, windows,
#      both bool-mask polarities),
#   3. runs compute-sanitizer memcheck/racecheck/synccheck on small cases of
#      every kernel (if present),
#   4. runs the kernel benchmark (both tile variants, CSV kept; then windowed
#      prefill, f32 and decode shapes in GB/s, split and not),
#   5. if `python3 -c 'import torch'` works, times torch SDPA with the flash and
#      the cuDNN backends forced on the same shapes and prints ours/flash ratios,
#      and the decode shapes next to PyTorch with the fraction of HBM bandwidth.
# Not part of CI (it needs a GPU); scripts/test.sh never calls it.
#
# Output is tee'd to $OUT/gpu-check.log when $OUT is set (the benchmark CSV is
# copied there too). Exit status: non-zero if the build or a correctness test
# failed; benchmark problems are reported but do not fail the script.
#
# Environment: GPU_CHECK_ARCHS (default 90), GPU_CHECK_QUICK=1 (shorter
# benchmark), GPU_CHECK_BUILD_DIR (default: a fresh mktemp dir).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TEE_PID=""
if [[ -n "${OUT:-}" ]]; then
  mkdir -p "$OUT"
  exec > >(tee "$OUT/gpu-check.log") 2>&1
  TEE_PID=$!
fi
finish() {
  local rc=$1
  if [[ -n "$TEE_PID" ]]; then
    exec >&- 2>&-                        # let tee see EOF and flush the log
    wait "$TEE_PID" 2>/dev/null || sleep 1
  fi
  exit "$rc"
}

ARCHS="${GPU_CHECK_ARCHS:-90}"
BUILD="${GPU_CHECK_BUILD_DIR:-$(mktemp -d /tmp/attnfuse-kernels.XXXXXX)}"
JOBS="$(nproc 2>/dev/null || echo 4)"
status=0

section() { printf '\n===== %s =====\n' "$*"; }

section "environment"
date
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
command -v nvcc >/dev/null 2>&1 && nvcc --version | tail -2
cmake --version | head -1
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
GEN=(-G Ninja)
if ! command -v ninja >/dev/null 2>&1; then
  echo "ninja not found, using Unix Makefiles"
  GEN=(-G "Unix Makefiles")
fi
echo "build dir: $BUILD"

section "configure + build (CMAKE_CUDA_ARCHITECTURES=$ARCHS)"
t0=$(date +%s)
if ! cmake -S "$ROOT/kernels" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
     -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" -DCMAKE_CUDA_FLAGS="-Xptxas=-v"; then
  echo "configure FAILED"; finish 1
fi
if ! cmake --build "$BUILD" -j"$JOBS" > "$BUILD/build.log" 2>&1; then
  cat "$BUILD/build.log"; echo "build FAILED"; finish 1
fi
echo "build took $(( $(date +%s) - t0 )) s"
# ptxas statistics of the attention kernels (registers / spills per kernel)
awk '/Compiling entry function/ { fn = $0; sub(/.*function /, "", fn); keep = (fn ~ /flash_fwd_kernel|generic_fwd_kernel|decode_split_kernel|decode_combine_kernel/) }
     keep && /bytes stack frame/ { sp = $0; gsub(/^ +/, "", sp) }
     keep && /Used [0-9]+ registers/ { r = $0; sub(/.*Used /, "", r); sub(/,.*/, "", r); print r " | " sp " | " fn; keep = 0 }' \
  "$BUILD/build.log" | sort -u | head -40

section "ctest: host ABI validation test"
if ! ctest --test-dir "$BUILD" --output-on-failure -R attn_kernels_abi_validation; then
  echo "ctest FAILED"; status=1
fi

section "GPU correctness test, verbose"
"$BUILD/bin/attn_kernels_gpu_test" --verbose
rc=$?
if [[ $rc -eq 77 ]]; then echo "attn_kernels_gpu_test: no usable CUDA device (exit 77)"; status=1
elif [[ $rc -ne 0 ]]; then echo "attn_kernels_gpu_test exit code $rc"; status=1; fi

SANITIZER="$(command -v compute-sanitizer 2>/dev/null || true)"
for c in /usr/local/cuda/compute-sanitizer/compute-sanitizer /usr/local/cuda/bin/compute-sanitizer; do
  [[ -z "$SANITIZER" && -x "$c" ]] && SANITIZER="$c"
done
if [[ -n "$SANITIZER" && $rc -ne 77 ]]; then
  section "compute-sanitizer (small cases)"
  timeout 300 "$SANITIZER" --tool memcheck --error-exitcode 9 \
    "$BUILD/bin/attn_kernels_gpu_test" --filter "causal_L<S" || { echo "memcheck reported errors"; status=1; }
  timeout 300 "$SANITIZER" --tool memcheck --error-exitcode 9 \
    "$BUILD/bin/attn_kernels_gpu_test" --filter "generic f16" || { echo "memcheck (generic) reported errors"; status=1; }
  timeout 300 "$SANITIZER" --tool racecheck --error-exitcode 9 \
    "$BUILD/bin/attn_kernels_gpu_test" --filter "tile_multiple_causal f16" || { echo "racecheck reported hazards"; status=1; }
  timeout 300 "$SANITIZER" --tool synccheck --error-exitcode 9 \
    "$BUILD/bin/attn_kernels_gpu_test" --filter "bool_prefix_inf bf16" || { echo "synccheck reported errors"; status=1; }
  for f in "decode_L16_bool f16" "f32_decode" "window_causal_bool bf16" "f32_causal_bool"; do
    timeout 300 "$SANITIZER" --tool memcheck --error-exitcode 9 \
      "$BUILD/bin/attn_kernels_gpu_test" --filter "$f" || { echo "memcheck ($f) reported errors"; status=1; }
  done
  timeout 300 "$SANITIZER" --tool racecheck --error-exitcode 9 \
    "$BUILD/bin/attn_kernels_gpu_test" --filter "decode_L5_add_window f16" || { echo "racecheck (decode) reported hazards"; status=1; }
else
  echo "compute-sanitizer not found (or no GPU), skipping"
fi

section "benchmark (ours)"
BENCH_ARGS=(--variants all --csv "$BUILD/ours.csv" --extra-csv "$BUILD/extra.csv")
[[ "${GPU_CHECK_QUICK:-0}" == "1" ]] && BENCH_ARGS+=(--quick --min-ms 100)
"$BUILD/bin/attn_kernels_bench" "${BENCH_ARGS[@]}" || echo "attn_kernels_bench exit code $?"
[[ -n "${OUT:-}" && -f "$BUILD/ours.csv" ]] && cp "$BUILD/ours.csv" "$OUT/ours.csv"
[[ -n "${OUT:-}" && -f "$BUILD/extra.csv" ]] && cp "$BUILD/extra.csv" "$OUT/extra.csv"

section "PyTorch SDPA (flash / cuDNN backends)"
if python3 -c 'import torch' >/dev/null 2>&1; then
  TORCH_ARGS=(--ours "$BUILD/ours.csv" --extra "$BUILD/extra.csv")
  [[ "${GPU_CHECK_QUICK:-0}" == "1" ]] && TORCH_ARGS+=(--quick --min-ms 100)
  python3 "$ROOT/kernels/bench/torch_sdpa_bench.py" "${TORCH_ARGS[@]}" || echo "torch benchmark exit code $?"
else
  echo "python3 -c 'import torch' failed; skipping the PyTorch comparison"
fi

section "summary"
if [[ $status -eq 0 ]]; then echo "gpu-check: correctness PASSED"; else echo "gpu-check: correctness FAILED"; fi
finish $status
