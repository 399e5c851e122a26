//===- Passes.td - attn dialect transformation passes ------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnFuseSdpa : Pass<"attn-fuse-sdpa"> {
  let summary = "Fuse matmul/scale/mask/softmax/matmul chains into attn.sdpa";
  let description = [{
    Finds attention written op by op (as a frontend exports a PyTorch
    module) and replaces it with one `attn.sdpa` that computes the same
    function (see the contract in `attn.sdpa`'s description).

    The pass works in two phases:

    1. Normalisation: small local rewrites that are exact on their own run
       to a fixpoint together with the attn folders and canonicalizations
       (`dropout` with `train = false` or `p = 0` folds away, transposes of
       transposes fold, and an f16/bf16 softmax written as
       `cast(softmax(cast(x) to f32)) to f16` becomes an f16 softmax, which
       the softmax contract defines as the same function).
    2. Matching: every `attn.softmax` is the root of one match of the core
       structure

           matmul(q', kT') -> {mul/div by scalar, masked_fill, where, add}*
                           -> softmax(last dim) -> [dropout] -> matmul(., v)

       where `q'` and `kT'` may carry scalar scales, `kT'` is `k`
       transposed (or a given `kT`, which is transposed back outside the
       fused op) and `k`, `v` may be expanded by `repeat_interleave` over
       the head dim (grouped-query attention). Each step between the
       matmul and the softmax is checked to be expressible exactly in the
       contract's order (scale, then the additive mask, then the boolean
       mask/causal replacing scores by `masked_value`); a boolean mask
       applied before a positive scale gets the scaled fill value as
       `masked_value`, and a constant causal mask applied before an
       additive one fuses only when the sum cannot differ (a `-inf` fill
       and a constant mask free of `+inf` and NaN).

    Scales move into `scale` in f64: `x / c` becomes `scale = 1/c`, and a
    scale on `q`/`k` or several scales are multiplied together. That changes
    rounding within the usual tolerance (the fused op scales once, in f32);
    everything else (masked positions, fully masked rows, the f16/bf16
    upcast around softmax) is exact. One difference is inherent to any fused
    f16/bf16 attention: the scores live in f32 inside attn.sdpa, so where the
    chain's f16/bf16 scores round badly or overflow (|q.k * scale| beyond the
    type's range, or a scale far above 1 amplifying the f16 rounding of the
    scores), the fused op is the more accurate one, finite where the chain
    has inf or NaN.

    With `explain`, every softmax that is plausibly attention (its input
    comes through elementwise ops from an `attn.matmul`, or its result
    feeds one, directly or through dropout/cast) but was not fused gets a
    remark `not fused: <the check that failed>`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::attn::AttnDialect",
  ];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark for every softmax that looks like attention but "
           "was not fused, saying which check failed">,
    Option<"reportCounts", "report-counts", "bool", /*default=*/"false",
           "Emit the fused and missed counts (the pass statistics) as a "
           "remark on the root op; LLVM builds without statistics (NDEBUG, "
           "as Debian's) print no -mlir-pass-statistics values">,
  ];
  let statistics = [
    Statistic<"numFused", "num-fused",
              "Number of attention chains fused into attn.sdpa">,
    Statistic<"numMissed", "num-missed",
              "Number of softmaxes that look like attention but were not "
              "fused">,
  ];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
