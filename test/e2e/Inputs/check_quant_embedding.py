"""Runs attn.quantized_embedding through attn-compile (a library per case)
and attn-run for every scheme: rows looked up from an [N, K] table (N = 37,
K of one block or several; int8 rows with a tail past the last chunk of
32), indices of rank 0, 1 and 2 with f32, bf16 and f16 results. A row must be
the exactly dequantized row (attnfuse.quant.dequantize) rounded once to
the result type: bit for bit. An index past N, or negative, must fail the
run (non-zero exit, "index out of range"). Weights as check_quant_matmul.py
makes them (q4_k, q6_k: random valid blocks).

    check_quant_embedding.py attn-compile attn-run TMPDIR [attn-compile options]

Prints one line per failing case and a summary line."""
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
from check_quant_matmul import format_attr, make_weight  # noqa: E402

from attnfuse import quant  # noqa: E402

WEIGHTS = [("q8_0", 37, 64, None, None), ("q4_0", 37, 32, None, None),
           ("q4_k", 37, 256, None, None), ("q6_k", 37, 512, None, None),
           ("int8_sym", 37, 100, None, "f16"), ("int8_asym", 37, 40, 20, None),
           ("int4_sym", 37, 64, 32, None), ("int4_asym", 37, 128, None, "f32")]
TYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
# (index shape, result type): each rank and each type once, rank 2 in f32
# too.
CASES = [((), "f32"), ((5,), "bf16"), ((2, 3), "f16"), ((2, 3), "f32")]


def run(compile_tool, run_tool, options, base, ids_path):
    cmds = [[compile_tool, base + ".mlir", "-o", base + ".so"] + options,
            [run_tool, base + ".mlir", "--entry", "f", "--so", base + ".so",
             "--input", "0=" + ids_path, "--input", "1=" + base + ".w.npy",
             "--output", "0=" + base + ".out.npy"]]
    for cmd in cmds:
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            return done
    return None


def case_mlir(qt, shape, dtype):
    n, k = qt.shape
    ids = "x".join(str(d) for d in shape) + "x" if shape else ""
    out = "x".join(str(d) for d in (*shape, k))
    return (f"func.func @f(%ids: tensor<{ids}i64>, %w: tensor<{qt.nbytes}xi8>)"
            f" -> tensor<{out}x{dtype}> {{\n"
            f"  %e = attn.quantized_embedding %ids, %w {{format = "
            f"{format_attr(qt)}, num_rows = {n}}} : (tensor<{ids}i64>, "
            f"tensor<{qt.nbytes}xi8>) -> tensor<{out}x{dtype}>\n"
            f"  return %e : tensor<{out}x{dtype}>\n}}\n")


def main():
    compile_tool, run_tool, tmp = sys.argv[1:4]
    options = sys.argv[4:]
    rng = np.random.default_rng(7)
    cases = failures = 0
    for spec in WEIGHTS:
        qt = make_weight(spec, rng)
        table = quant.dequantize(qt)
        for shape, dtype in CASES:
            base = os.path.join(tmp, f"{spec[0]}_{len(shape)}_{dtype}")
            open(base + ".mlir", "w").write(case_mlir(qt, shape, dtype))
            np.save(base + ".w.npy", qt.data.view(np.int8))
            ids = rng.integers(0, qt.shape[0], size=shape, dtype=np.int64)
            ids.flat[0] = qt.shape[0] - 1
            np.save(base + ".ids.npy", ids)
            cases += 1
            bad = run(compile_tool, run_tool, options, base,
                      base + ".ids.npy")
            if bad is not None:
                failures += 1
                print(f"FAIL {base}: {bad.stderr.strip()[-300:]}")
                continue
            got = np.load(base + ".out.npy")
            want = table[torch.from_numpy(ids)].to(TYPES[dtype])
            if dtype == "bf16":
                got = torch.from_numpy(got.view(np.int16)).view(
                    torch.bfloat16)
            else:
                got = torch.from_numpy(got)
            if not torch.equal(got, want):
                failures += 1
                print(f"FAIL {base}: max |diff| "
                      f"{(got.float() - want.float()).abs().max()}")
        # Out of range: past the table and negative.
        for bad_index in (qt.shape[0], -1):
            base = os.path.join(tmp, f"{spec[0]}_bad")
            open(base + ".mlir", "w").write(case_mlir(qt, (3,), "f32"))
            np.save(base + ".w.npy", qt.data.view(np.int8))
            np.save(base + ".ids.npy", np.array([0, bad_index, 1]))
            cases += 1
            done = run(compile_tool, run_tool, options, base,
                       base + ".ids.npy")
            if done is None or "index out of range" not in done.stderr:
                failures += 1
                print(f"FAIL {base} index {bad_index}: not refused")
    print(f"quantized_embedding: {cases} cases, {failures} failures")


if __name__ == "__main__":
    main()
