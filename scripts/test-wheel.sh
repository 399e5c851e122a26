#!/usr/bin/env bash
# The wheel stage of scripts/test.sh: builds the attnfuse wheel once
# (python/pyproject.toml, scikit-build-core) from the CMake build that
# scripts/build.sh made (its build directory reused: only the install step
# and the packing run), installs it into a fresh venv and runs the
# README's Python example there, from a directory outside the checkout,
# with no PYTHONPATH, ATTNFUSE_TOOLS_DIR or ATTN_BUILD_DIR: the package
# must find its compiler inside itself. The venv sees the system's
# site-packages (--system-site-packages) so that torch and transformers
# are not installed again. Prints "wheel: N passed, N failed, 0 skipped".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTN_BUILD_DIR:-$root/build}
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
check() { # name, then the command; counts and reports it
  local name=$1
  shift
  if "$@" >"$work/out" 2>&1; then
    passed=$((passed + 1))
    echo "PASS: wheel :: $name"
    grep '^test-wheel:' "$work/out" || true
  else
    failed=$((failed + 1))
    echo "FAIL: wheel :: $name"
    tail -n 40 "$work/out"
  fi
}
summary() {
  echo "wheel: $passed passed, $failed failed, 0 skipped"
  [ "$failed" -eq 0 ]
  exit
}

if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "test-wheel: $build has no CMake build: run scripts/build.sh first" >&2
  failed=1
  summary
fi
# The build's own CUDA setting, so that reusing it reconfigures nothing
# (pyproject.toml turns CUDA off for a fresh pip install).
cuda=$(sed -n 's/^ATTN_ENABLE_CUDA:BOOL=//p' "$build/CMakeCache.txt")

"$python" -m venv --system-site-packages "$work/venv"
venv_python=$work/venv/bin/python
# The build backend (pinned in scripts/install-python-deps.sh, so the venv
# sees it): no build isolation, which would fetch it again.
build_wheel() {
  local t0=$(date +%s)
  (cd "$work" && env -u PYTHONPATH "$venv_python" -m pip wheel --no-deps \
      --no-build-isolation --no-input --disable-pip-version-check \
      -w "$work/dist" -C build-dir="$build" \
      ${cuda:+-C cmake.define.ATTN_ENABLE_CUDA=$cuda} "$root/python") &&
  echo "test-wheel: wheel built in $(( $(date +%s) - t0 )) s" >&2 &&
  ls "$work"/dist/attnfuse-*.whl
}
check "build the wheel from the existing build" build_wheel

install_wheel() {
  env -u PYTHONPATH "$venv_python" -m pip install --no-deps --no-index \
    --no-input --disable-pip-version-check "$work"/dist/attnfuse-*.whl
}
check "install it into a fresh venv" install_wheel

# The package, its tools and its C API all come from the venv.
in_venv() {
  (cd "$work" && env -u PYTHONPATH -u ATTNFUSE_TOOLS_DIR -u ATTN_BUILD_DIR \
     ATTNFUSE_CACHE_DIR="$work/cache" "$venv_python" - "$work/venv" <<'PY'
import os, sys
import attnfuse, attnfuse.tools as tools
venv = os.path.realpath(sys.argv[1])
paths = [attnfuse.__file__, *(attnfuse.find_tool(t) for t in
         ("attn-opt", "attn-compile", "attn-run")), *tools.c_api_dirs()]
for p in paths:
    print(p)
    assert os.path.realpath(p).startswith(venv + os.sep), f"{p} is not in the venv"
PY
  )
}
check "package, tools and C API found inside the venv" in_venv

# The README's first Python example, as written there: it prints the
# largest difference between the compiled and the eager logits.
readme_example() {
  python3 - "$root/README.md" >"$work/example.py" <<'PY' || return 1
import re, sys
text = open(sys.argv[1]).read()
section = text.split("\n## Python\n", 1)[1]
print(re.search(r"```python\n(.*?)```", section, re.S).group(1))
PY
  (cd "$work" && env -u PYTHONPATH -u ATTNFUSE_TOOLS_DIR -u ATTN_BUILD_DIR \
     ATTNFUSE_CACHE_DIR="$work/cache" "$venv_python" example.py) \
     >"$work/example.out" || { cat "$work/example.out"; return 1; }
  cat "$work/example.out"
  python3 - "$work/example.out" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
m = re.fullmatch(r"tensor\(([0-9.e+-]+)(, grad_fn=<\w+>)?\)\n", out)
assert m, f"unexpected output {out!r}"
assert float(m.group(1)) < 1e-4, f"compiled and eager differ by {m.group(1)}"
PY
}
check "the README's Python example in the venv" readme_example

summary
