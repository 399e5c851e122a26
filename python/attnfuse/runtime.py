"""Calling a library made by `attn-compile --emit=so` through ctypes.

The C ABI (docs/attn-compile.md): `_mlir_ciface_<f>` takes one pointer per
tensor argument to a strided memref descriptor `{allocated, aligned, offset,
sizes[r], strides[r]}`, and fills in the result descriptor(s) through a
leading pointer (a struct of descriptors when there are several results).
Result buffers are malloc'ed by the callee; we copy them into torch tensors
and free them, except a compile-time-constant result (allocated ==
0xdeadbeef) and buffers the results share. Calls go through the runtime's
`attnrt_call_packed` and the library's `attn_packed_<f>`, so that a failed
run-time check raises RunTimeCheckError instead of ending the process.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import platform

import torch

from .errors import AttnFuseError, RunTimeCheckError


@contextlib.contextmanager
def serial_torch():
    """torch's own ops run on the calling thread: small work between
    compiled calls (a generator's argmax, sampling and copies; a
    NestedTensor's padding and repacking), which in parallel would leave
    torch's OpenMP team spinning on the cores that the compiled code's
    parallel loops (another OpenMP runtime) need next."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)

_DEADBEEF = 0xDEADBEEF
_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_libc.free.argtypes = [ctypes.c_void_p]
_descriptors: dict = {}
_MESSAGE_SIZE = 1024


# glibc's mallopt parameters (malloc.h) and the largest mmap threshold it
# accepts on 64-bit hosts.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_MMAP_MAX = -4
_MMAP_THRESHOLD_MAX = 32 << 20
_TRIM_THRESHOLD = 512 << 20
_heap_tuned = False


# glibc's malloc variables: where one is set, the user chose and
# keep_freed_heap stands back.
MALLOC_ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
                      "MALLOC_MMAP_MAX_")


def keep_freed_heap() -> bool:
    """Makes glibc keep freed memory for reuse instead of returning it to
    the OS: every block comes from the heap (M_MMAP_MAX 0: no block of its
    own mapped apart, whatever its size; M_MMAP_THRESHOLD at its 32 MiB
    maximum for a user who raises M_MMAP_MAX again) and the heap is trimmed
    only past 512 MiB of free memory at its top (M_TRIM_THRESHOLD). A
    compiled model allocates the same buffers on every call; with glibc's
    default (a threshold that adapts, trimming at twice it, and a mapping
    of its own for every block above the threshold) a call of multi-MiB
    activations maps fresh pages again and pays a page fault per 4 KiB, a
    large share of a prefill's time (bench/RESULTS.md, "Generation").
    Process-wide, once, when the first library is loaded; returns whether
    it applied.
    Left alone where the user chose (ATTNFUSE_KEEP_FREED_HEAP=0,
    GLIBC_TUNABLES naming malloc, or one of MALLOC_ENVIRONMENT) and off
    glibc."""
    global _heap_tuned
    if _heap_tuned:
        return False
    _heap_tuned = True
    env = os.environ
    if (env.get("ATTNFUSE_KEEP_FREED_HEAP", "1") == "0"
            or "glibc.malloc" in env.get("GLIBC_TUNABLES", "")
            or any(name in env for name in MALLOC_ENVIRONMENT)
            or platform.libc_ver()[0] != "glibc"):
        return False
    mallopt = getattr(_libc, "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX) and
                mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD) and
                mallopt(_M_MMAP_MAX, 0))


def descriptor_type(rank: int):
    """The ctypes struct of a rank-`rank` memref descriptor (the element
    type only changes pointer types, which ctypes sees as void*)."""
    if rank not in _descriptors:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                  ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank),
                       ("strides", ctypes.c_int64 * rank)]
        _descriptors[rank] = type(f"Memref{rank}d", (ctypes.Structure,),
                                  {"_fields_": fields})
    return _descriptors[rank]


def describe_tensor(t: torch.Tensor):
    """A descriptor over a contiguous CPU tensor (the library reads
    arguments with identity layouts, so the caller makes them contiguous)."""
    d = descriptor_type(t.dim())()
    d.allocated = d.aligned = t.data_ptr()
    d.offset = 0
    for i, (size, stride) in enumerate(zip(t.shape, t.stride())):
        d.sizes[i] = size
        d.strides[i] = stride
    return d


class _Allocation:
    """A buffer the library allocated for results: freed when the last
    tensor over it is collected."""

    def __init__(self, pointer: int):
        self.pointer = pointer
        # Held here: at interpreter exit the module's globals may be gone
        # before the last result.
        self._free = _libc.free

    def __del__(self):
        self._free(self.pointer)


def _result_view(d, rank: int, dtype: torch.dtype, owner=None):
    """The tensor a result descriptor describes. With an `owner` the tensor
    uses the library's buffer in place (the buffer lives as long as a
    tensor over it does); without, it is copied (a constant the library
    returns, or an argument it returns as is)."""
    sizes = [d.sizes[i] for i in range(rank)]
    strides = [d.strides[i] for i in range(rank)]
    itemsize = torch.empty((), dtype=dtype).element_size()
    if any(s == 0 for s in sizes):
        return torch.empty(sizes, dtype=dtype)
    span = d.offset + 1 + sum((s - 1) * st for s, st in zip(sizes, strides))
    raw = (ctypes.c_char * (span * itemsize)).from_address(d.aligned)
    raw.owner = owner  # torch.frombuffer keeps `raw` alive, `raw` the owner
    flat = torch.frombuffer(raw, dtype=torch.uint8).view(dtype)
    view = flat.as_strided(sizes, strides, d.offset)
    return view if owner is not None else view.clone()


# The most threads OMP_NUM_THREADS may ask for (kMaxThreads of the tools).
MAX_THREADS = 1024


def check_omp_num_threads():
    """Raises AttnFuseError where OMP_NUM_THREADS is set but is not a thread
    count from 1 to MAX_THREADS (or a comma-separated list of them): the
    libraries' libomp reads it when they first run parallel code and stops
    the process on '', '-1', 'abc' or '99999999999' (an assertion), or
    starts tens of thousands of threads for a large count."""
    value = os.environ.get("OMP_NUM_THREADS")
    if value is None:
        return
    for count in value.split(","):
        count = count.strip()
        if not (count.isascii() and count.isdigit()
                and 1 <= int(count) <= MAX_THREADS):
            raise AttnFuseError(
                f"OMP_NUM_THREADS={value!r}: expected a thread count from 1 "
                f"to {MAX_THREADS} (or a comma-separated list of them); "
                f"libomp would stop the process (unset it for OpenMP's "
                f"default)")


class CompiledFunction:
    """One entry point of a loaded library."""

    def __init__(self, library_path: str, func_name: str, result_types):
        check_omp_num_threads()
        keep_freed_heap()
        self.library = ctypes.CDLL(library_path)
        self.func_name = func_name
        # An OpProfiler once enable_profiling() was called (profile=True).
        self.profiler = None
        self.result_types = list(result_types)
        self._fn = ctypes.cast(getattr(self.library,
                                       f"attn_packed_{func_name}"),
                               ctypes.c_void_p)
        self._call = self.library.attnrt_call_packed
        self._call.argtypes = [ctypes.c_void_p,
                               ctypes.POINTER(ctypes.c_void_p),
                               ctypes.c_char_p, ctypes.c_int64]
        self._call.restype = ctypes.c_int
        descs = [descriptor_type(t.rank) for t in self.result_types]
        if len(descs) == 1:
            self._results_type = descs[0]
        else:
            self._results_type = type(
                "Results", (ctypes.Structure,),
                {"_fields_": [(f"r{i}", d) for i, d in enumerate(descs)]})

    def enable_profiling(self) -> None:
        """Calls made while torch.profiler records show each op of the
        library (compiled with profile=True) as an event
        (attnfuse.profiling)."""
        from .profiling import OpProfiler
        if self.profiler is None:
            self.profiler = OpProfiler(self.library, self.func_name)

    def __call__(self, tensors) -> list[torch.Tensor]:
        """Runs the function on contiguous CPU tensors, returns new tensors."""
        args = [describe_tensor(t) for t in tensors]
        return self._run(args, {t.data_ptr() for t in tensors})

    def _run(self, descriptors, inputs) -> list[torch.Tensor]:
        """Calls with the arguments' descriptors; returns the results as
        tensors over the buffers the library allocated for them (freed with
        the last tensor over each; an input's buffer, `inputs` being their
        pointers, or a constant is copied instead). The packed entry point takes, per argument of
        `_mlir_ciface_<f>` (the results first), a pointer to a pointer to
        its descriptor."""
        results = self._results_type()
        leading = [results] if self.result_types else []
        targets = [ctypes.c_void_p(ctypes.addressof(d))
                   for d in [*leading, *descriptors]]
        args = (ctypes.c_void_p * len(targets))(
            *[ctypes.addressof(t) for t in targets])
        # One buffer per call: ctypes releases the GIL, so two threads may
        # call the same entry point at once.
        message = ctypes.create_string_buffer(_MESSAGE_SIZE)
        if self.profiler is None:
            failed = self._call(self._fn, args, message, _MESSAGE_SIZE)
        else:
            with self.profiler.events():
                failed = self._call(self._fn, args, message, _MESSAGE_SIZE)
        if failed:
            raise RunTimeCheckError(
                "run-time check failed: "
                + message.value.decode(errors="replace"))
        if len(self.result_types) == 1:
            descs = [results]
        else:
            descs = [getattr(results, f"r{i}")
                     for i in range(len(self.result_types))]
        # Results in buffers the library allocated are returned in place
        # (no copy: a parallel torch copy would also wake torch's thread
        # team); results sharing a buffer share its _Allocation.
        owners = {}
        for d in descs:
            p = d.allocated
            if p and p != _DEADBEEF and p not in inputs and p not in owners:
                owners[p] = _Allocation(p)
        return [_result_view(d, t.rank, t.dtype, owners.get(d.allocated))
                for d, t in zip(descs, self.result_types)]


class BoundCall:
    """Repeated calls of one entry point whose arguments are mostly the same
    tensors (a model's weights and KV cache): their descriptors are built
    once, each call describes only the `varying` positions. The caller
    keeps the fixed tensors alive and dense."""

    def __init__(self, fn: CompiledFunction, fixed: dict, num_args: int):
        self.fn = fn
        self.fixed = dict(fixed)
        self._descriptors = [describe_tensor(fixed[i]) if i in fixed else None
                             for i in range(num_args)]
        self._inputs = {t.data_ptr() for t in fixed.values()}

    def __call__(self, varying: dict) -> list[torch.Tensor]:
        descriptors = list(self._descriptors)
        for i, t in varying.items():
            descriptors[i] = describe_tensor(t)
        inputs = self._inputs | {t.data_ptr() for t in varying.values()}
        return self.fn._run(descriptors, inputs)
