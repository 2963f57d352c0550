// The bpu adapter with no INVALIDATE before the CPU reads device memory: it
// reads whatever the CPU cache holds, not what the device last wrote. The
// simulated libhbucp.so catches the read of a block the device owns and
// names the rule; the read data is stale, so copies come back wrong.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/bpu.cpp"
#include "broken_table.h"

namespace flagos_cudalike {
namespace {

constexpr Coherence kNoInvalidate = {HB_SYS_MEM_CACHE_INVALIDATE, HB_SYS_MEM_CACHE_CLEAN, false, true};

int copy_no_invalidate(void* dst, const void* src, size_t n, int kind, rt_stream) {
  return copy_with(kNoInvalidate, dst, src, n, dst_is_device(kind), src_is_device(kind));
}

const char* adapt_no_invalidate(void* library, Runtime* rt) {
  const char* missing = adapt(library, rt);
  rt->memcpy_async = &copy_no_invalidate;  // memset reads nothing
  return missing;
}

}  // namespace
}  // namespace flagos_cudalike

void flagos_cudalike::break_table(Vendor& v) {
  v.name = "bpu_skips_invalidate";
  v.adapt = &adapt_no_invalidate;
}
