"""Transparent huge pages for tensors that compiled code streams.

A decode step reads every weight once (1-2 GB for a 0.5B model) and the
attention reads the filled part of the KV cache. On 4 KiB pages that is a
TLB miss and a page walk every 4 KiB of the stream; on 2 MiB pages, one per
2 MiB. Linux backs anonymous memory with huge pages where a range is
advised (`madvise(MADV_HUGEPAGE)`, the usual setting of
/sys/kernel/mm/transparent_hugepage/enabled is "madvise"), and since Linux
6.1 `MADV_COLLAPSE` moves memory that is already there into huge pages at
once.

`advise_huge_pages` does both for the whole 2 MiB pages inside each
tensor's storage. It is a hint: the tensors' values, addresses and sizes
do not change, and where the kernel refuses (another OS, THP off, an older
kernel, no free huge pages) nothing happens.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

HUGE_PAGE = 2 << 20
_MADV_HUGEPAGE = 14
_MADV_COLLAPSE = 25

_libc = None


def _madvise():
    global _libc
    if _libc is None:
        lib = ctypes.CDLL(ctypes.util.find_library("c") or None,
                          use_errno=True)
        lib.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                ctypes.c_int]
        lib.madvise.restype = ctypes.c_int
        _libc = lib
    return _libc.madvise


def huge_page_range(address: int, nbytes: int) -> tuple[int, int]:
    """The whole 2 MiB pages inside [address, address + nbytes): (start,
    length), length 0 when there is none."""
    start = -(-address // HUGE_PAGE) * HUGE_PAGE
    end = (address + nbytes) // HUGE_PAGE * HUGE_PAGE
    return start, max(end - start, 0)


def advise_huge_pages(tensors) -> int:
    """Advises huge pages for the whole 2 MiB pages of each distinct CPU
    tensor's data and collapses what is already mapped; returns the bytes
    that are now in huge pages by the kernel's account (0 off Linux or
    where it refused)."""
    if not sys.platform.startswith("linux"):
        return 0
    madvise = _madvise()
    done, seen = 0, set()
    for t in tensors:
        if t.device.type != "cpu" or t.numel() == 0:
            continue
        start, length = huge_page_range(t.data_ptr(),
                                        t.numel() * t.element_size())
        if length == 0 or start in seen:
            continue
        seen.add(start)
        if madvise(start, length, _MADV_HUGEPAGE) != 0:
            continue
        if madvise(start, length, _MADV_COLLAPSE) == 0:
            done += length
    return done
