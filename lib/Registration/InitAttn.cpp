//===- InitAttn.cpp - register everything AttnFuse provides ---------------===//

#include "attn/InitAttn.h"

#include "attn/Conversion/AttnToCpu/Passes.h"
#include "attn/Conversion/AttnToCuda/Passes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Pipelines/CpuPipeline.h"
#include "attn/Transforms/Cpu/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"


void mlir::attn::registerAllAttnDialects(DialectRegistry &registry) {
  registry.insert<AttnDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
}

void mlir::attn::registerAllAttnPasses() {
  registerAttnTransformsPasses();
  registerAttnToCpuPasses();
  registerAttnToCudaPasses();
  registerAttnCpuTransformsPasses();
  registerAttnCpuLoweringPipeline();
}
