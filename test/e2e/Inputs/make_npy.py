"""Writes a .npy file, well formed or not, for attn-run's input tests.

make_npy.py OUT [--descr '<f4'] [--fortran False] [--shape '(2, 8)']
                [--data-bytes N] [--fill BYTE] [--version 1]
                [--header TEXT] [--header-len N]

The header dict is built from --descr, --fortran and --shape unless --header
gives its text verbatim; --header-len overrides the length field. The data
is --data-bytes bytes of --fill.
"""

import argparse
import struct


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--descr", default="<f4")
    p.add_argument("--fortran", default="False")
    p.add_argument("--shape", default="(2, 8)")
    p.add_argument("--data-bytes", type=int, default=64)
    p.add_argument("--fill", type=int, default=0)
    p.add_argument("--version", type=int, default=1)
    p.add_argument("--header")
    p.add_argument("--header-len", type=int)
    a = p.parse_args()

    header = a.header
    if header is None:
        header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
            a.descr, a.fortran, a.shape)
    header = header.encode() + b"\n"
    length = len(header) if a.header_len is None else a.header_len
    size = struct.pack("<H" if a.version == 1 else "<I", length)
    with open(a.out, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([a.version, 0]) + size + header)
        f.write(bytes([a.fill]) * a.data_bytes)


if __name__ == "__main__":
    main()
