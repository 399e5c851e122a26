"""Checks that compiled libraries and objects need nothing beyond libc, libm,
libomp and the AttnFuse runtime (portable-libraries.test).

  check_undefined_symbols.py --nm NM --allow LIB [--allow LIB...] FILE...

Every undefined symbol of each FILE (weak ones excepted) must be defined by
the C library, libm or the dynamic loader this process runs with, or by one of the --allow
files (shared libraries: their dynamic symbols; archives: their global
symbols). Prints one line per FILE: "<name>: N undefined symbols, all
allowed" or the symbols that are not, and exits 1 if any is not.
"""

import argparse
import ctypes
import os
import subprocess
import sys


def loaded_library(stem):
    """The path of the shared library `stem` (libc, libm, or ld-linux, glibc's
    dynamic loader, which defines __tls_get_addr for thread-local variables)
    this process maps."""
    if stem != "ld-linux":
        ctypes.CDLL(stem + ".so.6")
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith(stem + ".so") or \
                    os.path.basename(path).startswith(stem + "-"):
                return path
    sys.exit("check_undefined_symbols: %s is not mapped" % stem)


def symbols(nm, path, args):
    out = subprocess.run([nm] + args + [path], check=True,
                         capture_output=True, text=True).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def defined(nm, path):
    dynamic = ["-D"] if ".so" in os.path.basename(path) else []
    names = set()
    for fields in symbols(nm, path, dynamic + ["--defined-only"]):
        if len(fields) >= 3 and fields[1] not in "Uuw":
            names.add(fields[2].split("@")[0])
    return names


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nm", required=True)
    p.add_argument("--allow", action="append", default=[])
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    allowed = set()
    glibc = [loaded_library(s) for s in ("libc", "libm", "ld-linux")]
    for lib in glibc + a.allow:
        allowed |= defined(a.nm, lib)
    status = 0
    for path in a.files:
        undefined = set()
        for fields in symbols(a.nm, path, ["-u"]):
            kind, name = fields[-2], fields[-1].split("@")[0]
            if kind == "U":
                undefined.add(name)
        bad = sorted(undefined - allowed)
        name = os.path.basename(path)
        if bad:
            status = 1
            print("%s: undefined symbols outside libc, libm, libomp and the "
                  "AttnFuse runtime: %s" % (name, " ".join(bad)))
        else:
            print("%s: %d undefined symbols, all allowed" %
                  (name, len(undefined)))
    return status


if __name__ == "__main__":
    sys.exit(main())
