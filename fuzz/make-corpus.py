#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus: every MLIR test input of the repository
(test/**/*.mlir, examples/**/*.mlir) split at `// -----` as
--split-input-file does, without its comment lines (RUN, CHECK,
expected-error), one file per distinct case of at most --max-len bytes.

  make-corpus.py [--max-len N] OUT_DIR
"""
import argparse
import hashlib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SPLIT = re.compile(r"^// -----\s*$", re.M)


def cases(path):
    for chunk in SPLIT.split(path.read_text()):
        lines = [l for l in chunk.splitlines() if not l.lstrip().startswith("//")]
        text = "\n".join(lines).strip()
        if text:
            yield text + "\n"


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
