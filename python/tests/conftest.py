import os
import tempfile

import pytest
import torch

# Compiled libraries go to a cache that persists across runs (set by
# scripts/test-python.sh); a bare `pytest` gets a private one.
os.environ.setdefault("ATTNFUSE_CACHE_DIR",
                      tempfile.mkdtemp(prefix="attnfuse-test-cache-"))

TOLERANCE = {  # (atol, rtol)
    torch.float32: (2e-5, 1e-5),
    torch.float16: (5e-3, 5e-3),
    torch.bfloat16: (4e-2, 2e-2),
}


def assert_matches(actual, expected):
    atol, rtol = TOLERANCE[expected.dtype]
    assert actual.dtype == expected.dtype
    torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol,
                               equal_nan=True)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
