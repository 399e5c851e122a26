#!/usr/bin/env bash
# Tests of the Python front end (python/attnfuse) with pytest, for real: it
# installs what is missing (scripts/install-python-deps.sh: pinned torch,
# numpy, pytest; a second run skips pip), imports the package from this
# checkout (PYTHONPATH=python, so another checkout's install cannot shadow
# it), and needs the tools built (scripts/build.sh --target attn-opt attn-compile
# attn-run; found in build/bin). Compiled libraries are cached in
# build/attnfuse-cache so a second run does not recompile. pytest's summary
# line is the last line printed; the exit status is pytest's.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTN_BUILD_DIR:-$root/build}
python=${PYTHON:-python3}

"$root/scripts/install-python-deps.sh" || exit 1
for tool in attn-opt attn-compile; do
  if [ ! -x "$build/bin/$tool" ] && [ -z "${ATTNFUSE_TOOLS_DIR:-}" ]; then
    echo "test-python: $build/bin/$tool is missing: run scripts/build.sh first" >&2
    exit 1
  fi
done
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
export ATTN_BUILD_DIR="$build"
export ATTNFUSE_CACHE_DIR=${ATTNFUSE_CACHE_DIR:-$build/attnfuse-cache}
# One worker per core (pytest-xdist; ATTN_PYTEST_JOBS to change, 0 runs in
# this process): most of a test's time is the compiler's, one process.
jobs=${ATTN_PYTEST_JOBS:-auto}
cd "$root/python" && exec "$python" -m pytest -q -p no:cacheprovider -n "$jobs" tests
