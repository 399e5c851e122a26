"""Convolutions (`aten.convolution`: conv1d in Whisper's encoder, conv2d in
ViT's patch embedding) as linalg's named convolutions
(`linalg.conv_1d_ncw_fcw`, `linalg.conv_2d_nchw_fchw`) with their strides
and dilations, onto an f32 (f64) accumulator holding the bias; padding is
a zero-filled tensor with the input inserted."""

from __future__ import annotations

import torch

from .. import mlir
from ..mlir import TensorType
from . import handles

aten = torch.ops.aten

_NAMED = {1: "linalg.conv_1d_ncw_fcw", 2: "linalg.conv_2d_nchw_fchw"}


@handles(aten.convolution.default)
def convolution(ex, x, weight, bias, stride, padding, dilation, transposed,
                output_padding, groups):
    out = ex.out_type()
    x, w = ex.tensor(x), ex.tensor(weight)
    nd = x.type.rank - 2
    if transposed or groups != 1 or nd not in _NAMED:
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
    attrs = (f"{{dilations = dense<{dilation}> : tensor<{nd}xi64>, "
             f"strides = dense<{stride}> : tensor<{nd}xi64>}}")
    y = ex.b.named(_NAMED[nd], [x, w], init, attrs)
    if acc_dtype == out.dtype:
        return y
    return ex.map([y], out, lambda b, a: b.convert(a, out.dtype))
