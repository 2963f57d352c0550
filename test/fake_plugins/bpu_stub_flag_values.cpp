// The bpu adapter with the flush flag values of a public third-party stub
// header (CLEAN = 1, INVALIDATE = 2), the reverse of Horizon's hb_ucp_sys.h:
// every "CLEAN" after a write is in fact an INVALIDATE, which the simulated
// libhbucp.so refuses because it would discard the CPU's writes.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/bpu.cpp"
#include "broken_table.h"

namespace flagos_cudalike {
namespace {

constexpr Coherence kStubValues = {/*"INVALIDATE"*/ 2, /*"CLEAN"*/ 1, true, true};

int copy_stub_values(void* dst, const void* src, size_t n, int kind, rt_stream) {
  return copy_with(kStubValues, dst, src, n, dst_is_device(kind), src_is_device(kind));
}
int memset_stub_values(void* dst, int value, size_t n, rt_stream) { return memset_with(kStubValues, dst, value, n); }

const char* adapt_stub_values(void* library, Runtime* rt) {
  const char* missing = adapt(library, rt);
  rt->memcpy_async = &copy_stub_values;
  rt->memset_async = &memset_stub_values;
  return missing;
}

}  // namespace
}  // namespace flagos_cudalike

void flagos_cudalike::break_table(Vendor& v) {
  v.name = "bpu_stub_flag_values";
  v.adapt = &adapt_stub_values;
}
