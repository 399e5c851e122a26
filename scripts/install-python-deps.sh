#!/usr/bin/env bash
# Installs the Python front end's dependencies (python/attnfuse) into the
# current python3 from PyPI, pinned, and only what is missing: a machine that
# already has the pinned versions importable skips pip entirely, so repeated CI
# runs cost a second. torch is the large one (~5 GB with its CUDA wheels,
# several minutes on the first run).
set -euo pipefail
python=${PYTHON:-python3}

# name==version, and the module name to import for the check.
pins=(
  "torch==2.15.0:torch"
  "numpy==2.4.6:numpy"
  "pytest==9.2.0:pytest"
  # The suite's tests one per core (scripts/test-python.sh: pytest -n).
  "pytest-xdist==3.8.0:xdist"
  # Hugging Face models built from their configs (random weights, no
  # downloads) for the whole-model tests (python/tests/test_hf_models.py).
  "transformers==5.23.0:transformers"
  # GGUF files (llama.cpp's format) read and written for the quantized
  # weights (python/attnfuse/gguf_file.py, quant.py; docs/quantization.md).
  "gguf==0.19.0:gguf"
  # The wheel's build backend (python/pyproject.toml; scripts/test-wheel.sh
  # builds the wheel without build isolation).
  "scikit-build-core==1.1.2:scikit_build_core"
)

missing=()
for entry in "${pins[@]}"; do
  spec=${entry%%:*}
  module=${entry##*:}
  want=${spec##*==}
  have=$("$python" -c "import importlib.metadata as m; print(m.version('${spec%%==*}'))" 2>/dev/null || true)
  if [ "$have" != "$want" ] || ! "$python" -c "import $module" 2>/dev/null; then
    missing+=("$spec")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-python-deps: all pinned packages present"
  exit 0
fi

echo "install-python-deps: installing ${missing[*]}"
start=$(date +%s)
"$python" -m pip install --no-input --disable-pip-version-check "${missing[@]}"
echo "install-python-deps: done in $(( $(date +%s) - start )) s"
