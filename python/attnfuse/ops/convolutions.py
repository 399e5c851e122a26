"""Convolutions (`aten.convolution`: conv1d in Whisper's encoder, conv2d in
ViT's patch embedding) as linalg's named convolutions
(`linalg.conv_1d_ncw_fcw`, `linalg.conv_2d_nchw_fchw`) with their strides
and dilations, onto an f32 (f64) accumulator holding the bias; grouped
and depthwise ones (wav2vec2's positional conv, SegFormer's and
SqueezeBERT's) and 3-d ones as one generic with the group split out; padding is a
zero-filled tensor with the input inserted. Average pooling (Gemma-3's
image projector) is one generic over the windows with PyTorch's divisor
per window."""

from __future__ import annotations

import torch

from .. import mlir
from ..mlir import TensorType
from .registry import handles
from .views import reshape_to

aten = torch.ops.aten

_NAMED = {1: "linalg.conv_1d_ncw_fcw", 2: "linalg.conv_2d_nchw_fchw"}


@handles(aten.convolution.default)
def convolution(ex, x, weight, bias, stride, padding, dilation, transposed,
                output_padding, groups):
    out = ex.out_type()
    x, w = ex.tensor(x), ex.tensor(weight)
    nd = x.type.rank - 2
    if transposed or nd < 1:
        ex.unsupported(f"{nd}-d convolution with transposed={transposed}, "
                       f"groups={groups}")
    if not mlir.is_float(out.dtype):
        ex.unsupported(f"convolution on {out.dtype}")
    stride = list(stride) * (nd // len(stride))
    dilation = list(dilation) * (nd // len(dilation))
    padding = list(padding) * (nd // len(padding))
    if any(padding):
        dims = list(x.type.dims)
        for i, p in enumerate(padding):
            if not isinstance(dims[2 + i], int):
                ex.unsupported("padding a dynamic spatial dim")
            dims[2 + i] += 2 * p
        padded = ex.b.fill(0, TensorType(tuple(dims), x.type.dtype))
        x = ex.b.insert_slice(x, padded, [0, 0] + padding,
                              list(x.type.dims))
    acc_dtype = torch.float64 if out.dtype == torch.float64 else torch.float32
    acc_type = out.with_dtype(acc_dtype)
    if bias is not None:
        bias_v = ex.tensor(bias)
        # The bias broadcasts along the channel dim (dim 1).
        bmap = mlir.affine_map(out.rank, ["d1"])
        init = ex.b.generic([bias_v], [bmap, mlir.identity_map(out.rank)],
                            acc_type, ["parallel"] * out.rank,
                            lambda b, a, o: b.convert(a[0], acc_dtype))
    else:
        init = ex.b.fill(0, acc_type)
    if groups == 1 and nd in _NAMED:
        attrs = (f"{{dilations = dense<{dilation}> : tensor<{nd}xi64>, "
                 f"strides = dense<{stride}> : tensor<{nd}xi64>}}")
        y = ex.b.named(_NAMED[nd], [x, w], init, attrs)
    else:
        y = _grouped(ex, x, w, init, groups, stride, dilation)
    if acc_dtype == out.dtype:
        return y
    return ex.map([y], out, lambda b, a: b.convert(a, out.dtype))


def _grouped(ex, x, w, init, groups, stride, dilation):
    """A convolution of `groups` groups (depthwise when each has one
    channel; one group in 3 or more spatial dims) as one generic: input [N, G,
    Cg, W...], weight [G, Fg, Cg, K...] and accumulator [N, G, Fg, O...]
    viewed with the group split out, loops (n, g, f, o..., c, k...),
    out[n, g, f, o] += x[n, g, c, o * stride + k * dilation] * w[g, f, c,
    k] in the accumulator's type."""
    nd = x.type.rank - 2
    cin, fout = x.type.dims[1], w.type.dims[0]
    if not (isinstance(cin, int) and isinstance(fout, int)):
        ex.unsupported("a grouped convolution with dynamic channels")
    G = groups
    xg = reshape_to(ex, x, x.type.with_dims(
        (x.type.dims[0], G, cin // G) + tuple(x.type.dims[2:])))
    wg = reshape_to(ex, w, w.type.with_dims(
        (G, fout // G) + tuple(w.type.dims[1:])))
    acc = reshape_to(ex, init, init.type.with_dims(
        (init.type.dims[0], G, fout // G) + tuple(init.type.dims[2:])))
    # Loop dims: n g f o_1..o_nd c k_1..k_nd.
    o = [f"d{3 + i}" for i in range(nd)]
    c = f"d{3 + nd}"
    k = [f"d{4 + nd + i}" for i in range(nd)]
    loops = 4 + 2 * nd
    window = [f"{o[i]} * {stride[i]} + {k[i]} * {dilation[i]}"
              for i in range(nd)]
    maps = [mlir.affine_map(loops, ["d0", "d1", c] + window),
            mlir.affine_map(loops, ["d1", "d2", c] + k),
            mlir.affine_map(loops, ["d0", "d1", "d2"] + o)]
    iters = ["parallel"] * (3 + nd) + ["reduction"] * (1 + nd)
    wide = acc.type.dtype

    def body(b, a, out):
        prod = b.arith("mulf", b.convert(a[0], wide), b.convert(a[1], wide))
        return b.arith("addf", out, prod)
    y = ex.b.generic([xg, wg], maps, acc.type, iters, body, init=acc)
    return reshape_to(ex, y, init.type)


def _pool_divisors(size, kernel, stride, pad, out_size, count_include_pad):
    """Per output position along one dim: the window's first row in the
    padded input, and the counts PyTorch divides by (the window clipped to
    the padded input, or to the input itself without count_include_pad)."""
    divisors = []
    for o in range(out_size):
        start = o * stride - pad
        end = min(start + kernel, size + pad)
        inside = min(end, size) - max(start, 0)
        divisors.append(end - start if count_include_pad else inside)
    return divisors


@handles(aten.avg_pool2d.default)
def avg_pool2d(ex, x, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """out[.., i, j] = (sum of the window's elements, in the input's
    opmath type, rows then columns) / divisor, as PyTorch's CPU kernel:
    the divisor is `divisor_override`, else the window's size clipped to
    the padded input (count_include_pad) or to the input. Padding and
    windows that ceil_mode lets hang past the end read zeros."""
    out = ex.out_type()
    x = ex.tensor(x)
    if not mlir.is_float(out.dtype) or x.type.rank not in (3, 4):
        ex.unsupported(f"avg_pool2d of a rank-{x.type.rank} {out.dtype} "
                       f"tensor")
    spatial = x.type.dims[-2:]
    if not all(isinstance(d, int) for d in spatial + out.dims[-2:]):
        ex.unsupported("avg_pool2d over dynamic spatial dims")

    def pair(v):
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        return v * 2 if len(v) == 1 else v
    kernel = pair(kernel_size)
    stride = pair(stride) if stride else kernel
    pad = pair(padding)
    oh, ow = out.dims[-2:]
    # The input padded to everything the windows read.
    need = [(o - 1) * s + k for o, s, k in zip((oh, ow), stride, kernel)]
    if any(pad) or any(n > d + p for n, d, p in zip(need, spatial, pad)):
        dims = list(x.type.dims[:-2]) + [max(n, d + 2 * p) for n, d, p in
                                         zip(need, spatial, pad)]
        padded = ex.b.fill(0, x.type.with_dims(dims))
        x = ex.b.insert_slice(x, padded, [0] * (x.type.rank - 2) + pad,
                              list(x.type.dims))
    acc_dtype = mlir.opmath(out.dtype)
    r = out.rank
    lead = [f"d{i}" for i in range(r - 2)]
    window = [f"d{r - 2} * {stride[0]} + d{r}",
              f"d{r - 1} * {stride[1]} + d{r + 1}"]
    maps = [mlir.affine_map(r + 2, lead + window),
            mlir.affine_map(r + 2, lead + [f"d{r - 2}", f"d{r - 1}"])]
    iters = ["parallel"] * r + ["reduction"] * 2
    kernel_dims = TensorType(tuple(kernel), acc_dtype)
    # The generic iterates the window's dims through an operand of their
    # sizes (its values unused).
    shape = ex.b.empty(kernel_dims)
    maps.insert(1, mlir.affine_map(r + 2, [f"d{r}", f"d{r + 1}"]))
    sums = ex.b.generic(
        [x, shape], maps, out.with_dtype(acc_dtype), iters,
        lambda b, a, o: b.arith("addf", o, b.convert(a[0], acc_dtype)),
        init=ex.b.fill(0, out.with_dtype(acc_dtype)))
    if divisor_override:
        div = torch.full((oh, ow), float(divisor_override), dtype=acc_dtype)
    else:
        rows = _pool_divisors(spatial[0], kernel[0], stride[0], pad[0], oh,
                              count_include_pad)
        cols = _pool_divisors(spatial[1], kernel[1], stride[1], pad[1], ow,
                              count_include_pad)
        div = torch.tensor(rows, dtype=torch.float64)[:, None] * \
            torch.tensor(cols, dtype=torch.float64)[None, :]
        div = div.to(acc_dtype)
    divisor = ex.b.constant(div)
    return ex.map([sums, divisor], out, lambda b, s, d: b.convert(
        b.arith("divf", s, d), out.dtype))
