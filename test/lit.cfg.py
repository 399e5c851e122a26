# -*- Python -*-
# lit configuration for the AttnFuse tests.

import os
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "AttnFuse"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".c", ".cpp"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%attn_src_root", config.attn_src_root))
config.substitutions.append(("%attn_lib_dir", config.attn_lib_dir))
config.substitutions.append(("%llvm_tools_dir", config.llvm_tools_dir))
config.substitutions.append(("%attn_libomp", config.attn_libomp))
config.substitutions.append(("%cuda_lib_dir", config.cuda_lib_dir))
config.substitutions.append(("%cuda_include_dir", config.cuda_include_dir))

# As upstream mlir/test/lit.cfg.py: variables are scoped to CHECK-LABELs and
# every prefix named on the command line must be used.
config.environment["FILECHECK_OPTS"] = (
    "-enable-var-scope --allow-unused-prefixes=false"
)

llvm_config.use_default_substitutions()

tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
tools = ["attn-opt", "attn-compile", "attn-run", "mlir-opt", "mlir-translate", "FileCheck", "not", "count"]
llvm_config.add_tool_substitutions(
    [t for t in tools if os.path.exists(os.path.join(config.attn_tools_dir, t))
     or os.path.exists(os.path.join(config.llvm_tools_dir, t))],
    tool_dirs,
)
llvm_config.with_environment("PATH", config.attn_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Features tests can REQUIRE/UNSUPPORTED on.
for tool in ["attn-compile", "attn-run"]:
    if os.path.exists(os.path.join(config.attn_tools_dir, tool)):
        config.available_features.add(tool)
if config.attn_have_cuda:
    config.available_features.add("cuda-toolkit")
# The host architecture (tests that name x86 CPUs in --mcpu need x86).
import platform
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("x86_64-host")
# Host CPU features that RUN lines executing code for them need (the kernel's
# flags: those the CPU and the OS both support).
try:
    with open("/proc/cpuinfo") as cpuinfo:
        _flags = next((line.split(":", 1)[1].split() for line in cpuinfo
                       if line.startswith("flags")), [])
except OSError:
    _flags = []
if "avx512_bf16" in _flags:
    config.available_features.add("host-avx512bf16")
if "amx_tile" in _flags and "amx_bf16" in _flags:
    config.available_features.add("host-amx")
# vpdpbusd on ymm: AVX-VNNI, or AVX512-VNNI with AVX512-VL (cpu::Target::vnni).
if "avx_vnni" in _flags:
    config.available_features.add("host-avxvnni")
if "avx512_vnni" in _flags and "avx512vl" in _flags:
    config.available_features.add("host-avx512vnni")
if os.path.exists("/dev/nvidia0") or os.environ.get("ATTN_HAVE_GPU") == "1":
    config.available_features.add("cuda-gpu")
# A build with sanitizers (scripts/test-sanitize.sh) checks our compiler and
# runtime code for memory errors, not the compiled code's numbers (the
# compiled code is not instrumented): the e2e sweeps of many shapes
# (Inputs/check_matmul.py, Inputs/check_quant_matmul.py) run every
# ATTN_CHECK_SAMPLE-th case there, every scheme and operation still
# compiled; the plain build's run checks every case. Runs that build the
# same sweep for another target whose lowering a Conversion test already
# runs under the sanitizers are marked `%if !sanitized`.
if config.attn_sanitize:
    config.available_features.add("sanitized")
    config.environment["ATTN_CHECK_SAMPLE"] = "3"


# A Python with numpy and torch (the Python front end's: pinned by
# scripts/install-python-deps.sh) for tests whose inputs come from the
# attnfuse package (quantized weights): %torch_python, feature python-torch.
# lit itself may run on a Python without them (Debian's lit).
def _find_torch_python():
    import shutil
    import subprocess
    candidates = [os.environ.get("ATTN_TEST_PYTHON"),
                  shutil.which("python3", path=config.environment.get("PATH")),
                  sys.executable]
    for python in candidates:
        if python and subprocess.run(
                [python, "-c", "import numpy, torch"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
            return python
    return None


_torch_python = _find_torch_python()
if _torch_python:
    config.available_features.add("python-torch")
    config.substitutions.append(("%torch_python", _torch_python))
