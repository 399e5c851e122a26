# Sourced by scripts/test-sanitize.sh and scripts/fuzz.sh (needs $root): the
# one instrumented build both use (docs/hardening.md) and its run-time options.
#
# build-sanitize/ (ATTN_SANITIZE_BUILD_DIR): clang-22, ASan + UBSan on the
# project's own code, libFuzzer coverage (the fuzz targets are built in the
# same tree, so CI compiles the libraries once), no CUDA kernels.

prefix=$(llvm-config-22 --prefix)
sanitize_build=${ATTN_SANITIZE_BUILD_DIR:-$root/build-sanitize}

# Configures build-sanitize/ once, then builds; arguments go to cmake --build.
build_sanitize() {
  CC=clang-22 CXX=clang++-22 ATTN_BUILD_DIR="$sanitize_build" \
    ATTN_CMAKE_ARGS="-DATTN_SANITIZE=address,undefined -DATTN_FUZZ=ON -DATTN_ENABLE_CUDA=OFF ${ATTN_CMAKE_ARGS:-}" \
    "$root/scripts/build.sh" -j "${ATTN_JOBS:-2}" "$@"
}

# Located reports (Debian's libLLVM.so has symbols, our code line tables).
export ASAN_SYMBOLIZER_PATH="$prefix/bin/llvm-symbolizer"
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons a new slab from
# header code, which is instrumented in our libraries (e.g. where the attn
# dialect allocates an attribute's storage in the MLIRContext) but not in
# Debian's libMLIR.so, which then hands out the slab's memory without
# unpoisoning it: a false use-after-poison. Heap, stack and global checks
# are unaffected.
# allocator_may_return_null=1: an allocation too large for the machine
# returns NULL, as malloc does without ASan, so the compiled code's
# allocation checks (test/e2e/allocation-checks.test) are what reports it.
export ASAN_OPTIONS="allow_user_poisoning=0:allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
