// Internal, non-ABI hooks of the CUDA library for tests and benchmarks.
#pragma once

namespace attn {
namespace detail {

// Which tile shape the tensor-core kernel uses (see TcConfigM16 / TcConfigM32
// in fwd_params.h). Auto = the library default. The environment variable
// ATTN_CUDA_TC_VARIANT=m16|m32 overrides Auto (read once, at the first call).
enum class TcVariant : int { Auto = -1, M16 = 0, M32 = 1 };

void set_tc_variant(TcVariant v);  // process-wide; not synchronised with in-flight calls
TcVariant effective_tc_variant();  // Auto resolved
const char* tc_variant_name(TcVariant v);

}  // namespace detail
}  // namespace attn
