//===- Passes.h - CPU transforms --------------------------------*- C++ -*-===//

#ifndef ATTN_TRANSFORMS_CPU_PASSES_H
#define ATTN_TRANSFORMS_CPU_PASSES_H

#include "attn/Codegen/Cpu/Target.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

/// The module attribute in which attn-instrument-trace records the op names
/// of the trace spans, indexed by span id.
inline constexpr StringLiteral kTraceNamesAttrName = "attn.trace_names";

#define GEN_PASS_DECL
#include "attn/Transforms/Cpu/Passes.h.inc"

/// Sets the target options of attn-cpu-prepack-weights (vector-bits,
/// bf16-pairs, amx-tiles) from `target`: the panels the CPU lowering for
/// that target reads.
void setTargetOptions(AttnCpuPrepackWeightsOptions &options,
                      const cpu::Target &target);

#define GEN_PASS_REGISTRATION
#include "attn/Transforms/Cpu/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_CPU_PASSES_H
