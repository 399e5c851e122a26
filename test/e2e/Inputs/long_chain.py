"""A long chain of elementwise attn ops, its input and its reference, for
long-elementwise-chain.test (no numpy: lit runs before the Python stage).

  long_chain.py gen DIR N     DIR/chain.mlir (N ops on 4x8 f32), DIR/x.npy
  long_chain.py check DIR N   compares DIR/y.npy with the chain evaluated in
                              double precision; prints "chain: ok" or the
                              worst element
"""

import math
import random
import struct
import sys

SHAPE = (4, 8)
COUNT = SHAPE[0] * SHAPE[1]


def ops(n):
    """(mlir line, python step) for op i of the chain: tanh, a scale, the
    input added back, so values stay in [-2, 2]."""
    for i in range(n):
        kind = i % 3
        if kind == 0:
            yield ("attn.tanh {p} : tensor<4x8xf32>", math.tanh)
        elif kind == 1:
            yield ("attn.mul {p}, %half : (tensor<4x8xf32>, tensor<f32>) -> "
                   "tensor<4x8xf32>", lambda v: v * 0.5)
        else:
            yield ("attn.add {p}, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> "
                   "tensor<4x8xf32>", None)


def write_npy(path, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), }"
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode() + struct.pack("<%df" % COUNT, *values))


def read_npy(path):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    return struct.unpack("<%df" % COUNT, data[10 + hlen:10 + hlen + 4 * COUNT])


def generate(out, n):
    lines = ["func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {",
             "  %half = arith.constant dense<0.5> : tensor<f32>"]
    prev = "%x"
    for i, (text, _) in enumerate(ops(n)):
        lines.append("  %%v%d = %s" % (i, text.format(p=prev)))
        prev = "%%v%d" % i
    lines += ["  return %s : tensor<4x8xf32>" % prev, "}"]
    open(out + "/chain.mlir", "w").write("\n".join(lines) + "\n")
    rng = random.Random(3)
    write_npy(out + "/x.npy", [rng.uniform(-1, 1) for _ in range(COUNT)])


def check(out, n):
    x = read_npy(out + "/x.npy")
    y = read_npy(out + "/y.npy")
    worst = 0.0
    for xi, yi in zip(x, y):
        v = xi
        for _, step in ops(n):
            v = step(v) if step else v + xi
        worst = max(worst, abs(v - yi))
    if worst > 1e-4:
        print("chain: max abs error %g" % worst)
        return 1
    print("chain: ok")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        generate(sys.argv[2], int(sys.argv[3]))
        sys.exit(0)
    sys.exit(check(sys.argv[2], int(sys.argv[3])))
