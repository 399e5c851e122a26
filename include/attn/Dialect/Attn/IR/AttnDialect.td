//===- AttnDialect.td - attn dialect definition -------------*- tablegen -*-===//
//
// The attn dialect: the building blocks models write attention with, and the
// fused scaled-dot-product-attention op the fusion pass rewrites them into.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
#define ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let summary = "Attention building blocks and fused scaled-dot-product attention";
  let description = [{
    Ops on ranked tensors with PyTorch semantics: `matmul`, `transpose`,
    elementwise arithmetic with NumPy broadcasting, `masked_fill`, `where`,
    `softmax`, `cast`, `dropout`, `repeat_interleave`, and the fused
    `sdpa` (`F.scaled_dot_product_attention`). Op and attribute names are a
    contract: other tools write this IR in generic form.

    Broadcasting follows NumPy, with one rule for dynamic dims: a `?` dim
    never broadcasts at run time (only a static 1 does); it must equal the
    size it meets, which lowered code checks.
  }];
  let cppNamespace = "::mlir::attn";
  // attn.sdpa score_mod regions hold arith/math scalar code.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  // #attn.mask_polarity<...>
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 0;
  let hasConstantMaterializer = 0;
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
