#!/usr/bin/env bash
# The venv of the peers of bench/generate.py and bench/python_models.py
# (never used by CI): it sees the pinned torch and transformers of
# scripts/install-python-deps.sh (--system-site-packages) and adds
# CTranslate2, ONNX Runtime (with onnx and onnxscript, which
# torch.onnx.export(dynamo=True) needs), OpenVINO with NNCF (the weight
# compression of bench/generate.py's openvino-nncf peer), torchao (the
# int8/int4 weight-only peer of bench/generate.py; 0.18.0 runs with torch
# 2.15 on CPU, its int4 through aten._weight_int4pack_mm_for_cpu) and
# llama-cpp-python,
# each on its own, so that one that does not install leaves the others
# (the benchmarks report a missing peer and why). llama-cpp-python builds
# llama.cpp from its sdist (10-20 minutes on two cores); the sdist's
# convert_hf_to_gguf.py (with its gguf-py) is extracted into
# $venv/llama.cpp for the benchmark's weight conversion.
#
#   bench/setup-venv.sh                # into $ATTNFUSE_BENCH_VENV or /work/bench-venv
#   PYTHONPATH=python /work/bench-venv/bin/python bench/generate.py
#   PYTHONPATH=python /work/bench-venv/bin/python bench/python_models.py
#   SKIP_LLAMA_CPP=1 bench/setup-venv.sh   # without the llama.cpp build
set -uo pipefail
venv=${ATTNFUSE_BENCH_VENV:-/work/bench-venv}
python=${PYTHON:-python3}
llama=llama-cpp-python==0.3.36

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv --system-site-packages "$venv" || exit 1
fi
status=0
for pkg in ctranslate2==4.8.5 onnx==1.23.2 onnxscript==0.7.2 \
    onnxruntime==1.32.0 openvino==2026.4.1 nncf==3.4.0 torchao==0.18.0; do
  if ! "$venv/bin/pip" install -q "$pkg"; then
    echo "setup-venv: $pkg did not install" >&2
    status=1
  fi
done
# Not installed: optimum-intel. With the pinned transformers 5.23 no
# optimum-intel release works with OpenVINO 2026 (2.2.0 requires
# transformers<5.6; 1.15.0, the newest release pip resolves next to 5.23,
# imports openvino.runtime, which OpenVINO 2026 no longer has), so the
# OpenVINO int8/int4 peer of bench/generate.py --weights (openvino-nncf)
# does optimum's export itself: openvino.convert_model of a decode step,
# OpenVINO's make-stateful transformation, nncf.compress_weights.
install_llama_cpp() {
  src=$venv/src
  mkdir -p "$src"
  if ! sdist=$(ls "$src"/llama_cpp_python-*.tar.gz 2>/dev/null | head -1) ||
     [ -z "$sdist" ]; then
    "$venv/bin/pip" download -q --no-deps --no-binary :all: -d "$src" "$llama"
    sdist=$(ls "$src"/llama_cpp_python-*.tar.gz 2>/dev/null | head -1)
  fi
  if [ -z "$sdist" ]; then
    echo "setup-venv: $llama did not download" >&2
    status=1
  else
    # The converter's own imports (numpy, safetensors, sentencepiece, torch).
    "$venv/bin/pip" install -q numpy safetensors sentencepiece protobuf ||
      status=1
    top=$(basename "$sdist" .tar.gz)
    rm -rf "$venv/llama.cpp"
    mkdir -p "$venv/llama.cpp"
    tar xzf "$sdist" -C "$venv/llama.cpp" --strip-components=3 \
      "$top/vendor/llama.cpp/convert_hf_to_gguf.py" \
      "$top/vendor/llama.cpp/conversion" "$top/vendor/llama.cpp/gguf-py" ||
      status=1
    if ! CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
        "$venv/bin/pip" install -q "$sdist"; then
      echo "setup-venv: $llama did not build" >&2
      status=1
    fi
  fi
}
if [ -z "${SKIP_LLAMA_CPP:-}" ]; then
  install_llama_cpp
fi
"$venv/bin/python" - <<'PY'
import importlib
for name in ("torch", "transformers", "ctranslate2", "onnx", "onnxscript",
             "onnxruntime", "openvino", "nncf", "torchao", "gguf",
             "llama_cpp"):
    try:
        module = importlib.import_module(name)
        print(f"{name} {getattr(module, '__version__', '?')}")
    except Exception as e:  # a peer that is missing is reported, not fatal
        print(f"{name}: not available ({type(e).__name__}: {e})")
PY
exit $status
