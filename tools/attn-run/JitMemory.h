//===- JitMemory.h - keep a JIT'ed module's sections together ---*- C++ -*-===//
//
// The MLIR ExecutionEngine links with RuntimeDyld, whose x86-64 stubs reach
// their GOT entries through 32-bit PC-relative offsets (small code model).
// LLVM's default SectionMemoryManager maps code, read-only data and data
// independently, so nothing keeps them within 2 GiB of each other: when
// other mappings sit between them (AddressSanitizer's allocator reserves
// hundreds of GiB), the truncated offsets send calls into unmapped memory.
// This mapper hands out every section from one reserved slab.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTNRUN_JITMEMORY_H
#define ATTN_TOOLS_ATTNRUN_JITMEMORY_H

#include "llvm/ExecutionEngine/SectionMemoryManager.h"

namespace attnrun {

/// The process-wide mapper for ExecutionEngineOptions::sectionMemoryMapper
/// (it outlives every engine).
llvm::SectionMemoryManager::MemoryMapper &getJitMemoryMapper();

} // namespace attnrun

#endif // ATTN_TOOLS_ATTNRUN_JITMEMORY_H
