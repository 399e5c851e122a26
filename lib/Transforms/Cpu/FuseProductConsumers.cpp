//===- FuseProductConsumers.cpp - one generic after each product ---------===//
//
// attn-cpu-fuse-product-consumers: the elementwise attn ops as generics,
// then attn-cpu-fuse-elementwise's fusion on the generics that read a
// linalg product's result, so that the product's lowering applies them as
// one epilogue (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Cpu/GemmEpilogue.h"
#include "attn/Codegen/Cpu/LoweringUtils.h"

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"
#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUFUSEPRODUCTCONSUMERS
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// How far back through generics and reshapes a product is looked for: the
/// ops of an activation between its product and its last op.
static constexpr int64_t kMaxConsumerDepth = 12;

/// Whether `op` reads a linalg product's result, directly or through at
/// most `depth` reshapes and all-parallel generics.
static bool readsProduct(Operation *op, int64_t depth) {
  if (depth < 0)
    return false;
  for (Value operand : op->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (!def)
      continue;
    if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(def))
      return true;
    bool passes =
        isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ReshapeOp>(
            def) ||
        cpu::isElementwiseGeneric(def);
    if (passes && readsProduct(def, depth - 1))
      return true;
  }
  return false;
}

namespace {
struct AttnCpuFuseProductConsumersPass
    : public attn::impl::AttnCpuFuseProductConsumersBase<
          AttnCpuFuseProductConsumersPass> {
  using Base::Base;

  void runOnOperation() override {
    Operation *root = getOperation();
    // A product's rounding stays apart: its product stores the narrow type
    // itself. Fused into a consumer that another product applies (a gate
    // reading `up`), it would leave its own product writing f32.
    auto selected = [](Operation *op) {
      bool rounding = op->getNumOperands() == 2 &&
                      cpu::isRoundingGeneric(op, op->getOperand(0));
      return !rounding && readsProduct(op, kMaxConsumerDepth);
    };
    if (failed(lowerAttnElementwiseOps(root)) ||
        failed(cpu::fuseElementwiseGenerics(root, maxBodyOps, selected)))
      signalPassFailure();
  }
};
} // namespace
