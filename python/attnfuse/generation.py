"""Text generation with a compiled decoder: `compile_generator` exports a
transformers causal LM's prefill and decode steps over a static KV cache
(attnfuse.kvcache) into one library, and `Generator.generate` drives them
as transformers' `generate` does (greedy or sampled, left-padded batches,
stop tokens), token for token.

    generator = attnfuse.compile_generator(model, max_batch=4,
                                           max_cache_len=512)
    tokens = generator.generate(input_ids, attention_mask=mask,
                                max_new_tokens=64)
"""

from __future__ import annotations

import contextlib
import copy
import json
import operator
import threading
from pathlib import Path

import torch

from . import kvcache, sampling
from .compiler import (BACKENDS, PackedWeight, build_library,
                       packed_arguments)
from .errors import AttnFuseError, BusyError, InputError, PackageError
from .exporter import export_program, torch_export
from .mlir import TensorType
from .package import (FORMAT, FORMAT_VERSION, Package, WeightsWriter,
                      arg_record, compiler_identity, dtype_name,
                      dtype_of, entry_record, library_string, target_record,
                      write_package)
from .pages import advise_huge_pages
from .progress import Progress, stage_of
from .quantized_weights import QuantizedWeight, activation_args, weight_plan
from .runtime import BoundCall, CompiledFunction, serial_torch

# Generation-config fields this loop implements (the others must keep
# transformers' defaults, or generate would differ from model.generate).
_SUPPORTED_PROCESSORS = ("temperature", "top_k", "top_p",
                         "repetition_penalty")
_UNSUPPORTED_DEFAULTS = {
    "no_repeat_ngram_size": (None, 0), "min_length": (None, 0),
    "min_new_tokens": (None, 0), "bad_words_ids": (None,),
    "forced_bos_token_id": (None,), "forced_eos_token_id": (None,),
    "suppress_tokens": (None,), "begin_suppress_tokens": (None,),
    "sequence_bias": (None,), "min_p": (None,), "typical_p": (None, 1.0),
    "epsilon_cutoff": (None, 0.0), "eta_cutoff": (None, 0.0),
    "exponential_decay_length_penalty": (None,),
    "encoder_repetition_penalty": (None, 1.0), "num_beams": (None, 1),
    "renormalize_logits": (None, False), "top_h": (None,),
}


class _Entry:
    """One entry point of the library with the weights bound: a BoundCall
    per batch size (the cache arguments are the leading B rows of the
    cache, views that stay the same for a batch size)."""

    def __init__(self, exported, fn, weights, inputs, cache_inputs, cache,
                 packed=None):
        self.exported = exported
        self.fn = fn
        self.weights = weights  # argument position -> tensor
        # Argument position -> (PackedWeight, the weight it packs): the
        # panels are checked against the weight before each call (packed
        # again after it was written or replaced).
        self.packed = packed or {}
        self.inputs = inputs  # positions of input_ids, mask, position_ids
        self.cache_inputs = cache_inputs  # positions of keys..., values...
        self.cache = [k for k, _ in cache] + [v for _, v in cache]
        self.num_args = len(exported.args) - sum(
            1 for a in exported.args if a.kind == "static")
        self._calls = {}

    def call(self, batch: int, tokens, first_row: int = 0) -> list:
        """Runs the step on `batch` cache rows from `first_row`."""
        for i, (packer, weight) in self.packed.items():
            panels = packer.get(weight)
            if panels is not self.weights[i]:
                self.weights[i] = panels
                self._calls.clear()
        key = (first_row, batch)
        bound = self._calls.get(key)
        if bound is None:
            fixed = dict(self.weights)
            fixed.update({i: t[first_row:first_row + batch] for i, t in
                          zip(self.cache_inputs, self.cache)})
            bound = self._calls[key] = BoundCall(self.fn, fixed,
                                                 self.num_args)
        return bound(dict(zip(self.inputs, tokens)))


class Generator:
    """A compiled causal LM with a static KV cache of `max_batch` rows and
    `max_cache_len` positions, updated in place by its two kinds of entry
    points (one library): `prefill` (a whole prompt from position 0) and
    `decode` (a few new tokens after the cached ones). `generate` runs
    transformers' decoding loop on them. One call at a time: the steps
    write the one cache, so a call while another runs (from another thread,
    or from `generate`'s progress callback) is a BusyError."""

    def __init__(self, model, library, entries, cache, max_batch,
                 max_cache_len, generation_config=None, defaults=None):
        self.model = model
        self.library_path = str(library)
        self.package_path = None
        if generation_config is None:
            generation_config = copy.deepcopy(model.generation_config)
        self.generation_config = generation_config
        # transformers' global generation defaults (a package's; None: read
        # from transformers when needed).
        self._defaults = defaults
        self.max_batch = max_batch
        self.max_cache_len = max_cache_len
        self.cache = cache  # [(keys, values)] per layer
        self._prefill = entries.pop("prefill")
        self._decode = entries  # new tokens -> _Entry
        self.dtype = cache[0][0].dtype
        # Bytes of the weights and cache on huge pages (compile_generator).
        self.huge_page_bytes = 0
        # Held by the call using the cache (`_exclusive`).
        self._lock = threading.Lock()
        # The compiler's identity for `save` (a package's, or the tools').
        self._compiler = None
        # Parameter name -> QuantizedWeight of the weights read quantized.
        self._quantizers = {}
        # generate's prompt runs one prefill per left-padded row on its
        # tokens alone (_prefill_rows): "auto" where that skips enough
        # padding to pay for reading the weights once per row, True for
        # every left-padded batch, False never (one prefill of the whole
        # padded batch).
        self.skip_padding = "auto"

    @property
    def skip_padding(self):
        return self._skip_padding

    @skip_padding.setter
    def skip_padding(self, value):
        if not (value is True or value is False or value == "auto"):
            raise InputError(f"skip_padding must be True, False or \"auto\", "
                             f"not {value!r}")
        self._skip_padding = value

    @property
    def decode_lengths(self) -> tuple:
        return tuple(sorted(self._decode))

    # ---- steps ------------------------------------------------------------
    def _check_step(self, input_ids, attention_mask, position_ids,
                    prefill: bool):
        """The step's arguments as the compiled code takes them (int64,
        dense, on the CPU), after checking what it trusts: integer
        `[batch, length]` tensors, one batch size (1..max_batch) for the
        three, one position per token, a mask of the T prompt positions
        (prefill) or of all n >= L positions so far (decode of L tokens;
        the step writes cache rows n - L .. n - 1), n within the cache, and
        positions in [0, max_cache_len). Raises InputError naming the
        argument and its sizes."""
        ids = _step_tensor("input_ids", input_ids)
        mask = _step_tensor("attention_mask", attention_mask, bool_ok=True)
        pos = _step_tensor("position_ids", position_ids)
        b, L = ids.shape
        if prefill and L < 2:
            raise InputError(f"input_ids {_shape(ids)}: prefill needs at "
                             f"least 2 tokens; decode one")
        if not prefill and L not in self._decode:
            raise InputError(f"input_ids {_shape(ids)}: decode of {L} "
                             f"tokens: compiled for {self.decode_lengths}")
        if mask.shape[0] != b or pos.shape[0] != b:
            raise InputError(
                f"batch sizes differ: input_ids {_shape(ids)}, "
                f"attention_mask {_shape(mask)}, position_ids {_shape(pos)}")
        if not 1 <= b <= self.max_batch:
            raise InputError(f"batch {b}: the generator was compiled for "
                             f"1 to {self.max_batch} rows")
        if pos.shape[1] != L:
            raise InputError(f"position_ids {_shape(pos)}: one position per "
                             f"token of input_ids {_shape(ids)}")
        n = mask.shape[1]
        if prefill and n != L:
            raise InputError(
                f"attention_mask {_shape(mask)}: prefill takes the mask of "
                f"the prompt input_ids {_shape(ids)} (it starts at cache "
                f"position 0)")
        if not prefill and n < L:
            raise InputError(
                f"attention_mask {_shape(mask)}: decode takes the mask of "
                f"all positions so far, the cached ones and the {L} new "
                f"tokens of input_ids {_shape(ids)}, at least {L}")
        if n > self.max_cache_len:
            raise InputError(f"attention_mask {_shape(mask)}: {n} positions "
                             f"do not fit the cache of {self.max_cache_len}")
        low, high = torch.aminmax(pos)
        if int(low) < 0 or int(high) >= self.max_cache_len:
            raise InputError(
                f"position_ids {_shape(pos)} hold {int(low)} .. {int(high)}: "
                f"positions must lie in [0, {self.max_cache_len}) "
                f"(max_cache_len)")
        return [t.to("cpu", torch.int64).contiguous()
                for t in (ids, mask, pos)]

    def _step(self, input_ids, attention_mask, position_ids, prefill):
        args = self._check_step(input_ids, attention_mask, position_ids,
                                prefill)
        entry = self._prefill if prefill else self._decode[args[0].shape[1]]
        (logits,) = entry.call(args[0].shape[0], args)
        return logits

    @contextlib.contextmanager
    def _exclusive(self):
        """Holds the generator for one call: the steps write its one KV
        cache, so a call from another thread, or from a callback of the
        call in progress, is a BusyError (never a wait: a callback waiting
        for its own caller would deadlock)."""
        if not self._lock.acquire(blocking=False):
            raise BusyError(
                "Generator is in use by another call (another thread, or a "
                "progress callback of the call in progress): its KV cache "
                "serves one call at a time; compile a generator per thread")
        try:
            yield
        finally:
            self._lock.release()

    def prefill(self, input_ids, attention_mask, position_ids):
        """Logits `[B, V]` of the last position of a prompt `[B, T]` (T >= 2,
        attention mask and positions `[B, T]`); writes cache rows 0..T-1."""
        with self._exclusive():
            return self._step(input_ids, attention_mask, position_ids, True)

    def decode(self, input_ids, attention_mask, position_ids):
        """Logits `[B, L, V]` of L new tokens `[B, L]` (L one of
        `decode_lengths`) after the n - L cached positions, with the
        attention mask of all n positions `[B, n]` (n >= L) and the new
        tokens' positions `[B, L]`; writes cache rows n - L .. n - 1."""
        with self._exclusive():
            return self._step(input_ids, attention_mask, position_ids, False)

    # ---- the loop -----------------------------------------------------------
    def generate(self, input_ids, attention_mask=None, max_new_tokens=None,
                 do_sample=None, temperature=None, top_k=None, top_p=None,
                 repetition_penalty=None, seed=None, eos_token_id=None,
                 pad_token_id=None, logits_processor=None, progress=None):
        """transformers' `generate` for a decoder-only model: the prompt
        `[B, T]` (integer ids; left padding marked 0 in `attention_mask`)
        followed by at most `max_new_tokens` tokens, `[B, T + steps]`.
        Greedy unless `do_sample` (temperature, top-k, top-p and repetition
        penalty as transformers applies them, then a draw from the softmax
        with a generator seeded by `seed`, else PyTorch's global one, as
        transformers uses). Options left None take the model's
        generation_config value, and where that is None too transformers'
        global default (`do_sample=False`, `temperature=1.0`, `top_k=50`,
        `top_p=1.0`, `repetition_penalty=1.0`, `max_length=20`), as
        transformers' `generate` does. A row that produced one of
        `eos_token_id` (an id, a list of ids or an integer tensor)
        continues with `pad_token_id`; generation stops when every row
        has. `progress(step, total, tokens)` is called after each step
        with the step's tokens `[B]`; it must not call the generator (a
        BusyError, as is a call from another thread while this one runs).
        While it runs, torch's own ops run on one thread
        (`torch.set_num_threads(1)`, restored on return): the loop's argmax,
        sampling and copies are small, and torch's OpenMP team would spin
        on the cores the compiled steps need."""
        with self._exclusive():
            return self._generate(
                input_ids, attention_mask, max_new_tokens, do_sample,
                temperature, top_k, top_p, repetition_penalty, seed,
                eos_token_id, pad_token_id, logits_processor, progress)

    def _option(self, name, value):
        """A generation option as transformers' `generate` resolves it: the
        argument, else the model's generation_config, else transformers'
        global default (GenerationConfig leaves top_k, temperature, ... None
        and `generate` fills in top_k=50 and the others)."""
        if value is None:
            value = getattr(self.generation_config, name, None)
        if value is None:
            defaults = self._defaults if self._defaults is not None \
                else _global_defaults()
            value = defaults.get(name)
        return value

    def _generate(self, input_ids, attention_mask, max_new_tokens, do_sample,
                  temperature, top_k, top_p, repetition_penalty, seed,
                  eos_token_id, pad_token_id, logits_processor, progress):
        cfg = self.generation_config
        self._check_config()
        input_ids = torch.as_tensor(input_ids)
        if not _is_integer(input_ids.dtype):
            raise InputError(f"input_ids must hold integer token ids, not "
                             f"{input_ids.dtype}")
        if input_ids.dim() != 2:
            raise InputError(f"input_ids must be [batch, tokens], not "
                             f"{_shape(input_ids)}")
        input_ids = input_ids.to("cpu", torch.int64)
        b, t = input_ids.shape
        if not 1 <= b <= self.max_batch:
            raise InputError(f"batch {b}: the generator was compiled for "
                             f"1 to {self.max_batch} rows")
        if attention_mask is None:
            mask = torch.ones_like(input_ids)
        else:
            mask = torch.as_tensor(attention_mask)
            if not (_is_integer(mask.dtype) or mask.dtype == torch.bool):
                raise InputError(f"attention_mask must hold integers or "
                                 f"booleans, not {mask.dtype}")
            mask = mask.to("cpu", torch.int64)
        if mask.shape != input_ids.shape:
            raise InputError(f"attention_mask {_shape(mask)} differs "
                             f"from input_ids {_shape(input_ids)}")
        steps = _pick(max_new_tokens, cfg.max_new_tokens)
        if steps is None:
            steps = max(self._option("max_length", None) - t, 0)
        steps = _count("max_new_tokens", steps)
        if t + steps > self.max_cache_len:
            raise InputError(
                f"{t} prompt tokens + {steps} new ones exceed the cache of "
                f"{self.max_cache_len} positions (compile_generator's "
                f"max_cache_len)")
        sample = bool(self._option("do_sample", do_sample))
        choose = self._chooser(sample, temperature, top_k, top_p,
                               repetition_penalty, logits_processor, seed,
                               mask)
        eos = _token_ids("eos_token_id", _pick(eos_token_id,
                                               cfg.eos_token_id))
        # An empty list stops on no token (and picks no pad from it).
        eos = torch.tensor(eos, dtype=torch.int64) if eos else None
        pad = _pick(pad_token_id, cfg.pad_token_id)
        if pad is not None:
            (pad,) = _token_ids("pad_token_id", pad, single=True)
        elif eos is not None:
            pad = int(eos[0])
        with serial_torch():
            return self._loop(input_ids, mask, steps, choose, eos, pad,
                              progress)

    def _loop(self, ids, mask, steps, choose, eos, pad, progress):
        b = ids.shape[0]
        position = mask.cumsum(-1) - 1
        position = position.masked_fill(mask == 0, 0)
        if steps == 0:
            return ids
        if ids.shape[1] >= 2:
            logits = self._prefill_rows(ids, mask)
            if logits is None:
                logits = self._step(ids, mask, position, True)
        else:
            logits = self._step(ids, mask, position, False)[:, -1]
        unfinished = torch.ones(b, dtype=torch.int64)
        out = ids
        for step in range(steps):
            tokens = choose(out, logits)
            if eos is not None:
                tokens = tokens * unfinished + pad * (1 - unfinished)
            out = torch.cat([out, tokens[:, None]], dim=-1)
            if progress is not None:
                progress(step + 1, steps, tokens)
            if eos is not None:
                unfinished = unfinished & ~torch.isin(tokens, eos)
                if int(unfinished.max()) == 0:
                    break
            if step + 1 == steps:
                break
            mask = torch.cat([mask, mask.new_ones(b, 1)], dim=-1)
            position = position[:, -1:] + 1
            logits = self._step(tokens[:, None], mask, position,
                                False)[:, -1]
        return out

    # What "auto" asks of a prompt batch's padding before it runs row by
    # row: a share of its positions (each row's products have fewer rows
    # to share each weight panel), and padded tokens per extra row (each
    # row's call reads every weight again: at the FMA or dot rate of two
    # cores against their memory bandwidth, a weight's bytes take as long
    # to read as 10-25 tokens take to multiply by it).
    _MIN_PADDING = 0.25
    _MIN_PADDED_TOKENS_PER_ROW = 32

    def _prefill_rows(self, ids, mask):
        """The prompt's last logits `[B, V]` from one prefill per row on
        the row's own tokens, or None where the whole batch should run as
        one prefill. transformers' left-padded prompt (each row's mask
        zeros then ones) computes each row as that row alone at positions
        0..n-1: the padding is masked out of every real token's attention.
        Each row's keys and values are moved to the cache positions the
        padded prefill gives them (T - n .. T - 1), so the decode steps,
        their mask and positions, and windows measured in cache positions
        are those of the padded batch; its padded positions are zeroed
        (masked in every later step). Taken when every row is left-padded
        with at least 2 tokens and skip_padding is True, or "auto" and the
        padding is at least _MIN_PADDING of the batch's positions and
        _MIN_PADDED_TOKENS_PER_ROW tokens per row after the first."""
        b, t = ids.shape
        lengths = (mask != 0).sum(-1)
        if self.skip_padding is False or int(lengths.min()) < 2:
            return None
        padded = b * t - int(lengths.sum())
        if padded == 0:
            return None
        if self.skip_padding == "auto" and (
                padded < self._MIN_PADDING * b * t or
                padded < self._MIN_PADDED_TOKENS_PER_ROW * (b - 1)):
            return None
        starts = t - lengths
        suffix = torch.arange(t)[None, :] >= starts[:, None]
        # Left padding of 0s and 1s only (other values shift transformers'
        # positions, mask.cumsum(-1) - 1).
        if not torch.equal(mask, suffix.to(mask.dtype)):
            return None
        logits = []
        for r in range(b):
            n, s = int(lengths[r]), int(starts[r])
            row = [ids[r:r + 1, s:].contiguous(),
                   torch.ones(1, n, dtype=torch.int64),
                   torch.arange(n, dtype=torch.int64)[None]]
            (out,) = self._prefill.call(1, row, first_row=r)
            logits.append(out)
            if s:
                for tensor in (x for layer in self.cache for x in layer):
                    tensor[r, :, s:t] = tensor[r, :, :n].clone()
                    tensor[r, :, :s] = 0
        return torch.cat(logits)

    def _chooser(self, sample, temperature, top_k, top_p, repetition_penalty,
                 logits_processor, seed, mask):
        """The step's token choice: transformers' processors as
        attnfuse.sampling computes them (repetition penalty, which skips
        each row's left padding as transformers' does, the caller's
        `logits_processor`, then with sampling the temperature, top-k and
        top-p warpers), then argmax or a draw."""
        processors = []
        penalty = self._option("repetition_penalty", repetition_penalty)
        if penalty is not None and penalty != 1.0:
            # transformers' generate passes the padding's lengths (the
            # first attention-mask 1 of each row): pad ids are no repeats.
            padding = (mask != 0).int().argmax(dim=1)
            processors.append(sampling.repetition_penalty(penalty, padding))
        processors.extend(logits_processor or [])
        if sample:
            temp = self._option("temperature", temperature)
            k = self._option("top_k", top_k)
            p = self._option("top_p", top_p)
            if temp is not None and temp != 1.0:
                processors.append(sampling.temperature(temp))
            if k is not None and k != 0:
                processors.append(sampling.top_k(k))
            if p is not None and p < 1.0:
                processors.append(sampling.top_p(p))
        processors = sampling.chain(processors)
        rng = None
        if sample and seed is not None:
            rng = torch.Generator().manual_seed(seed)

        def choose(ids, logits):
            scores = processors(ids, logits.to(torch.float32))
            if not sample:
                return torch.argmax(scores, dim=-1)
            probs = torch.softmax(scores, dim=-1)
            return torch.multinomial(probs, 1, generator=rng).squeeze(1)
        return choose

    def _check_config(self):
        cfg = self.generation_config
        for name, defaults in _UNSUPPORTED_DEFAULTS.items():
            value = getattr(cfg, name, None)
            if value not in defaults:
                raise AttnFuseError(
                    f"the model's generation_config sets {name}={value!r}, "
                    f"which attnfuse's generate does not implement "
                    f"(supported: {', '.join(_SUPPORTED_PROCESSORS)}); "
                    f"reset it to its default")

    # ---- packages -----------------------------------------------------------
    def _entries(self) -> dict:
        """Step ("prefill" or a decode length) -> _Entry."""
        return {"prefill": self._prefill, **self._decode}

    def streamed_tensors(self) -> list:
        """The weights the steps read and the cache: what a decode step
        streams from memory."""
        tensors = [t for e in self._entries().values()
                   for t in e.weights.values()]
        return tensors + [t for layer in self.cache for t in layer]

    @property
    def quantized(self) -> dict:
        """{parameter name: the QuantizedTensor the steps read} of the
        weights read quantized (`compile_generator(..., weights=...)`);
        `attnfuse.dequantized_model(model, generator.quantized)` is the
        float model that computes the same."""
        return {name.removeprefix(_MODEL): q.tensor
                for name, q in self._quantizers.items()}

    @property
    def config(self) -> dict:
        """The model's config as a dict (a package's, or the model's)."""
        if self.model is None:
            return dict(self._config)
        return json.loads(self.model.config.to_json_string(use_diff=False))

    def save(self, path) -> Path:
        """Writes the generator as a package directory `path` (replacing a
        package there): the library with every step, the weights the steps
        read now (prefill's prepacked weights as their panels) in
        weights.bin, and manifest.json with the steps' signatures, the
        cache's shape, the model's config and its generation defaults
        (attnfuse.package). `attnfuse.load(path)` gives back a Generator
        that generates the same tokens, in any process, without the model
        or transformers. The KV cache is not saved (each generation starts
        from position 0). Returns the path."""
        writer = WeightsWriter()
        entries = [_entry_manifest(step, entry, writer)
                   for step, entry in self._entries().items()]
        defaults = self._defaults if self._defaults is not None \
            else _global_defaults()
        manifest = {
            "format": FORMAT, "format_version": FORMAT_VERSION,
            "kind": "generator",
            "compiler": self._compiler or compiler_identity(),
            "target": target_record(self.library_path),
            "entries": entries,
            "generator": {
                "max_batch": self.max_batch,
                "max_cache_len": self.max_cache_len,
                "dtype": dtype_name(self.dtype),
                "cache": [{"keys": list(k.shape), "values": list(v.shape),
                           "dtype": dtype_name(k.dtype)}
                          for k, v in self.cache],
                "config": self.config,
                "generation_config": _json_safe(
                    self.generation_config.to_dict()),
                "generation_defaults": _json_safe(defaults)}}
        return write_package(path, manifest, Path(self.library_path),
                             Path(self.library_path).with_suffix(".h"),
                             writer)

    @classmethod
    def from_package(cls, package: Package) -> "Generator":
        """The Generator a package of kind "generator" holds (attnfuse.load
        reads and checks it first): the steps bound to weights mapped from
        weights.bin and to a new zeroed cache; generation options
        resolved from the saved generation config and defaults, without
        transformers."""
        m = package.manifest
        where = package.path / "manifest.json"
        g = _generator_section(m, where)
        cache = []
        # On this thread: torch's OpenMP team, woken for a parallel fill,
        # would contend with the library's.
        with serial_torch():
            for layer in g["cache"]:
                dtype = dtype_of(layer["dtype"], where)
                cache.append((torch.zeros(layer["keys"], dtype=dtype),
                              torch.zeros(layer["values"], dtype=dtype)))
        library = package.open_library()
        tensors = package.tensors()
        sigs = package.signatures()
        entries = {}
        for e in m["entries"]:
            sig = sigs[e["name"]]
            _check_step_arguments(sig, e, cache, where)
            fn = CompiledFunction(library, sig.func_name, sig.results)
            weights = {i: tensors[a.tensor] for i, a in enumerate(sig.args)
                       if a.tensor is not None}
            entries[e["step"]] = _Entry(sig, fn, weights, e["inputs"],
                                        e["cache_args"], cache)
        generator = cls(None, library, entries, cache, g["max_batch"],
                        g["max_cache_len"],
                        GenerationDefaults(g["generation_config"]),
                        dict(g["generation_defaults"]))
        generator.package_path = str(package.path)
        generator._compiler = m["compiler"]
        generator._config = dict(g["config"])
        generator.huge_page_bytes = advise_huge_pages(
            [t for layer in cache for t in layer])
        return generator


class GenerationDefaults:
    """A package's generation config: its fields as attributes (None for
    a field it does not set), as Generator reads transformers'
    GenerationConfig."""

    def __init__(self, values: dict):
        self._values = dict(values)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._values.get(name)

    def to_dict(self) -> dict:
        return dict(self._values)


def _json_safe(values: dict) -> dict:
    """`values` as JSON can hold them (a value JSON cannot write becomes
    its text)."""
    return json.loads(json.dumps(values, default=str))


def _entry_manifest(step, entry, writer) -> dict:
    """The manifest entry of one step: its arguments (weights added to
    `writer`; prepacked ones as their current panels), the positions of
    its token inputs and of the cache's keys and values."""
    func = entry.exported.func_name
    args = []
    for i, spec in enumerate(entry.exported.args):
        if i not in entry.weights:
            args.append(arg_record(spec))
            continue
        t, packed_type = entry.weights[i], None
        if i in entry.packed:
            packer, weight = entry.packed[i]
            t = packer.get(weight)
        if getattr(spec, "packed", False) or (
                i in entry.packed and getattr(spec, "quant", None) is None):
            packed_type = TensorType(tuple(t.shape), t.dtype)
        key = f"{spec.name}#packed" if packed_type else spec.name
        args.append(arg_record(spec, writer.add(key, t), packed_type))
    signature = library_string(entry.fn.library, f"attn_signature_{func}")
    record = entry_record(func, args, entry.exported.results, signature,
                          dict(entry.exported.dims))
    record.update(step=step, inputs=list(entry.inputs),
                  cache_args=list(entry.cache_inputs))
    return record


def _generator_section(m: dict, where) -> dict:
    """The `generator` section of a manifest and the generator fields of
    its entries, schema-checked."""
    g = m["generator"]
    ints = ("max_batch", "max_cache_len")
    for key in ints:
        if not isinstance(g.get(key), int) or isinstance(g.get(key), bool) \
                or g[key] < 1:
            raise PackageError(where, f"generator.{key} must be a positive "
                               f"integer")
    for key in ("config", "generation_config", "generation_defaults"):
        if not isinstance(g.get(key), dict):
            raise PackageError(where, f"generator.{key} must be an object")
    cache = g.get("cache")
    if not isinstance(cache, list) or not cache or not all(
            isinstance(c, dict) and isinstance(c.get("dtype"), str) and
            all(isinstance(c.get(k), list) and len(c[k]) == 4 and
                all(isinstance(d, int) and d >= 0 for d in c[k])
                for k in ("keys", "values")) for c in cache):
        raise PackageError(where, "generator.cache must list each layer's "
                           "keys and values shapes (4 sizes) and dtype")
    steps = [e.get("step") for e in m["entries"]]
    if "prefill" not in steps or len(set(map(str, steps))) != len(steps) or \
            not all(s == "prefill" or (isinstance(s, int) and s >= 1)
                    for s in steps):
        raise PackageError(where, f"entries' steps {steps}: a prefill and "
                           f"distinct decode lengths")
    for e in m["entries"]:
        for key, n in (("inputs", 3), ("cache_args", 2 * len(cache))):
            v = e.get(key)
            if not (isinstance(v, list) and len(v) == n and all(
                    isinstance(i, int) and 0 <= i < len(e["args"])
                    for i in v)):
                raise PackageError(where, f"entry {e['name']}: {key} must "
                                   f"be {n} argument positions")
    return g


def _check_step_arguments(sig, entry, cache, where):
    """The step's cache arguments are the cache's layers (batch dim
    dynamic, the others the cache's), written in place; its token
    inputs are int64 inputs; every other argument has a tensor."""
    tensors = [k for k, _ in cache] + [v for _, v in cache]
    for i, t in zip(entry["cache_args"], tensors):
        a = sig.args[i]
        batch = a.dims[0] if a.dims else None
        if a.kind != "input" or not a.written or a.type.dtype != t.dtype \
                or list(a.dims[1:]) != list(t.shape[1:]) or \
                (isinstance(batch, int) and batch != t.shape[0]):
            raise PackageError(where, f"entry {entry['name']}: argument "
                               f"{i} ({a.name}) is not a cache layer "
                               f"{dtype_name(t.dtype)} [batch, "
                               f"{', '.join(map(str, t.shape[1:]))}]")
    for i in entry["inputs"]:
        a = sig.args[i]
        if a.kind != "input" or a.type.dtype != torch.int64:
            raise PackageError(where, f"entry {entry['name']}: argument {i} "
                               f"({a.name}) is not an int64 input")
    used = set(entry["inputs"]) | set(entry["cache_args"])
    for i, a in enumerate(sig.args):
        if i not in used and a.tensor is None:
            raise PackageError(where, f"entry {entry['name']}: argument {i} "
                               f"({a.name}) has no tensor in weights.bin")


def _pick(value, default):
    return default if value is None else value


def _global_defaults() -> dict:
    """transformers' defaults for options that neither the call nor the
    model's generation_config sets (`top_k` 50, `temperature` 1.0, ...)."""
    from transformers import GenerationConfig
    defaults = getattr(GenerationConfig, "_get_default_generation_params",
                       None)
    return dict(defaults()) if defaults is not None else {}


def _shape(t) -> str:
    return "[" + ", ".join(str(d) for d in t.shape) + "]"


def _is_integer(dtype) -> bool:
    return not (dtype.is_floating_point or dtype.is_complex or
                dtype == torch.bool)


def _step_tensor(name, t, bool_ok=False):
    """`t` checked to be an integer (or, with `bool_ok`, boolean) tensor of
    rank 2, `[batch, length]`."""
    if not isinstance(t, torch.Tensor):
        raise InputError(f"{name} must be a torch.Tensor, not "
                         f"{type(t).__name__}")
    if not (_is_integer(t.dtype) or (bool_ok and t.dtype == torch.bool)):
        kind = "integers or booleans" if bool_ok else "integers"
        raise InputError(f"{name} {_shape(t)} must hold {kind}, not "
                         f"{t.dtype}")
    if t.dim() != 2:
        raise InputError(f"{name} {_shape(t)} must be [batch, length]")
    return t


def _count(name, value) -> int:
    """A non-negative integer option (an int, or anything with __index__:
    NumPy and 0-d integer tensors)."""
    if isinstance(value, bool):
        raise InputError(f"{name} must be an integer, not {value!r}")
    try:
        n = operator.index(value)
    except TypeError:
        raise InputError(f"{name} must be an integer, not "
                         f"{value!r}") from None
    if n < 0:
        raise InputError(f"{name} must be >= 0, not {n}")
    return n


def _token_ids(name, value, single=False):
    """Token ids as transformers' generate takes them: an int, a list of
    ints or an integer tensor (0-d or 1-d); None stays None. A list of
    Python ints out; `single`: exactly one id."""
    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        if not _is_integer(value.dtype) or value.dim() > 1:
            raise InputError(f"{name} must be an integer tensor of 0 or 1 "
                             f"dims, not {value.dtype} {_shape(value)}")
        ids = [int(v) for v in value.reshape(-1)]
    else:
        items = value if isinstance(value, (list, tuple)) else [value]
        ids = []
        for v in items:
            if isinstance(v, torch.Tensor) and v.dim() == 0 and \
                    _is_integer(v.dtype):
                v = int(v)
            if isinstance(v, bool) or not hasattr(v, "__index__"):
                raise InputError(f"{name} must be a token id, a list of "
                                 f"them or an integer tensor, not "
                                 f"{value!r}")
            ids.append(operator.index(v))
    if single and len(ids) != 1:
        raise InputError(f"{name} must be one token id, not {value!r}")
    return ids


# ---------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------


def compile_generator(model, max_batch: int = 1, max_cache_len: int = 256,
                      dtype=None, decode_lengths=(1,),
                      backend: str = "auto",
                      prepack_weights: bool = False,
                      huge_pages: bool = True,
                      weights=None, group_size=None, activations=None,
                      progress=None) -> Generator:
    """Compiles a transformers causal LM (`model.config`,
    `model.generation_config`, logits out) for generation: one library with
    `prefill` and one `decode_<L>` per L in `decode_lengths` (1 by default;
    more for speculative decoding), sharing the weights and a static KV
    cache of `max_batch` x `max_cache_len` positions in `dtype` (default
    the model's: bf16 weights and cache for a bf16 model; another dtype
    converts a copy of the model). `prepack_weights=True`: the prefill
    step reads its projections' weights as GEMM panels packed once
    (`attnfuse.compile`'s option; a second copy of those weights), the
    decode steps read the weights as stored. `huge_pages=True` (Linux):
    the weights the steps read and the cache are advised onto 2 MiB
    transparent huge pages (attnfuse.pages; a decode step streams every
    weight, and on 4 KiB pages it takes a TLB miss per 4 KiB); the bytes
    the kernel moved are `Generator.huge_page_bytes`. `weights`,
    `group_size`: the linear layers' weights read quantized, as in
    `attnfuse.compile` (one quantized copy shared by every step;
    `Generator.quantized`); `activations="int8"`: their products
    multiply int8-quantized inputs in integers where the CPU has an
    integer dot (`attnfuse.compile`'s option). `progress`: show the stages on stderr or not
    (`attnfuse.compile`'s option). Returns a Generator."""
    if backend not in BACKENDS:
        raise AttnFuseError(f"backend must be one of {BACKENDS}")
    plan = weight_plan(weights, group_size)
    activation_flags = activation_args(activations, plan)
    if max_batch < 1 or max_cache_len < 2:
        raise AttnFuseError("max_batch must be >= 1 and max_cache_len >= 2")
    model = model.eval()
    if dtype is not None and dtype != model.dtype:
        model = copy.deepcopy(model).to(dtype)
    decode_lengths = sorted(set(int(n) for n in decode_lengths))
    if not decode_lengths or decode_lengths[0] < 1 or \
            decode_lengths[-1] > max_cache_len:
        raise AttnFuseError(f"decode_lengths {decode_lengths}: each must be "
                            f"in 1..max_cache_len")
    with Progress("compile_generator", progress) as p:
        generator = _compile_steps(model, max_batch, max_cache_len,
                                   decode_lengths, backend, prepack_weights,
                                   p, plan, activation_flags)
        if huge_pages:
            with p.stage("huge pages"):
                generator.huge_page_bytes = advise_huge_pages(
                    generator.streamed_tensors())
    return generator


def _compile_steps(model, max_batch, max_cache_len, decode_lengths, backend,
                   prepack_weights, progress, plan=None,
                   activation_flags=()) -> Generator:
    """compile_generator's work: the cache, each step exported, one library
    for all of them, each step bound to its weights."""
    with progress.stage("allocate the cache"):
        cache = _allocate_cache(model, max_batch, max_cache_len)
        steps = _step_modules(model, cache, decode_lengths)
    plan = plan.prefixed(_MODEL) if plan is not None else None
    # Only the prefill step's weights are marked for packing: a decode
    # step's few rows read each weight once, as stored, at the memory's
    # rate.
    exported = {name: _export_step(step, name, cache, max_batch,
                                   max_cache_len,
                                   prepack_weights and name == "prefill",
                                   progress, plan)
                for name, step in steps.items()}
    extra = ["--prepack-weights"] if prepack_weights else []
    extra += list(activation_flags)
    library, _ = build_library(_link(exported.values()), backend, extra,
                               progress)
    entries = {}
    # Parameter name -> QuantizedWeight, shared by the steps: one
    # quantized copy of each weight.
    quantizers = {}
    with progress.stage("bind the weights"):
        for name, exp in exported.items():
            key = "prefill" if name == "prefill" else int(name.split("_")[1])
            entries[key] = _bind(exp, library, steps[name], cache, plan,
                                 quantizers)
            exp.release()
    generator = Generator(model, library, entries, cache, max_batch,
                          max_cache_len)
    generator._compiler = compiler_identity()
    generator._quantizers = quantizers
    return generator


# The prefix of the model's parameter names in a step module's.
_MODEL = "model."


def _allocate_cache(model, max_batch, max_cache_len):
    """Zeroed keys and values per layer, `[max_batch, kv_heads, capacity,
    head_dim]`, shaped as the model's own cache (probed with one token).
    One spare position: torch.export cannot keep the filled length dynamic
    up to the whole capacity (a slice of all of it is the tensor itself)."""
    from transformers import DynamicCache
    probe = DynamicCache(config=model.config)
    with torch.no_grad():
        model(input_ids=torch.zeros(1, 1, dtype=torch.int64),
              past_key_values=probe, use_cache=True)
    cache = []
    for i, layer in enumerate(probe.layers):
        _check_kv_layer(model, i, layer)
        keys, values = getattr(layer, "keys", None), getattr(layer, "values",
                                                             None)
        if keys is None or keys.dim() != 4:
            raise AttnFuseError(f"cache layer {type(layer).__name__} has no "
                                f"[batch, heads, positions, dim] keys")
        shape = (max_batch, keys.shape[1], max_cache_len + 1)
        cache.append((torch.zeros(shape + keys.shape[3:], dtype=keys.dtype),
                      torch.zeros(shape + values.shape[3:],
                                  dtype=values.dtype)))
    return cache


def _check_kv_layer(model, i, layer):
    """Refuses a cache layer that holds a recurrent state instead of keys
    and values (the linear-attention layers of a hybrid model, Qwen3-Next's
    gated delta rule), naming the model's layer and what is supported."""
    from transformers.cache_utils import LinearAttentionCacheLayerMixin
    if not isinstance(layer, LinearAttentionCacheLayerMixin):
        return
    kind = ""
    types = getattr(model.config, "layer_types", None)
    if types and i < len(types):
        kind = f", layer type '{types[i]}'"
    modules = ""
    layers = getattr(getattr(model, "model", model), "layers", None)
    if layers is not None and i < len(layers):
        mixers = [type(m).__name__ for n, m in layers[i].named_children()
                  if any(k in n for k in ("attn", "attention", "mixer"))
                  and "norm" not in n]
        modules = f", {type(layers[i]).__name__}"
        if mixers:
            modules += f" with {', '.join(mixers)}"
    raise AttnFuseError(
        f"layer {i} of the model{modules}{kind} keeps a linear-attention "
        f"state in the cache ({type(layer).__name__}: a convolution state "
        f"and a recurrent state updated per token), which "
        f"compile_generator does not support: its cache holds keys and "
        f"values per layer (full, sliding-window and GQA attention). "
        f"Compile the whole-sequence forward with attnfuse.compile or "
        f"torch.compile(backend=\"attnfuse\") (use_cache=False), or "
        f"generate with PyTorch")


def _step_modules(model, cache, decode_lengths):
    """The step modules, using attnfuse's attention function when every
    layer of the model dispatches through transformers' attention
    interface (checked on one eager decode step), else the model's own
    attention over the cache's prefix."""
    StepModule = kvcache.StepModule
    probe = StepModule(model, False, True)
    ids = torch.zeros(1, 1, dtype=torch.int64)
    try:
        with torch.no_grad():
            probe(ids, torch.ones(1, 2, dtype=torch.int64),
                  torch.ones(1, 1, dtype=torch.int64),
                  [k[:1].clone() for k, _ in cache],
                  [v[:1].clone() for _, v in cache])
        step = probe.last_step
        ours = step.attention_calls == step.cache_updates > 0
    except Exception:  # noqa: BLE001 - attention code of the model's own
        # (Falcon reads the mask transformers builds for its own
        # implementations): the model keeps it.
        ours = False
    modules = {"prefill": StepModule(model, True, ours)}
    for n in decode_lengths:
        modules[f"decode_{n}"] = StepModule(model, False, ours)
    return modules


def _export_step(step, name, cache, max_batch, max_cache_len,
                 mark_weights=False, progress=None, plan=None):
    """torch.export of one step with a dynamic batch (up to max_batch) and
    a dynamic number of positions, then the MLIR of `@name` (its
    parameters marked as weights to prepack with `mark_weights`)."""
    dim = torch.export.Dim
    b = min(2, max_batch)
    # torch.export takes a dynamic size to be at least 2 (sizes 0 and 1
    # specialise): a range of [1, 2] would leave the batch symbol only 2,
    # and the step would be compiled for 2 rows. The compiled code does not
    # depend on the bound (rows past max_batch are refused before a call).
    batch = (dim("batch", min=1, max=max(max_batch, 3)) if max_batch > 1
             else None)
    rows = {0: batch} if batch else None
    if step.prefill:
        n = L = 3 if max_cache_len >= 3 else 2
        tokens = dim("tokens", min=2, max=max_cache_len)
        shape = {0: batch, 1: tokens} if batch else {1: tokens}
        dynamic = {"input_ids": shape, "attention_mask": shape,
                   "position_ids": shape}
    else:
        L = int(name.split("_")[1])
        n = min(L + 2, max_cache_len)
        total = dim("total", min=L, max=max_cache_len)
        dynamic = {"input_ids": rows, "position_ids": rows,
                   "attention_mask": ({0: batch, 1: total} if batch
                                      else {1: total})}
    dynamic["keys"] = [rows] * len(cache)
    dynamic["values"] = [rows] * len(cache)
    kwargs = {"input_ids": torch.zeros(b, L, dtype=torch.int64),
              "attention_mask": torch.ones(b, n, dtype=torch.int64),
              "position_ids": torch.arange(n - L, n).expand(b, L).contiguous(),
              "keys": [k[:b].clone() for k, _ in cache],
              "values": [v[:b].clone() for _, v in cache]}
    with stage_of(progress, f"torch.export {name}"):
        program = torch_export(step, (), dynamic, kwargs)
    with stage_of(progress, f"MLIR {name}"):
        return export_program(program, func_name=name,
                              mark_weights=mark_weights, weights=plan)


def _link(exported) -> str:
    """One module holding every step's function."""
    bodies = []
    for e in exported:
        text = e.mlir.strip()
        assert text.startswith("module {") and text.endswith("}")
        bodies.append(text[len("module {"):-1].strip("\n"))
    return "module {\n" + "\n".join(bodies) + "\n}\n"


def _bind(exported, library, step, cache, plan=None,
          quantizers=None) -> _Entry:
    """The entry point with the step module's weights bound by reference
    (the same tensors for every entry point; a weight read quantized
    through its QuantizedWeight in `quantizers`, shared by the entry
    points) and the positions of its inputs: input_ids, attention_mask,
    position_ids, then the cache's keys and values per layer, as
    torch.export flattens them."""
    quantizers = {} if quantizers is None else quantizers
    fn = CompiledFunction(str(library), exported.func_name, exported.results)
    state = dict(step.named_parameters(remove_duplicate=False))
    state.update(step.named_buffers(remove_duplicate=False))
    packers = {e["arg"]: PackedWeight(str(library), e)
               for e in packed_arguments(library, exported.func_name)}
    weights, inputs, packed = {}, [], {}
    position = 0
    for spec in exported.args:
        if spec.kind == "static":
            raise AttnFuseError(f"{exported.func_name}: a non-tensor input "
                                f"{spec.name}")
        if spec.kind == "input":
            inputs.append(position)
        else:
            t = state[spec.name].detach()
            if not t.is_contiguous() or t.device.type != "cpu":
                raise AttnFuseError(f"{spec.name} must be a dense CPU tensor")
            if spec.quant is not None:
                q = quantizers.get(spec.name)
                if q is None:
                    given = plan.given.get(spec.name) if plan else None
                    q = quantizers[spec.name] = QuantizedWeight(
                        spec.name, spec.quant, spec.weight_shape, given)
                if not q.given:
                    packed[position] = (q, t)
                t = q.get(t)
            elif position in packers:
                # The detached view shares the parameter's version counter:
                # a write after compiling is seen and packed again.
                packed[position] = (packers[position], t)
                t = packers[position].get(t)
            weights[position] = t
        position += 1
    if len(inputs) != 3 + 2 * len(cache):
        raise AttnFuseError(f"{exported.func_name} takes {len(inputs)} "
                            f"inputs, expected 3 and the cache's "
                            f"{2 * len(cache)}")
    written = [i for i, a in enumerate(exported.args) if a.written]
    if written != inputs[3:]:
        others = [exported.args[i].name for i in written
                  if i not in inputs[3:]]
        if others:
            raise AttnFuseError(
                f"{exported.func_name} writes {', '.join(others)} besides "
                f"the KV cache: the model updates its state in forward (a "
                f"rotary embedding that switches its frequencies with the "
                f"sequence length does, such as Phi-3's longrope), which a "
                f"compiled step cannot replay; generate with PyTorch")
        raise AttnFuseError(f"{exported.func_name} writes arguments "
                            f"{written}, expected the cache's {inputs[3:]}")
    return _Entry(exported, fn, weights, inputs[:3], inputs[3:], cache,
                  packed)
