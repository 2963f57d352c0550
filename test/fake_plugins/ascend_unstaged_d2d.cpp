// The ascend adapter without its staging of unaligned device-to-device
// copies: every D2D copy goes to aclrtMemcpyAsync as it is. Conformance on the
// simulated AscendCL (whose copy matrix has ends at +3 and +5) must fail,
// naming the 64-byte alignment rule.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/ascend.cpp"
#include "broken_table.h"

namespace flagos_cudalike {
namespace {

int unstaged(void* dst, const void* src, size_t n, int kind, Stream s) {
  if (int rc = ready()) return rc;
  return copy(dst, src, n, kind, s);
}

const char* adapt_broken(void* library, Runtime* rt) {
  const char* missing = adapt(library, rt);
  rt->memcpy_async = &unstaged;
  return missing;
}

}  // namespace

void break_table(Vendor& v) {
  v.name = "ascend_unstaged_d2d";
  v.adapt = &adapt_broken;
}

}  // namespace flagos_cudalike
