#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus: every MLIR test input of the repository
(test/**/*.mlir, examples/**/*.mlir) split at `// -----` as
--split-input-file does, without its comment lines (RUN, CHECK,
expected-error), one file per distinct case of at most --max-len bytes.
A case of more than MAX_FUNCTIONS top-level functions that call none of
each other (an e2e input of many products) is split into groups of that
many: lowering the 44 GEMMs of one such file took 12-15 s under ASan,
close to the fuzzers' 20 s timeout on a loaded machine.

  make-corpus.py [--max-len N] OUT_DIR
"""
import argparse
import hashlib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SPLIT = re.compile(r"^// -----\s*$", re.M)
FUNC = re.compile(r"^func\.func ", re.M)
MAX_FUNCTIONS = 4


def groups(text):
    """`text` whole, or its top-level functions in groups of
    MAX_FUNCTIONS where it has more and no calls, each group after what
    precedes the first function (attribute aliases)."""
    starts = [m.start() for m in FUNC.finditer(text)]
    if len(starts) <= MAX_FUNCTIONS or "call @" in text:
        yield text
        return
    header = text[:starts[0]]
    funcs = [text[a:b].strip() + "\n"
             for a, b in zip(starts, starts[1:] + [len(text)])]
    for i in range(0, len(funcs), MAX_FUNCTIONS):
        yield header + "\n".join(funcs[i:i + MAX_FUNCTIONS])


def cases(path):
    for chunk in SPLIT.split(path.read_text()):
        lines = [l for l in chunk.splitlines() if not l.lstrip().startswith("//")]
        text = "\n".join(lines).strip()
        if text:
            yield from groups(text + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--max-len", type=int, default=65536)
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = set()
    skipped = 0
    for top in ("test", "examples"):
        for path in sorted((ROOT / top).rglob("*.mlir")):
            for text in cases(path):
                data = text.encode()
                if len(data) > args.max_len:
                    skipped += 1
                    continue
                name = hashlib.sha1(data).hexdigest()
                names.add(name)
                (out / name).write_bytes(data)
    written = len(names)
    print(f"make-corpus: {written} cases into {out} "
          f"({skipped} over {args.max_len} bytes left out)")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
