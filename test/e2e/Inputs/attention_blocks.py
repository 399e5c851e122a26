"""Writes a function of N attention blocks, each the hand-written chain
(matmul, scale, softmax, matmul) on the previous block's output, for
many-blocks.test: usage `attention_blocks.py N`."""

import sys


def main():
    n = int(sys.argv[1])
    t = "tensor<1x2x16x8xf32>"
    s = "tensor<1x2x16x16xf32>"
    kt = "tensor<1x2x8x16xf32>"
    print(f"func.func @blocks(%x: {t}, %k: {t}, %v: {t}) -> {t} {{")
    print("  %c = arith.constant dense<0.125> : tensor<f32>")
    print(f'  %kt = "attn.transpose"(%k) {{dim0 = -2 : i64, dim1 = -1 : i64}}'
          f" : ({t}) -> {kt}")
    prev = "%x"
    for i in range(n):
        print(f'  %s{i} = "attn.matmul"({prev}, %kt) : ({t}, {kt}) -> {s}')
        print(f'  %m{i} = "attn.mul"(%s{i}, %c) : ({s}, tensor<f32>) -> {s}')
        print(f'  %p{i} = "attn.softmax"(%m{i}) {{dim = -1 : i64}} : ({s})'
              f" -> {s}")
        print(f'  %o{i} = "attn.matmul"(%p{i}, %v) : ({s}, {t}) -> {t}')
        prev = f"%o{i}"
    print(f"  return {prev} : {t}\n}}")


if __name__ == "__main__":
    main()
