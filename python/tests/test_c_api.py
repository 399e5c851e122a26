"""The C API of packages (include/attn/Package/AttnPackage.h, issue 50 item
2), without Python on the C side: examples/package/generate.c and the test
driver tests/c_api_driver.c, each built with clang-22 straight from the
library's sources in a temporary directory (no CMake build needed).

A Llama generator (2 layers, hidden 32, vocab 100) saved by
Generator.save: the example's greedy tokens equal generator.generate's
(prompts of 1, 4 and 9 tokens), also from two processes at once on
read-only files; four threads run one package at once. Plain modules saved
by CompiledModule.save (one entry, a dynamic batch, a buffer written in
place; f32, f32 with prepacked weights, bf16): run from C, their outputs
equal the compiled module's. Then the bad input of a C caller (wrong dtype,
rank, size, byte size, a dynamic dim out of its bounds or disagreeing
between arguments, an unbound argument, two written arguments on one
buffer, an out-of-range token id that fails the compiled code's run-time
check, after which the call runs again) and broken packages (missing,
truncated, changed or foreign files, a manifest edited by hand or re-signed
with another version, field, machine, CPU feature, signature or tensor
table, a manifest damaged at random): each a non-zero status with its name
and a message, never a crash."""

import functools
import json
import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import attnfuse
from attnfuse import package

T = pytest.importorskip("transformers")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

ROOT = Path(__file__).resolve().parents[2]
CLANG = shutil.which("clang-22")
SOURCES = [ROOT / "lib" / "Package" / f
           for f in ("AttnPackage.c", "Json.c", "Sha256.c")]
HEADER = ROOT / "include" / "attn" / "Package" / "AttnPackage.h"
NEW_TOKENS = 12


def build_c(source, out):
    """`source` and the library's sources compiled into the program `out`
    (C11, every warning an error; ATTN_C_API_CFLAGS adds flags, e.g.
    "-fsanitize=address,undefined -g")."""
    extra = os.environ.get("ATTN_C_API_CFLAGS", "").split()
    subprocess.run([CLANG, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror",
                    *extra, "-I", str(ROOT / "include"), str(source),
                    *map(str, SOURCES), "-ldl", "-lpthread", "-o", str(out)],
                   check=True, capture_output=True, text=True)
    return out


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    if CLANG is None:
        pytest.skip("clang-22 is not installed")
    root = tmp_path_factory.mktemp("c-api")
    return {"generate": build_c(ROOT / "examples" / "package" / "generate.c",
                                root / "generate"),
            "driver": build_c(Path(__file__).with_name("c_api_driver.c"),
                              root / "driver")}


def llama():
    torch.manual_seed(0)
    return T.LlamaForCausalLM(T.LlamaConfig(
        vocab_size=100, num_hidden_layers=2, hidden_size=32,
        num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
        max_position_embeddings=64)).eval()


@pytest.fixture(scope="module")
def generator(tmp_path_factory):
    """(the compiled generator, the directory it was saved to)."""
    gen = attnfuse.compile_generator(llama(), max_batch=2, max_cache_len=32)
    path = gen.save(tmp_path_factory.mktemp("gen") / "llama")
    return gen, path


class Attend(torch.nn.Module):
    """Attention with projections over a dynamic batch and a step counter
    it writes in place."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(16, 48)
        self.out = torch.nn.Linear(16, 16)
        self.register_buffer("steps", torch.zeros(1))

    def forward(self, x, bias):
        self.steps.add_(1)
        b, t, _ = x.shape
        q, k, v = (h.view(b, t, 2, 8).transpose(1, 2)
                   for h in self.qkv(x).split(16, -1))
        a = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=True)
        return self.out(a.transpose(1, 2).reshape(b, t, 16)) + bias


MODULES = {"float32": (torch.float32, False),
           "float32-prepacked": (torch.float32, True),
           "bfloat16": (torch.bfloat16, False)}


@functools.lru_cache(maxsize=None)
def saved_module(variant, root):
    """(the compiled module, the directory it was saved to)."""
    dtype, prepack = MODULES[variant]
    torch.manual_seed(0)
    model = Attend().eval().to(dtype)
    batch = torch.export.Dim("batch", min=1, max=4)
    compiled = attnfuse.compile(
        model, (torch.randn(2, 6, 16).to(dtype), torch.randn(16).to(dtype)),
        dynamic_shapes={"x": {0: batch}, "bias": None},
        prepack_weights=prepack)
    path = compiled.save(Path(root) / variant)
    return compiled, path


@pytest.fixture(scope="module")
def module_root(tmp_path_factory):
    return str(tmp_path_factory.mktemp("modules"))


@pytest.fixture
def module(module_root):
    return saved_module("float32", module_root)


def run(program, *args):
    return subprocess.run([str(program), *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def copy_package(path, tmp_path):
    dst = tmp_path / "pkg"
    shutil.copytree(path, dst)
    return dst


# ---------------------------------------------------------------------------
# Running packages from C
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("prompt", [[5, 17, 42, 9], [7],
                                    [3, 99, 41, 8, 8, 60, 12, 31, 77]])
def test_example_greedy_tokens_are_the_generators(programs, generator,
                                                  prompt):
    gen, path = generator
    r = run(programs["generate"], path, "--max-new-tokens", NEW_TOKENS,
            *prompt)
    assert r.returncode == 0, r.stderr
    want = gen.generate(torch.tensor([prompt]), max_new_tokens=NEW_TOKENS,
                        do_sample=False)
    assert [int(t) for t in r.stdout.split()] == want[0].tolist()


def test_quantized_generator_from_c(programs, tmp_path):
    """A generator whose weights are read quantized (int4 projections and
    LM head, a q8_0 embedding table: i8 arguments) runs from C with the
    Python generator's tokens."""
    gen = attnfuse.compile_generator(llama(), max_batch=1, max_cache_len=32,
                                     weights="int4", group_size=32)
    assert len(gen.quantized) == 16
    path = gen.save(tmp_path / "llama-int4")
    prompt = [5, 17, 42, 8]
    r = run(programs["generate"], path, "--max-new-tokens", NEW_TOKENS,
            *prompt)
    assert r.returncode == 0, r.stderr
    want = gen.generate(torch.tensor([prompt]), max_new_tokens=NEW_TOKENS,
                        do_sample=False)
    assert [int(t) for t in r.stdout.split()] == want[0].tolist()


def test_two_processes_at_once_from_read_only_files(programs, generator,
                                                   tmp_path):
    gen, path = generator
    pkg = copy_package(path, tmp_path)
    for p in [*pkg.iterdir(), pkg]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        procs = [subprocess.Popen([str(programs["generate"]), str(pkg),
                                   "--max-new-tokens", str(NEW_TOKENS),
                                   *map(str, IDS[0].tolist())],
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
    finally:
        pkg.chmod(0o755)
    want = gen.generate(IDS, max_new_tokens=NEW_TOKENS, do_sample=False)
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert [int(t) for t in out.split()] == want[0].tolist()


def test_entries_and_arguments_are_the_manifests(programs, generator):
    _, path = generator
    r = run(programs["driver"], "describe", path)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((path / "manifest.json").read_text())
    lines = iter(r.stdout.splitlines())
    assert next(lines) == "kind generator"
    for e in manifest["entries"]:
        assert next(lines) == (f"entry {e['name']} {len(e['args'])} "
                               f"{len(e['results'])}")
        for a in e["args"]:
            dims = ",".join(str(d) if isinstance(d, int) else "-1"
                            for d in a["shape"])
            kind = a["kind"]
            assert next(lines) == (
                f"arg {a['name']} {kind} {a['dtype']} [{dims}] "
                f"{int(a['written'])} {int(a['tensor'] is not None)}")
        for res in e["results"]:
            dims = ",".join(str(d) if isinstance(d, int) else "-1"
                            for d in res["shape"])
            assert next(lines) == f"output {res['dtype']} [{dims}]"


def write_inputs(tmp_path, **tensors):
    """NAME=DTYPE:DIMS:FILE arguments of the driver for `tensors` (their
    bytes: bf16 as its bit patterns)."""
    tmp_path.mkdir(exist_ok=True)
    out = []
    for name, t in tensors.items():
        file = tmp_path / f"{name}.bin"
        t.contiguous().reshape(-1).view(torch.uint8).numpy().tofile(file)
        dims = "x".join(map(str, t.shape)) or "-"
        out.append(f"{name}={str(t.dtype).removeprefix('torch.')}:{dims}:"
                   f"{file}")
    return out


def read_output(file, dtype, shape):
    data = bytearray(Path(file).read_bytes())
    return torch.frombuffer(data, dtype=torch.uint8).view(dtype).view(shape)


@pytest.mark.parametrize("variant", list(MODULES))
def test_module_from_c_equals_python(programs, module_root, tmp_path,
                                     variant):
    """The one entry of a saved plain module (f32, f32 with prepacked
    weights, bf16), run from C at two batch sizes, gives the compiled module's
    output; its buffer is the package's (bound, written in place on the
    package's own copy)."""
    compiled, path = saved_module(variant, module_root)
    dtype, prepack = MODULES[variant]
    name = str(dtype).removeprefix("torch.")
    entry = json.loads((path / "manifest.json").read_text())["entries"][0]
    r = run(programs["driver"], "describe", path)
    assert r.returncode == 0, r.stderr
    assert f"entry {entry['name']} " in r.stdout
    assert re.search(rf"arg steps buffer {name} \[1\] 1 1", r.stdout), \
        r.stdout
    assert any(a["packed"] for a in entry["args"]) == prepack
    for b in (1, 3):
        g = torch.Generator().manual_seed(b)
        x = torch.randn(b, 6, 16, generator=g).to(dtype)
        bias = torch.randn(16, generator=g).to(dtype)
        want = compiled(x, bias)
        r = run(programs["driver"], "run", path, entry["name"],
                tmp_path / f"out{b}_",
                *write_inputs(tmp_path, x=x, bias=bias))
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == f"output 0 {name} [{b},6,16]"
        got = read_output(tmp_path / f"out{b}_0.bin", dtype, (b, 6, 16))
        assert torch.equal(got, want)


def test_threads_share_a_package(programs, generator):
    """Four threads run prefill at once, each with its own call and
    cache, and get one thread's logits."""
    _, path = generator
    r = run(programs["driver"], "threads", path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "4 threads, 100 logits: equal"


def test_call_recovers_from_a_failed_check(programs, generator, tmp_path):
    """A token id out of the vocabulary fails the compiled code's check;
    the same call then runs the good prompt and gives the generator's
    prefill logits."""
    gen, path = generator
    bad = write_inputs(tmp_path / "bad", **step(torch.tensor([[5, 1000, 42,
                                                               9]])),
                       **cache(1))
    good = write_inputs(tmp_path, **step(IDS), **cache(1))
    r = run(programs["driver"], "run", path, "prefill", tmp_path / "out",
            *bad, "--", *good)
    assert r.returncode == 3
    assert r.stderr.startswith("ATTN_ERROR_CHECK: prefill: run-time check "
                               "failed: "), r.stderr
    assert r.stdout.strip() == "output 0 float32 [1,100]"
    got = np.fromfile(tmp_path / "out0.bin", dtype=np.float32)
    want = gen.prefill(**step(IDS))
    torch.testing.assert_close(torch.from_numpy(got).view(1, 100), want,
                               rtol=0, atol=0)


def test_api_misuse_is_a_status(programs, generator):
    _, path = generator
    r = run(programs["driver"], "misuse", path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ATTN_ERROR_STATE" in r.stdout and "ATTN_ERROR_UNBOUND" in r.stdout
    assert re.search(r"attn_call_run\(call\) -> ATTN_ERROR_ARGUMENT: prefill "
                     r"argument keys_0 is written in place and shares memory "
                     r"with argument keys_1", r.stdout), r.stdout


def test_reader_reads_this_packages_format():
    text = HEADER.read_text()
    assert f"#define ATTN_PACKAGE_FORMAT_VERSION {package.FORMAT_VERSION}\n" \
        in text
    assert f'#define ATTN_PACKAGE_ATTNFUSE_VERSION "{package.VERSION}"' in text
    assert f'#define ATTN_PACKAGE_ABI "{package.ABI}"' in text
    # The CPU features it checks are load's, with the same cpuinfo flags.
    source = SOURCES[0].read_text()
    table = source[source.index("kCpuFlags[] = {"):]
    table = table[:table.index("};")]
    assert dict(re.findall(r'\{"([^"]+)", "([^"]+)"\}', table)) == \
        package.CPUINFO_FLAGS


# ---------------------------------------------------------------------------
# Bad input from a C caller
# ---------------------------------------------------------------------------


def step(ids, n=None, dtype=torch.int64):
    """prefill's three token inputs for the prompt `ids` [B, T]."""
    b, t = ids.shape
    mask = torch.ones(b, n or t, dtype=dtype)
    pos = torch.arange(t).expand(b, t).contiguous()
    return {"input_ids": ids.to(dtype), "attention_mask": mask,
            "position_ids": pos.to(dtype)}


def cache(b, dtype=torch.float32):
    return {f"{kind}_{i}": torch.zeros(b, 2, 33, 8, dtype=dtype)
            for kind in ("keys", "values") for i in range(2)}


IDS = torch.tensor([[5, 17, 42, 9]])
BAD_CALLS = {
    "dtype": (dict(step(IDS, dtype=torch.int32), **cache(1)),
              "ATTN_ERROR_DTYPE", "input_ids takes int64, not int32"),
    "rank": (dict(step(IDS), **cache(1), input_ids=IDS[0]),
             "ATTN_ERROR_SHAPE", "input_ids takes rank 2"),
    "static size": (dict(step(IDS), keys_0=torch.zeros(1, 2, 32, 8),
                         **{k: v for k, v in cache(1).items()
                            if k != "keys_0"}),
                    "ATTN_ERROR_SHAPE", r"keys_0 takes \[\?, 2, 33, 8\]"),
    # The batch's bounds are torch.export's, [1, max_batch + 1].
    "bound": (dict(step(torch.ones(4, 4, dtype=torch.int64)), **cache(4)),
              "ATTN_ERROR_SHAPE", r"input_ids \[4, 4\]: dim 0 \(s\d+\) must "
              r"lie in \[1, 3\]"),
    "disagreeing dims": (dict(step(IDS), **cache(2)), "ATTN_ERROR_SHAPE",
                         "argument input_ids gives s"),
    "unbound": (step(IDS), "ATTN_ERROR_UNBOUND", "keys_0 is not bound"),
    "run-time check": (dict(step(torch.tensor([[5, 1000, 42, 9]])),
                            **cache(1)),
                       "ATTN_ERROR_CHECK", "run-time check failed"),
}


@pytest.mark.parametrize("case", list(BAD_CALLS))
def test_bad_call_is_a_status(programs, generator, tmp_path, case):
    _, path = generator
    tensors, status, message = BAD_CALLS[case]
    r = run(programs["driver"], "run", path, "prefill", tmp_path / "out",
            *write_inputs(tmp_path, **tensors))
    assert r.returncode == 3, (r.returncode, r.stdout, r.stderr)
    assert r.stderr.startswith(status + ": prefill"), r.stderr
    assert re.search(message, r.stderr), r.stderr


def test_byte_size_is_checked(programs, generator, tmp_path):
    _, path = generator
    args = write_inputs(tmp_path, **step(IDS), **cache(1))
    with open(tmp_path / "input_ids.bin", "ab") as f:
        f.write(b"\0" * 8)
    r = run(programs["driver"], "run", path, "prefill", tmp_path / "out",
            *args)
    assert r.returncode == 3
    assert r.stderr.startswith("ATTN_ERROR_SHAPE: prefill argument "
                               "input_ids: int64 [1, 4] is 32 bytes, not the "
                               "40 given"), r.stderr


# ---------------------------------------------------------------------------
# Broken packages
# ---------------------------------------------------------------------------


def edit(path, change, resign=True):
    m = json.loads((path / "manifest.json").read_text())
    change(m)
    if resign:
        m = package.sign(m)
    (path / "manifest.json").write_text(json.dumps(m))


def refused(programs, path, status, message):
    r = run(programs["driver"], "describe", path)
    assert r.returncode == 3, (r.returncode, r.stdout, r.stderr)
    assert r.stderr.startswith(status + ": "), r.stderr
    assert re.search(message, r.stderr), r.stderr
    return r.stderr


def test_missing_truncated_and_foreign_files(programs, generator, module,
                                             tmp_path):
    pkg = copy_package(generator[1], tmp_path)
    refused(programs, tmp_path / "nowhere", "ATTN_ERROR_IO",
            "nowhere: no such package directory")
    weights = pkg / "weights.bin"
    data = weights.read_bytes()
    weights.write_bytes(data[:-8])
    refused(programs, pkg, "ATTN_ERROR_PACKAGE",
            f"{re.escape(str(weights))}: is truncated or not the package's")
    flipped = bytearray(data)
    flipped[100] ^= 1
    weights.write_bytes(bytes(flipped))
    refused(programs, pkg, "ATTN_ERROR_PACKAGE",
            "weights.bin: was changed after it was saved")
    weights.write_bytes(data)
    library = pkg / "model.so"
    library.write_bytes((module[1] / "model.so").read_bytes())
    refused(programs, pkg, "ATTN_ERROR_PACKAGE",
            "model.so: is (truncated or )?not the package's")
    library.unlink()
    refused(programs, pkg, "ATTN_ERROR_IO",
            r"model.so: missing \(the package's library\)")
    manifest = pkg / "manifest.json"
    text = manifest.read_text()
    manifest.write_text(text[:len(text) // 2])
    refused(programs, pkg, "ATTN_ERROR_PACKAGE", "is not valid JSON")
    manifest.unlink()
    refused(programs, pkg, "ATTN_ERROR_IO", "missing: not an attnfuse package")


def test_weights_are_checked_in_chunks(programs, generator, tmp_path):
    """weights.bin re-signed in 4 KiB chunks (hashed on several threads):
    it opens, and one changed byte of its last chunk is refused."""
    pkg = copy_package(generator[1], tmp_path)
    weights = pkg / "weights.bin"
    size = weights.stat().st_size

    def chunks(m):
        m["files"]["weights"].update(
            chunk_size=4096,
            chunk_sha256=package.chunk_sha256(weights, size, 4096))
    edit(pkg, chunks)
    assert len(json.loads((pkg / "manifest.json").read_text())["files"][
        "weights"]["chunk_sha256"]) > 16
    r = run(programs["driver"], "describe", pkg)
    assert r.returncode == 0, r.stderr
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    refused(programs, pkg, "ATTN_ERROR_PACKAGE",
            "weights.bin: was changed after it was saved")


def test_edited_manifests(programs, generator, tmp_path):
    """By hand (the checksum sees it), or re-signed to reach the check
    behind it: the versions, the fields, the library's records, the
    weights' table, the machine."""
    pkg = copy_package(generator[1], tmp_path)
    manifest = pkg / "manifest.json"
    original = manifest.read_text()

    def arg(i, **fields):
        return lambda m: m["entries"][0]["args"][i].update(fields)
    ids = 23  # prefill's input_ids
    cases = [
        (lambda m: m["generator"].update(max_cache_len=64), False,
         "ATTN_ERROR_PACKAGE", "manifest.json: was changed after it was "
         "saved"),
        (lambda m: m.update(format_version=2), False, "ATTN_ERROR_VERSION",
         "has format version 2"),
        (lambda m: m["compiler"].update(attnfuse="0.0.9"), True,
         "ATTN_ERROR_VERSION", "saved by attnfuse 0.0.9"),
        (arg(0, written="no"), True, "ATTN_ERROR_PACKAGE",
         r"entries\[0\]\.args\[0\]\.written must be a boolean"),
        (lambda m: m.pop("kind"), True, "ATTN_ERROR_PACKAGE",
         "manifest has no 'kind'"),
        (arg(ids, dtype="int32"), True, "ATTN_ERROR_PACKAGE",
         "are not those of the library's"),
        (arg(ids, shape=["s43"]), True, "ATTN_ERROR_PACKAGE",
         "are not those of the library's"),
        (lambda m: m["entries"][0].update(name="other"), True,
         "ATTN_ERROR_PACKAGE", "has no entry point other"),
        (arg(0, shape=[8, 8]), True, "ATTN_ERROR_PACKAGE",
         "is not of the dtype and shape that prefill argument"),
        (lambda m: next(iter(m["tensors"].values())).update(offset=1 << 40),
         True, "ATTN_ERROR_PACKAGE", "does not lie at an aligned offset"),
        (lambda m: m["target"].update(cpu="x86-64"), True,
         "ATTN_ERROR_PACKAGE", "records another target"),
        (lambda m: m["target"].update(machine="aarch64"), True,
         "ATTN_ERROR_TARGET", "compiled for aarch64"),
        (lambda m: m["files"]["library"].update(name="../model.so"), True,
         "ATTN_ERROR_PACKAGE", "is not a file name"),
    ]
    for change, resign, status, message in cases:
        manifest.write_text(original)
        edit(pkg, change, resign)
        refused(programs, pkg, status, message)


def test_cpu_features_the_host_lacks(programs, generator, tmp_path):
    flags = package.host_cpu_flags()
    absent = [f for f, flag in package.CPUINFO_FLAGS.items()
              if flag not in flags]
    if not absent:
        pytest.skip("this host has every feature the check knows")
    pkg = copy_package(generator[1], tmp_path)

    def add(m):
        m["target"]["features"] += f",+{absent[0]}"
        m["target"]["requires"] = package.required_features(
            m["target"]["features"])
    edit(pkg, add)
    refused(programs, pkg, "ATTN_ERROR_TARGET",
            f"this host cannot run it: it lacks {re.escape(absent[0])}")


def test_damaged_manifests_never_crash(programs, module, tmp_path):
    """Random truncations and byte changes of the manifest: each refused
    with a status, or opened where the change left the same JSON (white
    space for white space); a signal would be a crash."""
    pkg = copy_package(module[1], tmp_path)
    original = (pkg / "manifest.json").read_bytes()
    rng = random.Random(0)
    refusals = 0
    for i in range(60):
        data = bytearray(original)
        if i % 3 == 0:
            # At least one byte stays, for the byte changes below.
            data = data[:rng.randrange(1, len(data))]
        for _ in range(1 + i % 4):
            data[rng.randrange(len(data))] = rng.choice(
                b'{}[]",:0123456789-.eE\\u\x00\xff\ttfn')
        (pkg / "manifest.json").write_bytes(bytes(data))
        r = run(programs["driver"], "describe", pkg)
        assert r.returncode in (0, 3), (i, r.returncode, r.stderr)
        if r.returncode:
            assert r.stderr.startswith("ATTN_ERROR_"), r.stderr
            refusals += 1
    assert refusals >= 50


def test_python_still_loads_what_c_reads(generator):
    gen, path = generator
    loaded = attnfuse.load(path)
    out = loaded.generate(IDS, max_new_tokens=4, do_sample=False)
    assert torch.equal(out, gen.generate(IDS, max_new_tokens=4,
                                         do_sample=False))
