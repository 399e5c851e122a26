"""Writes one attn.sdpa function per dtype, head dim and lowering path,
for the portability check of every head dim the CPU lowerings special-case
(portable-head-dims.test): flash (several query rows, causal, a boolean
mask) and decode (one query row, keys of run-time length), head dims 1 to
16 one by one (the widths below one vector, which the lowerings handle
apart), then the widths the register tiles and pair dots step through up
to 256; f32, f16 and bf16, or the dtypes of --types; --dims chooses other
head dims."""

import argparse

DIMS = list(range(1, 17)) + [24, 32, 48, 64, 96, 128, 256]
TYPES = {"f32": "f32", "f16": "f16", "bf16": "bf16"}


def flash(name, e, t):
    q = f"tensor<1x2x12x{e}x{t}>"
    return (f"func.func @{name}(%q: {q}, %k: {q}, %v: {q}, "
            f"%m: tensor<12x12xi1>) -> {q} {{\n"
            f"  %o = attn.sdpa %q, %k, %v, %m {{is_causal = true}} : "
            f"({q}, {q}, {q}, tensor<12x12xi1>) -> {q}\n"
            f"  return %o : {q}\n}}\n")


def decode(name, e, t):
    q = f"tensor<1x2x1x{e}x{t}>"
    kv = f"tensor<1x2x?x{e}x{t}>"
    return (f"func.func @{name}(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{\n"
            f"  %o = attn.sdpa %q, %k, %v : ({q}, {kv}, {kv}) -> {q}\n"
            f"  return %o : {q}\n}}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dims", type=lambda s: [int(d) for d in
                                                  s.split(",")],
                        default=DIMS)
    parser.add_argument("--types", default=",".join(TYPES))
    args = parser.parse_args()
    for t in args.types.split(","):
        for e in args.dims:
            print(flash(f"flash_{t}_e{e}", e, t))
            print(decode(f"decode_{t}_e{e}", e, t))


if __name__ == "__main__":
    main()
