#!/usr/bin/env bash
# Configures (once) and builds AttnFuse into build/ with CMake + Ninja against
# Debian's LLVM/MLIR 22. CUDA kernels are built too when nvcc is found.
# ATTN_BUILD_DIR: another build dir; ATTN_CMAKE_ARGS: extra configure
# arguments (scripts/test-sanitize.sh uses both).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTN_BUILD_DIR:-$root/build}
prefix=$(llvm-config-22 --prefix)

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$prefix/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$prefix/bin/lit" \
    -DLLVM_USE_LINKER=lld ${ATTN_CMAKE_ARGS:-}
fi
cmake --build "$build" "$@"
