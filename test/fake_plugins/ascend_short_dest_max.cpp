// The ascend adapter passing destMax = count - 1 to aclrtMemcpyAsync: a plugin
// that mistakes ACL's destination capacity for something smaller. Conformance
// on the simulated AscendCL must fail, naming the destMax >= count rule.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/ascend.cpp"
#include "broken_table.h"

namespace flagos_cudalike {
namespace {

int short_dest_max(void* dst, const void* src, size_t n, int kind, Stream s) {
  if (int rc = ready()) return rc;
  return g_memcpy_async(dst, n - 1, src, n, kind, s);
}

const char* adapt_broken(void* library, Runtime* rt) {
  const char* missing = adapt(library, rt);
  rt->memcpy_async = &short_dest_max;
  return missing;
}

}  // namespace

void break_table(Vendor& v) {
  v.name = "ascend_short_dest_max";
  v.adapt = &adapt_broken;
}

}  // namespace flagos_cudalike
