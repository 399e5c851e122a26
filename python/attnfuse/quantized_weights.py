"""Which weights a compiled model reads quantized, and the bytes it reads.

`attnfuse.compile(..., weights=...)` and `compile_generator(...,
weights=...)` take one of:

- None (the default): every weight as stored.
- A scheme name (`attnfuse.quant`): "int8" is int8_asym per output
  channel and "int4" is int4_sym in groups of 128 (NNCF's defaults for
  its INT8_ASYM and INT4_SYM modes); "int8_sym", "int8_asym",
  "int4_sym", "int4_asym", "q8_0" and "q4_0" name a scheme itself.
  `group_size` overrides the group of the int schemes (-1: one group per
  output channel). Every parameter whose only uses are as the weight of
  `nn.Linear` (`aten.linear` on an input of rank >= 2) or the table of
  `nn.Embedding` is quantized with it when the module is bound, and again
  after the parameter is written or replaced (as prepacked weights are
  packed again): the LM head, the token embeddings, and the two as one
  tensor where they are tied.
- A dict {parameter name: QuantizedTensor}: those parameters are read as
  given (a GGUF file's tensors; `attnfuse.compile_generator_from_gguf`),
  the others as stored. Each must be an `nn.Linear` weight or an
  `nn.Embedding` table of the given tensor's shape.

The experts of a mixture of experts (an [E, N, K] parameter that
grouped products read expert by expert, transformers' `grouped_mm`
experts) are quantized too: one stack of E quantized [N, K] matrices.
Its router (a linear layer whose scores reach a top-k) stays float, as
llama.cpp keeps `ffn_gate_inp`.

What stays float: norms, biases, position embeddings added by index
arithmetic, and anything else not read as one of those (GPT-2's Conv1D
`addmm`, experts read another way). A scheme whose group
does not divide a weight's K is an AttnFuseError naming the parameter.

The compiled function takes each quantized weight as its bytes (an i8
tensor of the layout's size, docs/quantization.md) and reads it with
`attn.quantized_matmul` and `attn.quantized_embedding`. `dequantized_model` gives the float model that
computes what the compiled one does (the reference for tests and for
measuring what quantization costs).

`activations="int8"` (opt-in; None, the default, is the exact float
path) lets the decode products (at most 8 rows) of q8_0, q4_0, q4_k, q6_k,
int4_* and int8_* weights (K and group multiples of 32) quantize their
input rows to int8 per block of 32 and multiply in integers, on a CPU with
AVX-VNNI or AVX512-VNNI, or AVX2 for the 4- and 6-bit weights; and the
prefill GEMMs of q8_0, q4_0, q4_k, q6_k, int8_sym and int4_sym weights
on VNNI (`attn-compile --quantized-activations=int8`, docs/quantization.md).
Other products stay float.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import torch

from .errors import AttnFuseError
from .quant import QuantizedTensor, QuantScheme, get_scheme, quantize

aten = torch.ops.aten

# Short names -> (scheme, default group size).
ALIASES = {"int8": ("int8_asym", None), "int4": ("int4_sym", None)}
LINEAR_INPUT_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


@dataclass
class WeightPlan:
    """What `weights=` asks for: a scheme for the float weights chosen at
    export, and weights given already quantized (by parameter name)."""
    scheme: Optional[QuantScheme] = None
    given: dict = field(default_factory=dict)

    def prefixed(self, prefix: str) -> "WeightPlan":
        """The plan for a module that holds this one's under `prefix`
        (a generator's step modules hold the model as `model.`)."""
        return WeightPlan(self.scheme, {prefix + name: qt
                                        for name, qt in self.given.items()})


ACTIVATIONS = (None, "int8")


def activation_args(activations, plan: Optional[WeightPlan]) -> list:
    """The attn-compile flags of an `activations=` argument (part of the
    library's cache key): [] for None, the int8 flag for "int8"; an
    AttnFuseError for any other value or for "int8" without quantized
    weights, which it would not change."""
    if activations not in ACTIVATIONS:
        raise AttnFuseError(f"activations={activations!r}: expected None "
                            f"(float inputs, exact) or 'int8' (decode "
                            f"products of quantized weights in integers)")
    if activations is None:
        return []
    if plan is None:
        raise AttnFuseError(f"activations={activations!r} applies to "
                            f"quantized weights: pass weights='int4' (or "
                            f"another scheme) too")
    return [f"--quantized-activations={activations}"]


def weight_plan(weights, group_size=None) -> Optional[WeightPlan]:
    """The WeightPlan of a `weights=` argument (None: all float)."""
    if weights is None:
        if group_size is not None:
            raise AttnFuseError("group_size is given without weights=: pass "
                                "weights='int4' (or another scheme) too")
        return None
    if isinstance(weights, dict):
        if group_size is not None:
            raise AttnFuseError("group_size applies to a scheme name, not to "
                                "weights given as QuantizedTensors")
        for name, qt in weights.items():
            if not isinstance(qt, QuantizedTensor):
                raise AttnFuseError(f"weights[{name!r}] is a "
                                    f"{type(qt).__name__}, not a "
                                    f"QuantizedTensor")
        return WeightPlan(given=dict(weights))
    if isinstance(weights, QuantScheme):
        name, default_group = weights, None
    elif isinstance(weights, str):
        name, default_group = ALIASES.get(weights.lower(),
                                          (weights.lower(), None))
    else:
        raise AttnFuseError(f"weights must be None, a scheme name or a dict "
                            f"of QuantizedTensors, not {weights!r}")
    try:
        scheme = get_scheme(name, group_size if group_size is not None
                            else default_group)
    except ValueError as e:
        raise AttnFuseError(f"weights={weights!r}: {e} (short names: "
                            f"{', '.join(ALIASES)})") from None
    if scheme.name in ("q4_k", "q6_k"):
        raise AttnFuseError(f"weights={weights!r}: {scheme.name} weights "
                            f"come only from GGUF files (there is no "
                            f"quantizer for it); use q4_0, int4 or int8")
    return WeightPlan(scheme=scheme)


def _embedding_table(u, node) -> bool:
    """Whether `u` is aten.embedding reading placeholder `node` as its
    table (attn.quantized_embedding)."""
    return u.target == aten.embedding.default and len(u.args) >= 2 and \
        u.args[0] is node and u.args[1] is not node


# The grouped products of a mixture of experts (ops/products.py), rows x
# weights[e] with the weight its argument 1.
GROUPED_PRODUCTS = ("aten._grouped_mm.default",
                    "transformers.grouped_mm_fallback.default")


def _float_rows(x, rank: int) -> bool:
    x = getattr(x, "meta", {}).get("val")
    return isinstance(x, torch.Tensor) and x.dim() >= rank and \
        x.dtype in LINEAR_INPUT_DTYPES


def _expert_uses(node) -> bool:
    """Whether the graph reads the 3-D placeholder `node` ([E, N, K]: each
    expert's nn.Linear weight) only through a swap of its last two dims
    that only grouped products read as their weights: each expert's
    matrix is then an [N, K] weight of attn.quantized_matmul."""
    for u in node.users:
        if u.op != "call_function" or u.args[0] is not node:
            return False
        if u.target == aten.transpose.int:
            swap = sorted(int(d) % 3 for d in u.args[1:3])
        elif u.target == aten.permute.default:
            swap = [1, 2] if [int(d) % 3 for d in u.args[1]] == [0, 2, 1] \
                else None
        else:
            return False
        if swap != [1, 2] or not u.users:
            return False
        for g in u.users:
            if g.op != "call_function" or \
                    str(g.target) not in GROUPED_PRODUCTS:
                return False
            args = list(g.args) + [None] * (5 - len(g.args))
            offs, bias, out_dtype = (args[2] if args[2] is not None else
                                     g.kwargs.get("offs"),
                                     args[3] if args[3] is not None else
                                     g.kwargs.get("bias"),
                                     args[4] if args[4] is not None else
                                     g.kwargs.get("out_dtype"))
            if args[1] is not u or args[0] is u or offs is None or \
                    bias is not None or out_dtype is not None or \
                    not _float_rows(args[0], 2):
                return False
    return True


_PRODUCTS = (aten.linear.default, aten.mm.default, aten.bmm.default,
             aten.matmul.default, aten.addmm.default)


def is_router(node, depth: int = 6) -> bool:
    """Whether a product reading placeholder `node` gives scores that
    reach aten.topk within `depth` steps that are not themselves products:
    a mixture of experts' router, which `weights=` keeps float (as
    llama.cpp keeps ffn_gate_inp): it is small, and a rounded score can
    send a token to another expert."""
    frontier = [u for u in node.users if u.op == "call_function" and
                u.target in _PRODUCTS]
    seen = set(frontier)
    for _ in range(depth):
        nxt = []
        for n in frontier:
            for u in n.users:
                if u in seen or u.op != "call_function" or \
                        u.target in _PRODUCTS:
                    continue
                if u.target == aten.topk.default:
                    return True
                seen.add(u)
                nxt.append(u)
        frontier = nxt
    return False


def quantizable_uses(node) -> bool:
    """Whether the graph reads placeholder `node` only as the weight of
    aten.linear on float inputs of rank >= 2 (what attn.quantized_matmul
    computes) or as the table of aten.embedding (attn.quantized_embedding):
    a LM head tied to the embeddings reads one quantized tensor. A 3-D
    parameter qualifies where grouped products read each of its matrices
    as an nn.Linear weight (the experts of a mixture of experts)."""
    users = list(node.users)
    if not users:
        return False
    val = node.meta.get("val")
    if getattr(val, "dim", lambda: 0)() == 3:
        return _expert_uses(node)
    for u in users:
        if u.op != "call_function":
            return False
        if _embedding_table(u, node):
            table = node.meta.get("val")
            if getattr(table, "dtype", None) not in LINEAR_INPUT_DTYPES:
                return False
            continue
        if u.target != aten.linear.default:
            return False
        args = list(u.args) + [u.kwargs.get("bias")]
        if len(u.args) < 2 or args[1] is not node or args[0] is node or \
                (len(args) > 2 and args[2] is node):
            return False
        if not _float_rows(args[0], 2):
            return False
    return True


def scheme_for(plan: Optional[WeightPlan], name: str, node, shape) -> \
        Optional[QuantScheme]:
    """The scheme parameter `name` (placeholder `node`, of `shape`) is
    read in, None for float; an AttnFuseError where the plan cannot be
    kept (a given tensor of another shape or use, a group that does not
    divide K)."""
    if plan is None:
        return None
    given = plan.given.get(name)
    if given is None and plan.scheme is None:
        return None
    if not node.users:
        # Read by nothing (a tied tensor lifted under both names): a given
        # one is passed as it is, there being no float value to pass.
        return given.scheme if given is not None else None
    if not quantizable_uses(node):
        if given is not None:
            raise AttnFuseError(
                f"parameter {name} is given quantized ({given.scheme.name}) "
                f"but the module reads it other than as an nn.Linear weight "
                f"or an nn.Embedding table; give it as a float tensor")
        return None
    shape = tuple(int(d) for d in shape)
    if given is not None:
        if given.shape != shape:
            raise AttnFuseError(f"parameter {name} is {list(shape)}, the "
                                f"quantized tensor given for it "
                                f"{list(given.shape)}")
        return given.scheme
    if is_router(node):
        return None
    try:
        plan.scheme.check_shape(shape, f"parameter {name}")
    except ValueError as e:
        hint = ("its blocks are fixed: use an int scheme with a group_size "
                "that divides K" if plan.scheme.is_gguf else
                "pass a group_size that divides every linear layer's input "
                "size (-1: one group per output channel)")
        raise AttnFuseError(f"weights={plan.scheme.name}: {e}; {hint}") \
            from None
    return plan.scheme


def as_argument(qt: QuantizedTensor) -> torch.Tensor:
    """The bytes of `qt` as the i8 tensor the compiled function takes (a
    view: no copy, also of a read-only file mapping, which the function
    only reads)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # not writable
        return torch.from_numpy(qt.data.view(np.int8))


class QuantizedWeight:
    """One weight argument read quantized: `get(weight)` gives the bytes to
    pass for the float `weight` (quantized again when it is another tensor
    than last time or was written since), or the bytes given (`given`),
    which do not depend on any float weight. `tensor` is the
    QuantizedTensor last passed."""

    def __init__(self, name: str, scheme: QuantScheme, shape,
                 given: Optional[QuantizedTensor] = None):
        self.name = name
        self.scheme = scheme
        self.shape = tuple(shape)
        self.tensor = given
        self.given = given is not None
        self._bytes = as_argument(given) if given is not None else None
        self._source = None
        self._key = None

    def get(self, weight: Optional[torch.Tensor]) -> torch.Tensor:
        if self.given:
            return self._bytes
        key = (weight.data_ptr(), weight._version, weight.stride())
        if self._bytes is None or key != self._key:
            if tuple(weight.shape) != self.shape or \
                    not weight.is_floating_point():
                raise AttnFuseError(
                    f"{self.name} is {tuple(weight.shape)} {weight.dtype}, "
                    f"compiled for a float {self.shape} weight")
            with torch.no_grad():
                qt = quantize(weight, self.scheme, name=self.name)
            self.tensor, self._bytes = qt, as_argument(qt)
            # Held, so that its storage cannot be reused by a new weight
            # at the same address.
            self._source, self._key = weight, key
        return self._bytes


def dequantized_model(model: torch.nn.Module, quantized: dict):
    """A copy of `model` whose parameters named in `quantized` ({name:
    QuantizedTensor}, a compiled module's or generator's `quantized`)
    hold their dequantized values in the parameter's dtype: eager PyTorch
    on it computes what the compiled model computes."""
    out = copy.deepcopy(model)
    params = dict(out.named_parameters(remove_duplicate=False))
    with torch.no_grad():
        for name, qt in quantized.items():
            p = params.get(name)
            if p is None:
                raise AttnFuseError(f"the model has no parameter {name}")
            p.copy_(qt.dequantize().to(p.dtype))
    return out


__all__ = ["WeightPlan", "weight_plan", "QuantizedWeight", "quantizable_uses",
           "dequantized_model", "ALIASES"]
