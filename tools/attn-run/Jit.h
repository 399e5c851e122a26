//===- Jit.h - what attn-run's JIT needs beyond the ExecutionEngine -*- C++ -*-//
//
// Shared by attn-run and the differential fuzzer.
//
// The runtime's functions the compiled code calls (registerRuntimeSymbols).
//
// Memory: the MLIR ExecutionEngine links with RuntimeDyld, whose x86-64 stubs reach
// their GOT entries through 32-bit PC-relative offsets (small code model).
// LLVM's default SectionMemoryManager maps code, read-only data and data
// independently, so nothing keeps them within 2 GiB of each other: when
// other mappings sit between them (AddressSanitizer's allocator reserves
// hundreds of GiB), the truncated offsets send calls into unmapped memory.
// This mapper hands out every section from one reserved slab.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTNRUN_JIT_H
#define ATTN_TOOLS_ATTNRUN_JIT_H

#include "llvm/ExecutionEngine/SectionMemoryManager.h"

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace attnrun {

/// The process-wide mapper for ExecutionEngineOptions::sectionMemoryMapper
/// (it outlives every engine).
llvm::SectionMemoryManager::MemoryMapper &getJitMemoryMapper();

/// Makes the AttnFuse runtime's entry points that lowered code calls
/// (attnrt_trace_begin/end, attnrt_check_failed, attnrt_check_argument)
/// resolve to this process's definitions.
void registerRuntimeSymbols(mlir::ExecutionEngine &engine);

} // namespace attnrun

#endif // ATTN_TOOLS_ATTNRUN_JIT_H
