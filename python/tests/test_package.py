"""Packages (CompiledModule.save, Generator.save, attnfuse.load) and the
progress of a compile.

Round trips: an attention block with a buffer it writes in place, keyword
inputs, a dict output and dynamic batch and sequence, in f32 and bf16, with
and without prepacked weights; a Llama generator with prepacked prefill
weights (greedy tokens equal to transformers' generate). Each is loaded in
two fresh processes at once from read-only files, with torch.export
disabled, no tools to be found and no model class, and must give the
original's outputs exactly and import no transformers. Then every broken
package: a missing or truncated file, a changed file, an edited manifest,
another format or attnfuse version, another machine, CPU features the host
lacks, a manifest that does not match its library; each a PackageError
naming the file. Last, the compile's stages on the "attnfuse" logger and on
stderr only when asked or on a terminal."""

import io
import json
import logging
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import attnfuse
from attnfuse import package, progress, sampling

T = pytest.importorskip("transformers")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

BATCH = torch.export.Dim("batch", min=1, max=8)
SEQ = torch.export.Dim("seq", min=2, max=16)


class Block(torch.nn.Module):
    """Causal attention with a fused QKV projection, a call counter it
    writes in place, a keyword input and a dict output."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(32, 96)
        self.proj = torch.nn.Linear(32, 32)
        self.register_buffer("calls", torch.zeros(2))

    def forward(self, x, scale):
        self.calls.add_(1)
        b, t, _ = x.shape
        q, k, v = (h.view(b, t, 4, 8).transpose(1, 2)
                   for h in self.qkv(x).split(32, -1))
        a = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=True)
        y = self.proj(a.transpose(1, 2).reshape(b, t, 32)) * scale
        return {"y": y, "energy": (y * y).sum(-1)}


def block_inputs(dtype, b, t, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(b, t, 32, generator=g).to(dtype)
    return (x,), {"scale": torch.full((1,), 0.5, dtype=dtype)}


VARIANTS = [(torch.float32, False), (torch.float32, True),
            (torch.bfloat16, False), (torch.bfloat16, True)]


def compile_block(dtype, prepack):
    torch.manual_seed(0)
    model = Block().eval().to(dtype)
    args, kwargs = block_inputs(dtype, 2, 5, 0)
    return model, attnfuse.compile(
        model, args, example_kwargs=kwargs, prepack_weights=prepack,
        dynamic_shapes={"x": {0: BATCH, 1: SEQ}, "scale": None})


def outputs_equal(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(outputs_equal(a[k], b[k])
                                            for k in a)
    return a.dtype == b.dtype and torch.equal(a, b)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Every package of the round trips, read only, and what the loaded
    ones must give: {"modules": [...], "generator": {...}}."""
    root = tmp_path_factory.mktemp("packages")
    spec = {"modules": []}
    for n, (dtype, prepack) in enumerate(VARIANTS):
        model, compiled = compile_block(dtype, prepack)
        with torch.no_grad():
            model.calls.fill_(5)  # the state saved, which a load starts from
        path = compiled.save(root / f"block{n}")
        cases = []
        for b, t, seed in ((1, 2, 1), (3, 11, 2), (8, 16, 3)):
            args, kwargs = block_inputs(dtype, b, t, seed)
            cases.append((args, kwargs, compiled(*args, **kwargs)))
        torch.save(cases, root / f"block{n}.pt")
        spec["modules"].append({"path": str(path),
                                "data": str(root / f"block{n}.pt")})
    spec["generator"] = save_generator(root)
    for p in root.rglob("*"):
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP |
                                     stat.S_IWOTH))
    yield root, spec
    for p in root.rglob("*"):
        if p.is_dir():
            p.chmod(0o755)


def llama():
    torch.manual_seed(0)
    return T.LlamaForCausalLM(T.LlamaConfig(
        vocab_size=100, num_hidden_layers=2, hidden_size=32,
        num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
        max_position_embeddings=64)).eval()


def prompts():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, 100, (3, 7), generator=g)
    mask = torch.ones(3, 7, dtype=torch.int64)
    mask[0, :3] = 0
    return ids, mask


SAMPLING = dict(do_sample=True, temperature=0.7, top_k=20, top_p=0.9,
                repetition_penalty=1.3, seed=5)


def save_generator(root):
    """A Llama generator (prefill weights prepacked), its greedy tokens
    checked against transformers', saved with them and sampled ones."""
    model = llama()
    generator = attnfuse.compile_generator(model, max_batch=3,
                                           max_cache_len=32,
                                           prepack_weights=True)
    ids, mask = prompts()
    greedy = generator.generate(ids, attention_mask=mask, max_new_tokens=10,
                                do_sample=False)
    with torch.no_grad():
        theirs = model.generate(ids, attention_mask=mask, max_new_tokens=10,
                                do_sample=False)
    assert torch.equal(greedy, theirs)
    sampled = generator.generate(ids, attention_mask=mask, max_new_tokens=10,
                                 **SAMPLING)
    path = generator.save(root / "generator")
    torch.save({"ids": ids, "mask": mask, "greedy": greedy,
                "sampled": sampled}, root / "generator.pt")
    return {"path": str(path), "data": str(root / "generator.pt")}


# What a fresh process runs: no torch.export (it raises), no tools (none
# can be found), no model class, no transformers.
CHECK = r'''
import json, sys, torch, torch.export
def forbidden(*a, **k):
    raise AssertionError("torch.export called")
torch.export.export = forbidden
import attnfuse
spec = json.load(open(sys.argv[1]))
for case in spec["modules"]:
    m = attnfuse.load(case["path"])
    for args, kwargs, want in torch.load(case["data"]):
        got = m(*args, **kwargs)
        assert got.keys() == want.keys(), case
        for k in got:
            assert got[k].dtype == want[k].dtype and torch.equal(
                got[k], want[k]), (case, k)
    assert float(m._bound["calls"][0]) == 5 + 3
g = attnfuse.load(spec["generator"]["path"])
r = torch.load(spec["generator"]["data"])
out = g.generate(r["ids"], attention_mask=r["mask"], max_new_tokens=10,
                 do_sample=False)
assert torch.equal(out, r["greedy"]), (out, r["greedy"])
out = g.generate(r["ids"], attention_mask=r["mask"], max_new_tokens=10,
                 **json.loads(sys.argv[2]))
assert torch.equal(out, r["sampled"]), (out, r["sampled"])
assert "transformers" not in sys.modules
print("ok")
'''


def test_fresh_processes_load_at_once_from_read_only_files(saved, tmp_path):
    """Two processes load every package at the same time from read-only
    files and give the originals' outputs exactly (a module's buffer
    written in place starts from its saved value), without torch.export,
    the tools, the model's code or transformers."""
    root, spec = saved
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec))
    env = dict(os.environ, ATTNFUSE_TOOLS_DIR=str(tmp_path / "no-tools"),
               PATH="/usr/bin:/bin")
    procs = [subprocess.Popen([sys.executable, "-c", CHECK, str(spec_file),
                               json.dumps(SAMPLING)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, cwd=tmp_path) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0 and out.strip() == "ok", err[-3000:]
    # The files are as saved (read only, and nothing wrote them).
    for case in spec["modules"]:
        attnfuse.package.read_package(case["path"])


def test_round_trip_in_process_and_again(saved, tmp_path):
    """A loaded module maps its state from weights.bin (no copy) and writes
    its buffer in its own pages; saved again, it loads equal."""
    root, spec = saved
    for case in spec["modules"]:
        loaded = attnfuse.load(case["path"])
        weights = str(Path(case["path"]) / "weights.bin")
        ranges = [tuple(int(x, 16) for x in line.split()[0].split("-"))
                  for line in Path("/proc/self/maps").read_text().splitlines()
                  if line.endswith(weights)]
        for name, t in loaded._bound.items():
            assert any(lo <= t.data_ptr() < hi for lo, hi in ranges), name
        args, kwargs, want = torch.load(case["data"])[1]
        assert outputs_equal(loaded(*args, **kwargs), want)
        again = attnfuse.load(loaded.save(tmp_path / Path(case["path"]).name))
        assert outputs_equal(again(*args, **kwargs),
                             loaded(*args, **kwargs))
        package.read_package(case["path"])  # unchanged by the writes
    manifest = json.loads((Path(spec["modules"][1]["path"]) /
                           "manifest.json").read_text())
    (entry,) = manifest["entries"]
    args = {a["name"]: a for a in entry["args"]}
    assert args["qkv.weight"]["packed"] and args["calls"]["written"]
    assert args["x"]["shape"][2] == 32 and args["x"]["tensor"] is None
    assert sorted((d["min"], d["max"]) for d in entry["dims"].values()) \
        == [(1, 8), (2, 16)]
    assert manifest["module"]["kwargs"] == ["scale"]


def test_generator_manifest_and_second_save(saved, tmp_path):
    root, spec = saved
    g = attnfuse.load(spec["generator"]["path"])
    m = json.loads((Path(spec["generator"]["path"]) /
                    "manifest.json").read_text())
    assert m["kind"] == "generator" and m["generator"]["max_batch"] == 3
    assert m["generator"]["config"]["hidden_size"] == 32
    assert m["generator"]["generation_defaults"]["top_k"] == 50
    assert {e["step"] for e in m["entries"]} == {"prefill", 1}
    assert any(a["packed"] for e in m["entries"] for a in e["args"])
    assert m["target"]["requires"] and "sse2" in m["target"]["requires"]
    assert len(m["compiler"]["attn_compile_sha256"]) == 64
    r = torch.load(spec["generator"]["data"])
    again = attnfuse.load(g.save(tmp_path / "again"))
    out = again.generate(r["ids"], attention_mask=r["mask"],
                         max_new_tokens=10, do_sample=False)
    assert torch.equal(out, r["greedy"]) and again.config == g.config


# ---------------------------------------------------------------------------
# Broken packages
# ---------------------------------------------------------------------------


@pytest.fixture
def pkg(saved, tmp_path):
    """A writable copy of the f32 prepacked module's package."""
    root, spec = saved
    path = tmp_path / "pkg"
    shutil.copytree(spec["modules"][1]["path"], path)
    for p in [path, *path.iterdir()]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return path


def edit(path, change, resign=True):
    m = json.loads((path / "manifest.json").read_text())
    change(m)
    if resign:
        m = package.sign(m)
    (path / "manifest.json").write_text(json.dumps(m))


def refused(path, file, message, **kw):
    with pytest.raises(attnfuse.PackageError, match=message) as e:
        attnfuse.load(path, **kw)
    assert e.value.path == str(file), e.value
    assert str(file) in str(e.value)


def test_missing_and_truncated_files(pkg, tmp_path):
    refused(tmp_path / "nowhere", tmp_path / "nowhere", "no such package")
    (pkg / "weights.bin").rename(tmp_path / "w")
    refused(pkg, pkg / "weights.bin", "missing")
    (tmp_path / "w").rename(pkg / "weights.bin")
    with open(pkg / "weights.bin", "r+b") as f:
        f.truncate(f.seek(0, 2) - 8)
    refused(pkg, pkg / "weights.bin", "is truncated")
    (pkg / "model.so").unlink()
    refused(pkg, pkg / "model.so", "missing")
    text = (pkg / "manifest.json").read_text()
    (pkg / "manifest.json").write_text(text[:len(text) // 2])
    refused(pkg, pkg / "manifest.json", "not valid JSON")
    (pkg / "manifest.json").unlink()
    refused(pkg, pkg / "manifest.json", "missing: not an attnfuse package")


def replace_file(file, data: bytes):
    """`file` replaced by a new one holding `data` (a library this
    process loaded keeps its pages: writing the loaded file in place would
    change its code under it)."""
    tmp = file.with_name(file.name + ".new")
    tmp.write_bytes(data)
    os.replace(tmp, file)


def flip_byte(file, offset):
    data = bytearray(file.read_bytes())
    data[offset] ^= 1
    replace_file(file, bytes(data))


def test_changed_and_foreign_files(pkg, saved):
    flip_byte(pkg / "weights.bin", 100)
    refused(pkg, pkg / "weights.bin", "changed after it was saved")
    # Without the weights' checksum a same-size change is not seen.
    attnfuse.load(pkg, verify_weights=False)
    flip_byte(pkg / "model.so", 5000)
    refused(pkg, pkg / "model.so", "changed after it was saved")
    foreign = Path(saved[1]["modules"][0]["path"]) / "model.so"
    replace_file(pkg / "model.so", foreign.read_bytes())
    # Shorter or longer by the target's code (an AMX host's other module
    # is the larger one): the size check names it either way.
    refused(pkg, pkg / "model.so", "is (truncated or )?not the package's")


def test_edited_manifests(pkg):
    """Each edit on the saved manifest: by hand (the checksum sees it), or
    re-signed to reach the check behind it."""
    manifest = pkg / "manifest.json"
    original = manifest.read_text()
    cases = [
        (lambda m: m["entries"][0]["args"][0].update(dtype="float64"), False,
         "changed after it was saved"),
        (lambda m: m.update(format_version=2), False, "format version 2"),
        (lambda m: m["compiler"].update(attnfuse="0.0.9"), True,
         "saved by attnfuse 0.0.9"),
        (lambda m: m["entries"][0]["args"][0].update(written="no"), True,
         r"entries\[0\]\.args\[0\]\.written must be a boolean"),
        (lambda m: m.pop("kind"), True, "has no 'kind'"),
        (lambda m: m["module"].update(outputs=[["result", 9]]), True,
         "module.outputs names result 9"),
    ]
    for change, resign, message in cases:
        manifest.write_text(original)
        edit(pkg, change, resign)
        refused(pkg, manifest, message)


def test_manifest_against_the_library(pkg):
    """Re-signed edits that the checksum no longer sees: the library's own
    records (its target, its entry points' signatures) or weights.bin's
    table catch them."""
    manifest, library = pkg / "manifest.json", pkg / "model.so"
    original = manifest.read_text()

    def arg(i, **fields):
        return lambda m: m["entries"][0]["args"][i].update(fields)
    x = 5  # the argument `x`, an input
    cases = [
        (arg(x, dtype="float64"), manifest, "are not those of the library's"),
        (arg(x, shape=[4, 4, 32]), manifest, "are not those of the library's"),
        (arg(x, shape=["s0", 32]), manifest, "are not those of the library's"),
        (lambda m: m["entries"][0].update(name="other"), library,
         "has no entry point other"),
        (arg(0, shape=[8, 8]), pkg / "weights.bin",
         r"takes float32 \[8, 8\]"),
        (lambda m: m["target"].update(cpu="x86-64"), library,
         "records another target"),
        (lambda m: m["target"].update(machine="aarch64"), library,
         "compiled for aarch64"),
    ]
    for change, file, message in cases:
        manifest.write_text(original)
        edit(pkg, change)
        refused(pkg, file, message)


def test_cpu_features_the_host_lacks(pkg):
    flags = package.host_cpu_flags()
    absent = [f for f, flag in package.CPUINFO_FLAGS.items()
              if flag not in flags]
    if not absent:
        pytest.skip("this host has every feature the check knows")

    def add(m):
        m["target"]["features"] += f",+{absent[0]}"
        m["target"]["requires"] = package.required_features(
            m["target"]["features"])
    edit(pkg, add)
    refused(pkg, pkg / "model.so", f"this host cannot run it: it lacks "
            f"{re.escape(absent[0])}")


def test_weights_table_and_overwrite(pkg, tmp_path):
    edit(pkg, lambda m: next(iter(m["tensors"].values())).update(
        offset=1 << 40))
    refused(pkg, pkg / "weights.bin", "does not lie at an aligned offset")
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    _, compiled = compile_block(torch.float32, False)
    with pytest.raises(attnfuse.PackageError, match="not overwritten"):
        compiled.save(other)
    assert (other / "notes.txt").read_text() == "mine"


def test_version_is_pyproject_s():
    text = (Path(__file__).parent.parent / "pyproject.toml").read_text()
    assert f'version = "{attnfuse.__version__}"' in text


# ---------------------------------------------------------------------------
# Sampling without transformers
# ---------------------------------------------------------------------------


def test_processors_compute_what_transformers_computes():
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(3, 50, generator=g)
    scores[:, 7] = scores[:, 8]  # a tie at the top-k cut
    ids = torch.randint(0, 50, (3, 9), generator=g)
    ignore = torch.tensor([0, 3, 9])
    pairs = [(sampling.repetition_penalty(1.3, ignore),
              T.RepetitionPenaltyLogitsProcessor(
                  1.3, prompt_ignore_length=ignore)),
             (sampling.temperature(0.7), T.TemperatureLogitsWarper(0.7)),
             (sampling.top_k(8), T.TopKLogitsWarper(8)),
             (sampling.top_p(0.6), T.TopPLogitsWarper(0.6))]
    for ours, theirs in pairs:
        assert torch.equal(ours(ids, scores.clone()),
                           theirs(ids, scores.clone()))
    for bad in (lambda: sampling.temperature(0.0),
                lambda: sampling.top_k(-1), lambda: sampling.top_p(1.5)):
        with pytest.raises(ValueError):
            bad()


# ---------------------------------------------------------------------------
# Progress
# ---------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_stages_are_logged_and_shown_only_when_asked(caplog, capsys,
                                                     monkeypatch):
    model = Block().eval()
    args, kwargs = block_inputs(torch.float32, 2, 5, 0)
    monkeypatch.delenv("ATTNFUSE_PROGRESS", raising=False)
    with caplog.at_level(logging.INFO, logger="attnfuse"):
        attnfuse.compile(model, args, example_kwargs=kwargs)
    text = "\n".join(r.getMessage() for r in caplog.records
                     if r.name == "attnfuse")
    for stage in ("torch.export took", "MLIR took", "load took", "done in"):
        assert stage in text, text
    assert "cache hit" in text or "attn-compile took" in text
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""  # stderr is not a terminal
    monkeypatch.setenv("ATTNFUSE_PROGRESS", "1")
    attnfuse.compile(model, args, example_kwargs=kwargs)
    out = capsys.readouterr()
    assert out.out == "" and "[attnfuse] compile: torch.export" in out.err
    assert "\r" not in out.err and "[attnfuse] compile: done in" in out.err
    attnfuse.compile(model, args, example_kwargs=kwargs, progress=False)
    assert capsys.readouterr().err == ""


def test_terminal_status_line(monkeypatch):
    monkeypatch.delenv("ATTNFUSE_PROGRESS", raising=False)
    assert progress.wanted(None, Terminal())
    assert not progress.wanted(None, io.StringIO())
    assert not progress.wanted(False, Terminal())
    term = Terminal()
    with progress.Progress("compile", stream=term, delay=0.0) as p:
        with p.stage("attn-compile"):
            time.sleep(3 * progress.TICK)
    text = term.getvalue()
    assert "\r\x1b[K[attnfuse] compile: attn-compile" in text
    assert text.endswith("s\n") and "compile: done in" in text
    quiet = Terminal()
    with progress.Progress("compile", stream=quiet) as p:
        with p.stage("cache hit"):
            pass
    assert quiet.getvalue() == ""  # shorter than the delay
