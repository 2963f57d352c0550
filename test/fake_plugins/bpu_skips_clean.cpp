// The bpu adapter with no CLEAN after the CPU writes device memory: the
// writes stay in the CPU cache, and the next INVALIDATE of the block (before
// a read) would discard them. The simulated libhbucp.so refuses that
// INVALIDATE, naming the rule.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/bpu.cpp"
#include "broken_table.h"

namespace flagos_cudalike {
namespace {

constexpr Coherence kNoClean = {HB_SYS_MEM_CACHE_INVALIDATE, HB_SYS_MEM_CACHE_CLEAN, true, false};

int copy_no_clean(void* dst, const void* src, size_t n, int kind, rt_stream) {
  return copy_with(kNoClean, dst, src, n, dst_is_device(kind), src_is_device(kind));
}
int memset_no_clean(void* dst, int value, size_t n, rt_stream) { return memset_with(kNoClean, dst, value, n); }

const char* adapt_no_clean(void* library, Runtime* rt) {
  const char* missing = adapt(library, rt);
  rt->memcpy_async = &copy_no_clean;
  rt->memset_async = &memset_no_clean;
  return missing;
}

}  // namespace
}  // namespace flagos_cudalike

void flagos_cudalike::break_table(Vendor& v) {
  v.name = "bpu_skips_clean";
  v.adapt = &adapt_no_clean;
}
