#!/usr/bin/env python3
"""Accuracy of attn-cpu-math-approximation's polynomial math against libm.

Compiles one function per math op (a loop over an f32 buffer, the op
approximated by `attn-opt --attn-cpu-math-approximation=ops=...`, lowered
by upstream mlir-opt, compiled by clang -O3 for --march), links
bench/math_accuracy.c and sweeps every STRIDE-th f32 bit
pattern plus the special values. Prints, per function: the max error in ulps
of libm's double result rounded to f32, the max of |error| / PyTorch's f32
tolerance (1e-5 + 1.3e-6 * |want|; above 1 fails torch.testing.assert_close),
the same ulp measure for libm's own f32 function, and how many special
values (+-0, +-inf, NaN, denormals, extremes) are off.

  python3 bench/math_accuracy.py [--attn-opt build/bin/attn-opt]
      [--stride 61] [--march native|x86-64-v3] [--only tanh,erf]
"""

import argparse
import os
import subprocess
import sys
import tempfile

OPS = ["exp", "expm1", "tanh", "erf", "erfc", "log", "log1p", "log2", "sin",
       "cos", "atan"]


def module_text():
    out = []
    for op in OPS:
        out.append(f"""func.func @approx_{op}(%x: memref<?xf32>, %y: memref<?xf32>)
    attributes {{llvm.emit_c_interface}} {{
  linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}}
      ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {{
  ^bb0(%a: f32, %b: f32):
    %r = math.{op} %a : f32
    linalg.yield %r : f32
  }}
  return
}}""")
    return "\n".join(out) + "\n"


LOWER = ("builtin.module(func.func(convert-linalg-to-loops),"
         "convert-scf-to-cf,convert-cf-to-llvm,expand-strided-metadata,"
         "lower-affine,finalize-memref-to-llvm,convert-math-to-llvm,"
         "convert-math-to-libm,convert-arith-to-llvm,convert-func-to-llvm,"
         "reconcile-unrealized-casts)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn-opt", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin",
        "attn-opt"))
    ap.add_argument("--stride", default="61")
    ap.add_argument("--march", default="native")
    ap.add_argument("--only", default="", help="comma list of functions")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    prefix = subprocess.run(["llvm-config-22", "--prefix"], check=True,
                            capture_output=True, text=True).stdout.strip()
    tool = lambda name: os.path.join(prefix, "bin", name)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "math.mlir")
        open(src, "w").write(module_text())
        ops = ",".join("math." + op for op in OPS)
        approx = subprocess.run(
            [args.attn_opt, src, f"--attn-cpu-math-approximation=ops={ops}"],
            check=True, capture_output=True, text=True).stdout
        llvm = subprocess.run([tool("mlir-opt"), "--pass-pipeline=" + LOWER],
                              input=approx, check=True, capture_output=True,
                              text=True).stdout
        ll = os.path.join(tmp, "math.ll")
        with open(ll, "w") as f:
            f.write(subprocess.run([tool("mlir-translate"), "--mlir-to-llvmir"],
                                   input=llvm, check=True, capture_output=True,
                                   text=True).stdout)
        so = os.path.join(tmp, "libmath.so")
        subprocess.run(["clang-22", "-O3", "-march=" + args.march, "-shared",
                        "-fPIC", ll, "-o", so], check=True)
        exe = os.path.join(tmp, "math_accuracy")
        subprocess.run(["clang-22", "-O2", os.path.join(here, "math_accuracy.c"),
                        so, "-Wl,-rpath," + tmp, "-lm", "-o", exe],
                       check=True)
        cmd = [exe, args.stride] + ([args.only] if args.only else [])
        return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
