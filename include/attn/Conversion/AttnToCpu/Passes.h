//===- Passes.h - attn ops to CPU code --------------------------*- C++ -*-===//

#ifndef ATTN_CONVERSION_ATTNTOCPU_PASSES_H
#define ATTN_CONVERSION_ATTNTOCPU_PASSES_H

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"
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
#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Conversion/AttnToCpu/Passes.h.inc"

/// Sets the target options of attn-lower-to-cpu (vector-bits, bf16-dot,
/// amx, vnni) from `target`.
void setTargetOptions(AttnLowerToCpuOptions &options,
                      const cpu::Target &target);

#define GEN_PASS_REGISTRATION
#include "attn/Conversion/AttnToCpu/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOCPU_PASSES_H
