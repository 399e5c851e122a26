"""torch.compile(backend="attnfuse") and the command line."""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

import attnfuse
from attnfuse.dynamo import FallbackWarning
from conftest import assert_matches
from models import CausalSelfAttention, GPTConfig

HERE = Path(__file__).parent


def test_torch_compile_nanogpt_matches_eager():
    torch._dynamo.reset()
    module = CausalSelfAttention(GPTConfig()).eval()
    compiled = torch.compile(module, backend="attnfuse", dynamic=False)
    x = torch.randn(2, 8, 32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        with torch.no_grad():
            y = compiled(x)
            expected = module(x)
    assert_matches(y, expected)


def test_torch_compile_falls_back_with_a_warning():
    torch._dynamo.reset()

    def f(q, k, v):
        return (q @ k.transpose(-2, -1)).cummax(-1).values.softmax(-1) @ v

    compiled = torch.compile(f, backend="attnfuse", dynamic=False)
    args = tuple(torch.randn(1, 2, 8, 8) for _ in range(3))
    with pytest.warns(FallbackWarning, match="aten.cummax"):
        y = compiled(*args)
    assert_matches(y, f(*args))


def run_cli(*args):
    # The package as this test imports it (installed or on PYTHONPATH).
    root = str(Path(attnfuse.__file__).parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [root] + [p for p in [env.get("PYTHONPATH")] if p])
    return subprocess.run([sys.executable, "-m", "attnfuse", *args],
                          capture_output=True, text=True, cwd=HERE, env=env)


def test_cli_export_and_compile(tmp_path):
    shapes = ["--shape", "1x2x8x8"] * 3
    out = tmp_path / "naive.mlir"
    r = run_cli("export", "models.py:NaiveCausalAttention", *shapes,
                "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert attnfuse.count_sdpa(out.read_text()) == 1
    lib = tmp_path / "gpt.so"
    r = run_cli("compile", "models.py:CausalSelfAttention", "--shape",
                "2x8x32", "--kwargs", "{}", "--dynamic", "0=batch",
                "-o", str(lib))
    assert r.returncode != 0
    assert "missing 1 required positional argument: 'config'" in r.stderr
    r = run_cli("compile", "models.py:gpt_block", "--shape", "2x8x32",
                "--dynamic", "0=batch", "-o", str(lib))
    assert r.returncode == 0, r.stderr
    assert "1 attn.sdpa" in r.stdout
    assert "_mlir_ciface_forward" in lib.with_suffix(".h").read_text()
    assert "tensor<?x8x32xf32>" in lib.with_suffix(".mlir").read_text()


def test_cli_unsupported_op_exits_1(tmp_path):
    r = run_cli("export", "models.py:UnmappedOpAttention",
                *["--shape", "1x2x8x8"] * 3)
    assert r.returncode == 1
    assert "aten.cummax" in r.stderr and "models.py:" in r.stderr
