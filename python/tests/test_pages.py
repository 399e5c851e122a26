"""attnfuse.pages: huge pages for the tensors a generator streams."""

import sys
from pathlib import Path

import pytest
import torch

from attnfuse.pages import HUGE_PAGE, advise_huge_pages, huge_page_range


@pytest.mark.parametrize("address,nbytes,expected", [
    (0, 2 * HUGE_PAGE, (0, 2 * HUGE_PAGE)),
    (1, 2 * HUGE_PAGE, (HUGE_PAGE, HUGE_PAGE)),
    (1, 3 * HUGE_PAGE, (HUGE_PAGE, 2 * HUGE_PAGE)),
    (HUGE_PAGE - 64, HUGE_PAGE + 64, (HUGE_PAGE, HUGE_PAGE)),
    (4096, HUGE_PAGE, (HUGE_PAGE, 0)),
    (5 * HUGE_PAGE, HUGE_PAGE - 1, (5 * HUGE_PAGE, 0)),
])
def test_huge_page_range_is_the_whole_pages_inside(address, nbytes,
                                                   expected):
    assert huge_page_range(address, nbytes) == expected


def _anon_huge_kib(address):
    """AnonHugePages of the mapping of this process that holds `address`."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and ":" not in head:
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo <= address < hi
        elif inside and line.startswith("AnonHugePages:"):
            return int(line.split()[1])
    return 0


def _collapse_available():
    """Linux >= 6.1 (MADV_COLLAPSE) with transparent huge pages not off."""
    import platform
    if not sys.platform.startswith("linux"):
        return False
    mode = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if not mode.exists() or "[never]" in mode.read_text():
        return False
    major, minor = (int(x) for x in platform.release().split(".")[:2])
    return (major, minor) >= (6, 1)


def test_advised_tensors_keep_their_values():
    torch.manual_seed(0)
    t = torch.randn(5 * HUGE_PAGE // 4 + 123)  # 5 pages of f32 and a bit
    before = t.clone()
    address = t.data_ptr()
    moved = advise_huge_pages([t, t[7:], torch.empty(0)])
    assert t.data_ptr() == address
    assert torch.equal(t, before)
    start, length = huge_page_range(address, t.numel() * 4)
    assert length == 5 * HUGE_PAGE or length == 4 * HUGE_PAGE
    if not _collapse_available():
        assert moved in (0, length)
        return
    assert moved == length
    assert _anon_huge_kib(start) >= length // 1024


def test_small_and_foreign_tensors_are_left_alone():
    assert advise_huge_pages([torch.ones(1000)]) == 0
    assert advise_huge_pages([]) == 0
