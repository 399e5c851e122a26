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
    2. Matching (`matchAttention` in FuseSdpa.h): every `attn.softmax` is
       the root of one match of

           matmul(q', kT') -> {elementwise ops}* -> softmax(last dim)
                           -> [dropout] -> [cast back] -> matmul(., v)

       where `q'` and `kT'` may carry scalar scales, `kT'` is `k`
       transposed (or a given `kT`, which is transposed back outside the
       fused op) and `k`, `v` may be expanded by `repeat_interleave` over
       the head dim (grouped-query attention). The rewrite takes one of two
       forms. The attribute form, when every step is a scale, a boolean or
       additive mask, a causal mask or a fill that the contract's attributes
       reproduce exactly in the contract's order (scale, additive mask,
       then boolean mask/causal replacing scores by `masked_value`). Else
       the `score_mod` form: every op between the matmuls goes into the
       region as its own scalar function (ScalarElementwiseOpInterface), in
       the chain's order and element types, after the score is rounded to
       the scores' type as the matmul rounds it; other operands become the
       region's extra operands, splat constants scalar constants.

    Scales of the attribute form move into `scale` in f64: `x / c` becomes
    `scale = 1/c`, and a scale on `q`/`k` or several scales are multiplied
    together (a change of rounding within the usual tolerance). One
    difference is inherent to an attribute-form f16/bf16 attention: the
    scores live in f32 inside attn.sdpa, so where the chain's f16/bf16
    scores round badly or overflow, the fused op is the more accurate one.

    With `explain`, every fusion gets a remark saying which form it took
    (and why not the attribute form), and every softmax that is plausibly
    attention (its input comes through elementwise ops from an
    `attn.matmul`, or its result feeds one, directly or through
    dropout/cast) but was not fused gets a remark
    `not fused: <the check that failed>`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::attn::AttnDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark for every fusion (its form) and for every softmax "
           "that looks like attention but was not fused (which check "
           "failed)">,
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
