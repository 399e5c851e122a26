//===- Jit.cpp - what attn-run's JIT needs beyond the ExecutionEngine -----===//

#include "Jit.h"

#include "attn/Runtime/AttnRuntime.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"

#include "llvm/Support/Process.h"

#include <sys/mman.h>

using namespace llvm;
using Purpose = SectionMemoryManager::AllocationPurpose;

namespace {
/// Bump allocation in a 1 GiB PROT_NONE reservation (address space only);
/// a request that does not fit falls back to LLVM's default placement.
/// Released blocks are made inaccessible and their pages returned, but their
/// addresses are not reused: attn-run creates at most two engines.
class SlabMemoryMapper final : public SectionMemoryManager::MemoryMapper {
public:
  SlabMemoryMapper() {
    void *p = ::mmap(nullptr, kSlabSize, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED)
      slab = static_cast<char *>(p);
  }

  sys::MemoryBlock allocateMappedMemory(Purpose, size_t numBytes,
                                        const sys::MemoryBlock *const near,
                                        unsigned flags,
                                        std::error_code &ec) override {
    size_t page = sys::Process::getPageSizeEstimate();
    size_t size = alignTo(numBytes, page);
    if (!slab || used + size > kSlabSize)
      return sys::Memory::allocateMappedMemory(numBytes, near, flags, ec);
    sys::MemoryBlock block(slab + used, size);
    ec = sys::Memory::protectMappedMemory(block, flags);
    if (ec)
      return sys::MemoryBlock();
    used += size;
    return block;
  }

  std::error_code protectMappedMemory(const sys::MemoryBlock &block,
                                      unsigned flags) override {
    return sys::Memory::protectMappedMemory(block, flags);
  }

  std::error_code releaseMappedMemory(sys::MemoryBlock &block) override {
    char *base = static_cast<char *>(block.base());
    if (!slab || base < slab || base >= slab + kSlabSize)
      return sys::Memory::releaseMappedMemory(block);
    size_t size = block.allocatedSize();
    if (::mprotect(base, size, PROT_NONE) != 0 ||
        ::madvise(base, size, MADV_DONTNEED) != 0)
      return std::error_code(errno, std::generic_category());
    block = sys::MemoryBlock();
    return std::error_code();
  }

private:
  static constexpr size_t kSlabSize = size_t(1) << 30;
  char *slab = nullptr;
  size_t used = 0;
};
} // namespace

SectionMemoryManager::MemoryMapper &attnrun::getJitMemoryMapper() {
  static SlabMemoryMapper mapper;
  return mapper;
}

void attnrun::registerRuntimeSymbols(mlir::ExecutionEngine &engine) {
  engine.registerSymbols([](orc::MangleAndInterner interner) {
    orc::SymbolMap map;
    auto add = [&](StringRef name, auto *fn) {
      map[interner(name)] = {orc::ExecutorAddr::fromPtr(fn),
                             JITSymbolFlags::Exported};
    };
    add("attnrt_trace_begin", &attnrt_trace_begin);
    add("attnrt_trace_end", &attnrt_trace_end);
    add("attnrt_check_failed", &attnrt_check_failed);
    add("attnrt_check_failed_deferred", &attnrt_check_failed_deferred);
    add("attnrt_check_argument", &attnrt_check_argument);
    add("attnrt_amx_available", &attnrt_amx_available);
    return map;
  });
}
